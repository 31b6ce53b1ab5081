package io.kv4j.redis;

import io.kv4j.StoreConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Where the test Redis servers are: system property {@code kv4j.test.redis.<key>}, else environment
 * {@code KV4J_TEST_REDIS_<KEY>}, else the defaults of {@code .ci/servers.sh} (standalone
 * 127.0.0.1:6379, cluster 127.0.0.1:7000-7002). Unreachable: skipped with how to start them; with
 * {@code CI=true} or {@code -Dkv4j.test.requireServers=true} failed instead.
 */
public final class TestRedis {
  private TestRedis() {}

  static String setting(String key, String dflt) {
    String p = System.getProperty("kv4j.test.redis." + key);
    if (p != null) {
      return p;
    }
    String e = System.getenv(("KV4J_TEST_REDIS_" + key).toUpperCase(Locale.ROOT).replace('-', '_'));
    return e != null ? e : dflt;
  }

  /** Standalone host. */
  public static String host() {
    return setting("host", "127.0.0.1");
  }

  /** Standalone port. */
  public static int port() {
    return Integer.parseInt(setting("port", "6379"));
  }

  /** Cluster seed nodes. */
  public static String nodes() {
    return setting("nodes", "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002");
  }

  /** Password (empty: none). */
  public static String password() {
    return setting("password", "");
  }

  /**
   * A config builder for one mode with the test settings applied.
   *
   * @param cluster cluster mode
   * @return the builder
   */
  public static StoreConfig.Builder builder(boolean cluster) {
    StoreConfig.Builder b = StoreConfig.builder("redis").option("password", password());
    if (cluster) {
      return b.option("mode", "cluster").option("nodes", nodes());
    }
    return b.option("host", host()).option("port", Integer.toString(port()));
  }

  /**
   * A config builder for engine {@code redis-sharded} on the test cluster.
   *
   * @return the builder
   */
  public static StoreConfig.Builder shardedBuilder() {
    return StoreConfig.builder("redis-sharded")
        .option("password", password())
        .option("mode", "cluster")
        .option("nodes", nodes());
  }

  static boolean required() {
    return "true".equalsIgnoreCase(System.getenv("CI"))
        || Boolean.getBoolean("kv4j.test.requireServers");
  }

  /**
   * A config for a store at {@code path} on the standalone server or the cluster (skipped when it
   * is not there), whose namespace {@code cleanup} drops after the test.
   */
  static StoreConfig.Builder config(
      boolean cluster, java.nio.file.Path path, List<Runnable> cleanup) {
    require(cluster);
    String ns = RedisSettings.namespaceFor(path);
    cleanup.add(() -> drop(cluster, ns));
    return builder(cluster).path(path);
  }

  /**
   * Skips (fails in CI) unless the server, or the cluster, answers.
   *
   * @param cluster which mode
   */
  public static void require(boolean cluster) {
    String where = cluster ? nodes() : host() + ":" + port();
    try (UnifiedJedis j = client(cluster)) {
      j.ping();
      if (cluster) {
        String info = ((RedisClusterClient) j).getClusterNodes().toString();
        Assertions.assertNotNull(info);
      }
    } catch (RuntimeException e) {
      String msg =
          "Redis "
              + (cluster ? "Cluster" : "server")
              + " not reachable at "
              + where
              + " ("
              + e
              + "). Start the test servers with `sudo .ci/servers.sh` (Debian; installs and starts"
              + " PostgreSQL, MariaDB, Redis on 6379 and a Redis Cluster on 7000-7002, loopback"
              + " only) or point kv4j.test.redis.* properties at yours.";
      if (required()) {
        Assertions.fail(msg + " CI=true: server tests must run.");
      }
      skip(msg);
    }
  }

  /**
   * A raw client for set-up and clean-up.
   *
   * @param cluster which mode
   * @return the client
   */
  public static UnifiedJedis client(boolean cluster) {
    DefaultJedisClientConfig.Builder cb =
        DefaultJedisClientConfig.builder().connectionTimeoutMillis(2000).socketTimeoutMillis(5000);
    if (!password().isEmpty()) {
      cb.password(password());
    }
    if (cluster) {
      java.util.Set<HostAndPort> set = new java.util.LinkedHashSet<>();
      for (String n : nodes().split(",")) {
        set.add(HostAndPort.from(n.trim()));
      }
      return RedisClusterClient.builder().nodes(set).clientConfig(cb.build()).build();
    }
    return RedisClient.builder().hostAndPort(host(), port()).clientConfig(cb.build()).build();
  }

