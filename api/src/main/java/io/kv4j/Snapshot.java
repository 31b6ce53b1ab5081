package io.kv4j;

import java.util.List;

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
 * <p>The reads are those of {@link ReadView}, which a {@link Store} shares, so code that only reads
 * takes either.
 *
 * <p>A snapshot may be read from several threads at once; each of its cursors is used by one thread
 * at a time. Key checks and errors are those of {@link Store}.
 */
public interface Snapshot extends ReadView, AutoCloseable {

  /** Releases the snapshot and closes its open cursors. Idempotent; never throws. */
  @Override
  void close();
}
