package io.kv4j.jdbc;

import java.util.Set;

/**
 * Engine {@code mysql} (alias {@code mariadb}): an InnoDB table on a MySQL or MariaDB server,
 * reached through MariaDB Connector/J with a HikariCP pool. Keys are {@code VARBINARY} primary keys
 * (binary collation, unsigned byte order); batches are transactions; cursors are repeatable-read
 * consistent snapshots streamed with a fetch size. Commit durability is the server-wide {@code
 * innodb_flush_log_at_trx_commit}: {@code SYNC} requires it to be 1 (checked at open); {@code
 * BUFFERED} accepts any value. The store path names the table unless option {@code table} is set.
 */
public final class MysqlProvider extends JdbcProvider {
  /** For ServiceLoader. */
  public MysqlProvider() {
    super(MysqlDialect.INSTANCE);
  }

  @Override
  public Set<String> aliases() {
    return Set.of("mariadb");
  }

  @Override
  public String description() {
    return "MySQL/MariaDB InnoDB table via JDBC (varbinary keys, transactions, snapshot cursors)";
  }
}
