package io.kv4j.sqlite;

import java.sql.PreparedStatement;
import java.sql.SQLException;

/** The SQL text of every statement, with the table name and row format built in. */
final class Sql {
  final String table;
  final boolean checksums;
  final String get;
  final String upsert;
  final String delete;
  final String count;

  /**
   * Starts a read transaction's snapshot: SQLite's {@code BEGIN} is deferred, and the read
   * transaction (the WAL end mark it reads up to) begins with the first statement that reads the
   * table.
   */
  final String pin;

  /** {@code getAll[i]}: {@code SELECT k, v[, crc] ... WHERE k IN (2^i parameters)}. */
  final String[] getAll;

  /** Most keys one getAll statement asks for. */
  static final int GET_ALL_CHUNK = 256;

  /** How many getAll statement sizes there are: 1, 2, 4, ..., {@link #GET_ALL_CHUNK}. */
  static final int GET_ALL_SIZES = 9;

  /** The statement size for a chunk of {@code n} keys: the next power of two. */
  static int getAllSize(int n) {
    return Integer.highestOneBit(n) == n ? n : Integer.highestOneBit(n) << 1;
  }

  Sql(String table, boolean checksums) {
    this.table = table;
    this.checksums = checksums;
    String crc = RowChecksum.COLUMN;
    this.get = "SELECT v" + (checksums ? ", " + crc : "") + " FROM " + table + " WHERE k = ?";
    this.upsert =
        checksums
            ? "INSERT INTO "
                + table
                + "(k, v, "
                + crc
                + ") VALUES(?, ?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v, "
                + crc
                + " = excluded."
                + crc
            : "INSERT INTO "
                + table
                + "(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v";
    this.delete = "DELETE FROM " + table + " WHERE k = ?";
    this.count = "SELECT count(*) FROM " + table;
    this.pin = "SELECT count(*) FROM (SELECT 1 FROM " + table + " LIMIT 1)";
    this.getAll = new String[GET_ALL_SIZES];
    for (int i = 0; i < GET_ALL_SIZES; i++) {
      StringBuilder sb =
          new StringBuilder("SELECT k, v")
              .append(checksums ? ", " + crc : "")
              .append(" FROM ")
              .append(table)
              .append(" WHERE k IN (?");
      sb.append(",?".repeat((1 << i) - 1)).append(')');
      getAll[i] = sb.toString();
    }
  }

  /** Binds a key and value (and their checksum, in a checksummed table) to {@link #upsert}. */
  void bindUpsert(PreparedStatement ps, byte[] key, byte[] value) throws SQLException {
    ps.setBytes(1, key);
    ps.setBytes(2, value);
    if (checksums) {
      ps.setInt(3, RowChecksum.of(key, value));
    }
  }

  /**
   * The table kv4j creates: a rowid table with a unique BLOB key, chosen by measurement over {@code
   * WITHOUT ROWID} (see README.md and {@code LayoutMeasurement}); with checksums, a third column
   * holds each row's {@link RowChecksum}.
   */
  static String createTable(String table, boolean checksums) {
    return "CREATE TABLE "
        + table
        + "(k BLOB NOT NULL UNIQUE CHECK (typeof(k) = 'blob'),"
        + " v BLOB NOT NULL CHECK (typeof(v) = 'blob')"
        + (checksums
            ? ", "
                + RowChecksum.COLUMN
                + " INTEGER NOT NULL CHECK (typeof("
                + RowChecksum.COLUMN
                + ") = 'integer')"
            : "")
        + ")";
  }

  /**
   * A range query: {@code lower}/{@code upper} are {@code ">="}, {@code ">"}, {@code "<="}, {@code
   * "<"} or null for no bound; the last parameter is the row limit. Columns: k, v and, in a
   * checksummed table, the checksum.
   */
  String range(String lower, String upper, boolean reverse) {
    StringBuilder sb =
        new StringBuilder("SELECT k, v")
            .append(checksums ? ", " + RowChecksum.COLUMN : "")
            .append(" FROM ")
            .append(table);
    if (lower != null || upper != null) {
      sb.append(" WHERE ");
      if (lower != null) {
        sb.append("k ").append(lower).append(" ?");
      }
      if (lower != null && upper != null) {
        sb.append(" AND ");
      }
      if (upper != null) {
        sb.append("k ").append(upper).append(" ?");
      }
    }
    return sb.append(" ORDER BY k ").append(reverse ? "DESC" : "ASC").append(" LIMIT ?").toString();
  }
}
