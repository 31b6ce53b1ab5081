package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Option {@code preload}: the sealed segments of a reopened store are touched on a background
 * thread, inside the reader guard, skipping what compaction retires, and the thread stops at close.
 */
class PreloadTest {
  @TempDir Path dir;

  private static final long SEED = 27L;

  private static byte[] value(int i, int round) {
    byte[] v = new byte[300];
    new Random(SEED * 31 + i * 7919L + round).nextBytes(v);
    return v;
  }

  private void fill(int keys, int rounds) {
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "64KiB", "compaction-threads", "0")) {
      for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < keys; i++) {
          s.put(TestStores.bytes("k" + i), value(i, r));
        }
      }
    }
  }

  private static long sealedBytes(HashLogStore s) {
    long n = 0;
    for (Segment g : s.segments()) {
      if (g.isSealed() && !g.isRetired()) {
        n += g.end;
      }
    }
    return n;
  }

  private static void awaitFinished(HashLogStore s) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (TestStores.figure(s, "preload-finished") == 0) {
      assertThat(System.nanoTime() - deadline).as("preload finished within 60 s").isNegative();
      Thread.onSpinWait();
    }
  }

  private static boolean preloadThreadAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().startsWith("kv4j-hashlog-preload") && t.isAlive());
  }

  @Test
  void reopen_withPreload_touchesEverySealedSegmentAndReadsStayExact() {
    fill(2000, 1);
    try (HashLogStore s =
        TestStores.open(dir, Durability.BUFFERED, "preload", "true", "compaction-threads", "0")) {
      awaitFinished(s);
      assertThat(sealedBytes(s)).as("the store has sealed segments").isGreaterThan(500_000);
      assertThat(TestStores.figure(s, "preloaded-bytes")).isEqualTo(sealedBytes(s));
      for (int i = 0; i < 2000; i++) {
        assertThat(s.get(TestStores.bytes("k" + i)))
            .as("key k%d, seed %d", i, SEED)
            .isEqualTo(value(i, 0));
      }
    }
    try (HashLogStore s =
        HashLogProvider.open(
            TestStores.config(dir, Durability.BUFFERED)
                .readOnly(true)
                .option("preload", "true")
                .build(),
            HashLogProvider.seededHasher(SEED))) {
      awaitFinished(s);
      assertThat(TestStores.figure(s, "preloaded-bytes")).as("read-only").isEqualTo(sealedBytes(s));
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(s.stats().figures()).as("off by default").doesNotContainKey("preload-finished");
      assertThat(preloadThreadAlive()).isFalse();
    }
  }

  @Test
  void close_whilePreloading_stopsTheThreadAndReopens() {
    fill(4000, 4); // about 5 MB of segments
    for (int round = 0; round < 5; round++) {
      try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "preload", "true")) {
        assertThat(s.get(TestStores.bytes("k1"))).isEqualTo(value(1, 3));
      }
      assertThat(preloadThreadAlive())
          .as("round %d: the thread ended with the close", round)
          .isFalse();
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(s.stats().keyCount()).isEqualTo(4000);
    }
  }

  @Test
  void compaction_whilePreloading_retiresSegmentsTheThreadThenSkips() {
    fill(
        3000,
        4); // three of four rounds are garbage: every sealed segment but the newest is a victim
    long sealedAtOpen;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "compaction-threads", "0")) {
      sealedAtOpen = sealedBytes(s);
    }
    for (int round = 0; round < 3; round++) {
      try (HashLogStore s =
          TestStores.open(dir, Durability.BUFFERED, "preload", "true", "compaction-threads", "0")) {
        s.compact(); // races the preload thread: it must skip what is retired, never touch it
        awaitFinished(s);
        assertThat(TestStores.figure(s, "preloaded-bytes"))
            .as("round %d: at most what was sealed at the open", round)
            .isLessThanOrEqualTo(round == 0 ? sealedAtOpen : Long.MAX_VALUE);
        for (int i = 0; i < 3000; i++) {
          byte[] got = s.get(TestStores.bytes("k" + i));
          assertThat(Arrays.equals(got, value(i, 3)))
              .as("round %d, key k%d, seed %d", round, i, SEED)
              .isTrue();
        }
      }
    }
  }

  @Test
  void segmentCutShortBehindTheStoresBack_endsThePreloadWithoutCrash() throws Exception {
    fill(2000, 1);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "compaction-threads", "0")) {
      Segment victim = null;
      for (Segment g : s.segments()) {
        if (g.isSealed()) {
          victim = g;
          break;
        }
      }
      assertThat(victim).isNotNull();
      try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(victim.path.toFile(), "rw")) {
        f.setLength(0); // what a careless operator does: the mapping's pages lose their backing
      }
      Preloader p = new Preloader(s.segments, s.guard, s.state);
      p.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (preloadThreadAlive()) { // it ends by itself: the JVM makes the SIGBUS an InternalError
        assertThat(System.nanoTime() - deadline).as("the preload ended").isNegative();
        Thread.onSpinWait();
      }
      p.stop();
      // The JVM is alive and the store still answers from the segments the cut left alone. (Whether
      // the thread counted the cut segment depends on when the JVM delivers the fault: compiled
      // code gets it asynchronously, so neither figure is asserted.)
      int found = 0;
      int refused = 0;
      for (int i = 0; i < 2000; i++) {
        byte[] k = TestStores.bytes("k" + i);
        try {
          if (java.util.Arrays.equals(s.get(k), value(i, 0))) {
            found++;
          }
        } catch (io.kv4j.StoreException | InternalError e) {
          refused++; // a key in the cut segment: reported, never a crash
        }
      }
      assertThat(found).as("keys outside the cut segment").isPositive();
      assertThat(found + refused).as("no wrong value returned").isEqualTo(2000);
    }
  }
}
