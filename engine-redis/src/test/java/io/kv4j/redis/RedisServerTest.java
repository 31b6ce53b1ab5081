package io.kv4j.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.tck.History;
import io.kv4j.tck.HistoryVerdict;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Connection failures, authentication errors and server restarts, in both modes. Isolated: its
 * restarts would fail the calls of test classes running beside it (see junit-platform.properties);
 * the lock tests, which disturb no server, are {@link RedisLockTest}.
 */
@Isolated
class RedisServerTest {
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
  void open_wrongPassword_isStoreIOExceptionNamingHost(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("auth")).option("password", "nope").build();
    Throwable t = catchThrowable(() -> Stores.open(c).close());
    assertThat(t).isInstanceOf(StoreIOException.class).hasMessageContaining("127.0.0.1:");
    assertThat(t.getCause()).isNotNull();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void open_nothingListening_isStoreIOExceptionNamingHost(boolean cluster) {
    StoreConfig.Builder b = config(cluster, dir.resolve("refused")).option("retry-timeout", "500");
    b = cluster ? b.option("nodes", "127.0.0.1:1") : b.option("port", "1");
    StoreConfig c = b.build();
    assertThat(catchThrowable(() -> Stores.open(c).close()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("127.0.0.1:1")
        .hasMessageContaining("servers.sh");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void serverRestart_storeReconnects(boolean cluster) throws Exception {
    StoreConfig c =
        config(cluster, dir.resolve("restart"))
            .durability(Durability.SYNC)
            .option("lock-wait", "0")
            // Outlives the restart: with the default 3 s a slow cluster restart let the lock key
            // expire before the first refresh could reach the server again (a flaky failure).
            .option("lock-ttl", "120000")
            .build();
    try (Store store = Stores.open(c)) {
      for (int i = 0; i < 100; i++) {
        store.put(b("before" + i), b("v" + i));
      }
      TestRedis.restart(cluster ? "redis-cluster" : "redis");
      assertThat(store.get(b("before7")))
          .as("AOF kept the data; the client reconnected")
          .isEqualTo(b("v7"));
      store.put(b("after"), b("x"));
      assertThat(store.replace(b("after"), b("x"), b("z")))
          .as("conditional write after the restart emptied the script cache")
          .isTrue();
      assertThat(store.putIfAbsent(b("after"), b("w"))).isFalse();
      assertThat(store.get(b("after"))).isEqualTo(b("z"));
      store.write(new WriteBatch().put(b("batch"), b("y")).delete(b("before0")));
      assertThat(store.stream(KeyRange.prefix(b("before"))).count()).isEqualTo(99);
      assertThat(catchThrowable(() -> Stores.open(c).close()))
          .as("the lock key survived the restart (AOF) and is still refreshed")
          .isInstanceOf(StoreLockedException.class);
    }
  }

  /**
   * Jepsen's question with a server restart: while four clients put, get, delete, compare-and-set
   * and batch-write a few hot keys, the server (standalone, or every primary of the cluster) is
   * restarted; every answer a client got must fit one order of the operations, each taking effect
   * between its call and its return (the kit's linearizability checker, {@link History}): with AOF
   * and {@code appendfsync always} an acknowledged write survives the restart. A call that failed
   * while the server was down is recorded as indeterminate.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void serverRestartedMidHistory_historyIsLinearizable(boolean cluster) throws Exception {
    StoreConfig c =
        config(cluster, dir.resolve("history"))
            .durability(Durability.SYNC)
            .option("lock-ttl", "120000")
            .build();
    History h = new History();
    AtomicInteger phase = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    AtomicBoolean run = new AtomicBoolean(true);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long seed = System.nanoTime();
    int beforeRestart;
    int afterRestart;
    try (Store store = Stores.open(c)) {
      List<Thread> clients = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int id = t;
        SplittableRandom rnd = new SplittableRandom(seed + id);
        clients.add(
            new Thread(
                () -> {
                  int n = 0;
                  while (run.get()) {
                    List<byte[]> keys = new ArrayList<>();
                    for (int k = 0; k < 3; k++) {
                      keys.add(b("h/p" + phase.get() + "/k" + k));
                    }
                    byte[] key = keys.get(rnd.nextInt(keys.size()));
                    byte[] value = b("t" + id + "#" + n++);
                    int r = rnd.nextInt(100);
                    try {
                      if (r < 40) {
                        h.get(id, store, key);
                      } else if (r < 65) {
                        h.put(id, store, key, value);
                      } else if (r < 70) {
                        h.delete(id, store, key);
                      } else if (r < 85) {
                        byte[] seen = h.get(id, store, key);
                        if (seen == null) {
                          h.putIfAbsent(id, store, key, value);
                        } else {
                          h.replace(id, store, key, seen, value);
                        }
                      } else {
                        WriteBatch batch = new WriteBatch();
                        for (byte[] k : keys) {
                          batch.put(k, b("t" + id + "#" + n++));
                        }
                        h.write(id, store, batch);
                      }
                      done.incrementAndGet();
                    } catch (StoreIOException e) {
                      failed.incrementAndGet(); // recorded as indeterminate; the client goes on
                      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                    } catch (Throwable e) {
                      failure.compareAndSet(null, e);
                      return;
                    }
                  }
                },
                "redis-history-" + t));
      }
      clients.forEach(Thread::start);
      Thread phases =
          new Thread(
              () -> {
                while (run.get()) {
                  LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
                  phase.incrementAndGet();
                }
              },
              "redis-history-phases");
      phases.start();
      try {
        awaitDone(done, 500, failure);
        beforeRestart = done.get();
        TestRedis.restart(cluster ? "redis-cluster" : "redis");
        afterRestart = done.get();
        awaitDone(done, afterRestart + 500, failure);
      } finally {
        run.set(false);
        for (Thread t : clients) {
          t.join(60_000);
        }
        phases.join(10_000);
      }
    }
    assertThat(failure.get()).as("a client failed otherwise than StoreIOException").isNull();
    HistoryVerdict v = h.check(Duration.ofSeconds(300)); // a budget: decided histories return early
    String what =
        "seed "
            + seed
            + (cluster ? ", the cluster" : ", the server")
            + " restarted after "
            + beforeRestart
            + " operations, back after "
            + afterRestart
            + ", "
            + h.size()
            + " operations in all ("
            + failed.get()
            + " failed, indeterminate): "
            + v.explanation();
    System.out.println("[redis history] " + what);
    assertThat(v.decided()).as(what).isTrue();
    assertThat(v.linearizable()).as(what).isTrue();
  }

  /** Waits (at most 90 s) until {@code done} reaches {@code target} or a client failed. */
  private static void awaitDone(
      AtomicInteger done, int target, AtomicReference<Throwable> failure) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (done.get() < target && failure.get() == null && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    assertThat(done.get())
        .as("operations done (a client failed: %s)", failure.get())
        .isGreaterThanOrEqualTo(target);
  }
}
