package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static io.kv4j.lmdb.Lmdb.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.WriteBatch;
import io.kv4j.tck.ChildProcess;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Keyspaces as LMDB named databases (formats 3 and 4), and stores of formats 1 and 2. */
class LmdbKeyspaceTest {
  private static final long SEED = 2512;

  @TempDir Path dir;

  @Test
  void legacyStores_openAsBefore_andRefuseKeyspaces() throws Exception {
    for (boolean framed : new boolean[] {false, true}) {
      Path d = dir.resolve(framed ? "framed" : "raw");
      Lmdb.legacy(d, framed, Map.of("k1", "v1", "k2", "v2"));
      try (Store s = Lmdb.open(d)) {
        assertThat(s.info().features())
            .as("framed=" + framed)
            .doesNotContain(Feature.KEYSPACES, Feature.KEYSPACE_BATCH);
        assertThat(s.get(b("k1"))).isEqualTo(b("v1"));
        s.put(b("k3"), b("v3"));
        s.write(new WriteBatch().put(b("k4"), b("v4")).delete(b("k2")));
        List<String> keys = new ArrayList<>();
        try (Cursor c = s.scan(KeyRange.all())) {
          c.forEachRemaining(e -> keys.add(s(e.key())));
        }
        assertThat(keys).containsExactly("k1", "k3", "k4");
        assertThatThrownBy(() -> s.keyspace("users"))
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("KEYSPACES");
        assertThatThrownBy(
                () -> s.write(new WriteBatch().put(b("x"), b("1")).put("users", b("x"), b("2"))))
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("KEYSPACE_BATCH");
        s.verify();
      }
      assertThat(Files.readString(d.resolve("kv4j.store"))).contains("format=" + (framed ? 2 : 1));
      try (Store s = Lmdb.open(d)) {
        assertThat(s.get(b("k4"))).isEqualTo(b("v4"));
        assertThat(s.stats().keyCount()).isEqualTo(3);
      }
    }
  }

