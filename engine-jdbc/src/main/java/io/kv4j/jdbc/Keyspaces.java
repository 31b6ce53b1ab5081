package io.kv4j.jdbc;

import io.kv4j.spi.ServerNames;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The named keyspaces of a store: each is a table of its own, listed in a catalog table beside the
 * store's table ({@code <store table>_keyspaces_<hash>}, created with the first keyspace).
 *
 * <p>A keyspace's table name is derived from the store's table, the keyspace name and a random
 * nonce drawn at creation ({@code <store table, 24>_<name, lower case, 16>_<20 hex>}, at most 62
 * characters, lower case only): names differing only in case get different tables whatever the
 * server's case rules, and a keyspace dropped and created again gets a new table, so a table left
 * by a crash is never taken for a new keyspace's.
 *
 * <p>Catalog rows have a state: {@code r} (ready, the only state listed), {@code c} (being created)
 * and {@code d} (being dropped). PostgreSQL runs DDL in transactions, so a creation (row and {@code
 * CREATE TABLE}) and a drop (row and {@code DROP TABLE}) each commit as one transaction and the
 * other states are never seen. MySQL/MariaDB commit each DDL statement on its own, so the steps are
 * ordered for crashes: create = row {@code c}, {@code CREATE TABLE}, row {@code r}; drop = row
 * {@code d}, {@code DROP TABLE}, delete the row. A keyspace is listed only while its table exists,
 * and a row left in state {@code c} or {@code d} is settled (its table dropped if present, the row
 * deleted) when the store opens or the name is next created or dropped.
 */
final class Keyspaces {
  static final String READY = "r";
  static final String CREATING = "c";
  static final String DROPPING = "d";
  private static final SecureRandom NONCES = new SecureRandom();

  private final Dialect dialect;
  private final String storeTable;
  private final String catalog;
  private final String quotedCatalog;

  /** Creations and drops hold the write lock; a batch holds the read lock while it runs. */
  final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  /** Ready keyspaces this store has seen: name to table. */
  private final Map<String, String> tables = new ConcurrentHashMap<>();

  Keyspaces(Dialect dialect, String storeTable) {
    this.dialect = dialect;
    this.storeTable = storeTable;
    this.catalog = catalogFor(storeTable);
    this.quotedCatalog = dialect.quote(catalog);
  }

  /** The catalog table of a store: at most 59 characters, lower case. */
  static String catalogFor(String storeTable) {
    String prefix = ServerNames.sanitise(storeTable, "_");
    return cut(prefix, 36) + "_keyspaces_" + ServerNames.sha256Hex(storeTable, 12);
  }

  /** A new table name for a keyspace: at most 62 characters, lower case. */
  static String tableFor(String storeTable, String name, long nonce) {
    return cut(ServerNames.sanitise(storeTable, "_"), 24)
        + "_"
        + cut(ServerNames.sanitise(name, "_"), 16)
        + "_"
        + ServerNames.sha256Hex(storeTable + "\n" + name + "\n" + nonce, 20);
  }

