package io.kv4j.jdbc;

/**
 * Engine {@code postgres}: a table on a PostgreSQL server, reached through JDBC with a HikariCP
 * pool. Keys are {@code bytea} primary keys (unsigned byte order); batches are transactions;
 * cursors are repeatable-read snapshots streamed with a fetch size. {@code SYNC} commits with
 * {@code synchronous_commit=on}, {@code BUFFERED} with {@code off} (a server crash may lose the
 * last fraction of a second of acknowledged commits; a client crash loses nothing acknowledged).
 * The store path names the table ({@code kv4j_<name>_<hash>}) unless option {@code table} is set.
 */
public final class PostgresProvider extends JdbcProvider {
  /** For ServiceLoader. */
  public PostgresProvider() {
    super(PostgresDialect.INSTANCE);
  }

  @Override
  public String description() {
    return "PostgreSQL server table via JDBC (bytea keys, transactions, snapshot cursors)";
  }
}
