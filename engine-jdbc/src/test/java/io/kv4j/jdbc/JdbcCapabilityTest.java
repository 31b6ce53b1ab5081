package io.kv4j.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Conditional writes across sessions and processes, snapshots on their own connections, and getAll
 * past one statement: what the TCK, which runs one store object in one JVM, does not reach.
 */
class JdbcCapabilityTest {
  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void clean() {
    cleanup.forEach(Runnable::run);
  }

  private StoreConfig.Builder config(String engine, Path path) {
    TestServers.Server s =
        TestServers.require(
            engine.equals("postgres") ? TestServers.postgres() : TestServers.mysql());
    String table = JdbcSettings.tableFor(path);
    cleanup.add(() -> s.dropStore(table));
    return s.apply(StoreConfig.builder(engine)).path(path);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static long count(Store store, byte[] key) {
    byte[] v = store.get(key);
    return v == null ? 0 : ByteBuffer.wrap(v).getLong();
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void replaceLoops_twoStoreObjectsOnOneTable_loseNoIncrement(String engine) throws Exception {
    StoreConfig c = config(engine, dir.resolve("shared-counter")).build();
    int threadsPerStore = 2;
    int perThread = 150;
    byte[][] counters = {b("counter-a"), b("counter-b")};
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      assertThat(first.info().features()).contains(Feature.CONDITIONAL_WRITE);
      ExecutorService pool = Executors.newFixedThreadPool(2 * threadsPerStore);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 2 * threadsPerStore; t++) {
          Store store = t % 2 == 0 ? first : second;
          int thread = t;
          done.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < perThread; i++) {
                      SecondSession.increment(store, counters[(i + thread) % 2]);
                    }
                  }));
        }
        for (Future<?> f : done) {
          f.get(5, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      long total = 2L * threadsPerStore * perThread;
      assertThat(count(first, counters[0]) + count(first, counters[1]))
          .as("increments from two store objects (two pools, two server sessions)")
          .isEqualTo(total);
      assertThat(count(second, counters[0])).isEqualTo(total / 2);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void replaceLoops_childJvmOnTheSameTable_loseNoIncrement(String engine) throws Exception {
    StoreConfig c = config(engine, dir.resolve("process-counter")).build();
    byte[] key = b("counter");
    int perSide = 300;
    try (Store store = Stores.open(c)) {
      Path err = dir.resolve("child.err");
      Path outFile = dir.resolve("child.out");
      Process child =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  SecondSession.class.getName(),
                  c.toUri(),
                  "counter",
                  Integer.toString(perSide))
              .redirectError(err.toFile())
              .redirectOutput(outFile.toFile()) // read after waitFor: a hung child cannot block it
              .start();
      try {
        for (int i = 0; i < perSide; i++) {
          SecondSession.increment(store, key);
        }
        assertThat(child.waitFor(5, TimeUnit.MINUTES)).as("child finished").isTrue();
        String out = java.nio.file.Files.readString(outFile, StandardCharsets.UTF_8);
        assertThat(child.exitValue())
            .as("child exit; its stderr: %s", java.nio.file.Files.readString(err))
            .isZero();
        assertThat(out).contains("done");
      } finally {
        child.destroyForcibly();
      }
      assertThat(count(store, key))
          .as("increments from this JVM and a child JVM")
          .isEqualTo(2L * perSide);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void conditionalWrites_sameValueAndEmptyValues_answerByContent(String engine) {
    try (Store s = Stores.open(config(engine, dir.resolve("cas")).build())) {
      assertThat(s.putIfAbsent(b("k"), b("v"))).isTrue();
      assertThat(s.putIfAbsent(b("k"), b("w"))).isFalse();
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      // MySQL counts changed rows unless told to count matched ones: this must still be true.
      assertThat(s.replace(b("k"), b("v"), b("v"))).as("replace with the same value").isTrue();
      assertThat(s.replace(b("k"), b("x"), b("y"))).isFalse();
      assertThat(s.replace(b("k"), b("v "), b("y"))).as("no trailing-space padding").isFalse();
      assertThat(s.replace(b("k"), b("v"), new byte[0])).isTrue();
      assertThat(s.get(b("k"))).isEmpty();
      assertThat(s.delete(b("k"), b("v"))).isFalse();
      assertThat(s.delete(b("k"), new byte[0])).as("empty expected value").isTrue();
      assertThat(s.get(b("k"))).isNull();
      assertThat(s.replace(b("k"), new byte[0], b("z"))).as("absent is not empty").isFalse();
      assertThat(s.delete(b("k"), new byte[0])).isFalse();
      assertThat(s.putIfAbsent(b("k"), b("again"))).isTrue();
      assertThat(s.get(b("k"))).isEqualTo(b("again"));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void snapshot_holdsItsOwnConnection_andIgnoresOtherSessionsWrites(String engine) {
    StoreConfig c = config(engine, dir.resolve("snap")).option("pool-size", "1").build();
    Store store = Stores.open(c);
    try (Store other = SecondSession.open(c)) {
      store.put(b("a"), b("1"));
      store.put(b("b"), b("1"));
      List<Snapshot> snaps = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        snaps.add(store.snapshot());
      }
      // Three snapshots and a pool of one: plain operations still get a connection.
      store.put(b("a"), b("2"));
      other.write(new WriteBatch().put(b("b"), b("2")).put(b("c"), b("2")));
      for (Snapshot s : snaps) {
        assertThat(s.getAll(List.of(b("a"), b("b"), b("c")))).containsExactly(b("1"), b("1"), null);
        try (var cur = s.scan(KeyRange.all())) {
          assertThat(cur.hasNext()).isTrue();
          assertThat(cur.next().key()).isEqualTo(b("a"));
        }
      }
      assertThat(store.getAll(List.of(b("a"), b("b"), b("c"))))
          .containsExactly(b("2"), b("2"), b("2"));
      assertThat(store.stats().figures()).containsEntry("open-snapshots", 3);
      Snapshot open = snaps.get(2);
      snaps.get(0).close();
      snaps.get(1).close();
      store.close();
      assertThat(catchThrowable(() -> open.get(b("a"))))
          .as("closing the store closes its snapshots")
          .isInstanceOf(StoreClosedException.class);
    } finally {
      store.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void snapshotScan_pagesOfThreeRows_matchTheModelWhileAnotherSessionWrites(String engine) {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    StoreConfig c = config(engine, dir.resolve("pages")).option("fetch-size", "3").build();
    try (Store store = Stores.open(c);
        Store other = SecondSession.open(c)) {
      java.util.TreeMap<byte[], byte[]> model = new java.util.TreeMap<>(Arrays::compareUnsigned);
      for (int i = 0; i < 40; i++) {
        byte[] k = new byte[1 + rnd.nextInt(3)];
        rnd.nextBytes(k);
        store.put(k, b("v" + i));
        model.put(k, b("v" + i));
      }
      try (Snapshot snap = store.snapshot()) {
        for (byte[] k : model.keySet()) {
          other.put(k, b("changed"));
        }
        other.put(new byte[] {0}, b("new"));
        List<byte[]> keys = new ArrayList<>(model.keySet());
        for (int round = 0; round < 20; round++) {
          byte[] lo = keys.get(rnd.nextInt(keys.size()));
          byte[] hi = keys.get(rnd.nextInt(keys.size()));
          if (Arrays.compareUnsigned(lo, hi) > 0) {
            byte[] t = lo;
            lo = hi;
            hi = t;
          }
          boolean reverse = rnd.nextBoolean();
          int limit = rnd.nextInt(12);
          KeyRange r = KeyRange.all().gte(lo).lte(hi).limit(limit);
          r = reverse ? r.reverse() : r;
          var sub = model.subMap(lo, true, hi, true);
          List<byte[]> want =
              new ArrayList<>(reverse ? sub.descendingKeySet() : sub.navigableKeySet());
          want = want.subList(0, Math.min(limit, want.size()));
          List<byte[]> got = new ArrayList<>();
          try (var cur = snap.scan(r)) {
            while (cur.hasNext()) {
              Entry e = cur.next();
              assertThat(e.value()).as("seed %d", seed).isEqualTo(model.get(e.key()));
              got.add(e.key());
            }
          }
          assertThat(got).as("seed %d, range %s", seed, r).containsExactlyElementsOf(want);
        }
        try (var cur = snap.scan(KeyRange.all())) {
          int n = 0;
          while (cur.hasNext()) {
            cur.next();
            n++;
          }
          assertThat(n).as("seed %d: a full scan over many pages", seed).isEqualTo(model.size());
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void getAll_moreKeysThanOneStatement_answersInOrder(String engine) {
    try (Store s = Stores.open(config(engine, dir.resolve("many")).build())) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 1200; i += 2) {
        batch.put(b("k" + i), b("v" + i));
      }
      s.write(batch);
      List<byte[]> keys = new ArrayList<>();
      for (int i = 1199; i >= 0; i--) {
        keys.add(b("k" + i));
      }
      keys.add(b("k0"));
      List<byte[]> values = s.getAll(keys);
      assertThat(values).hasSize(keys.size());
      for (int i = 0; i < 1200; i++) {
        int n = 1199 - i;
        assertThat(values.get(i)).as("k%d", n).isEqualTo(n % 2 == 0 ? b("v" + n) : null);
      }
      assertThat(values.get(1200)).isEqualTo(b("v0")).isNotSameAs(values.get(1199));
    }
  }
}
