package io.kv4j;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * A key-value store: byte-array keys in unsigned lexicographic order, byte-array values. Open one
 * with {@link Stores#open(StoreConfig)} or {@link Stores#open(String)}; the engine behind it is
 * chosen by configuration.
 *
 * <p>The reads ({@link #get(byte[])}, {@link #getAll(List)}, {@link #scan(KeyRange)} and their
 * helpers) are those of {@link ReadView}, which a {@link Snapshot} shares: a store reads its
 * current state.
 *
 * <p>Keys are 1..{@link Limits#maxKeySize()} bytes, values 0..{@link Limits#maxValueSize()} bytes;
 * an empty value is a value, not absence. Arrays passed in are never retained; arrays returned are
 * fresh copies owned by the caller.
 *
 * <p>All methods are safe to call from many threads. {@link #close()} is idempotent and closes the
 * store's open cursors; every other method then throws {@link StoreClosedException}.
 *
 * <p>Errors: misuse throws {@link NullPointerException}, {@link IllegalArgumentException} (such as
 * a key longer than the engine allows) or {@link IllegalStateException}; a write to a read-only
 * store throws {@link UnsupportedOperationException}; environmental failures throw a {@link
 * StoreException}.
 */
public interface Store extends ReadView, AutoCloseable {

  /**
   * Inserts or replaces a value.
   *
   * @param key the key
   * @param value the value, may be empty
   */
  void put(byte[] key, byte[] value);

  /**
   * Removes a key. Removing an absent key is not an error.
   *
   * @param key the key
   */
  void delete(byte[] key);

  /**
   * Stores a value only if the key is absent, atomically. Requires {@link
   * Feature#CONDITIONAL_WRITE}.
   *
   * @param key the key
   * @param value the value, may be empty
   * @return true if the value was stored, false if the key was present (nothing changed)
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#CONDITIONAL_WRITE}
   */
  default boolean putIfAbsent(byte[] key, byte[] value) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.CONDITIONAL_WRITE);
  }

  /**
   * Replaces a value only if the current value equals {@code expected} (byte for byte), atomically.
   * Requires {@link Feature#CONDITIONAL_WRITE}.
   *
   * @param key the key
   * @param expected the value the key must hold now
   * @param value the new value, may be empty
   * @return true if replaced, false if the key was absent or held another value (nothing changed)
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#CONDITIONAL_WRITE}
   */
  default boolean replace(byte[] key, byte[] expected, byte[] value) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.CONDITIONAL_WRITE);
  }

  /**
   * Removes a key only if its current value equals {@code expected} (byte for byte), atomically.
   * Requires {@link Feature#CONDITIONAL_WRITE}.
   *
   * @param key the key
   * @param expected the value the key must hold now
   * @return true if removed, false if the key was absent or held another value (nothing changed)
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#CONDITIONAL_WRITE}
   */
  default boolean delete(byte[] key, byte[] expected) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.CONDITIONAL_WRITE);
  }

  /**
   * Opens a snapshot: reads at one point in time, the moment this method returns. Requires {@link
   * Feature#SNAPSHOT_READ}. Close it promptly (try with resources).
   *
   * @return an open snapshot
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#SNAPSHOT_READ}
   */
  default Snapshot snapshot() {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.SNAPSHOT_READ);
  }

  /**
   * Writes a consistent copy of the store to {@code target} while the store keeps serving reads and
   * writes. The copy holds every write acknowledged before this call started and none begun after
   * it returned; a batch is in it whole or not at all. It opens with the same engine and options
   * ({@code kv4j verify} passes on it). {@code target} must not exist, or be an empty directory; it
   * appears complete or not at all (the copy is made beside it, in a hidden directory named after
   * the target and the process, and renamed into place; the hidden copy of a backup whose process
   * was killed is removed by the next backup to the same target). Requires {@link Feature#BACKUP};
   * allowed on a read-only store.
   *
   * @param target the directory to create
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#BACKUP}
   * @throws IllegalArgumentException if {@code target} exists and is not an empty directory, or is
   *     the store's own location
   * @throws StoreIOException if the copy cannot be written (nothing is left at {@code target})
   */
  default void backup(Path target) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.BACKUP);
  }

  /**
   * The name by which a {@link WriteBatch} operation addresses the store's own keys (those not in a
   * named keyspace).
   */
  String DEFAULT_KEYSPACE = "default";

  /**
   * Opens a named keyspace of this store, creating it if absent: an independent set of keys in the
   * same location, used through the returned {@code Store} (see {@link Feature#KEYSPACES}). The
   * returned store has this store's engine, limits and durability and every feature of this store
   * except {@link Feature#KEYSPACES} (keyspaces do not nest) and {@link Feature#BACKUP} (back up
   * the whole store). Closing it closes only it, its cursors and snapshots; closing this store
   * closes every keyspace opened from it. Each call returns a new handle.
   *
   * @param name 1 to 64 characters of {@code A-Z a-z 0-9 _ -}, not starting with {@code -}, not
   *     {@value #DEFAULT_KEYSPACE}
   * @return an open store over the keyspace's keys
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#KEYSPACES}, or the
   *     store is read-only and has no such keyspace
   * @throws IllegalArgumentException if the name is not valid
   */
  default Store keyspace(String name) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.KEYSPACES);
  }

  /**
   * Lists the store's named keyspaces.
   *
   * @return the names, sorted, without {@value #DEFAULT_KEYSPACE}
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#KEYSPACES}
   */
  default List<String> keyspaces() {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.KEYSPACES);
  }

  /**
   * Removes a named keyspace and every key in it. Its open handles are closed first; their later
   * calls throw {@link StoreClosedException}. Opening the name again gives an empty keyspace.
   *
   * @param name the keyspace
   * @return true if it existed
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#KEYSPACES} or the
   *     store is read-only
   * @throws IllegalArgumentException if the name is not valid or is {@value #DEFAULT_KEYSPACE}
   */
  default boolean dropKeyspace(String name) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.KEYSPACES);
  }

  /**
   * Checks a keyspace name: 1 to 64 characters of {@code A-Z a-z 0-9 _ -}, not starting with {@code
   * -}. Such names are safe as file, table and column family names on every engine.
   *
   * @param name the name
   * @return the name
   * @throws NullPointerException if name is null
   * @throws IllegalArgumentException if it is not valid, naming the rule
   */
  static String checkKeyspaceName(String name) {
    Objects.requireNonNull(name, "keyspace name");
    boolean ok = !name.isEmpty() && name.length() <= 64 && name.charAt(0) != '-';
    for (int i = 0; ok && i < name.length(); i++) {
      char c = name.charAt(i);
      ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '_'
              || c == '-';
    }
    if (!ok) {
      throw new IllegalArgumentException(
          "invalid keyspace name '"
              + name
              + "': use 1 to 64 characters of A-Z a-z 0-9 _ -, not starting with -");
    }
    return name;
  }

  /**
   * Applies a batch: every operation, in order, or (on any error, and after any crash) none. The
   * whole batch is validated before anything is applied.
   *
   * @param batch the operations
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#ATOMIC_BATCH}
   * @throws IllegalArgumentException if the batch holds conditions (write it with {@link
   *     #writeIf(WriteBatch)}), or a key or value is beyond the engine's limits
   */
  void write(WriteBatch batch);

  /**
   * Applies a batch only if its conditions hold, atomically. Every condition ({@link
   * WriteBatch#expect(byte[], byte[])}, {@link WriteBatch#expectAbsent(byte[])}) is checked against
   * the store as it is just before the batch applies (no condition sees the batch's own
   * operations); if all hold, every operation applies as {@link #write(WriteBatch)} would and the
   * answer is true; otherwise nothing changes and the answer is false. No other writer's write can
   * fall between the check and the apply. A batch without conditions is written and answers true; a
   * batch with conditions and no operations is an atomic check. Durable as {@link
   * #write(WriteBatch)}. Requires {@link Feature#CONDITIONAL_BATCH}.
   *
   * <p>The typical use is an optimistic transaction: read some keys, compute, then write the
   * results with a condition on every key read; on false, read again and retry.
   *
   * @param batch the conditions and operations
   * @return true if the conditions held and the batch was applied, false if nothing changed
   * @throws UnsupportedOperationException if the engine lacks {@link Feature#CONDITIONAL_BATCH}
   */
  default boolean writeIf(WriteBatch batch) {
    throw new UnsupportedOperationException(
        info().describe() + " does not support " + Feature.CONDITIONAL_BATCH);
  }

  /**
   * Makes every write acknowledged so far durable against power loss. A no-op for non-persistent
   * engines.
   */
  void sync();

  /**
   * Asks the engine to reclaim space and tidy its files now, and blocks until it is done. Stored
   * data and its order are unaffected, and open cursors keep working. An engine with nothing to do
   * (a store in memory, an engine that reuses free space on its own) returns at once; each engine's
   * README says what it does. Compacting is a write: like {@link #put(byte[], byte[])} it throws
   * {@link StoreClosedException} after {@link #close()} and {@link UnsupportedOperationException}
   * on a store opened read-only, which it never writes to.
   *
   * <p>The default, for stores that implement this interface directly, compacts nothing: it refuses
   * a read-only store and calls {@link #sync()}, which throws {@link StoreClosedException} on a
   * closed store. Engines built on {@code io.kv4j.spi.AbstractStore} override {@code doCompact()}
   * instead.
   *
   * @throws StoreClosedException after {@link #close()}
   * @throws UnsupportedOperationException if the store was opened read-only
   */
  default void compact() {
    if (info().readOnly()) {
      throw new UnsupportedOperationException(info().describe() + " is open read-only");
    }
    sync();
  }

  /**
   * Checks what a scan does not read: the engine's own file-level checksums and structure (RocksDB
   * table files and WAL, SQLite's {@code integrity_check}, LMDB's file size against its meta pages,
   * hashlog's segment chain and hint files). Together with a full scan, which verifies every
   * entry's checksum where the engine declares {@link Feature#CHECKSUMS}, it checks every byte of
   * the store; {@code kv4j verify} does both. Allowed on read-only stores; changes nothing.
   *
   * <p>The default checks nothing beyond {@link #info()} being readable and the store being open:
   * for an engine whose every byte a scan reads, that is all there is.
   *
   * @throws StoreCorruptedException naming the first damaged file (and offset, where known)
   * @throws StoreClosedException after {@link #close()}
   */
  default void verify() {
    stats();
  }

  /**
   * Static facts about this store: engine, features, limits, durability, location.
   *
   * @return the store's description
   */
  StoreInfo info();

  /**
   * Current figures: key count (exact or estimated), bytes on disk, engine-specific figures.
   *
   * @return a snapshot of the store's figures
   */
  StoreStats stats();

  /** Closes open cursors, then the store. Idempotent. */
  @Override
  void close();
}
