package io.kv4j.bench;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreIOException;
import io.kv4j.WriteBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The server engines: every operation is a network round trip to PostgreSQL, MariaDB/MySQL, Redis
 * (standalone, or {@code redis-sharded} over the Redis Cluster) or an etcd cluster (a Raft commit
 * per write). They are measured only when asked for ({@code --servers}, or named with {@code
 * --engines}), reported in their own tables, and skipped with a one-line reason when their server
 * cannot be reached. Their data lives on the server, not under the store path: the runner names the
 * table / key prefix itself (so runs reuse the same few tables instead of leaving one per run) and
 * empties each store before and after use.
 */
final class Servers {
  /** Engine ids whose stores live on a server. */
  static final Set<String> IDS = Set.of("postgres", "mysql", "redis", "redis-sharded", "etcd");

  private Servers() {}

  static boolean isServer(String engineId) {
    return IDS.contains(engineId);
  }

  /**
   * Options that pin the server-side name of a bench store: {@code table} for the JDBC engines,
   * {@code prefix} for Redis and etcd (with, for etcd, the request limits {@code .ci/etcd.sh} runs
   * its cluster with, so that the bench's batches of 1,000 fit one txn).
   */
  static Map<String, String> naming(String engineId, String storeName) {
    String name = "kv4j_bench_" + storeName.replace('-', '_');
    switch (engineId) {
      case "postgres":
      case "mysql":
        return Map.of("table", name);
      case "redis":
        return Map.of("prefix", name.replace('_', ':'));
      case "redis-sharded":
        // The Redis Cluster of .ci/servers.sh: the store's keys spread over its three primaries.
        return Map.of(
            "prefix",
            name.replace('_', ':'),
            "nodes",
            "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002");
      case "etcd":
        return Map.of(
            "prefix",
            name.replace('_', '/') + "/",
            "max-txn-ops",
            "10000",
            "max-request-bytes",
            String.valueOf(9 << 20));
      default:
        return Map.of();
    }
  }

  /** Whether a failure to open means the server is not there (rather than a bench bug). */
  static boolean unreachable(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof StoreIOException) {
        return true;
      }
    }
    return false;
  }

  /** One line: why the engine is skipped. */
  static String skipReason(String engineId, Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    m = m.replace('\n', ' ');
    if (m.length() > 300) {
      m = m.substring(0, 300) + "...";
    }
    return engineId + " skipped: server not reachable (" + m + "); start one with .ci/servers.sh";
  }

  /**
   * Deletes every key of a store, in batches (a leftover of an interrupted run, or this run's data
   * before the next run).
   *
   * @return the number of keys deleted
   */
  static long clear(Store store) {
    long n = 0;
    while (true) {
      List<byte[]> keys = new ArrayList<>();
      try (Cursor c = store.scan(KeyRange.all().limit(1000))) {
        while (c.hasNext()) {
          keys.add(c.next().key());
        }
      }
      if (keys.isEmpty()) {
        return n;
      }
      if (store.info().has(Feature.ATOMIC_BATCH)) {
        WriteBatch b = new WriteBatch();
        for (byte[] k : keys) {
          b.delete(k);
        }
        store.write(b);
      } else {
        for (byte[] k : keys) { // redis-sharded: keys on several primaries, no batches
          store.delete(k);
        }
      }
      n += keys.size();
    }
  }
}
