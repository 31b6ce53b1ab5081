package io.kv4j.jdbc;

import io.kv4j.Durability;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * MySQL/MariaDB: {@code VARBINARY} key (binary collation: bytes compared unsigned, a prefix first),
 * {@code LONGBLOB} value, {@code ON DUPLICATE KEY UPDATE} upserts, {@code GET_LOCK} named locks.
 * Commit durability is the server-wide {@code innodb_flush_log_at_trx_commit}: it cannot be chosen
 * per session.
 */
final class MysqlDialect extends Dialect {
  static final MysqlDialect INSTANCE = new MysqlDialect();

  /** MySQL/MariaDB error code for a duplicate primary key. */
  private static final int ER_DUP_ENTRY = 1062;

  private MysqlDialect() {}

  @Override
  String id() {
    return "mysql";
  }

  @Override
  String scheme() {
    return "mariadb";
  }

  @Override
  int defaultPort() {
    return 3306;
  }

  @Override
  int maxKeySize() {
    return 1024; // InnoDB index keys reach 3072 bytes
  }

  @Override
  int maxValueSize() {
    return 16 << 20; // LONGBLOB takes 4 GiB, but one value must fit in max_allowed_packet
  }

  @Override
  String jdbcUrl(JdbcSettings s) {
    return "jdbc:mariadb://"
        + s.host()
        + ":"
        + s.port()
        + "/"
        + s.database()
        + "?connectTimeout="
        + s.connectTimeoutMillis()
        + "&socketTimeout="
        + s.socketTimeoutMillis()
        + "&tcpKeepAlive=true"
        // An UPDATE's count is the rows its WHERE matched (CLIENT_FOUND_ROWS), not the rows whose
        // value changed: replace(k, v, v) matched one row and must answer true. This is the
        // driver's default; said explicitly because conditional writes depend on it.
        + "&useAffectedRows=false";
  }

  @Override
  String connectionInitSql(Durability d) {
    return null;
  }

  @Override
  String createTable(String table) {
    return "CREATE TABLE IF NOT EXISTS "
        + quote(table)
        + " (k VARBINARY(1024) NOT NULL PRIMARY KEY, v LONGBLOB NOT NULL) ENGINE=InnoDB";
  }

  /** Names compare byte for byte ({@code ascii_bin}): keyspaces differing in case are distinct. */
  @Override
  String createCatalog(String table) {
    return "CREATE TABLE IF NOT EXISTS "
        + quote(table)
        + " (name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,"
        + " tbl VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL UNIQUE,"
        + " state CHAR(1) CHARACTER SET ascii COLLATE ascii_bin NOT NULL) ENGINE=InnoDB";
  }

  /** Every DDL statement commits implicitly (and the open transaction before it). */
  @Override
  boolean deleteLocksAbsentKey() {
    return true; // InnoDB locks the gap where an absent key would be, at REPEATABLE READ
  }

  @Override
  boolean transactionalDdl() {
    return false;
  }

  @Override
  String quote(String identifier) {
    return '`' + identifier + '`';
  }

