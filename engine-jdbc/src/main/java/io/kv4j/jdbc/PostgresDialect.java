package io.kv4j.jdbc;

import io.kv4j.Durability;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * PostgreSQL: {@code bytea} key (compared with memcmp, then length: unsigned byte order), {@code ON
 * CONFLICT} upserts, session advisory locks, {@code synchronous_commit} per connection.
 */
final class PostgresDialect extends Dialect {
  static final PostgresDialect INSTANCE = new PostgresDialect();

  private PostgresDialect() {}

  @Override
  String id() {
    return "postgres";
  }

  @Override
  String scheme() {
    return "postgresql";
  }

  @Override
  int defaultPort() {
    return 5432;
  }

  @Override
  int maxKeySize() {
    return 1024; // well under the 2704-byte btree entry limit
  }

  @Override
  int maxValueSize() {
    return 256 << 20;
  }

  @Override
  String jdbcUrl(JdbcSettings s) {
    return "jdbc:postgresql://"
        + s.host()
        + ":"
        + s.port()
        + "/"
        + s.database()
        + "?ApplicationName=kv4j&tcpKeepAlive=true&reWriteBatchedInserts=true"
        + "&connectTimeout="
        + Math.max(1, s.connectTimeoutMillis() / 1000)
        + "&socketTimeout="
        + (s.socketTimeoutMillis() + 999) / 1000;
  }

  @Override
  String connectionInitSql(Durability d) {
    return d == Durability.SYNC ? "SET synchronous_commit TO on" : "SET synchronous_commit TO off";
  }

  @Override
  String createTable(String table) {
    return "CREATE TABLE IF NOT EXISTS "
        + quote(table)
        + " (k bytea PRIMARY KEY, v bytea NOT NULL)";
  }

  @Override
  String createCatalog(String table) {
    return "CREATE TABLE IF NOT EXISTS "
        + quote(table)
        + " (name varchar(64) COLLATE \"C\" PRIMARY KEY,"
        + " tbl varchar(64) NOT NULL UNIQUE, state char(1) NOT NULL)";
  }

  @Override
  boolean deleteLocksAbsentKey() {
    return false; // row locks only: a DELETE that finds no row locks nothing
  }

  @Override
  boolean transactionalDdl() {
    return true;
  }

  @Override
  String quote(String identifier) {
    return '"' + identifier + '"';
  }

  @Override
  String upsert(String table) {
    return "INSERT INTO "
        + quote(table)
        + " (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v";
  }

  @Override
  boolean insertIfAbsent(Connection c, String table, byte[] k, byte[] v) throws SQLException {
    return insertRow(
        c,
        "INSERT INTO " + quote(table) + " (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING",
        k,
        v);
  }

  @Override
  int conditionIsolation() {
    return Connection.TRANSACTION_READ_COMMITTED;
  }

  /**
   * A present row: {@code SELECT ... FOR UPDATE} (at read committed it waits for a concurrent
   * writer and returns the row as that one committed it). An absent key has no row to lock, and
   * neither an advisory lock (plain puts do not take it) nor {@code SERIALIZABLE} (which orders
   * only serializable transactions, not a read-committed put) keeps another session from inserting
   * it: so the batch inserts the key itself, with an empty placeholder value, by {@code INSERT ...
   * ON CONFLICT DO NOTHING}. Until this transaction ends, the uncommitted index entry makes every
   * other insert of the key (upsert, batch, putIfAbsent, another conditional batch) wait; no other
   * session ever sees the placeholder, and the batch overwrites it with its put or deletes it
   * before committing (a rollback removes it). When the insert finds a row after all (committed
   * since the select; it waits for an inserting transaction to end), the select runs again.
   */
  @Override
  ConditionRow lockForCondition(Connection c, String table, byte[] key) throws SQLException {
    while (true) {
      byte[] v = selectForUpdate(c, table, key);
      if (v != null) {
        return new ConditionRow(v, false);
      }
      if (insertIfAbsent(c, table, key, new byte[0])) {
        return new ConditionRow(null, true);
      }
    }
  }

  /**
   * {@code LOCK TABLE ... IN SHARE MODE}: conflicts with the row changes a keyspace creation or
   * drop makes in the catalog (one transaction each on PostgreSQL), not with other conditional
   * batches.
   */
  @Override
  String lockCatalogName(Connection c, String catalog, String name) throws SQLException {
    execute(c, "LOCK TABLE " + quote(catalog) + " IN SHARE MODE");
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tbl FROM "
                + quote(catalog)
                + " WHERE name = ? AND state = '"
                + Keyspaces.READY
                + "'")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /**
   * {@code BEGIN READ ONLY} at {@code REPEATABLE READ}, then {@code SELECT 1}: PostgreSQL takes a
   * transaction's snapshot at its first statement, not at {@code BEGIN}.
   */
  @Override
  void beginSnapshot(Connection c) throws SQLException {
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    c.setReadOnly(true);
    queryLong(c, "SELECT 1");
  }

  private static long lockKey(String table) {
    long h = 0xcbf29ce484222325L; // FNV-1a 64
    for (byte b : ("kv4j:" + table).getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  @Override
  boolean tryLock(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      ps.setLong(1, lockKey(table));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  @Override
  void unlock(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
      ps.setLong(1, lockKey(table));
      ps.executeQuery().close();
    }
  }

  @Override
  String currentSchemaFunction() {
    return "current_schema()";
  }

  @Override
  long tableBytes(Connection c, String table) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT pg_total_relation_size(to_regclass(?))")) {
      ps.setString(1, quote(table));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Override
  String checkDurability(Connection c, Durability d) throws SQLException {
    if (d == Durability.SYNC) {
      String fsync = queryString(c, "SHOW fsync");
      if ("off".equals(fsync)) {
        return "the server runs with fsync=off, so no commit survives power loss; SYNC cannot be"
            + " honoured (open with durability=buffered or verify-durability=false)";
      }
    }
    return null;
  }

  @Override
  void sync(Connection c) throws SQLException {
    // A transaction that owns an xid writes a commit record; with synchronous_commit on its commit
    // waits until the WAL is flushed up to that record, i.e. past every earlier async commit.
    boolean auto = c.getAutoCommit();
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute("SET LOCAL synchronous_commit TO on");
      st.executeQuery("SELECT pg_current_xact_id()").close();
      c.commit();
    } catch (SQLException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(auto);
    }
  }

  /**
   * Plain {@code VACUUM (ANALYZE)}: marks dead row versions reusable, refreshes the planner's
   * statistics and, when the table ends in empty pages, returns them to the operating system. Its
   * lock conflicts with no read or write, and an open cursor does not stop it (rows its snapshot
   * still sees are kept). Only the final truncation needs an exclusive lock, which PostgreSQL takes
   * only when no one holds the table (retrying for at most 5 s, then skipping it) and gives up as
   * soon as another session waits. It must run outside a transaction, hence autocommit. {@code
   * VACUUM FULL}, which would rewrite the table, is not used: it locks out every read and write and
   * would wait forever on this store's own open cursor.
   */
  @Override
  void compact(Connection c, String table) throws SQLException {
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    execute(c, "VACUUM (ANALYZE) " + quote(table));
  }

  @Override
  boolean isServerShutdownState(String st) {
    // admin_shutdown, crash_shutdown, cannot_connect_now
    return st.equals("57P01") || st.equals("57P02") || st.equals("57P03");
  }
}
