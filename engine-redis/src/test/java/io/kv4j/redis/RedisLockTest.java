package io.kv4j.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;

/**
 * The store's lock key in both modes: a held lock refuses a second open, a closed store's lock
 * goes, and an open store keeps its lock for many times its lifetime. Disturbs no server, so it
 * runs beside the other test classes (the watch of the lock keeper is mostly waiting).
 */
class RedisLockTest {
  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void clean() {
    cleanup.forEach(Runnable::run);
  }

  private StoreConfig.Builder config(boolean cluster, Path path) {
    return TestRedis.config(cluster, path, cleanup);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void crashedClientsLock_expiresAfterTtl(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("ttl")).option("lock-wait", "0").build();
    Store s = Stores.open(c);
    s.put(b("k"), b("v"));
    assertThat(catchThrowable(() -> Stores.open(c).close()))
        .isInstanceOf(StoreLockedException.class)
        .hasMessageContaining("ttl");
    s.close();
    try (Store again = Stores.open(c)) {
      assertThat(again.get(b("k"))).isEqualTo(b("v"));
    }
  }

  /**
   * The lock keeper refreshes the lock key while the store is open, for many times its lifetime,
   * and once closed nothing takes it again: close waits for a refresh in progress before deleting
   * the key.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void openStore_keepsItsLockPastTheTtl_andCloseLeavesNoLock(boolean cluster) {
    Path path = dir.resolve("kept");
    // Refreshed every 3 s: six seconds of slack for a stalled keeper or Redis (a GC pause, an
    // fsync of appendfsync always on a busy disk, a loaded machine); watched for more than twice
    // the lifetime.
    StoreConfig c =
        config(cluster, path).option("lock-ttl", "9000").option("lock-wait", "0").build();
    String lock = "{" + RedisSettings.namespaceFor(path) + "}:lock";
    try (UnifiedJedis j = TestRedis.client(cluster)) {
      Store s = Stores.open(c);
      try {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20_000);
        int looked = 0;
        while (System.nanoTime() - end < 0) {
          assertThat(j.pttl(lock))
              .as("lock key's time to live after %d looks", looked)
              .isPositive();
          looked++;
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        assertThat(catchThrowable(() -> Stores.open(c).close()))
            .as("two lifetimes later the lock is still held")
            .isInstanceOf(StoreLockedException.class);
        s.put(b("k"), b("v"));
      } finally {
        s.close();
      }
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(600);
      while (System.nanoTime() - end < 0) {
        assertThat(j.exists(lock)).as("lock key after close").isFalse();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
      }
    }
    try (Store again = Stores.open(c)) {
      assertThat(again.get(b("k"))).isEqualTo(b("v"));
    }
  }
}