  @Test
  void newStore_keepsItsKeysInANamedDatabase_andVerifiesEveryKeyspace() {
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.info().features()).contains(Feature.KEYSPACES, Feature.KEYSPACE_BATCH);
      s.put(b("k"), b("root"));
      Store users = s.keyspace("users");
      for (int i = 0; i < 300; i++) {
        users.put(b("u" + i), new byte[i % 100 == 0 ? 9000 : 20]);
      }
      s.keyspace("empty");
      assertThat(s.stats().keyCount()).isEqualTo(1);
      assertThat(users.stats().keyCount()).isEqualTo(300);
      s.verify();
      users.verify();
    }
  }

  @Test
  void damageInAKeyspace_isFoundByVerify() throws Exception {
    byte[] value = new byte[100];
    java.util.Arrays.fill(value, (byte) 0x5A);
    try (Store s = Lmdb.open(dir)) {
      s.put(b("a"), b("fine"));
      s.keyspace("users").put(b("victim"), value);
    }
    Path data = dir.resolve("data.mdb");
    byte[] file = Files.readAllBytes(data);
    long at = -1;
    outer:
    for (int i = 0; i + value.length <= file.length; i++) {
      for (int j = 0; j < value.length; j++) {
        if (file[i + j] != value[j]) {
          continue outer;
        }
      }
      at = i;
      break;
    }
    assertThat(at).as("value found in the file").isPositive();
    try (FileChannel ch =
        FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {0x5B}), at + 50);
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.get(b("a"))).isEqualTo(b("fine"));
      assertThatThrownBy(() -> s.keyspace("users").get(b("victim")))
          .isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(s::verify).isInstanceOf(StoreCorruptedException.class);
    }
  }

  @Test
  void keyspaceLimit_isReportedClearly() {
    try (Store s = Lmdb.open(dir)) {
      for (int i = 0; i < Keyspaces.MAX_KEYSPACES; i++) {
        s.keyspace("k" + i).close();
      }
      assertThatThrownBy(() -> s.keyspace("one-more"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(String.valueOf(Keyspaces.MAX_KEYSPACES))
          .hasMessageContaining("drop one");
      assertThatThrownBy(() -> s.write(new WriteBatch().put("one-more", b("k"), b("v"))))
          .isInstanceOf(IllegalStateException.class);
      s.put(b("k"), b("still writable"));
      assertThat(s.dropKeyspace("k7")).isTrue();
      s.keyspace("one-more").put(b("k"), b("v"));
      assertThat(s.keyspaces()).hasSize(Keyspaces.MAX_KEYSPACES).contains("one-more");
      s.verify();
    }
  }

  /**
   * Drops and re-creates one keyspace while threads read, scan and write through its handles and
   * through another keyspace's: calls on the dropped keyspace succeed or throw StoreClosedException
   * (never a crash, never another keyspace's data), and the other keyspace is untouched.
   */
  @Test
  void dropRacingReadsAndWrites_failsOnlyTheDroppedKeyspace() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      Store stable = s.keyspace("stable");
      TreeMap<String, String> model = new TreeMap<>();
      for (int i = 0; i < 50; i++) {
        stable.put(b("s" + i), b("v" + i));
        model.put("s" + i, "v" + i);
      }
      AtomicReference<Store> victim = new AtomicReference<>(s.keyspace("victim"));
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicLong calls = new AtomicLong();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        long seed = SEED + t;
        Thread th =
            new Thread(
                () -> {
                  SplittableRandom rnd = new SplittableRandom(seed);
                  try {
                    while (!stop.get()) {
                      Store v = victim.get();
                      int k = rnd.nextInt(50);
                      try {
                        switch (rnd.nextInt(4)) {
                          case 0 -> v.put(b("x" + k), b("victim"));
                          case 1 -> {
                            byte[] got = v.get(b("x" + k));
                            if (got != null && !s(got).equals("victim")) {
                              throw new AssertionError("victim read " + s(got));
                            }
                          }
                          case 2 -> {
                            try (Cursor c = v.scan(KeyRange.all())) {
                              c.forEachRemaining(
                                  e -> {
                                    if (!s(e.value()).equals("victim")) {
                                      throw new AssertionError("victim scanned " + s(e.value()));
                                    }
                                  });
                            }
                          }
                          default -> v.stats();
                        }
                      } catch (StoreClosedException expected) {
                        // The keyspace was dropped under the call.
                      }
                      assertThat(stable.get(b("s" + k)))
                          .as("seed " + seed)
                          .isEqualTo(b(model.get("s" + k)));
                      calls.incrementAndGet();
                    }
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                });
        threads.add(th);
        th.start();
      }
      for (int round = 0; round < 30; round++) {
        long before = calls.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (calls.get() < before + 20 && failure.get() == null) {
          assertThat(System.nanoTime()).as("threads make progress").isLessThan(deadline);
          Thread.onSpinWait();
        }
        assertThat(s.dropKeyspace("victim")).isTrue();
        victim.set(s.keyspace("victim"));
      }
      stop.set(true);
      for (Thread th : threads) {
        th.join(TimeUnit.MINUTES.toMillis(1));
        assertThat(th.isAlive()).isFalse();
      }
      assertThat(failure.get()).as("seed " + SEED).isNull();
      for (Map.Entry<String, String> e : model.entrySet()) {
        assertThat(stable.get(b(e.getKey()))).isEqualTo(b(e.getValue()));
      }
      assertThat(stable.stats().keyCount()).isEqualTo(model.size());
      s.verify();
    }
  }

  /**
   * A child JVM writes batches spanning the store's own keys and three keyspaces (one created by
   * the first batch) under SYNC and is killed (SIGKILL) while writing: after reopening, every
   * keyspace holds the same last batch, at least the last one acknowledged.
   */
  @Test
  void crashMidCrossKeyspaceBatch_leavesAllOrNothing() throws Exception {
    long acked = -1;
    try (ChildProcess c =
        ChildProcess.java(LmdbChildMain.class, "batches", dir.toString())
            .jvmOptions("-Xmx128m")
            .start()) {
      Duration wait = Duration.ofMinutes(5);
      for (String line = c.readLine(wait); line != null && acked < 30; line = c.readLine(wait)) {
        if (line.startsWith("ACKED ")) {
          acked = Long.parseLong(line.substring(6));
        }
      }
      if (acked >= 30) {
        c.kill(); // SIGKILL, while the child keeps writing
      } else { // its stdout ended: the child exited by itself
        c.await(Duration.ofMinutes(1));
      }
      assertThat(acked).as("child output: %s", c.describe()).isEqualTo(30);
    }
    try (Store s = Lmdb.open(dir)) {
      long n = Long.parseLong(s(s.get(b("n"))));
      assertThat(n).isGreaterThanOrEqualTo(acked);
      assertThat(s.keyspaces()).containsExactly("a", "b", "c");
      assertThat(s(s.keyspace("a").get(b("n")))).isEqualTo(String.valueOf(n));
      assertThat(s(s.keyspace("b").get(b("n")))).isEqualTo(String.valueOf(n));
      assertThat(s.keyspace("c").stats().keyCount()).isEqualTo((n + 1) * 100);
      assertThat(s.keyspace("c").get(b(n + "-99"))).isNotNull();
      assertThat(s.keyspace("c").get(b((n + 1) + "-0"))).isNull();
      s.verify();
    }
  }
}
