package io.kv4j.jdbc;

import io.kv4j.Durability;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** What differs between the SQL servers: URLs, DDL, upsert syntax, locks and commit settings. */
abstract class Dialect {
  /** The engine id. */
  abstract String id();

  /** The JDBC URL scheme name shown in locations, e.g. {@code postgresql}. */
  abstract String scheme();

  /** Default TCP port. */
  abstract int defaultPort();

  /** Largest key the table's key column takes. */
  abstract int maxKeySize();

  /** Largest value. */
  abstract int maxValueSize();

  /** The JDBC URL for the settings. */
  abstract String jdbcUrl(JdbcSettings s);

  /** SQL run on every new pooled connection for the durability, or null. */
  abstract String connectionInitSql(Durability d);

  /** DDL creating the table if absent. */
  abstract String createTable(String table);

  /**
   * DDL creating a store's keyspace catalog if absent: {@code name} (case-sensitive, primary key),
   * {@code tbl} (the keyspace's table) and {@code state} (one letter).
   */
  abstract String createCatalog(String table);

  /** Whether DDL runs inside transactions (PostgreSQL) rather than committing on its own. */
  abstract boolean transactionalDdl();

  /**
   * Whether a {@code DELETE} of an absent key locks that key until the commit, so that no other
   * session can insert it meanwhile: InnoDB's gap lock does; PostgreSQL locks only rows that exist.
   * Where it does not, a batch's deletes first insert the key (see {@link TableWrites#apply}).
   */
  abstract boolean deleteLocksAbsentKey();

  /** Quotes an identifier. */
  abstract String quote(String identifier);

  /** Insert-or-replace of (k, v). */
  abstract String upsert(String table);

  /**
   * Inserts (k, v) unless the table holds k, in one autocommit statement: atomic against every
   * other session inserting k (the primary key decides).
   *
   * @return true when inserted, false when k was present
   */
  abstract boolean insertIfAbsent(Connection c, String table, byte[] k, byte[] v)
      throws SQLException;

  /**
   * The isolation level of a conditional batch's transaction: the one at which {@link
   * #lockForCondition} locks what it must (PostgreSQL read committed, where a locking read returns
   * the latest committed row; InnoDB repeatable read, where it also locks the gap of an absent
   * key).
   */
  abstract int conditionIsolation();

  /**
   * Inside a conditional batch's transaction: reads a condition key and locks it until the
   * transaction ends, so that no other session (a plain put, a batch, a conditional write of any
   * store object or SQL client) can change, delete or insert the key in between. A present row is
   * read with {@code SELECT ... FOR UPDATE}; how an absent key is locked is the server's.
   *
   * @return the key's value (null: absent) and whether a placeholder row was inserted to lock it,
   *     which the batch must overwrite or delete before it commits
   */
  abstract ConditionRow lockForCondition(Connection c, String table, byte[] key)
      throws SQLException;

  /** A condition key as {@link #lockForCondition} found it. */
  record ConditionRow(byte[] value, boolean placeholder) {}

  /** {@code SELECT v ... WHERE k = ? FOR UPDATE}: the value, or null when no row is there. */
  byte[] selectForUpdate(Connection c, String table, byte[] key) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT v FROM " + quote(table) + " WHERE k = ? FOR UPDATE")) {
      ps.setBytes(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getBytes(1) : null;
      }
    }
  }

  /**
   * Inside a transaction: locks the keyspace catalog so that no other session creates or drops the
   * keyspace {@code name} until the transaction ends, and returns its table if it is ready.
   *
   * @return the table, or null when the keyspace does not exist
   */
  abstract String lockCatalogName(Connection c, String catalog, String name) throws SQLException;

  /**
   * Starts, on a dedicated connection, a read-only repeatable-read transaction whose snapshot is
   * taken before this returns (not lazily at its first read), so that it sees the table as of the
   * call.
   */
  abstract void beginSnapshot(Connection c) throws SQLException;

  /**
   * Tries to take the store's exclusive lock on a dedicated connection.
   *
   * @return true when taken, false when another session holds it
   */
  abstract boolean tryLock(Connection c, String table) throws SQLException;

  /** Releases the lock taken with {@link #tryLock}. */
  abstract void unlock(Connection c, String table) throws SQLException;

  /** Whether the table exists in the current schema/database. */
  boolean tableExists(Connection c, String table) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = "
                + currentSchemaFunction()
                + " AND table_name = ?")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** SQL function naming the current schema. */
  abstract String currentSchemaFunction();

  /** Bytes the table and its indexes occupy on the server. */
  abstract long tableBytes(Connection c, String table) throws SQLException;

  /**
   * Checks at open that the server can honour the durability; throws a message when it cannot.
   *
   * @return null when fine, else why not
   */
  abstract String checkDurability(Connection c, Durability d) throws SQLException;

  /** Makes every commit acknowledged so far durable against power loss. */
  abstract void sync(Connection c) throws SQLException;

  /**
   * Reclaims the table's dead space on the server, if the server has a safe way to: one that never
   * blocks the store's other sessions and never waits on a transaction of this store (an open
   * cursor). The default does nothing.
   */
  void compact(Connection c, String table) throws SQLException {
    // No safe server-side equivalent: nothing to do.
  }

  /** Whether an error means the connection is gone and a retry on a fresh one may work. */
  boolean isConnectionLoss(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.sql.SQLRecoverableException
          || t instanceof java.sql.SQLTransientConnectionException
          || t instanceof java.sql.SQLNonTransientConnectionException
          || t instanceof java.io.IOException) {
        return true;
      }
      if (t instanceof SQLException s && s.getSQLState() != null) {
        String st = s.getSQLState();
        if (st.startsWith("08") || isServerShutdownState(st)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Server-specific states for "shutting down / starting up". */
  abstract boolean isServerShutdownState(String sqlState);

  /**
   * Runs an {@code INSERT} of one row whose two parameters are the key and the value.
   *
   * @return true when it inserted the row, false when it inserted none (a conflict it ignores)
   */
  static boolean insertRow(Connection c, String sql, byte[] k, byte[] v) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setBytes(1, k);
      ps.setBytes(2, v);
      return ps.executeUpdate() == 1;
    }
  }

  static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  static long queryLong(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  static String queryString(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
