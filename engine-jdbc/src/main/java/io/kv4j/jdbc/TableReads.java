package io.kv4j.jdbc;

import io.kv4j.KeyRange;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The reads of one table shared by stores, keyspace handles, cursors and snapshots. */
final class TableReads {
  private TableReads() {}

  /**
   * {@code SELECT k, v} of a range of table {@code quoted} in its order: after {@code after}
   * (exclusive, in the range's direction) when not null, at most {@code limit} rows ({@code
   * Long.MAX_VALUE}: no limit). Appends the parameters in order to {@code params}.
   */
  static String rangeQuery(
      String quoted, KeyRange range, byte[] after, long limit, List<byte[]> params) {
    StringBuilder sql = new StringBuilder("SELECT k, v FROM ").append(quoted);
    String glue = " WHERE";
    byte[] lo = range.lower();
    byte[] hi = range.upper();
    if (lo != null) {
      sql.append(glue).append(" k ").append(range.lowerInclusive() ? ">=" : ">").append(" ?");
      params.add(lo);
      glue = " AND";
    }
    if (hi != null) {
      sql.append(glue).append(" k ").append(range.upperInclusive() ? "<=" : "<").append(" ?");
      params.add(hi);
      glue = " AND";
    }
    if (after != null) {
      sql.append(glue).append(" k ").append(range.isReverse() ? "<" : ">").append(" ?");
      params.add(after);
    }
    sql.append(" ORDER BY k").append(range.isReverse() ? " DESC" : "");
    if (limit < Long.MAX_VALUE) {
      sql.append(" LIMIT ").append(limit);
    }
    return sql.toString();
  }

  /** Keys per {@code IN (...)} statement of a getAll: 500 keys of at most 1 KiB each. */
  static final int GET_ALL_CHUNK = 500;

  /**
   * Reads keys of table {@code quoted} with {@code SELECT k, v ... WHERE k IN (...)}, {@link
   * #GET_ALL_CHUNK} distinct keys per statement. With {@code ownTransaction} and more than one
   * statement, the statements run in one read-only repeatable-read transaction, so the answer is
   * one point in time; otherwise the caller's transaction (a snapshot's) or autocommit decides.
   */
  static List<byte[]> readMany(
      Connection c, String quoted, List<byte[]> keys, boolean ownTransaction) throws SQLException {
    Map<ByteBuffer, byte[]> found = new LinkedHashMap<>();
    for (byte[] k : keys) {
      found.put(ByteBuffer.wrap(k), null);
    }
    List<ByteBuffer> distinct = new ArrayList<>(found.keySet());
    boolean tx = ownTransaction && distinct.size() > GET_ALL_CHUNK;
    if (tx) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      c.setReadOnly(true);
    }
    try {
      for (int from = 0; from < distinct.size(); from += GET_ALL_CHUNK) {
        List<ByteBuffer> chunk =
            distinct.subList(from, Math.min(distinct.size(), from + GET_ALL_CHUNK));
        StringBuilder sql =
            new StringBuilder("SELECT k, v FROM ").append(quoted).append(" WHERE k IN (");
        for (int i = 0; i < chunk.size(); i++) {
          sql.append(i == 0 ? "?" : ", ?");
        }
        try (PreparedStatement ps = c.prepareStatement(sql.append(')').toString())) {
          for (int i = 0; i < chunk.size(); i++) {
            ps.setBytes(i + 1, chunk.get(i).array());
          }
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              found.put(ByteBuffer.wrap(rs.getBytes(1)), rs.getBytes(2));
            }
          }
        }
      }
      if (tx) {
        c.commit();
      }
    } catch (SQLException | RuntimeException e) {
      if (tx) {
        SqlServer.rollbackQuietly(c);
      }
      throw e;
    }
    List<byte[]> values = new ArrayList<>(keys.size());
    java.util.Set<ByteBuffer> handedOut = new java.util.HashSet<>();
    for (byte[] k : keys) {
      ByteBuffer b = ByteBuffer.wrap(k);
      byte[] v = found.get(b);
      // A key asked twice gets two arrays: the caller may change one.
      values.add(v != null && !handedOut.add(b) ? v.clone() : v);
    }
    return values;
  }
}
