package io.kv4j;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Reads at one point in time: every {@link #get(byte[])}, {@link #getAll(List)} and {@link
 * #scan(KeyRange)} of a snapshot sees the store exactly as it was when {@link Store#snapshot()}
 * returned, whatever is written meanwhile. A batch written with {@link Store#write(WriteBatch)} is
 * seen whole or not at all. Requires {@link Feature#SNAPSHOT_READ}.
 *
 * <pre>{@code
 * try (Snapshot s = store.snapshot()) {
 *   byte[] balanceA = s.get(a);
 *   byte[] balanceB = s.get(b); // same point in time as balanceA
 * }
 * }</pre>
 *
 * <p>A snapshot holds engine resources (a RocksDB snapshot, an LMDB read transaction, an SQLite or
 * PostgreSQL read transaction) and, on some engines, keeps old versions from being reclaimed: close
 * it promptly. {@link #close()} is idempotent and closes the cursors opened from the snapshot;
 * closing the store closes its open snapshots. After close every method throws {@link
 * IllegalStateException}, or {@link StoreClosedException} if the store was closed underneath.
 *
 * <p>A snapshot may be read from several threads at once; each of its cursors is used by one thread
 * at a time. Key checks and errors are those of {@link Store}.
 */
public interface Snapshot extends AutoCloseable {

  /**
   * Reads a value as of the snapshot.
   *
   * @param key the key
   * @return a copy of the value, or null when the key was absent
   */
  byte[] get(byte[] key);

  /**
   * Reads several values as of the snapshot.
   *
   * @param keys the keys; duplicates allowed
   * @return the values in the order of {@code keys}, null where a key was absent
   */
  List<byte[]> getAll(List<byte[]> keys);

  /**
   * Opens a cursor over a range as of the snapshot. Requires {@link Feature#ORDERED_SCAN}; a
   * reversed range requires {@link Feature#REVERSE_SCAN}.
   *
   * @param range which keys, in which direction, how many
   * @return an open cursor, closed by the caller or with the snapshot
   * @throws UnsupportedOperationException if the engine lacks a feature the range needs
   */
  Cursor scan(KeyRange range);

  /** Releases the snapshot and closes its open cursors. Idempotent; never throws. */
  @Override
  void close();

  /**
   * Whether a key was present.
   *
   * @param key the key
   * @return true if {@link #get(byte[])} would return non-null
   */
  default boolean contains(byte[] key) {
    return get(key) != null;
  }

  /**
   * Calls {@code action} for each entry of {@code range} as of the snapshot, and closes the cursor,
   * also when the action throws.
   *
   * @param range which entries
   * @param action what to do with each
   */
  default void forEach(KeyRange range, Consumer<? super Entry> action) {
    try (Cursor c = scan(range)) {
      c.forEachRemaining(action);
    }
  }

  /**
   * The entries of {@code range} as of the snapshot, as a stream that owns its cursor.
   *
   * @param range which entries
   * @return a stream closing the cursor when closed
   */
  default Stream<Entry> stream(KeyRange range) {
    return scan(range).stream();
  }
}