  @Override
  String upsert(String table) {
    return "INSERT INTO "
        + quote(table)
        + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)";
  }

  /**
   * A plain {@code INSERT}; a duplicate key (error 1062) answers false. Not {@code INSERT IGNORE},
   * which also turns other errors into warnings, nor {@code ON DUPLICATE KEY UPDATE k = k}, whose
   * count (with found rows) is 1 for an insert and for a duplicate alike.
   */
  @Override
  boolean insertIfAbsent(Connection c, String table, byte[] k, byte[] v) throws SQLException {
    try {
      return insertRow(c, "INSERT INTO " + quote(table) + " (k, v) VALUES (?, ?)", k, v);
    } catch (SQLException e) {
      if (e.getErrorCode() == ER_DUP_ENTRY) {
        return false;
      }
      throw e;
    }
  }

  @Override
  int conditionIsolation() {
    return Connection.TRANSACTION_REPEATABLE_READ;
  }

  /**
   * {@code SELECT ... FOR UPDATE} at repeatable read: InnoDB's locking read sees the latest
   * committed row and locks its index record; for an absent key it locks the gap where the key
   * would be, which blocks every other session's insert into that gap (the key's included) until
   * this transaction ends. Two batches may hold the same gap; when both then insert into it, InnoDB
   * reports a deadlock (1213, SQLSTATE 40001) to one, which is rolled back whole and run again.
   */
  @Override
  ConditionRow lockForCondition(Connection c, String table, byte[] key) throws SQLException {
    return new ConditionRow(selectForUpdate(c, table, key), false);
  }

  /**
   * {@code SELECT ... LOCK IN SHARE MODE} of the name's catalog row at repeatable read: a shared
   * lock on the row, or on the gap where it would be, blocks the row changes of a keyspace creation
   * (insert, then the state set to ready) and drop (state set to dropping) until this transaction
   * ends.
   */
  @Override
  String lockCatalogName(Connection c, String catalog, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tbl, state FROM " + quote(catalog) + " WHERE name = ? LOCK IN SHARE MODE")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && Keyspaces.READY.equals(rs.getString(2)) ? rs.getString(1) : null;
      }
    }
  }

  /**
   * {@code START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY} at {@code REPEATABLE READ}:
   * InnoDB creates the read view at once (a plain {@code START TRANSACTION} would create it at the
   * first read). Ended by closing the connection.
   */
  @Override
  void beginSnapshot(Connection c) throws SQLException {
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    execute(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
  }

  private static String lockName(Connection c, String table) throws SQLException {
    String name = "kv4j." + c.getCatalog() + "." + table;
    return name.length() <= 64 ? name : name.substring(name.length() - 64);
  }

  @Override
  boolean tryLock(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, 0)")) {
      ps.setString(1, lockName(c, table));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1) == 1;
      }
    }
  }

  @Override
  void unlock(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
      ps.setString(1, lockName(c, table));
      ps.executeQuery().close();
    }
  }

  @Override
  String currentSchemaFunction() {
    return "DATABASE()";
  }

  @Override
  long tableBytes(Connection c, String table) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COALESCE(data_length + index_length, 0) FROM information_schema.tables"
                + " WHERE table_schema = DATABASE() AND table_name = ?")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  @Override
  String checkDurability(Connection c, Durability d) throws SQLException {
    long packet = queryLong(c, "SELECT @@max_allowed_packet");
    if (packet < maxValueSize() + (2L << 20)) {
      return "the server's max_allowed_packet is "
          + packet
          + " bytes, too small for 16 MiB values; set max_allowed_packet = 64M or more";
    }
    if (d == Durability.SYNC) {
      long flush = queryLong(c, "SELECT @@innodb_flush_log_at_trx_commit");
      if (flush != 1) {
        return "the server runs with innodb_flush_log_at_trx_commit="
            + flush
            + ", so a commit is not on disk when acknowledged; SYNC needs 1 (a server-wide"
            + " setting), or open with durability=buffered or verify-durability=false";
      }
    }
    return null;
  }

  @Override
  void sync(Connection c) throws SQLException {
    if (queryLong(c, "SELECT @@innodb_flush_log_at_trx_commit") != 1) {
      execute(c, "FLUSH ENGINE LOGS"); // needs the RELOAD privilege
    }
  }

  /**
   * Nothing: InnoDB's purge thread reclaims deleted rows for reuse on its own, and {@code OPTIMIZE
   * TABLE}, the only way to shrink the table, rebuilds it and needs an exclusive metadata lock at
   * its end. That lock waits for every open transaction on the table (this store's own open cursor
   * included, for up to {@code lock_wait_timeout}: a day on MariaDB, a year on MySQL by default)
   * and queues every later statement on the table behind it.
   */
  @Override
  void compact(Connection c, String table) {
    // Deliberately nothing; see above.
  }

  @Override
  boolean isServerShutdownState(String st) {
    // ER_SERVER_SHUTDOWN and "server is starting" surface as 70100 / HY000 with connection loss
    return st.equals("70100");
  }
}
