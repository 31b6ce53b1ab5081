package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.DamagedRegion;
import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Power loss, simulated by {@link FaultyStorage}: the store runs on the real files while the model
 * keeps what a power cut would leave (the bytes and directory entries forced so far, and with
 * reordering any subset of the pages written since); at a random point the image of a cut is taken,
 * then opened as a store of its own.
 *
 * <p>SYNC promises that an acknowledged write is on the disk: every write acknowledged before the
 * cut is in the image (or a later write of its key), the image opens and {@code verify()} passes.
 * BUFFERED promises the page cache, and the disk only up to a completed {@code sync()}: the image
 * opens, {@code verify()} passes, every write before the last completed sync is there, and nothing
 * is returned that was never written (see the README's "Power loss").
 */
class PowerCutTest {
  private static final long SEED = 0x5eed_c0de_2026_1206L;
  private static final int THREADS = 2;
  private static final int KEYS = 60;
  private static final String[] OPTIONS = {
    "segment-size", "32KiB", "compaction-garbage-threshold", "0.3"
  };

  @TempDir Path tmp;

  /** One writer's pre-drawn operations: a key index and a value (null: a delete). */
  private static final class Writer {
    final int[] keys;
    final byte[][] values;
    final AtomicInteger done = new AtomicInteger(); // operations acknowledged
    final AtomicInteger synced = new AtomicInteger(); // operations before the last completed sync

    Writer(int t, int ops, Random r) {
      keys = new int[ops];
      values = new byte[ops][];
      for (int i = 0; i < ops; i++) {
        keys[i] = r.nextInt(KEYS);
        if (r.nextInt(10) > 0) {
          byte[] v = new byte[r.nextInt(1500)];
          r.nextBytes(v);
          byte[] tag = (t + "/" + i + "/").getBytes(StandardCharsets.UTF_8);
          System.arraycopy(tag, 0, v, 0, Math.min(tag.length, v.length));
          values[i] = v;
        }
      }
    }

    static byte[] key(int t, int k) {
      return ("t" + t + "-k" + k).getBytes(StandardCharsets.UTF_8);
    }
  }

  /** What a cut left and what the writers had been promised when it was taken. */
  private record Cut(Path image, Writer[] writers, int[] promised, String seed) {}

  /**
   * Runs {@link #THREADS} writers on a store over a {@link FaultyStorage} and takes a power-cut
   * image after a random number of acknowledged writes. In BUFFERED each writer syncs now and then;
   * {@code promised} is then what its last completed sync covered, in SYNC every acknowledged
   * write.
   */
  private Cut run(Durability d, long seed, boolean reorder) throws Exception {
    Random r = new Random(seed);
    Path dir = tmp.resolve("store-" + seed + "-" + reorder);
    Path image = tmp.resolve("image-" + seed + "-" + reorder);
    FaultyStorage fs = new FaultyStorage();
    Writer[] writers = new Writer[THREADS];
    for (int t = 0; t < THREADS; t++) {
      writers[t] = new Writer(t, 3000, new Random(r.nextLong()));
    }
    int target = 20 + r.nextInt(d == Durability.SYNC ? 300 : 1500);
    CountDownLatch reached = new CountDownLatch(target);
    AtomicBoolean stop = new AtomicBoolean();
    List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
    int[] promised = new int[THREADS];
    String where = "seed " + seed + (reorder ? " (reordered)" : "") + ", " + d;
    try (HashLogStore s = open(dir, d, fs)) {
      Thread[] threads = new Thread[THREADS];
      for (int t = 0; t < THREADS; t++) {
        int tt = t;
        Writer w = writers[t];
        Random wr = new Random(r.nextLong());
        threads[t] =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; i < w.keys.length && !stop.get(); i++) {
                      byte[] k = Writer.key(tt, w.keys[i]);
                      if (w.values[i] == null) {
                        s.delete(k);
                      } else {
                        s.put(k, w.values[i]);
                      }
                      w.done.set(i + 1);
                      reached.countDown();
                      if (d == Durability.BUFFERED && wr.nextInt(50) == 0) {
                        s.sync();
                        w.synced.set(i + 1);
                      }
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                },
                "power-cut-writer-" + t);
        threads[t].start();
      }
      boolean got = reached.await(120, TimeUnit.SECONDS);
      for (int t = 0; t < THREADS; t++) {
        promised[t] = d == Durability.SYNC ? writers[t].done.get() : writers[t].synced.get();
      }
      fs.cutPower(dir, image, reorder ? new Random(r.nextLong()) : null);
      stop.set(true);
      for (Thread th : threads) {
        th.join(TimeUnit.SECONDS.toMillis(120));
        assertThat(th.isAlive()).as("writer still running, %s", where).isFalse();
      }
      assertThat(errors).as("writer errors, %s", where).isEmpty();
      assertThat(got).as("%d writes within 120 s, %s", target, where).isTrue();
    }
    return new Cut(image, writers, promised, where);
  }

  private static HashLogStore open(Path dir, Durability d, Storage storage) {
    StoreConfig.Builder b = TestStores.config(dir, d);
    for (int i = 0; i < OPTIONS.length; i += 2) {
      b.option(OPTIONS[i], OPTIONS[i + 1]);
    }
    return HashLogProvider.open(b.build(), HashLogProvider.seededHasher(42), storage);
  }

  /** What may be found under a key after the cut: nothing (if allowed) or one of the values. */
  private record Allowed(boolean absent, List<byte[]> values) {
    boolean admits(byte[] got) {
      return got == null ? absent : values.stream().anyMatch(v -> Arrays.equals(v, got));
    }
  }

  /**
   * The last write of key {@code k} promised before the cut, or any write after it (which the cut
   * may or may not have kept).
   */
  private static Allowed allowed(Writer w, int promised, int k) {
    int issued = Math.min(w.keys.length, w.done.get() + 1);
    List<byte[]> values = new ArrayList<>();
    boolean absent = true;
    for (int i = 0; i < issued; i++) {
      if (w.keys[i] != k) {
        continue;
      }
      if (i < promised) {
        values.clear();
        absent = w.values[i] == null;
        if (!absent) {
          values.add(w.values[i]);
        }
      } else if (w.values[i] == null) {
        absent = true;
      } else {
        values.add(w.values[i]);
      }
    }
    return new Allowed(absent, values);
  }

  /** Checks every key of every writer against what {@code read} finds. */
  private static void checkKeys(Cut c, String how, Function<byte[], byte[]> read) {
    for (int t = 0; t < THREADS; t++) {
      Writer w = c.writers()[t];
      int promised = c.promised()[t];
      for (int k = 0; k < KEYS; k++) {
        byte[] got = read.apply(Writer.key(t, k));
        assertThat(allowed(w, promised, k).admits(got))
            .as(
                "key t%d-k%d %s: %s, not its last promised write or a later one (%s, %d writes"
                    + " promised)",
                t, k, how, got == null ? "missing" : "holds another value", c.seed(), promised)
            .isTrue();
      }
    }
  }

  /** Opens the image, checks every key ({@link #allowed}), then {@code verify()}. */
  private static void check(Cut c, Durability d) {
    try (HashLogStore s = open(c.image(), d, Storage.NIO)) {
      checkKeys(c, "after the cut", s::get);
      s.verify();
    }
  }

  /**
   * BUFFERED: the image opens and is checked as in {@link #check}, or the open refuses it with a
   * {@link StoreCorruptedException}; then salvage reports damage and still finds every promised
   * write.
   *
   * @return whether the image opened
   */
  private static boolean checkBuffered(Cut c) {
    try {
      check(c, Durability.BUFFERED);
      return true;
    } catch (StoreCorruptedException refused) {
      Map<String, byte[]> got = new HashMap<>();
      List<DamagedRegion> damage =
          new HashLogProvider()
              .salvage(
                  StoreConfig.builder("hashlog")
                      .path(c.image())
                      .readOnly(true)
                      .createIfMissing(false)
                      .build(),
                  (ks, k, v) -> got.put(new String(k, StandardCharsets.UTF_8), v));
      assertThat(damage)
          .as("salvage reports the damage the open refused (%s): %s", c.seed(), refused)
          .isNotEmpty();
      checkKeys(c, "salvaged", k -> got.get(new String(k, StandardCharsets.UTF_8)));
      return false;
    }
  }

  @Test
  void sync_everyAcknowledgedWriteSurvivesACut() throws Exception {
    for (int i = 0; i < 8; i++) {
      check(run(Durability.SYNC, SEED + i, false), Durability.SYNC);
    }
  }

  @Test
  void sync_everyAcknowledgedWriteSurvivesACutWithReorderedWriteBack() throws Exception {
    for (int i = 0; i < 8; i++) {
      check(run(Durability.SYNC, SEED + 100 + i, true), Durability.SYNC);
    }
  }

  @Test
  void buffered_aCutLosesAtMostWhatFollowsTheLastSync() throws Exception {
    int opened = 0;
    for (int i = 0; i < 8; i++) {
      opened += checkBuffered(run(Durability.BUFFERED, SEED + 200 + i, false)) ? 1 : 0;
    }
    System.out.println("BUFFERED power cuts: " + opened + " of 8 images opened");
  }

  @Test
  void buffered_aCutWithReorderedWriteBackLosesAtMostWhatFollowsTheLastSync() throws Exception {
    int opened = 0;
    for (int i = 0; i < 8; i++) {
      opened += checkBuffered(run(Durability.BUFFERED, SEED + 300 + i, true)) ? 1 : 0;
    }
    System.out.println("BUFFERED power cuts, reordered: " + opened + " of 8 images opened");
  }

  @Test
  void failedForce_failsTheWriteAndKeepsEveryEarlierAcknowledgedOne() throws Exception {
    for (int i = 0; i < 6; i++) {
      long seed = SEED + 400 + i;
      Random r = new Random(seed);
      Path dir = tmp.resolve("fail-" + seed);
      Path image = tmp.resolve("fail-image-" + seed);
      FaultyStorage fs = new FaultyStorage();
      Map<String, byte[]> acked = new HashMap<>();
      int failAt = 1 + r.nextInt(40);
      boolean failed = false;
      try (HashLogStore s = open(dir, Durability.SYNC, fs)) {
        fs.failForce(failAt);
        for (int n = 0; n < 200 && !failed; n++) {
          String k = "k" + r.nextInt(30);
          byte[] v = new byte[r.nextInt(2000)];
          r.nextBytes(v);
          try {
            s.put(k.getBytes(StandardCharsets.UTF_8), v);
            acked.put(k, v);
          } catch (StoreException e) {
            failed = true;
          }
        }
        assertThat(failed)
            .as("a write failed with force %d failing (seed %d)", failAt, seed)
            .isTrue();
        fs.cutPower(dir, image, null);
      } catch (StoreException e) {
        // The close of a failed store may report the failure again.
      }
      try (HashLogStore s = open(image, Durability.SYNC, Storage.NIO)) {
        for (Map.Entry<String, byte[]> e : acked.entrySet()) {
          assertThat(s.get(e.getKey().getBytes(StandardCharsets.UTF_8)))
              .as("acknowledged %s after force %d failed (seed %d)", e.getKey(), failAt, seed)
              .isEqualTo(e.getValue());
        }
        s.verify();
      }
    }
  }

  @Test
  void failedWrite_failsTheWriteAndKeepsEveryEarlierAcknowledgedOne() throws Exception {
    for (int i = 0; i < 6; i++) {
      long seed = SEED + 500 + i;
      Random r = new Random(seed);
      Path dir = tmp.resolve("failw-" + seed);
      Path image = tmp.resolve("failw-image-" + seed);
      FaultyStorage fs = new FaultyStorage();
      Map<String, byte[]> acked = new HashMap<>();
      int failAt = 1 + r.nextInt(40);
      boolean failed = false;
      try (HashLogStore s = open(dir, Durability.SYNC, fs)) {
        fs.failWrite(failAt, ".log");
        for (int n = 0; n < 200 && !failed; n++) {
          String k = "k" + r.nextInt(30);
          byte[] v = new byte[r.nextInt(2000)];
          r.nextBytes(v);
          try {
            s.put(k.getBytes(StandardCharsets.UTF_8), v);
            acked.put(k, v);
          } catch (StoreException e) {
            failed = true;
          }
        }
        assertThat(failed)
            .as("a write failed with write %d failing (seed %d)", failAt, seed)
            .isTrue();
        fs.cutPower(dir, image, null);
      } catch (StoreException e) {
        // The close of a failed store may report the failure again.
      }
      try (HashLogStore s = open(image, Durability.SYNC, Storage.NIO)) {
        for (Map.Entry<String, byte[]> e : acked.entrySet()) {
          assertThat(s.get(e.getKey().getBytes(StandardCharsets.UTF_8)))
              .as("acknowledged %s after write %d failed (seed %d)", e.getKey(), failAt, seed)
              .isEqualTo(e.getValue());
        }
        s.verify();
      }
    }
  }
}
