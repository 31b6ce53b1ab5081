package io.kv4j.jdbc;

import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The calls of one store or keyspace handle on its server: each runs on a pooled connection and,
 * when that connection is lost (server restart, network) or the server rolled the transaction back
 * for a conflict, runs again on a fresh one with backoff until retry-timeout, as far as its kind
 * allows: {@link #run} for idempotent work, {@link #runOnce} for work that must not run twice,
 * {@link #stream} for a read that keeps its connection (a cursor).
 */
final class Calls {
  /** Work on a connection. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /** What takes over a streaming read's connection, statement and rows. */
  @FunctionalInterface
  interface Rows<T> {
    T take(Connection c, PreparedStatement ps, ResultSet rs);
  }

  private final SqlServer server;
  private final Dialect dialect;
  private final JdbcSettings settings;
  private final StoreInfo info;
  private final Runnable checkOpen; // the handle's: throws StoreClosedException once it is closed

  Calls(SqlServer server, StoreInfo info, Runnable checkOpen) {
    this.server = server;
    this.dialect = server.dialect;
    this.settings = server.settings;
    this.info = info;
    this.checkOpen = checkOpen;
  }

  /**
   * Runs work on a pooled connection; on a lost connection (server restart, network) or a
   * transaction the server rolled back for a conflict (deadlock), retries on a fresh one until
   * retry-timeout. For idempotent work only (upserts, deletes, whole batches), where a retry after
   * an unknown commit outcome is safe.
   */
  <T> T run(String op, Work<T> work) {
    long deadline = deadline();
    int attempt = 0;
    while (true) {
      checkOpen.run();
      try (Connection c = server.pool.getConnection()) {
        return work.run(c);
      } catch (SQLException e) {
        checkOpen.run();
        if (!(dialect.isConnectionLoss(e) || isTransactionConflict(e))
            || System.nanoTime() - deadline > 0) {
          throw failure(op, e);
        }
        backOff(attempt++);
      }
    }
  }

  /**
   * Like {@link #run} for a statement that must not run twice: a conditional write whose reply was
   * lost may have committed, and running it again would answer false for a write that was done (a
   * counter loop would then add twice). Retries while no connection can be had and after the server
   * rolled the transaction back for a conflict (SQLSTATE class 40: nothing was applied); a
   * connection lost during the statement fails with the outcome unknown.
   */
  <T> T runOnce(String op, Work<T> work) {
    long deadline = deadline();
    int attempt = 0;
    while (true) {
      checkOpen.run();
      Connection c;
      try {
        c = server.pool.getConnection();
      } catch (SQLException e) {
        checkOpen.run();
        if (!dialect.isConnectionLoss(e) || System.nanoTime() - deadline > 0) {
          throw failure(op, e);
        }
        backOff(attempt++);
        continue;
      }
      try (c) {
        return work.run(c);
      } catch (SQLException e) {
        checkOpen.run();
        if (isTransactionConflict(e) && System.nanoTime() - deadline <= 0) {
          // The server rolled the whole transaction back (deadlock, serialization): nothing of it
          // was applied, so it may run again.
          backOff(attempt++);
          continue;
        }
        if (dialect.isConnectionLoss(e)) {
          throw new StoreIOException(
              info.describe()
                  + ": "
                  + op
                  + " lost its connection to "
                  + settings.address()
                  + " while running; whether it was applied is unknown (read the key to find"
                  + " out): "
                  + e.getMessage(),
              e);
        }
        throw failure(op, e);
      }
    }
  }

  /**
   * Starts a streaming read: {@code query} with {@code params} in a read-only repeatable-read
   * transaction on a pooled connection, rows fetched {@code fetchSize} at a time; {@code rows}
   * takes the connection, statement and result over. Retried on a fresh connection while the
   * connection is lost before that, until retry-timeout.
   */
  <T> T stream(String op, String query, List<byte[]> params, int fetchSize, Rows<T> rows) {
    long deadline = deadline();
    int attempt = 0;
    while (true) {
      checkOpen.run();
      Connection c = null;
      PreparedStatement ps = null;
      try {
        c = server.pool.getConnection();
        c.setAutoCommit(false); // PostgreSQL streams with a fetch size only inside a transaction
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        ps = c.prepareStatement(query, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
        ps.setFetchSize(fetchSize);
        for (int i = 0; i < params.size(); i++) {
          ps.setBytes(i + 1, params.get(i));
        }
        ResultSet rs = ps.executeQuery();
        return rows.take(c, ps, rs);
      } catch (SQLException e) {
        SqlServer.closeQuietly(ps);
        if (c != null) {
          SqlServer.rollbackQuietly(c);
          SqlServer.closeQuietly(c);
        }
        checkOpen.run();
        if (!dialect.isConnectionLoss(e) || System.nanoTime() - deadline > 0) {
          throw failure(op, e);
        }
        backOff(attempt++);
      }
    }
  }

  /**
   * The failure of {@code op}, naming the store and the server; {@link
   * io.kv4j.StoreClosedException} (thrown) instead if the store was closed meanwhile, since closing
   * it closes the pool and with it every connection a call or cursor was using.
   */
  StoreIOException failure(String op, Exception e) {
    checkOpen.run();
    return new StoreIOException(
        info.describe() + ": " + op + " failed on " + settings.address() + ": " + e.getMessage(),
        e);
  }

  /**
   * Whether the server rolled the transaction back because it conflicted with a concurrent one
   * (SQLSTATE class 40: MySQL/MariaDB's deadlock 1213 is 40001, PostgreSQL's 40P01 and 40001):
   * concurrent batches over neighbouring keys meet InnoDB's gap locks, and the whole batch can
   * simply run again.
   */
  private static boolean isTransactionConflict(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s
          && s.getSQLState() != null
          && s.getSQLState().startsWith("40")) {
        return true;
      }
    }
    return false;
  }

  private long deadline() {
    return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.retryTimeoutMillis());
  }

  private void backOff(int attempt) {
    server.retries.incrementAndGet();
    SqlServer.pause(Math.min(1000, 25L << Math.min(attempt, 6)));
  }
}
