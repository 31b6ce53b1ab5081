package io.kv4j.jdbc;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayDeque;

/**
 * A snapshot cursor: a read-only repeatable-read transaction on its own pooled connection, rows
 * streamed {@code fetchSize} at a time. Once every row is buffered the transaction ends and the
 * connection goes back to the pool, so short scans hold no connection.
 */
final class JdbcCursor extends io.kv4j.spi.AbstractCursor {
  private final JdbcStore store;
  private final int fetchSize;
  private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
  private Connection connection;
  private PreparedStatement statement;
  private ResultSet rows;

  JdbcCursor(
      JdbcStore store,
      KeyRange range,
      Connection c,
      PreparedStatement ps,
      ResultSet rs,
      int fetchSize) {
    super(store, range);
    this.store = store;
    this.connection = c;
    this.statement = ps;
    this.rows = rs;
    this.fetchSize = fetchSize;
    try {
      fill();
    } catch (RuntimeException e) {
      release();
      throw e;
    }
  }

  private void fill() {
    try {
      while (buffer.size() < fetchSize) {
        if (!rows.next()) {
          finishTransaction();
          return;
        }
        buffer.add(new Entry(rows.getBytes(1), rows.getBytes(2)));
      }
    } catch (SQLException e) {
      release();
      throw store.calls.failure("cursor fetch", e);
    }
  }

  private void finishTransaction() throws SQLException {
    Connection c = connection;
    if (c == null) {
      return;
    }
    try {
      rows.close();
      statement.close();
      c.commit();
    } finally {
      rows = null;
      statement = null;
      connection = null;
      c.close();
    }
  }

  @Override
  protected Entry advance() {
    if (buffer.isEmpty() && connection != null) {
      fill();
    }
    return buffer.poll();
  }

  @Override
  protected void release() {
    buffer.clear();
    Connection c = connection;
    if (c == null) {
      return;
    }
    SqlServer.closeQuietly(rows);
    SqlServer.closeQuietly(statement);
    SqlServer.rollbackQuietly(c);
    SqlServer.closeQuietly(c);
    rows = null;
    statement = null;
    connection = null;
  }
}
