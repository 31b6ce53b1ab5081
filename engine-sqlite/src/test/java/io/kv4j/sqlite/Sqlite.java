package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Test helpers: a store in a test's directory, and its database file reached as another program
 * reaches it (plain JDBC, no kv4j).
 */
final class Sqlite {
  private Sqlite() {}

  /** A buffered store's config (tests that do not crash need no fsync per write). */
  static StoreConfig.Builder config(Path dir) {
    return StoreConfig.builder("sqlite").path(dir).durability(Durability.BUFFERED);
  }

  static Store open(Path dir) {
    return Stores.open(config(dir).build());
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A plain connection to the store's database file. */
  static Connection connect(Path dir) throws SQLException {
    return DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.DB_FILE_NAME));
  }

  /** Runs one statement on the database file, outside kv4j. */
  static void sql(Path dir, String statement) throws SQLException {
    try (Connection c = connect(dir);
        Statement st = c.createStatement()) {
      st.execute(statement);
    }
  }

  /** The first column of every row a query returns, as text. */
  static List<String> query(Path dir, String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = connect(dir);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        rows.add(rs.getString(1));
      }
    }
    return rows;
  }
}