  private static String cut(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max);
  }

  String catalog() {
    return catalog;
  }

  /** The table of a ready keyspace this store already resolved, or null. */
  String cached(String name) {
    return tables.get(name);
  }

  /** Names of the ready keyspaces. */
  List<String> names(Connection c) throws SQLException {
    List<String> names = new ArrayList<>();
    if (!dialect.tableExists(c, catalog)) {
      return names;
    }
    try (PreparedStatement ps =
        c.prepareStatement("SELECT name FROM " + quotedCatalog + " WHERE state = ?")) {
      ps.setString(1, READY);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  /**
   * The table of a keyspace, creating the keyspace when absent and {@code create} is true.
   *
   * @return the table, or null when absent and not created
   */
  String table(Connection c, String name, boolean create) throws SQLException {
    String t = tables.get(name);
    if (t != null) {
      return t;
    }
    lock.writeLock().lock();
    try {
      Row row = dialect.tableExists(c, catalog) ? row(c, name) : null;
      if (row != null && row.state.equals(READY)) {
        tables.put(name, row.table);
        return row.table;
      }
      if (!create) {
        return null;
      }
      Dialect.execute(c, dialect.createCatalog(catalog));
      if (row != null) {
        settle(c, row);
      }
      String table = tableFor(storeTable, name, NONCES.nextLong());
      inTransaction(
          c,
          () -> {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "INSERT INTO " + quotedCatalog + " (name, tbl, state) VALUES (?, ?, ?)")) {
              ps.setString(1, name);
              ps.setString(2, table);
              ps.setString(3, CREATING);
              ps.executeUpdate();
            }
            Dialect.execute(c, dialect.createTable(table));
            setState(c, name, READY);
          });
      tables.put(name, table);
      return table;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Creates the catalog, empty, if the store has none yet: a conditional batch naming a keyspace
   * that does not exist locks the keyspace's name in it (see {@link #lockedTable}). Autocommit, and
   * outside the batch's transaction (MySQL/MariaDB commit DDL on their own).
   */
  void ensureCatalog(Connection c) throws SQLException {
    if (!dialect.tableExists(c, catalog)) {
      Dialect.execute(c, dialect.createCatalog(catalog));
    }
  }

  /**
   * Inside a conditional batch's transaction: keeps every other session from creating or dropping
   * keyspace {@code name} until the transaction ends, and looks it up (see {@link
   * Dialect#lockCatalogName}). Takes no lock of this object: the caller holds {@link #lock}'s read
   * side, so no creation or drop of this store object runs meanwhile.
   *
   * @return the keyspace's table, or null when it does not exist
   */
  String lockedTable(Connection c, String name) throws SQLException {
    String t = dialect.lockCatalogName(c, catalog, name);
    if (t != null) {
      tables.put(name, t);
    }
    return t;
  }

  /**
   * Drops a keyspace: its table and its catalog row.
   *
   * @return true if it was listed
   */
  boolean drop(Connection c, String name) throws SQLException {
    lock.writeLock().lock();
    try {
      tables.remove(name);
      Row row = dialect.tableExists(c, catalog) ? row(c, name) : null;
      if (row == null) {
        return false;
      }
      if (!row.state.equals(READY)) {
        settle(c, row);
        return false;
      }
      inTransaction(
          c,
          () -> {
            setState(c, name, DROPPING);
            Dialect.execute(c, "DROP TABLE IF EXISTS " + dialect.quote(row.table));
            deleteRow(c, name);
          });
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Settles the rows a crash left in state {@code c} or {@code d}; called at open by the lock
   * holder of a writable store.
   *
   * @return how many rows were settled
   */
  int recover(Connection c) throws SQLException {
    if (!dialect.tableExists(c, catalog)) {
      return 0;
    }
    List<Row> unsettled = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement("SELECT name, tbl, state FROM " + quotedCatalog + " WHERE state <> ?")) {
      ps.setString(1, READY);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          unsettled.add(new Row(rs.getString(1), rs.getString(2), rs.getString(3)));
        }
      }
    }
    for (Row r : unsettled) {
      settle(c, r);
    }
    return unsettled.size();
  }

  /** Drops the table of a row not ready (if it exists) and deletes the row. */
  private void settle(Connection c, Row row) throws SQLException {
    inTransaction(
        c,
        () -> {
          Dialect.execute(c, "DROP TABLE IF EXISTS " + dialect.quote(row.table));
          deleteRow(c, row.name);
        });
  }

  private Row row(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT tbl, state FROM " + quotedCatalog + " WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Row(name, rs.getString(1), rs.getString(2)) : null;
      }
    }
  }

  private void setState(Connection c, String name, String state) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("UPDATE " + quotedCatalog + " SET state = ? WHERE name = ?")) {
      ps.setString(1, state);
      ps.setString(2, name);
      ps.executeUpdate();
    }
  }

  private void deleteRow(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("DELETE FROM " + quotedCatalog + " WHERE name = ?")) {
      ps.setString(1, name);
      ps.executeUpdate();
    }
  }

  @FunctionalInterface
  private interface Steps {
    void run() throws SQLException;
  }

  /**
   * Runs the steps in one transaction where the server's DDL is transactional (PostgreSQL); else
   * each statement commits on its own, in the order given (MySQL/MariaDB).
   */
  private void inTransaction(Connection c, Steps steps) throws SQLException {
    if (!dialect.transactionalDdl()) {
      steps.run();
      return;
    }
    c.setAutoCommit(false);
    try {
      steps.run();
      c.commit();
    } catch (SQLException | RuntimeException e) {
      SqlServer.rollbackQuietly(c);
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }

  private record Row(String name, String table, String state) {}
}
