package io.kv4j.jdbc;

import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.ServerNames;
import java.nio.file.Path;
import java.util.List;

/** Connection and table settings read from a store config. */
record JdbcSettings(
    String host,
    int port,
    String database,
    String user,
    String password,
    String table,
    int poolSize,
    int connectTimeoutMillis,
    int socketTimeoutMillis,
    int fetchSize,
    int lockWaitMillis,
    int retryTimeoutMillis,
    boolean verifyDurability) {

  static final OptionSpec<String> HOST =
      OptionSpec.text("host", "127.0.0.1", "server host name or address");
  static final OptionSpec<String> DATABASE =
      OptionSpec.text("database", "kv4j", "database (catalog) holding the store's table");
  static final OptionSpec<String> USER = OptionSpec.text("user", "kv4j", "login user");
  static final OptionSpec<String> PASSWORD = OptionSpec.text("password", "kv4j", "login password");
  static final OptionSpec<String> TABLE =
      OptionSpec.text(
          "table",
          "",
          "table holding the store; empty derives kv4j_<name>_<hash> from the store path, so each"
              + " path is its own namespace");
  static final OptionSpec<Integer> POOL_SIZE =
      OptionSpec.integer(
          "pool-size",
          8,
          1,
          1000,
          "connections",
          "most pooled connections (an open cursor past its first page holds one)");
  static final OptionSpec<Integer> CONNECT_TIMEOUT =
      OptionSpec.integer(
          "connect-timeout",
          5000,
          250,
          600_000,
          "ms",
          "how long to wait for a connection (TCP connect, login, or a free pooled one)");
  static final OptionSpec<Integer> SOCKET_TIMEOUT =
      OptionSpec.integer(
          "socket-timeout", 60_000, 0, 3_600_000, "ms", "read timeout on a statement; 0 is none");
  static final OptionSpec<Integer> FETCH_SIZE =
      OptionSpec.integer(
          "fetch-size", 1000, 1, 1_000_000, "rows", "rows a cursor fetches per round trip");
  static final OptionSpec<Integer> LOCK_WAIT =
      OptionSpec.integer(
          "lock-wait",
          3000,
          0,
          600_000,
          "ms",
          "how long open waits for another session's lock on the table before"
              + " StoreLockedException (a killed client's session takes a moment to end)");
  static final OptionSpec<Integer> RETRY_TIMEOUT =
      OptionSpec.integer(
          "retry-timeout",
          20_000,
          0,
          3_600_000,
          "ms",
          "how long an operation keeps retrying on fresh connections after losing its"
              + " connection (server restart, failover)");
  static final OptionSpec<Boolean> VERIFY_DURABILITY =
      OptionSpec.bool(
          "verify-durability",
          true,
          "refuse to open when the server's settings cannot honour the durability asked for");

  static List<OptionSpec<?>> options(OptionSpec<Integer> port) {
    return List.of(
        HOST,
        port,
        DATABASE,
        USER,
        PASSWORD,
        TABLE,
        POOL_SIZE,
        CONNECT_TIMEOUT,
        SOCKET_TIMEOUT,
        FETCH_SIZE,
        LOCK_WAIT,
        RETRY_TIMEOUT,
        VERIFY_DURABILITY);
  }

  static OptionSpec<Integer> portOption(int defaultPort) {
    return OptionSpec.integer("port", defaultPort, 1, 65535, "", "server TCP port");
  }

  static JdbcSettings of(StoreConfig c, OptionSpec<Integer> port) {
    String table = c.get(TABLE);
    if (table.isEmpty()) {
      table = tableFor(c.path());
    } else if (!table.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
      throw new IllegalArgumentException(
          "option 'table' has invalid value '"
              + table
              + "': expected letters, digits and _ (at most 63), not starting with a digit");
    }
    return new JdbcSettings(
        c.get(HOST),
        c.get(port),
        c.get(DATABASE),
        c.get(USER),
        c.get(PASSWORD),
        table,
        c.get(POOL_SIZE),
        c.get(CONNECT_TIMEOUT),
        c.get(SOCKET_TIMEOUT),
        c.get(FETCH_SIZE),
        c.get(LOCK_WAIT),
        c.get(RETRY_TIMEOUT),
        c.get(VERIFY_DURABILITY));
  }

  /**
   * The table for a store path: {@code kv4j_<last path element, sanitised>_<16 hex of SHA-256 of
   * the absolute path>} ({@link ServerNames#forPath}). Lower case, at most 45 characters, stable
   * across runs and machines.
   */
  static String tableFor(Path path) {
    return ServerNames.forPath(path, '_', "", 24);
  }

  /** host:port for messages. */
  String address() {
    return host + ":" + port;
  }
}
