package io.kv4j.etcd;

import io.kv4j.StoreConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Where the test etcd cluster is: system property {@code kv4j.test.etcd.endpoints}, else
 * environment {@code KV4J_TEST_ETCD_ENDPOINTS}, else the three members {@code .ci/etcd.sh} starts
 * (127.0.0.1:2379, 22379, 32379). Unreachable: skipped with how to start it; with {@code CI=true}
 * or {@code -Dkv4j.test.requireServers=true} failed instead. Members are stopped and started only
 * through {@link #stop(int)} and {@link #start(int)} ({@code .ci/etcd.sh stop|start N}).
 */
public final class TestEtcd {
  private TestEtcd() {}

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  /** The endpoints, comma-separated. */
  public static String endpoints() {
    String p = System.getProperty("kv4j.test.etcd.endpoints");
    if (p != null) {
      return p;
    }
    String e = System.getenv("KV4J_TEST_ETCD_ENDPOINTS");
    return e != null ? e : "http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379";
  }

  static List<String> members() {
    return List.of(endpoints().split(","));
  }

  /**
   * A config builder with the test cluster's endpoints and the limits {@code .ci/etcd.sh} raises.
   *
   * @return the builder
   */
  public static StoreConfig.Builder builder() {
    return StoreConfig.builder("etcd")
        .option("endpoints", endpoints())
        .option("max-txn-ops", "10000")
        .option("max-request-bytes", Integer.toString(9 << 20));
  }

  static boolean required() {
    return "true".equalsIgnoreCase(System.getenv("CI"))
        || Boolean.getBoolean("kv4j.test.requireServers");
  }

  /** Whether a member answers {@code /health} with health true. */
  static boolean healthy(String endpoint) {
    try {
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(endpoint.trim() + "/health"))
                  .timeout(Duration.ofSeconds(3))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 && r.body().replace(" ", "").contains("\"health\":\"true\"");
    } catch (java.io.IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static boolean allHealthy() {
    return members().stream().allMatch(TestEtcd::healthy);
  }

  /** Skips (fails in CI) unless every member of the cluster is healthy. */
  public static void require() {
    if (waitFor(Duration.ofSeconds(5), TestEtcd::allHealthy)) {
      return;
    }
    String msg =
        "etcd cluster not healthy at "
            + endpoints()
            + ". Start it with `sudo .ci/etcd.sh` (or .ci/servers.sh; Debian; installs etcd-server"
            + " and starts three members on 127.0.0.1:2379/22379/32379) or point"
            + " kv4j.test.etcd.endpoints at yours.";
    if (required()) {
      Assertions.fail(msg + " CI=true: server tests must run.");
    }
    skip(msg);
  }

  /**
   * Waits for a condition until a deadline, parking 100 ms between polls (a cluster's health has no
   * notification to block on); answers whether it held.
   */
  static boolean waitFor(Duration d, BooleanSupplier condition) {
    long deadline = System.nanoTime() + d.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
      if (Thread.currentThread().isInterrupted()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Posts to the gateway of the first healthy member.
   *
   * @return the answer's body
   */
  static String post(String path, String json) throws Exception {
    Exception last = null;
    for (String m : members()) {
      try {
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(URI.create(m.trim() + path))
                    .timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofString(json))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return r.body();
        }
        last = new IllegalStateException(m + " answered " + r.statusCode() + ": " + r.body());
      } catch (java.io.IOException e) {
        last = e;
      }
    }
    throw last;
  }

  static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Deletes every key under a store prefix.
   *
   * @param prefix the prefix, ending with '/'
   */
  public static void drop(String prefix) {
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    byte[] end = ValueCodec.prefixEnd(p);
    try {
      post(
          "/v3/kv/deleterange",
          "{\"key\":\""
              + Base64.getEncoder().encodeToString(p)
              + "\",\"range_end\":\""
              + Base64.getEncoder().encodeToString(end)
              + "\"}");
    } catch (Exception e) {
      throw new IllegalStateException("cannot drop " + prefix + ": " + e, e);
    }
  }

  /**
   * Counts the keys under a prefix.
   *
   * @param prefix the prefix
   * @return how many keys start with it
   */
  public static long count(String prefix) {
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    try {
      String body =
          post(
              "/v3/kv/range",
              "{\"key\":\""
                  + Base64.getEncoder().encodeToString(p)
                  + "\",\"range_end\":\""
                  + Base64.getEncoder().encodeToString(ValueCodec.prefixEnd(p))
                  + "\",\"count_only\":true}");
      return Json.number(Json.object(Json.parse(body)), "count");
    } catch (Exception e) {
      throw new IllegalStateException("cannot count " + prefix + ": " + e, e);
    }
  }

  /**
   * The prefix a store path maps to.
   *
   * @param path the path
   * @return the prefix
   */
  public static String prefixFor(Path path) {
    return EtcdSettings.prefixFor(path);
  }

  /** Kills member {@code n} (1-3) with {@code .ci/etcd.sh stop n}. */
  static void stop(int n) throws Exception {
    script("stop", n);
  }

  /**
   * Starts member {@code n} again; the script waits until it answers, which needs a quorum (start
   * every stopped member, then {@link #awaitHealthy()}).
   */
  static void start(int n) throws Exception {
    script("start", n);
  }

  /** Waits until every member is healthy. */
  static void awaitHealthy() {
    Assertions.assertTrue(
        waitFor(Duration.ofSeconds(60), TestEtcd::allHealthy),
        "etcd cluster not healthy within 60 s at " + endpoints());
  }

  private static void script(String verb, int n) throws Exception {
    Path script = Path.of("..", ".ci", "etcd.sh").toAbsolutePath().normalize();
    if (!Files.isRegularFile(script)) {
      String msg = "cannot " + verb + " etcd member " + n + ": no " + script;
      if (required()) {
        Assertions.fail(msg);
      }
      skip(msg);
    }
    Process p =
        new ProcessBuilder("bash", script.toString(), verb, Integer.toString(n))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      Assertions.fail("etcd.sh " + verb + " " + n + " failed: " + out);
    }
  }

  private static final Set<String> SHOWN = ConcurrentHashMap.newKeySet();

  static void skip(String msg) {
    if (SHOWN.add(msg)) {
      System.err.println(
          "[kv4j] SKIPPED etcd tests: "
              + msg.toLowerCase(Locale.ROOT).charAt(0)
              + msg.substring(1));
    }
    Assumptions.abort(msg);
  }
}
