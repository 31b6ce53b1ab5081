package io.kv4j.sqlite;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;

/**
 * One JDBC connection and its prepared statements, prepared once and reused. Used by one thread at
 * a time (the pool, the writer lock or the cursor monitor sees to it); closed exactly once, by its
 * owner.
 */
final class SqlConn {
  private final Connection connection;
  private final Map<String, PreparedStatement> statements = new HashMap<>();
  private boolean closed;

  SqlConn(Connection connection) {
    this.connection = connection;
  }

  /** The cached statement for {@code sql}, prepared on first use. */
  PreparedStatement prepare(String sql) throws SQLException {
    PreparedStatement ps = statements.get(sql);
    if (ps == null) {
      ps = connection.prepareStatement(sql);
      statements.put(sql, ps);
    }
    return ps;
  }

  /** Runs a statement without parameters or results (BEGIN, COMMIT, ROLLBACK, PRAGMA x=y). */
  void exec(String sql) throws SQLException {
    prepare(sql).execute();
  }

  /** Runs a query whose first row's first column is a number or text and returns it as text. */
  String queryText(String sql) throws SQLException {
    try (ResultSet rs = prepare(sql).executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** Runs a query whose first row's first column is a number. */
  long queryLong(String sql) throws SQLException {
    try (ResultSet rs = prepare(sql).executeQuery()) {
      if (!rs.next()) {
        throw new SQLException("no result from " + sql);
      }
      return rs.getLong(1);
    }
  }

  /** Ends any open transaction, ignoring "no transaction is active". */
  void rollbackQuietly() {
    try {
      exec("ROLLBACK");
    } catch (SQLException ignored) {
      // No transaction was active, or the connection is broken and will be discarded.
    }
  }

  /** Closes the statements and the connection. Idempotent. */
  void close() throws SQLException {
    if (closed) {
      return;
    }
    closed = true;
    SQLException first = null;
    for (PreparedStatement ps : new ArrayList<>(statements.values())) {
      try {
        ps.close();
      } catch (SQLException e) {
        first = first == null ? e : first;
      }
    }
    statements.clear();
    try {
      connection.close();
    } catch (SQLException e) {
      first = first == null ? e : first;
    }
    if (first != null) {
      throw first;
    }
  }

  boolean isClosed() {
    return closed;
  }
}