  /**
   * Deletes every key of a store namespace (its keyspaces' too): {@code SCAN} for the hash tag on
   * the server, or on every primary of the cluster.
   *
   * @param cluster which mode
   * @param namespace the namespace
   */
  public static void drop(boolean cluster, String namespace) {
    // The store's own tag, and its shards' under engine redis-sharded.
    List<String> patterns = List.of("{" + namespace + "}*", "{" + namespace + ":s*");
    try (UnifiedJedis j = client(cluster)) {
      if (!cluster) {
        patterns.forEach(p -> dropMatching(j, p));
        return;
      }
      for (String node : ((RedisClusterClient) j).getClusterNodes().keySet()) {
        try (UnifiedJedis n =
            RedisClient.builder()
                .hostAndPort(HostAndPort.from(node))
                .clientConfig(clientConfig())
                .build()) {
          patterns.forEach(p -> dropMatching(n, p));
        }
      }
    }
  }

  private static void dropMatching(UnifiedJedis j, String pattern) {
    ScanParams p = new ScanParams().match(pattern).count(1000);
    String cursor = ScanParams.SCAN_POINTER_START;
    do {
      ScanResult<String> r = j.scan(cursor, p);
      for (String k : r.getResult()) {
        try {
          j.del(k);
        } catch (JedisDataException moved) {
          // A replica's or another node's key (MOVED): its primary deletes it.
        }
      }
      cursor = r.getCursor();
    } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
  }

  private static JedisClientConfig clientConfig() {
    DefaultJedisClientConfig.Builder cb =
        DefaultJedisClientConfig.builder().connectionTimeoutMillis(2000).socketTimeoutMillis(5000);
    if (!password().isEmpty()) {
      cb.password(password());
    }
    return cb.build();
  }

  /**
   * The namespace a store path maps to.
   *
   * @param path the path
   * @return the namespace
   */
  public static String namespaceFor(Path path) {
    return RedisSettings.namespaceFor(path);
  }

  /**
   * Restarts a server with {@code .ci/servers.sh restart NAME}; skips (fails in CI) when the script
   * cannot be run here (it needs root).
   *
   * @param name redis or redis-cluster
   * @throws Exception if waiting is interrupted
   */
  public static void restart(String name) throws Exception {
    Path script = Path.of("..", ".ci", "servers.sh").toAbsolutePath().normalize();
    boolean root = "root".equals(System.getProperty("user.name"));
    if (!Files.isRegularFile(script) || !root) {
      String msg = "cannot restart " + name + ": needs root and " + script;
      if (required()) {
        Assertions.fail(msg);
      }
      skip(msg);
    }
    // Output to a file, read after waitFor: a hung script cannot block the test past the wait.
    Path log = Files.createTempFile("kv4j-restart-" + name, ".log");
    try {
      Process p =
          new ProcessBuilder("bash", script.toString(), "restart", name)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      boolean done = p.waitFor(120, TimeUnit.SECONDS);
      if (!done) {
        p.destroyForcibly();
      }
      if (!done || p.exitValue() != 0) {
        Assertions.fail(
            "restart "
                + name
                + (done ? " failed: " : " did not finish within 120 s: ")
                + Files.readString(log));
      }
    } finally {
      Files.deleteIfExists(log);
    }
    if (name.equals("redis-cluster")) {
      awaitClusterOk();
    }
  }

  /**
   * Waits (at most 60 s) until every seed node says {@code cluster_state:ok}: the restart script
   * returns once each node answers, but a node refuses commands with {@code CLUSTERDOWN} until it
   * has heard from the others again, which can be later than the next test's open.
   */
  private static void awaitClusterOk() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      StringBuilder states = new StringBuilder();
      boolean ok = true;
      for (String node : nodes().split(",")) {
        String state;
        try (UnifiedJedis n =
            RedisClient.builder()
                .hostAndPort(HostAndPort.from(node.trim()))
                .clientConfig(clientConfig())
                .build()) {
          Object info = n.sendCommand(() -> ascii("CLUSTER"), ascii("INFO"));
          String text = new String((byte[]) info, StandardCharsets.US_ASCII);
          state = text.contains("cluster_state:ok") ? "ok" : "not ok";
        } catch (RuntimeException e) {
          state = e.toString();
        }
        ok &= state.equals("ok");
        states.append(node.trim()).append(": ").append(state).append("; ");
      }
      if (ok) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        Assertions.fail("the Redis Cluster is not ok 60 s after its restart: " + states);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static final java.util.Set<String> SHOWN =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * Skips the calling test with the reason, and prints the reason once on the console: a skipped
   * test class shows only "Tests run: 0" there, and the reason would otherwise be in the XML only.
   */
  private static void skip(String msg) {
    if (SHOWN.add(msg)) {
      System.err.println("[kv4j] SKIPPED server tests: " + msg);
    }
    Assumptions.abort(msg);
  }
}
