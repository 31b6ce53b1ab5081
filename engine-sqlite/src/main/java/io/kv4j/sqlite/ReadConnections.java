package io.kv4j.sqlite;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The store's read-only connections, shared by its keyspace handles: a bounded pool for point
 * reads, getAll, stats and verify, borrowed and returned per call; and a pool for cursors and
 * {@link SqliteSnapshot}s, each holding one for its lifetime inside its own read transaction, which
 * in WAL mode is a point-in-time snapshot. Counts the read transactions open (and backups running),
 * which keep {@code compact()} from vacuuming.
 */
final class ReadConnections {
  /** Idle cursor connections kept open for the next cursor. */
  private static final int IDLE_CURSOR_CONNECTIONS = 2;

  private final ConnectionPool readers;
  private final ConnectionPool cursors;
  private final AtomicInteger pinned = new AtomicInteger();

  ReadConnections(SqliteSettings settings, Path file, ReadMode mode) {
    this.readers =
        new ConnectionPool(
            () -> StoreOpening.openReader(settings, file, mode),
            settings.readerPoolSize(),
            settings.readerPoolSize());
    this.cursors =
        new ConnectionPool(
            () -> StoreOpening.openReader(settings, file, mode),
            Integer.MAX_VALUE,
            IDLE_CURSOR_CONNECTIONS);
  }

  /** Opens one reader up front so a broken reader configuration fails the open, not a get. */
  void warmUp() throws SQLException {
    SqlConn c = readers.borrow();
    readers.giveBack(c, true);
  }

  /** Runs work on a pooled reader of the store or handle {@code via}, under its lifecycle lock. */
  <T> T read(SqliteStore via, String what, SqliteStore.SqlWork<T> work) {
    via.lifecycle().readLock().lock();
    try {
      via.ensureOpen();
      SqlConn c = readers.borrow();
      boolean healthy = false;
      try {
        T result = work.run(c);
        healthy = true;
        return result;
      } finally {
        readers.giveBack(c, healthy);
      }
    } catch (SQLException e) {
      throw SqliteErrors.translate(via.describe() + ": " + what + " failed", e, via.file());
    } finally {
      via.lifecycle().readLock().unlock();
    }
  }

  /** Borrows a cursor connection and starts its read transaction; lifecycle read lock held. */
  SqlConn beginSnapshot() throws SQLException {
    SqlConn c = cursors.borrow();
    try {
      c.exec("BEGIN");
      pinned.incrementAndGet();
      return c;
    } catch (SQLException | RuntimeException e) {
      cursors.giveBack(c, false);
      throw e;
    }
  }

  /** Ends a cursor's read transaction and returns its connection; lifecycle read lock held. */
  void endSnapshot(SqliteStore via, SqlConn c) {
    if (via.isShut()) {
      return; // the store's close closed every connection already
    }
    pinned.decrementAndGet();
    boolean healthy = true;
    try {
      c.exec("COMMIT");
    } catch (SQLException e) {
      healthy = false;
    }
    try {
      cursors.giveBack(c, healthy);
    } catch (SQLException e) {
      throw SqliteErrors.translate(
          via.describe() + ": cannot close a cursor connection", e, via.file());
    }
  }

  /** Counts a backup as a reader that {@code compact()} must not vacuum past. */
  void pin() {
    pinned.incrementAndGet();
  }

  void unpin() {
    pinned.decrementAndGet();
  }

  /** Read transactions (cursors, snapshots) and backups running now. */
  int pinned() {
    return pinned.get();
  }

  int readerCount() {
    return readers.openCount();
  }

  int cursorCount() {
    return cursors.openCount();
  }

  /** Closes the cursor connections, then the readers; throws the first failure. Idempotent. */
  void close() throws SQLException {
    SQLException failure = null;
    for (ConnectionPool p : new ConnectionPool[] {cursors, readers}) {
      try {
        p.close();
      } catch (SQLException e) {
        failure = failure == null ? e : failure;
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
