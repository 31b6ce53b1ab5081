package io.kv4j.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.UnifiedJedis;

/**
 * Conditional writes across store objects (as several application instances would share a store),
 * their exactly-once retry, the shared/exclusive open lock, the EVALSHA fallback, and the native
 * getAll; in both modes. Isolated: its SCRIPT FLUSH empties the script cache of the servers the
 * test classes running beside it use (see junit-platform.properties).
 */
@Isolated
class RedisCapabilityTest {
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

  private static String s(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /** One increment through a get + replace (or putIfAbsent) retry loop. */
  private static void increment(Store store, byte[] key) {
    while (true) {
      byte[] old = store.get(key);
      if (old == null) {
        if (store.putIfAbsent(key, b("1"))) {
          return;
        }
      } else if (store.replace(key, old, b(Long.toString(Long.parseLong(s(old)) + 1)))) {
        return;
      }
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void replaceLoops_twoStoreObjectsOnOneCounter_loseNoIncrement(boolean cluster) throws Exception {
    StoreConfig c = config(cluster, dir.resolve("counter")).option("lock", "shared").build();
    int threadsPerStore = 3;
    int increments = 200;
    try (Store first = Stores.open(c);
        Store second = Stores.open(c)) {
      assertThat(first.info().has(Feature.CONDITIONAL_WRITE)).isTrue();
      ExecutorService pool = Executors.newFixedThreadPool(2 * threadsPerStore);
      try {
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < 2 * threadsPerStore; t++) {
          Store store = t % 2 == 0 ? first : second;
          work.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < increments; i++) {
                      increment(store, b("counter"));
                      increment(store, b("other"));
                    }
                  }));
        }
        for (Future<?> f : work) {
          f.get(5, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      String expected = Integer.toString(2 * threadsPerStore * increments);
      assertThat(s(first.get(b("counter")))).isEqualTo(expected);
      assertThat(s(second.get(b("other")))).isEqualTo(expected);
      assertThat(second.stream(KeyRange.all()).map(e -> s(e.key())))
          .as("the index holds each counter once")
          .containsExactly("counter", "other");
      assertThat(first.stats().keyCount()).isEqualTo(2);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void compareAndSet_retriedWithTheSameMarker_writesOnce(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("retry")).build();
    try (Store store = Stores.open(c)) {
      RedisStore redis = (RedisStore) store;
      byte[] marker = b("{" + RedisSettings.namespaceFor(c.path()) + "}:c:test:1");
      store.put(b("k"), b("a"));
      assertThat(redis.compareAndSet(b("k"), b("a"), b("b"), marker)).isTrue();
      store.put(b("k"), b("c"));
      assertThat(redis.compareAndSet(b("k"), b("a"), b("b"), marker))
          .as("a retry of the call that succeeded answers true again")
          .isTrue();
      assertThat(s(store.get(b("k")))).as("and does not write a second time").isEqualTo("c");
      assertThat(store.replace(b("k"), b("a"), b("b"))).as("a new call compares anew").isFalse();
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void conditionalBatch_retriedWithTheSameMarker_writesOnce(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("batch-retry")).build();
    try (Store store = Stores.open(c)) {
      RedisStore redis = (RedisStore) store;
      byte[] marker = b("{" + RedisSettings.namespaceFor(c.path()) + "}:c:test:2");
      store.put(b("k"), b("a"));
      WriteBatch batch =
          new WriteBatch().expect(b("k"), b("a")).expectAbsent(b("j")).put(b("k"), b("b"));
      batch.put(b("j"), b("x"));
      assertThat(redis.conditionalBatch(batch, marker)).isTrue();
      assertThat(s(store.get(b("j")))).isEqualTo("x");
      store.put(b("k"), b("c"));
      store.delete(b("j"));
      assertThat(redis.conditionalBatch(batch, marker))
          .as("a retry of the call that succeeded answers true again")
          .isTrue();
      assertThat(s(store.get(b("k")))).as("and does not write a second time").isEqualTo("c");
      assertThat(store.get(b("j"))).as("nor put j back").isNull();
      assertThat(store.writeIf(batch)).as("a new call checks anew").isFalse();
      assertThat(store.stream(KeyRange.all()).map(e -> s(e.key()))).containsExactly("k");
    }
  }

  /**
   * Two store objects on one namespace ({@code lock=shared}, as two application instances), two
   * threads each, move amounts between accounts with read + {@code writeIf} loops: money is
   * conserved and every transfer counted once, so no other client's write fell between a batch's
   * check and its apply.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void writeIfTransfers_twoStoreObjects_conserveMoney(boolean cluster) throws Exception {
    StoreConfig c = config(cluster, dir.resolve("bank")).option("lock", "shared").build();
    int accounts = 3;
    int perThread = 150;
    long seed = new Random().nextLong();
    try (Store first = Stores.open(c);
        Store second = Stores.open(c)) {
      for (int a = 0; a < accounts; a++) {
        first.put(b("acct" + a), b("1000"));
      }
      first.put(b("transfers"), b("0"));
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          Store store = t % 2 == 0 ? first : second;
          Random rnd = new Random(seed + t);
          done.add(pool.submit(() -> transfers(store, rnd, accounts, perThread)));
        }
        for (Future<?> f : done) {
          f.get(10, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      long total = 0;
      for (int a = 0; a < accounts; a++) {
        total += Long.parseLong(s(second.get(b("acct" + a))));
      }
      assertThat(total).as("seed %d: money conserved", seed).isEqualTo(accounts * 1000L);
      assertThat(s(second.get(b("transfers"))))
          .as("seed %d: every transfer counted once", seed)
          .isEqualTo(Integer.toString(4 * perThread));
    }
  }

  private static void transfers(Store store, Random rnd, int accounts, int n) {
    for (int i = 0; i < n; i++) {
      int a = rnd.nextInt(accounts);
      byte[] from = b("acct" + a);
      byte[] to = b("acct" + (a + 1 + rnd.nextInt(accounts - 1)) % accounts);
      long amount = 1 + rnd.nextInt(20);
      while (true) {
        byte[] f = store.get(from);
        byte[] g = store.get(to);
        byte[] count = store.get(b("transfers"));
        WriteBatch tx =
            new WriteBatch()
                .expect(from, f)
                .expect(to, g)
                .expect(b("transfers"), count)
                .put(from, b(Long.toString(Long.parseLong(s(f)) - amount)))
                .put(to, b(Long.toString(Long.parseLong(s(g)) + amount)))
                .put(b("transfers"), b(Long.toString(Long.parseLong(s(count)) + 1)));
        if (store.writeIf(tx)) {
          break;
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void conditionalWrites_keepTheIndexAndCount(boolean cluster) {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    StoreConfig c = config(cluster, dir.resolve("index")).build();
    java.util.TreeMap<String, String> model = new java.util.TreeMap<>();
    try (Store store = Stores.open(c)) {
      for (int i = 0; i < 400; i++) {
        String k = "k" + rnd.nextInt(20);
        String v = Integer.toString(rnd.nextInt(3));
        String old = model.get(k);
        switch (rnd.nextInt(3)) {
          case 0 -> {
            boolean done = store.putIfAbsent(b(k), b(v));
            assertThat(done).as("seed %d op %d", seed, i).isEqualTo(old == null);
            model.putIfAbsent(k, v);
          }
          case 1 -> {
            String exp = Integer.toString(rnd.nextInt(3));
            boolean done = store.replace(b(k), b(exp), b(v));
            assertThat(done).as("seed %d op %d", seed, i).isEqualTo(exp.equals(old));
            model.replace(k, exp, v);
          }
          default -> {
            String exp = Integer.toString(rnd.nextInt(3));
            boolean done = store.delete(b(k), b(exp));
            assertThat(done).as("seed %d op %d", seed, i).isEqualTo(exp.equals(old));
            model.remove(k, exp);
          }
        }
      }
      List<String> scanned =
          store.stream(KeyRange.all()).map(e -> s(e.key()) + "=" + s(e.value())).toList();
      List<String> want = new ArrayList<>();
      model.forEach((k, v) -> want.add(k + "=" + v));
      assertThat(scanned).as("seed %d", seed).isEqualTo(want);
      assertThat(store.stats().keyCount()).as("seed %d", seed).isEqualTo(model.size());
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void lock_sharedAndExclusive_excludeEachOther(boolean cluster) {
    Path path = dir.resolve("modes");
    StoreConfig shared = config(cluster, path).option("lock", "shared").build();
    StoreConfig exclusive = config(cluster, path).option("lock-wait", "0").build();
    StoreConfig sharedNoWait =
        config(cluster, path).option("lock", "shared").option("lock-wait", "0").build();
    try (Store b = Stores.open(shared)) {
      Store a = Stores.open(shared);
      try {
        a.put(b("k"), b("v"));
        assertThat(s(b.get(b("k")))).isEqualTo("v");
        assertThat(catchThrowable(() -> Stores.open(exclusive).close()))
            .isInstanceOf(StoreLockedException.class)
            .hasMessageContaining("lock=shared");
      } finally {
        a.close();
      }
      assertThat(catchThrowable(() -> Stores.open(exclusive).close()))
          .as("one shared holder left")
          .isInstanceOf(StoreLockedException.class);
    }
    try (Store x = Stores.open(exclusive)) {
      assertThat(catchThrowable(() -> Stores.open(sharedNoWait).close()))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("exclusive");
      assertThat(s(x.get(b("k")))).isEqualTo("v");
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void crashedSharedHolder_expires(boolean cluster) {
    Path path = dir.resolve("ghost");
    StoreConfig exclusive = config(cluster, path).option("lock-wait", "60000").build();
    String tag = "{" + RedisSettings.namespaceFor(path) + "}";
    try (UnifiedJedis j = TestRedis.client(cluster)) {
      // A shared holder that crashed: its entry expires 1.5 s from now in the server's clock.
      j.eval(
          "redis.replicate_commands() local t = redis.call('TIME')"
              + " redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000) + 1500,"
              + " 'ghost')",
          List.of(tag + ":shared"),
          List.of());
      assertThat(j.zcard(tag + ":shared")).isEqualTo(1);
    }
    try (Store x = Stores.open(exclusive)) {
      x.put(b("k"), b("v"));
      assertThat(s(x.get(b("k")))).isEqualTo("v");
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void scripts_afterScriptFlush_fallBackToEval(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("flush")).build();
    try (Store store = Stores.open(c)) {
      store.put(b("a"), b("1"));
      flushScripts(cluster);
      store.put(b("b"), b("2"));
      flushScripts(cluster);
      assertThat(store.replace(b("a"), b("1"), b("3"))).isTrue();
      flushScripts(cluster);
      store.write(new WriteBatch().put(b("c"), b("4")).delete(b("b")));
      flushScripts(cluster);
      store.delete(b("c"));
      flushScripts(cluster);
      assertThat(store.stream(KeyRange.all()).map(e -> s(e.key()) + "=" + s(e.value())))
          .containsExactly("a=3");
    }
  }

  private static void flushScripts(boolean cluster) {
    List<HostAndPort> nodes = new ArrayList<>();
    if (cluster) {
      for (String n : TestRedis.nodes().split(",")) {
        nodes.add(HostAndPort.from(n.trim()));
      }
    } else {
      nodes.add(new HostAndPort(TestRedis.host(), TestRedis.port()));
    }
    for (HostAndPort n : nodes) {
      try (Jedis j = new Jedis(n)) {
        if (!TestRedis.password().isEmpty()) {
          j.auth(TestRedis.password());
        }
        assertThat(j.scriptFlush()).isEqualTo("OK");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void getAll_overSeveralChunks_answersInOrder(boolean cluster) {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    StoreConfig c = config(cluster, dir.resolve("getall")).build();
    try (Store store = Stores.open(c)) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 3000; i += 2) {
        batch.put(b("k" + i), b("v" + i));
      }
      store.write(batch);
      List<byte[]> keys = new ArrayList<>();
      for (int i = 0; i < 2600; i++) {
        keys.add(b("k" + rnd.nextInt(3000)));
      }
      List<byte[]> got = store.getAll(keys);
      assertThat(got).hasSize(keys.size());
      for (int i = 0; i < keys.size(); i++) {
        assertThat(got.get(i)).as("seed %d key %d", seed, i).isEqualTo(store.get(keys.get(i)));
      }
    }
  }
}
