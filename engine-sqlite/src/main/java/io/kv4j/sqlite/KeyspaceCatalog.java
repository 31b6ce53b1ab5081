package io.kv4j.sqlite;

import io.kv4j.StoreCorruptedException;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The keyspace catalog: which table of the database file holds which keyspace of which store.
 *
 * <p>Keyspace names are case-sensitive ({@code Users} and {@code users} differ) while SQLite's
 * table names are not, so a name is never used as a table name by itself. The catalog table {@value
 * #TABLE} maps (store table, keyspace name) to a table {@code kv4j_ks_<n>_<name>}, where {@code n}
 * is a number no other catalog row holds: unique whatever the case of the name, and readable in the
 * {@code sqlite3} shell. The catalog is created with the first keyspace, so a store that never had
 * one keeps exactly the schema it had (older kv4j versions open it unchanged), and every change
 * runs inside the caller's transaction on the writer: creating a keyspace (its table and catalog
 * row) and dropping one ({@code DROP TABLE} and the row) are atomic, also across a crash.
 *
 * <pre>
 * CREATE TABLE kv4j_keyspaces(
 *   store TEXT NOT NULL COLLATE NOCASE,  -- the store's table (option 'table')
 *   name TEXT NOT NULL,                  -- the keyspace name, compared byte for byte
 *   tbl TEXT NOT NULL UNIQUE COLLATE NOCASE,
 *   PRIMARY KEY (store, name))
 * </pre>
 */
final class KeyspaceCatalog {
  /** The catalog table's name. */
  static final String TABLE = "kv4j_keyspaces";

  /** Every keyspace table's name starts with this. */
  static final String TABLE_PREFIX = "kv4j_ks_";

  private static final String EXISTS =
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" + TABLE + "'";
  private static final String FIND = "SELECT tbl FROM " + TABLE + " WHERE store = ?1 AND name = ?2";
  private static final String NAMES = "SELECT name FROM " + TABLE + " WHERE store = ?1";
  private static final String INSERT =
      "INSERT INTO " + TABLE + "(store, name, tbl) VALUES(?, ?, ?)";
  private static final String DELETE = "DELETE FROM " + TABLE + " WHERE store = ?1 AND name = ?2";
  private static final String NUMBERS = "SELECT tbl FROM " + TABLE;
  private static final String TAKEN =
      "SELECT count(*) FROM sqlite_master WHERE name = ?1 COLLATE NOCASE";

  private final String store;
  private final Path file;

  /**
   * A store's view of the catalog.
   *
   * @param store the store's own table (option {@code table})
   * @param file the database file, for messages
   */
  KeyspaceCatalog(String store, Path file) {
    this.store = store;
    this.file = file;
  }

  /** Whether the file has a catalog (it is created with the first keyspace). */
  static boolean exists(SqlConn c) throws SQLException {
    return c.queryLong(EXISTS) > 0;
  }

  /** The table of a keyspace, or null if the store has no such keyspace. */
  String find(SqlConn c, String name) throws SQLException {
    if (!exists(c)) {
      return null;
    }
    PreparedStatement ps = c.prepare(FIND);
    ps.setString(1, store);
    ps.setString(2, name);
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** The store's keyspace names, in any order. */
  List<String> names(SqlConn c) throws SQLException {
    List<String> names = new ArrayList<>();
    if (!exists(c)) {
      return names;
    }
    PreparedStatement ps = c.prepare(NAMES);
    ps.setString(1, store);
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    }
    return names;
  }

  /**
   * Creates a keyspace: the catalog if absent, a table of the given row format and the catalog row.
   * Call inside a write transaction on the writer, for a name {@link #find} did not find.
   *
   * @return the new table's name
   */
  String create(SqlConn c, String name, boolean checksums) throws SQLException {
    if (!exists(c)) {
      c.exec(
          "CREATE TABLE "
              + TABLE
              + "(store TEXT NOT NULL COLLATE NOCASE, name TEXT NOT NULL,"
              + " tbl TEXT NOT NULL UNIQUE COLLATE NOCASE, PRIMARY KEY (store, name))");
    }
    Set<Long> used = new HashSet<>();
    try (ResultSet rs = c.prepare(NUMBERS).executeQuery()) {
      while (rs.next()) {
        used.add(number(rs.getString(1)));
      }
    }
    long n = 1;
    String tbl;
    while (true) {
      tbl = TABLE_PREFIX + n + "_" + name;
      if (!used.contains(n) && !taken(c, tbl)) {
        break;
      }
      n++;
    }
    c.exec(Sql.createTable(quote(tbl), checksums));
    PreparedStatement ps = c.prepare(INSERT);
    ps.setString(1, store);
    ps.setString(2, name);
    ps.setString(3, tbl);
    ps.executeUpdate();
    return tbl;
  }

  /**
   * Drops a keyspace: its table and its catalog row. Call inside a write transaction on the writer.
   *
   * @return the dropped table's name, or null if the store had no such keyspace
   */
  String drop(SqlConn c, String name) throws SQLException {
    String tbl = find(c, name);
    if (tbl == null) {
      return null;
    }
    c.exec("DROP TABLE IF EXISTS " + quote(tbl));
    PreparedStatement ps = c.prepare(DELETE);
    ps.setString(1, store);
    ps.setString(2, name);
    ps.executeUpdate();
    return tbl;
  }

  /**
   * The statements of a keyspace table, after checking that it is a kv4j table (columns k and v);
   * its row format is what its schema says.
   *
   * @throws StoreCorruptedException if the catalog names a table that is missing or not a kv4j
   *     table
   */
  Sql statements(SqlConn c, String name, String tbl) throws SQLException {
    Set<String> columns = new HashSet<>();
    PreparedStatement info = c.prepare("SELECT name FROM pragma_table_info(?)");
    info.setString(1, tbl);
    try (ResultSet rs = info.executeQuery()) {
      while (rs.next()) {
        columns.add(rs.getString(1).toLowerCase(Locale.ROOT));
      }
    }
    if (!columns.contains("k") || !columns.contains("v")) {
      throw new StoreCorruptedException(
          "engine 'sqlite': keyspace '"
              + name
              + "' of table '"
              + store
              + "' in "
              + file
              + ": the catalog "
              + TABLE
              + " names table '"
              + tbl
              + "', which "
              + (columns.isEmpty() ? "does not exist" : "is not a kv4j table (no columns k, v)"),
          file,
          -1);
    }
    return new Sql(quote(tbl), columns.contains(RowChecksum.COLUMN));
  }

  private boolean taken(SqlConn c, String tbl) throws SQLException {
    PreparedStatement ps = c.prepare(TAKEN);
    ps.setString(1, tbl);
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() && rs.getLong(1) > 0;
    }
  }

  /** The number in a table name {@code kv4j_ks_<n>_...}, or -1. */
  private static long number(String tbl) {
    if (tbl == null || !tbl.startsWith(TABLE_PREFIX)) {
      return -1;
    }
    int end = tbl.indexOf('_', TABLE_PREFIX.length());
    try {
      return Long.parseLong(tbl.substring(TABLE_PREFIX.length(), end < 0 ? tbl.length() : end));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** A table name as a quoted SQL identifier (keyspace names hold no quote). */
  static String quote(String tbl) {
    return "\"" + tbl + "\"";
  }
}
