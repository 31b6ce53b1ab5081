package io.kv4j.redis;

import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.ServerNames;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import redis.clients.jedis.HostAndPort;

/** Connection and namespace settings read from a store config. */
record RedisSettings(
    String mode,
    String host,
    int port,
    Set<HostAndPort> nodes,
    String user,
    String password,
    int database,
    String namespace,
    int poolSize,
    int connectTimeoutMillis,
    int socketTimeoutMillis,
    int fetchSize,
    int lockTtlMillis,
    int lockWaitMillis,
    String lock,
    int retryTimeoutMillis,
    boolean verifyDurability) {

  static final OptionSpec<String> MODE =
      OptionSpec.choice(
          "mode",
          "standalone",
          List.of("standalone", "cluster"),
          "standalone: one server (host, port); cluster: a Redis Cluster reached through nodes");
  static final OptionSpec<String> HOST =
      OptionSpec.text("host", "127.0.0.1", "standalone server host");
  static final OptionSpec<Integer> PORT =
      OptionSpec.integer("port", 6379, 1, 65535, "", "standalone server port");
  static final OptionSpec<String> NODES =
      OptionSpec.text(
          "nodes",
          "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002",
          "cluster mode: comma-separated host:port seed nodes (any subset of the cluster)");
  static final OptionSpec<String> USER =
      OptionSpec.text("user", "", "ACL user; empty is the default user");
  static final OptionSpec<String> PASSWORD =
      OptionSpec.text("password", "", "password; empty sends no AUTH");
  static final OptionSpec<Integer> DATABASE =
      OptionSpec.integer(
          "database", 0, 0, 1023, "", "standalone database index (a cluster has only 0)");
  static final OptionSpec<String> PREFIX =
      OptionSpec.text(
          "prefix",
          "",
          "namespace of the store's keys; empty derives kv4j:<name>:<hash> from the store path");
  static final OptionSpec<Integer> POOL_SIZE =
      OptionSpec.integer("pool-size", 8, 1, 1000, "connections", "most connections per node");
  static final OptionSpec<Integer> CONNECT_TIMEOUT =
      OptionSpec.integer("connect-timeout", 5000, 100, 600_000, "ms", "TCP connect timeout");
  static final OptionSpec<Integer> SOCKET_TIMEOUT =
      OptionSpec.integer(
          "socket-timeout", 30_000, 100, 3_600_000, "ms", "how long to wait for a reply");
  static final OptionSpec<Integer> FETCH_SIZE =
      OptionSpec.integer(
          "fetch-size", 500, 1, 5000, "entries", "entries a cursor fetches per call");
  static final OptionSpec<Integer> LOCK_TTL =
      OptionSpec.integer(
          "lock-ttl",
          3000,
          500,
          600_000,
          "ms",
          "lifetime of the store's lock key, refreshed every third of it while open; a crashed"
              + " client's lock expires after this");
  static final OptionSpec<Integer> LOCK_WAIT =
      OptionSpec.integer(
          "lock-wait",
          4000,
          0,
          600_000,
          "ms",
          "how long open waits for a held lock to expire before StoreLockedException");
  static final OptionSpec<String> LOCK =
      OptionSpec.choice(
          "lock",
          "exclusive",
          List.of("exclusive", "shared"),
          "exclusive: one open store per namespace (kv4j's rule); shared: several clients (application"
              + " instances) open it at once and coordinate with conditional writes; the two modes"
              + " exclude each other");
  static final OptionSpec<Integer> RETRY_TIMEOUT =
      OptionSpec.integer(
          "retry-timeout",
          20_000,
          0,
          3_600_000,
          "ms",
          "how long an operation keeps retrying after losing its connection (restart, failover)");
  static final OptionSpec<Boolean> VERIFY_DURABILITY =
      OptionSpec.bool(
          "verify-durability",
          true,
          "refuse to open when the server's persistence cannot honour the durability asked for"
              + " (needs CONFIG GET)");

  static final List<OptionSpec<?>> OPTIONS =
      List.of(
          MODE,
          HOST,
          PORT,
          NODES,
          USER,
          PASSWORD,
          DATABASE,
          PREFIX,
          POOL_SIZE,
          CONNECT_TIMEOUT,
          SOCKET_TIMEOUT,
          FETCH_SIZE,
          LOCK_TTL,
          LOCK_WAIT,
          LOCK,
          RETRY_TIMEOUT,
          VERIFY_DURABILITY);

  /** Mode of engine {@code redis-sharded}: a cluster unless told otherwise. */
  static final OptionSpec<String> SHARDED_MODE =
      OptionSpec.choice(
          "mode",
          "cluster",
          List.of("standalone", "cluster"),
          "cluster: a Redis Cluster reached through nodes (the shards spread over its primaries);"
              + " standalone: one server (host, port), all shards on it");

  static final OptionSpec<Integer> SHARDS =
      OptionSpec.integer(
          "shards",
          64,
          1,
          16384,
          "shards",
          "hash-tagged shards a store's keys spread over (by CRC-32 of the key); fixed when the"
              + " store is created, later opens use the stored count");

  /** The options of engine {@code redis-sharded}. */
  static final List<OptionSpec<?>> SHARDED_OPTIONS = shardedOptions();

  private static List<OptionSpec<?>> shardedOptions() {
    List<OptionSpec<?>> l = new ArrayList<>(OPTIONS);
    l.set(0, SHARDED_MODE);
    l.add(SHARDS);
    return List.copyOf(l);
  }

  static RedisSettings of(StoreConfig c) {
    return of(c, MODE);
  }

  static RedisSettings of(StoreConfig c, OptionSpec<String> modeSpec) {
    String prefix = c.get(PREFIX);
    if (prefix.isEmpty()) {
      prefix = namespaceFor(c.path());
    } else if (prefix.contains("{") || prefix.contains("}")) {
      throw new IllegalArgumentException(
          "option 'prefix' has invalid value '"
              + prefix
              + "': braces are reserved for the hash tag");
    }
    Set<HostAndPort> nodes = new LinkedHashSet<>();
    for (String n : c.get(NODES).split(",")) {
      String t = n.trim();
      if (t.isEmpty()) {
        continue;
      }
      try {
        nodes.add(HostAndPort.from(t));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "option 'nodes' has invalid entry '" + t + "': expected host:port", e);
      }
    }
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("option 'nodes' names no host:port");
    }
    if (c.get(modeSpec).equals("cluster") && c.get(DATABASE) != 0) {
      throw new IllegalArgumentException(
          "option 'database' must be 0 in cluster mode: a Redis Cluster has one database");
    }
    return new RedisSettings(
        c.get(modeSpec),
        c.get(HOST),
        c.get(PORT),
        nodes,
        c.get(USER),
        c.get(PASSWORD),
        c.get(DATABASE),
        prefix,
        c.get(POOL_SIZE),
        c.get(CONNECT_TIMEOUT),
        c.get(SOCKET_TIMEOUT),
        c.get(FETCH_SIZE),
        c.get(LOCK_TTL),
        c.get(LOCK_WAIT),
        c.get(LOCK),
        c.get(RETRY_TIMEOUT),
        c.get(VERIFY_DURABILITY));
  }

  boolean sharedLock() {
    return lock.equals("shared");
  }

  boolean cluster() {
    return mode.equals("cluster");
  }

  /** The servers, for messages: host:port or the cluster seed list. */
  String address() {
    if (!cluster()) {
      return host + ":" + port;
    }
    List<String> s = new ArrayList<>();
    for (HostAndPort n : nodes) {
      s.add(n.toString());
    }
    return String.join(",", s);
  }

  /**
   * The namespace for a store path: {@code kv4j:<last path element>:<16 hex of SHA-256 of the
   * absolute path>}, the element lower-cased, each run of characters other than {@code a-z 0-9 . _
   * -} made one {@code _}, cut to 32 characters ({@link ServerNames#forPath}). Existing stores are
   * found under it: it must never change.
   */
  static String namespaceFor(Path path) {
    return ServerNames.forPath(path, ':', "._-", 32);
  }
}
