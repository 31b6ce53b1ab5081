package io.kv4j.sqlite;

import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import java.sql.SQLException;
import java.util.List;

/**
 * A read snapshot: one SQLite read transaction on a connection of its own, taken from the store's
 * cursor connections (never from the pool that serves {@code get}, so open snapshots cannot starve
 * point reads). In WAL mode a read transaction reads the database as of the WAL's end when it
 * began, whatever commits later; {@link SqliteStore#beginSnapshot()} pins that point before {@code
 * snapshot()} returns.
 *
 * <p>The connection serves one statement at a time: gets, getAlls and cursor chunks of this
 * snapshot take its monitor (a cursor only for the chunk it fetches, so several cursors and reads
 * of one snapshot interleave). Every call also holds the store's lifecycle read lock, so the store
 * never closes the connection under a statement. {@link #release()} ends the transaction and hands
 * the connection back; {@link AbstractSnapshot} calls it once, after the reads in flight and the
 * snapshot's cursors are done, and the store closes open snapshots before its connections.
 *
 * <p>What an open snapshot costs: a connection (and its page cache) for its lifetime, and the WAL
 * frames from its start on: checkpoints cannot copy frames past it into the database file nor
 * restart the WAL, so under writes the WAL grows until it closes, and {@code compact()} skips
 * {@code VACUUM} (see {@link SqliteStore#doCompact()}). It never blocks writers.
 */
final class SqliteSnapshot extends AbstractSnapshot {
  private final SqliteStore store;
  private final SqlConn conn;

  SqliteSnapshot(SqliteStore store, SqlConn conn) {
    super(store);
    this.store = store;
    this.conn = conn;
  }

  /** The snapshot's connection, for its cursors: use it under this object's monitor. */
  SqlConn connection() {
    return conn;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return read("get", () -> store.getOn(conn, key));
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return read("getAll", () -> store.getAllOn(conn, keys));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new SqliteCursor(store, range, this);
  }

  @Override
  protected void release() {
    store.lifecycle().readLock().lock();
    try {
      synchronized (this) {
        store.endSnapshot(conn);
      }
    } finally {
      store.lifecycle().readLock().unlock();
    }
  }

  /** One read on the snapshot's connection. */
  private interface Read<T> {
    T run() throws SQLException;
  }

  private <T> T read(String what, Read<T> work) {
    store.lifecycle().readLock().lock();
    try {
      store.ensureOpen();
      synchronized (this) {
        return work.run();
      }
    } catch (SQLException e) {
      throw SqliteErrors.translate(
          store.describe() + ": " + what + " through a snapshot failed", e, store.file());
    } finally {
      store.lifecycle().readLock().unlock();
    }
  }
}
