package io.kv4j;

/**
 * Capabilities an engine declares in {@link StoreInfo#features()}. An engine never fakes a feature
 * it lacks: an operation that needs it throws {@link UnsupportedOperationException} naming the
 * feature.
 */
public enum Feature {
  /** {@link Store#scan(KeyRange)} returns keys in unsigned lexicographic order. */
  ORDERED_SCAN,
  /** {@link KeyRange#reverse()} ranges are supported: keys in descending unsigned order. */
  REVERSE_SCAN,
  /**
   * A cursor sees the store as of the moment it was opened: writes made while it is open are not
   * visible through it.
   */
  SNAPSHOT_SCAN,
  /** {@link Store#write(WriteBatch)} applies all of a batch or none of it, also across crashes. */
  ATOMIC_BATCH,
  /** Data survives {@link Store#close()} and a later reopen of the same location. */
  PERSISTENT,
  /**
   * Every record carries a checksum that every read verifies: a flipped bit or a zeroed block in
   * stored data is reported with {@link StoreCorruptedException}, never returned as a value, never
   * taken for an absent key. The TCK's damage rules that flip bits apply only to engines that
   * declare it.
   */
  CHECKSUMS,
  /**
   * {@link Store#putIfAbsent(byte[], byte[])}, {@link Store#replace(byte[], byte[], byte[])} and
   * {@link Store#delete(byte[], byte[])} compare and write atomically against every other writer of
   * the store: other threads, and for engines on a server, other processes and application
   * instances sharing the same store. N threads incrementing a counter through {@code replace}
   * loops lose no increment.
   */
  CONDITIONAL_WRITE,
  /**
   * {@link Store#snapshot()} returns a {@link Snapshot}: any number of reads and scans at one point
   * in time. A writer changing several keys in one atomic batch is never seen half-applied through
   * it.
   */
  SNAPSHOT_READ,
  /**
   * {@link Store#backup(java.nio.file.Path)} writes a consistent copy of the store, openable with
   * the same engine and options, while the store keeps serving reads and writes.
   */
  BACKUP,
  /**
   * {@link Store#keyspace(String)} opens named keyspaces: independent sets of keys in one store
   * location (RocksDB column families, LMDB named databases, SQLite tables, a table or key prefix
   * on a server). A key in one keyspace is never seen through another; keyspaces persist with the
   * store, are listed by {@link Store#keyspaces()}, removed by {@link Store#dropKeyspace(String)},
   * and are in its backups.
   */
  KEYSPACES,
  /**
   * A {@link WriteBatch} may name keyspaces ({@link WriteBatch#put(String, byte[], byte[])}): one
   * batch spanning several keyspaces of a store is applied atomically, all of it or none, also
   * across crashes.
   */
  KEYSPACE_BATCH,
  /**
   * {@link Store#writeIf(WriteBatch)} checks a batch's conditions and applies its operations as one
   * atomic step against every other writer of the store (other threads, and for engines on a
   * server, other processes and application instances): no write can fall between the check and the
   * apply. Optimistic transactions over several keys (read, compute, write if nothing read has
   * changed) lose no update. Declared only with {@link #ATOMIC_BATCH} and {@link
   * #CONDITIONAL_WRITE}.
   */
  CONDITIONAL_BATCH
}
