package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompactionTest {
  @TempDir Path dir;

  private static HashLogStore open(Path d, String... more) {
    List<String> o = new ArrayList<>(List.of("segment-size", "4KiB", "compaction-threads", "0"));
    o.addAll(List.of(more));
    return TestStores.open(d, Durability.BUFFERED, o.toArray(new String[0]));
  }

  private static byte[] key(int i) {
    return String.format("key-%05d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * Where the bytes on disk are, for a failure message: the active segment's end, the sealed
   * segments (count, bytes, kept and dead bytes, how many still sealing), retired compaction
   * victims whose files are still there, and temporary and hint files.
   */
  static String breakdown(HashLogStore s) throws IOException {
    StringBuilder b = new StringBuilder();
    long sealedEnd = 0;
    long kept = 0;
    long dead = 0;
    long retiredBytes = 0;
    int sealed = 0;
    int sealing = 0;
    int retired = 0;
    s.segments.writeLock.lock();
    try {
      for (Segment g : s.segments()) {
        if (g == s.activeSegment()) {
          b.append("active ").append(g.end);
        } else if (g.isRetired()) {
          if (!g.isDeleted()) {
            retired++;
            retiredBytes += g.end;
          }
        } else {
          sealed++;
          sealedEnd += g.end;
          kept += g.liveBytes + g.tombstoneBytes;
          dead += g.deadBytes();
          sealing += g.phase() == SegmentPhase.SEALING ? 1 : 0;
        }
      }
    } finally {
      s.segments.writeLock.unlock();
    }
    long tmp = 0;
    long hints = 0;
    try (Stream<Path> files = Files.list(s.dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        String n = p.getFileName().toString();
        try {
          if (n.endsWith(".tmp")) {
            tmp += Files.size(p);
          } else if (n.endsWith(".hint")) {
            hints += Files.size(p);
          }
        } catch (java.nio.file.NoSuchFileException e) {
          // Deleted while we listed.
        }
      }
    }
    return b.append(", sealed ")
        .append(sealed)
        .append(": ")
        .append(sealedEnd)
        .append(" (kept ")
        .append(kept)
        .append(", dead ")
        .append(dead)
        .append(", sealing ")
        .append(sealing)
        .append("), victims not yet deleted ")
        .append(retired)
        .append(": ")
        .append(retiredBytes)
        .append(", tmp ")
        .append(tmp)
        .append(", hints ")
        .append(hints)
        .toString();
  }

  /**
   * Bytes of the store's files as they are on disk (the active segment counted to its end). A file
   * and its temporary are one file, counted once at the larger size: a listing that races the
   * rename of {@code seg-X.log.tmp} to {@code seg-X.log} (compaction's output, a hint) may return
   * both names.
   */
  static long bytesOnDisk(HashLogStore s) throws IOException {
    Segment act = s.activeSegment();
    Map<String, Long> sizes = new java.util.HashMap<>();
    try (Stream<Path> files = Files.list(s.dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        String n = p.getFileName().toString();
        if (!n.startsWith("seg-")) {
          continue;
        }
        try {
          long size = n.equals(Segment.fileName(act.id)) ? act.end : Files.size(p);
          sizes.merge(n.endsWith(".tmp") ? n.substring(0, n.length() - 4) : n, size, Math::max);
        } catch (java.nio.file.NoSuchFileException e) {
          // Deleted by compaction while we listed: it takes no space any more.
        }
      }
    }
    long total = 0;
    for (long size : sizes.values()) {
      total += size;
    }
    return total;
  }

  private static Set<String> tmpFiles(Path d) throws IOException {
    Set<String> out = new HashSet<>();
    try (Stream<Path> files = Files.list(d)) {
      files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).forEach(out::add);
    }
    return out;
  }

  private static void assertContents(HashLogStore s, TreeMap<String, byte[]> model, String msg) {
    for (Map.Entry<String, byte[]> e : model.entrySet()) {
      assertThat(s.get(bytes(e.getKey()))).as(msg + " key " + e.getKey()).isEqualTo(e.getValue());
    }
    List<String> keys = new ArrayList<>();
    for (Entry e : TestStores.scan(s, KeyRange.all())) {
      keys.add(new String(e.key(), java.nio.charset.StandardCharsets.UTF_8));
    }
    assertThat(keys).as(msg + " scan").containsExactlyElementsOf(model.keySet());
    assertThat(s.stats().keyCount()).as(msg).isEqualTo(model.size());
  }

  /**
   * Writes a history across many 4 KiB segments: puts, overwrites, deletes (some keys deleted whose
   * older puts sit in earlier segments), a re-put after a delete, batches.
   */
  private static TreeMap<String, byte[]> history(HashLogStore s, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    TreeMap<String, byte[]> model = new TreeMap<>();
    for (int round = 0; round < 6; round++) {
      for (int i = 0; i < 40; i++) {
        String k = "k" + rnd.nextInt(60);
        int op = rnd.nextInt(10);
        if (op < 6) {
          byte[] v = new byte[rnd.nextInt(4) == 0 ? 0 : 50 + rnd.nextInt(300)];
          rnd.nextBytes(v);
          s.put(bytes(k), v);
          model.put(k, v);
        } else if (op < 9) {
          s.delete(bytes(k));
          model.remove(k);
        } else {
          io.kv4j.WriteBatch b = new io.kv4j.WriteBatch();
          String k2 = "k" + rnd.nextInt(60);
          b.delete(bytes(k));
          byte[] v = bytes("batch" + round + "-" + i);
          b.put(bytes(k2), v);
          s.write(b);
          model.remove(k);
          model.put(k2, v);
        }
      }
    }
    return model;
  }

  // ------------------------------------------------------------------ crash at every step

  @Test
  void crashAtEveryCompactionStep_reopensWithExactlyTheAcknowledgedContents() throws Exception {
    for (Compactor.Step step : Compactor.Step.values()) {
      for (boolean all : new boolean[] {true, false}) {
        String msg = "crash at " + step + (all ? " (compact all)" : " (one segment)");
        Path d = dir.resolve(step + "-" + all);
        TreeMap<String, byte[]> model;
        try (HashLogStore s = open(d)) {
          model = history(s, step.ordinal() * 31L + (all ? 1 : 0));
          s.compactor.hook =
              at -> {
                if (at == step) {
                  throw new Compactor.SimulatedCrash(at);
                }
              };
          if (all) {
            assertThatThrownBy(s::compact).as(msg).isInstanceOf(Compactor.SimulatedCrash.class);
          } else {
            // The newest sealed segment: its tombstones meet older, uncompacted segments.
            int newest = TestStores.newestSealed(s);
            assertThatThrownBy(() -> s.compactor.compactSegments(Set.of(newest)))
                .as(msg)
                .isInstanceOf(Compactor.SimulatedCrash.class);
          }
          // The store stopped as if it had crashed: no further change reaches the disk.
          assertThat(TestStores.figure(s, "failed")).as(msg).isEqualTo(1);
        }
        try (HashLogStore s = open(d)) {
          assertThat(tmpFiles(d)).as(msg + ": temporary output removed").isEmpty();
          assertContents(s, model, msg + ", reopened");
          s.compact();
          assertContents(s, model, msg + ", compacted after reopen");
        }
        try (HashLogStore s = open(d)) {
          assertContents(s, model, msg + ", reopened after full compaction");
          assertThat(TestStores.figure(s, "dead-bytes"))
              .as(msg + ": everything reclaimable was reclaimed")
              .isLessThan(8 << 10);
        }
      }
    }
  }

  @Test
  void compactionRun_writesIntoAnIdBelowTheActiveSegment_withoutRollingIt() {
    Path d = dir.resolve("gap");
    TreeMap<String, byte[]> model = new TreeMap<>();
    try (HashLogStore s = open(d)) {
      s.put(bytes("cold"), bytes("written once")); // keeps a live record in the first segment
      model.put("cold", bytes("written once"));
      for (int round = 0; round < 3; round++) { // overwrites: garbage in every sealed segment
        for (int i = 0; i < 12; i++) {
          byte[] v = ("r" + round + "-" + i + "-").repeat(50).getBytes();
          s.put(key(i), v);
          model.put(new String(key(i)), v);
        }
      }
      int active = s.activeSegment().id;
      int activeEnd = s.activeSegment().end;
      int victim = TestStores.newestSealed(s);
      assertThat(active % SegmentLog.ID_STRIDE).isZero();
      s.compactor.compactSegments(Set.of(victim));
      assertThat(s.activeSegment().id).as("the active segment was not rolled").isEqualTo(active);
      assertThat(s.activeSegment().end).isEqualTo(activeEnd);
      int output = TestStores.newestSealed(s);
      assertThat(output).as("output id").isGreaterThan(victim).isLessThan(active);
      // The next run takes a higher id again, above its victim and the earlier output.
      int older =
          Arrays.stream(s.segments())
              .mapToInt(g -> g.id)
              .filter(id -> id < victim)
              .max()
              .orElse(-1);
      assertThat(older).isPositive();
      s.compactor.compactSegments(Set.of(older));
      assertThat(s.activeSegment().id).isEqualTo(active);
      assertThat(TestStores.newestSealed(s)).isGreaterThan(output).isLessThan(active);
      assertContents(s, model, "after two runs");
    }
    try (HashLogStore s = open(d)) {
      assertContents(s, model, "reopened");
    }
  }

  @Test
  void scanView_followsRecordsThroughCompactions_withoutBeingRebuilt() {
    Path d = dir.resolve("view");
    TreeMap<String, byte[]> model = new TreeMap<>();
    try (HashLogStore s = open(d)) {
      SplittableRandom rnd = new SplittableRandom(5);
      for (int i = 0; i < 300; i++) {
        int k = rnd.nextInt(60);
        if (rnd.nextInt(5) == 0) {
          s.delete(key(k));
          model.remove(new String(key(k)));
        } else {
          byte[] v = ("v" + i + "-").repeat(20).getBytes();
          s.put(key(k), v);
          model.put(new String(key(k)), v);
        }
        if (i == 100) {
          assertScan(s, model, "first scan"); // builds the view
        }
        if (i == 150 || i == 200) {
          // Two runs between scans: the second takes the first one's output as a victim.
          s.compactor.compactSegments(
              Arrays.stream(s.segments())
                  .filter(g -> g != s.activeSegment())
                  .map(g -> g.id)
                  .collect(java.util.stream.Collectors.toSet()));
        }
        if (i == 250) {
          s.compact();
          assertScan(s, model, "after compaction");
        }
      }
      assertScan(s, model, "at the end");
      assertThat(TestStores.figure(s, "compaction-runs")).isGreaterThanOrEqualTo(3);
      assertThat(TestStores.figure(s, "scan-view-builds"))
          .as("the view moved along with the copies instead of being rebuilt")
          .isEqualTo(1);
    }
  }

  /** A full scan returns exactly the model: keys in order and each one's value. */
  private static void assertScan(HashLogStore s, TreeMap<String, byte[]> model, String msg) {
    List<Entry> got = TestStores.scan(s, KeyRange.all());
    assertThat(got).as(msg + ": entries").hasSize(model.size());
    int i = 0;
    for (Map.Entry<String, byte[]> e : model.entrySet()) {
      assertThat(new String(got.get(i).key(), java.nio.charset.StandardCharsets.UTF_8))
          .as(msg + ": key " + i)
          .isEqualTo(e.getKey());
      assertThat(got.get(i).value()).as(msg + ": value of " + e.getKey()).isEqualTo(e.getValue());
      i++;
    }
  }

  @Test
  void deleteInNewerSegment_compactingOnlyTheTombstoneSegment_keyStaysDeleted() {
    for (Compactor.Step step : Compactor.Step.values()) {
      String msg = "crash at " + step;
      Path d = dir.resolve("tomb-" + step);
      int tombSeg;
      try (HashLogStore s = open(d)) {
        s.put(bytes("K"), bytes("old value"));
        s.put(bytes("L"), new byte[4000]); // rolls: K's put stays alone in segment 1
        s.delete(bytes("K"));
        tombSeg = s.activeSegment().id;
        s.put(bytes("M"), new byte[4000]); // rolls: the tombstone's segment is sealed
        assertThat(s.get(bytes("K"))).isNull();
        s.compactor.hook =
            at -> {
              if (at == step) {
                throw new Compactor.SimulatedCrash(at);
              }
            };
        assertThatThrownBy(() -> s.compactor.compactSegments(Set.of(tombSeg)))
            .as(msg)
            .isInstanceOf(Compactor.SimulatedCrash.class);
      }
      try (HashLogStore s = open(d)) {
        assertThat(s.get(bytes("K"))).as(msg + ", reopened").isNull();
        assertThat(s.get(bytes("M"))).as(msg).hasSize(4000);
        // Now without a crash: the tombstone's segment alone, then everything, reopening between.
        s.compactor.compactSegments(Set.of(tombSeg));
        assertThat(s.get(bytes("K"))).as(msg).isNull();
      }
      try (HashLogStore s = open(d)) {
        assertThat(s.get(bytes("K"))).as(msg + ", reopened after compaction").isNull();
        s.compact();
        assertThat(s.get(bytes("K"))).as(msg).isNull();
      }
      try (HashLogStore s = open(d)) {
        assertThat(s.get(bytes("K"))).as(msg + ", reopened after compacting all").isNull();
        assertThat(TestStores.scan(s, KeyRange.all()))
            .extracting(e -> e.key()[0])
            .doesNotContain((byte) 'K');
      }
    }
  }

  @Test
  void randomDeletesAndPartialCompactions_deletedKeysNeverResurrect() {
    for (long seed = 1; seed <= 6; seed++) {
      String msg = "seed " + seed;
      Path d = dir.resolve("resurrect-" + seed);
      SplittableRandom rnd = new SplittableRandom(seed);
      TreeMap<String, byte[]> model = new TreeMap<>();
      for (int cycle = 0; cycle < 8; cycle++) {
        try (HashLogStore s = open(d)) {
          assertContents(s, model, msg + " cycle " + cycle + " after reopen");
          for (int i = 0; i < 120; i++) {
            String k = "k" + rnd.nextInt(50);
            if (rnd.nextInt(3) == 0) {
              s.delete(bytes(k));
              model.remove(k);
            } else {
              byte[] v = new byte[100 + rnd.nextInt(200)];
              rnd.nextBytes(v);
              s.put(bytes(k), v);
              model.put(k, v);
            }
            if (rnd.nextInt(25) == 0) {
              RandomOperationsTest.compactRandomly(s, rnd);
              assertContents(s, model, msg + " cycle " + cycle + " op " + i + " after compaction");
            }
          }
        }
      }
    }
  }

  // ------------------------------------------------------------------ space under churn

  @Test
  void churn_uniformThenZipfian_bytesOnDiskStayWithinTwiceTheLiveData() throws Exception {
    int keys = 20_000;
    int valueSize = 1024;
    int rounds = 20;
    long seed = 808;
    Path d = dir.resolve("churn");
    ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong verified = new AtomicLong();
    int[] version = new int[keys];
    try (HashLogStore s =
        TestStores.open(
            d, Durability.BUFFERED, "segment-size", "1MiB", "compaction-threads", "1")) {
      Thread reader =
          new Thread(
              () -> {
                SplittableRandom r = new SplittableRandom(seed + 1);
                while (!stop.get()) {
                  int k = r.nextInt(keys);
                  byte[] v = s.get(key(k));
                  if (v != null && (v.length != valueSize || ByteBuffer.wrap(v).getInt() != k)) {
                    errors.add(
                        "key " + k + " returned a value of key " + ByteBuffer.wrap(v).getInt());
                  }
                  verified.incrementAndGet();
                }
              });
      reader.start();
      SplittableRandom rnd = new SplittableRandom(seed);
      long live = (long) keys * (key(0).length + valueSize);
      double worst = 0;
      try {
        // Uniform: every key overwritten `rounds` times, in random order each round.
        for (int round = 0; round < rounds; round++) {
          int[] perm = permutation(keys, rnd);
          for (int k : perm) {
            version[k]++;
            s.put(key(k), value(k, version[k], valueSize));
          }
          worst = Math.max(worst, (double) bytesOnDisk(s) / live);
          checkSample(s, version, valueSize, rnd, "seed " + seed + " uniform round " + round);
        }
        // Zipfian (s = 0.99): as many writes again, concentrated on hot keys.
        double[] cdf = zipfCdf(keys, 0.99);
        for (long w = 0; w < (long) keys * rounds; w++) {
          int k = sample(cdf, rnd.nextDouble());
          version[k]++;
          s.put(key(k), value(k, version[k], valueSize));
          if (w % keys == 0) {
            worst = Math.max(worst, (double) bytesOnDisk(s) / live);
            checkSample(s, version, valueSize, rnd, "seed " + seed + " zipfian write " + w);
          }
        }
      } finally {
        // The reader has verified at least one read before it stops (a starved thread on a
        // loaded machine may not have run yet): at most a minute more.
        long backstop = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (verified.get() == 0 && errors.isEmpty() && System.nanoTime() - backstop < 0) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        stop.set(true);
        reader.join();
      }
      s.compactor.awaitIdle();
      long disk = bytesOnDisk(s);
      Map<String, Number> f = s.stats().figures();
      String figures =
          "seed "
              + seed
              + ": disk "
              + disk
              + " live "
              + live
              + " worst during churn "
              + worst
              + "x, stats "
              + f;
      System.out.println("churn figures: " + figures);
      assertThat(errors).as(figures).isEmpty();
      assertThat(verified.get()).as("reads verified during churn").isPositive();
      assertThat((double) disk / live).as(figures).isLessThanOrEqualTo(2.0);
      assertThat(f.get("compaction-bytes-reclaimed").longValue()).as(figures).isPositive();
      assertThat(f.get("write-amplification").doubleValue()).as(figures).isGreaterThan(1.0);
      for (int k = 0; k < keys; k++) {
        assertThat(s.get(key(k))).as("key " + k).isEqualTo(value(k, version[k], valueSize));
      }
    }
  }

  private static void checkSample(
      HashLogStore s, int[] version, int size, SplittableRandom rnd, String msg) {
    for (int i = 0; i < 200; i++) {
      int k = rnd.nextInt(version.length);
      assertThat(s.get(key(k))).as(msg + " key " + k).isEqualTo(value(k, version[k], size));
    }
  }

  private static byte[] value(int k, int version, int size) {
    byte[] v = new byte[size];
    new SplittableRandom(k * 1_000_003L + version).nextBytes(v); // incompressible
    ByteBuffer.wrap(v).putInt(k).putInt(version);
    return v;
  }

  private static int[] permutation(int n, SplittableRandom rnd) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }

  private static double[] zipfCdf(int n, double s) {
    double[] c = new double[n];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, s);
      c[i] = sum;
    }
    for (int i = 0; i < n; i++) {
      c[i] /= sum;
    }
    return c;
  }

  private static int sample(double[] cdf, double u) {
    int i = Arrays.binarySearch(cdf, u);
    return Math.min(cdf.length - 1, i >= 0 ? i : -i - 1);
  }

  // ------------------------------------------------------------------ throttling

  @Test
  void rateLimitedCompaction_throttlesWritersAndKeepsDiskBounded() throws Exception {
    int keys = 256;
    int valueSize = 1024;
    long live = keys * (long) (key(0).length + valueSize);
    long segment = 16 << 10;
    double worst = 0;
    String worstWhy = "";
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            "segment-size",
            "16KiB",
            "compaction-threads",
            "1",
            "compaction-rate-limit",
            String.valueOf(2 << 20),
            "compaction-garbage-threshold",
            "0.5")) {
      SplittableRandom rnd = new SplittableRandom(5);
      // keys * 24 writes, and more until a writer has waited for compaction (a writer slower than
      // the 2 MiB/s compactor, on a quiet fast machine, may never outrun it in the first part),
      // up to ten times as many; the disk bound is checked all along.
      int planned = keys * 24;
      for (int w = 0; w < planned * 10; w++) {
        if (w >= planned
            && w % 64 == 0
            && s.stats().figures().get("compaction-throttled-ms").longValue() > 0) {
          break;
        }
        int k = rnd.nextInt(keys);
        s.put(key(k), value(k, w, valueSize));
        if (w % 64 == 0) {
          long b = bytesOnDisk(s);
          if (b > worst) {
            worst = b;
            worstWhy = breakdown(s);
          }
        }
      }
      Map<String, Number> f = s.stats().figures();
      // Garbage may exceed live data (threshold 0.5) by the throttle's slack before writers wait;
      // the garbage counted includes the victims of a run still on disk (retired at the index
      // switch, deleted only after the active segment's force and the manifest: issue #23, where
      // 4-7 such victims, 75-104 KB, sat uncounted next to a full threshold of new garbage).
      // Add the active segment, one compaction output in flight, the segments still queued for
      // the sealer (not compactable until their force and hint are done: a compactor finding no
      // other victim releases writers) and one segment of garbage made between two throttle
      // checks (they run at each seal). Hint files on top: each holds 36 bytes of header and CRC
      // plus 12 + key bytes per record of its segment, which holds at least one record.
      long slack = (long) Math.ceil(Throttle.SLACK_SEGMENTS);
      long record = 12 + key(0).length + valueSize;
      long logs = 2 * (live + keys * 12L) + (slack + 3 + SegmentLog.SEAL_BACKLOG) * segment;
      long bound = logs + logs * (36 + 12 + key(0).length) / record;
      System.out.println("throttled churn: worst " + worst + " bound " + bound + ", " + worstWhy);
      assertThat(worst)
          .as("worst disk bytes %s, bound %s, at the worst: %s; %s", worst, bound, worstWhy, f)
          .isLessThanOrEqualTo(bound);
      assertThat(f.get("compaction-throttled-ms").longValue()).as(f.toString()).isPositive();
    }
  }

  // ------------------------------------------------------------------ readers and cursors

  @Test
  void cursorOpenAcrossCompaction_keepsItsSnapshot_andSegmentsAreUnmappedAfterItCloses()
      throws Exception {
    try (HashLogStore s = open(dir)) {
      TreeMap<String, byte[]> model = new TreeMap<>();
      for (int i = 0; i < 100; i++) {
        byte[] v = bytes("first-" + i + "-" + "x".repeat(200));
        s.put(bytes("k" + (1000 + i)), v);
        model.put("k" + (1000 + i), v);
      }
      for (int i = 0; i < 100; i += 2) {
        s.put(bytes("k" + (1000 + i)), bytes("second"));
        model.put("k" + (1000 + i), bytes("second"));
      }
      Cursor c = s.scan(KeyRange.all());
      Entry first = c.next();
      assertThat(first.value()).isEqualTo(model.firstEntry().getValue());
      s.compact();
      assertThat(TestStores.figure(s, "retired-segments-pinned")).isPositive();
      // The rest of the snapshot is read from segments compaction retired meanwhile.
      int n = 1;
      while (c.hasNext()) {
        Entry e = c.next();
        assertThat(e.value())
            .isEqualTo(model.get(new String(e.key(), java.nio.charset.StandardCharsets.UTF_8)));
        n++;
      }
      assertThat(n).isEqualTo(100);
      c.close();
      s.guard.reap();
      assertThat(TestStores.figure(s, "retired-segments-pinned")).isZero();
      List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
      String real = dir.toRealPath().toString();
      assertThat(maps.stream().filter(l -> l.contains(real) && l.contains("(deleted)")))
          .as("no mapping of a deleted segment remains")
          .isEmpty();
      assertThat(s.get(bytes("k1000"))).isEqualTo(bytes("second"));
      assertThat(s.get(bytes("k1001"))).isEqualTo(model.get("k1001"));
    }
  }

  @Test
  void readersAndScansDuringBackgroundCompaction_seeOnlyCurrentWholeValues() throws Exception {
    int keys = 300;
    ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            "segment-size",
            "8KiB",
            "compaction-threads",
            "2",
            "compaction-garbage-threshold",
            "0.2")) {
      for (int k = 0; k < keys; k++) {
        s.put(key(k), value(k, 0, 100));
      }
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        final int id = t;
        Thread r =
            new Thread(
                () -> {
                  SplittableRandom rnd = new SplittableRandom(id);
                  while (!stop.get()) {
                    try {
                      if (id == 0) {
                        int k = rnd.nextInt(keys);
                        byte[] v = s.get(key(k));
                        if (v == null || ByteBuffer.wrap(v).getInt() != k) {
                          errors.add("get of key " + k + " returned a wrong value");
                        }
                      } else {
                        int seen = 0;
                        byte[] prev = null;
                        try (Cursor c = s.scan(KeyRange.all())) {
                          while (c.hasNext()) {
                            Entry e = c.next();
                            if (prev != null && Arrays.compareUnsigned(prev, e.key()) >= 0) {
                              errors.add("scan out of order");
                            }
                            prev = e.key();
                            seen++;
                          }
                        }
                        if (seen != keys) {
                          errors.add("scan saw " + seen + " keys");
                        }
                      }
                    } catch (RuntimeException e) {
                      errors.add(e.toString());
                    }
                  }
                });
        readers.add(r);
        r.start();
      }
      SplittableRandom rnd = new SplittableRandom(99);
      for (int w = 1; w <= 15_000; w++) {
        int k = rnd.nextInt(keys);
        s.put(key(k), value(k, w, 100));
      }
      stop.set(true);
      for (Thread r : readers) {
        r.join();
      }
      assertThat(errors).isEmpty();
      assertThat(TestStores.figure(s, "compaction-runs")).isPositive();
    }
  }

  // ------------------------------------------------------------------ options and figures

  @Test
  void compactionOptions_areValidatedWithNameAndRange() {
    for (String[] bad :
        new String[][] {
          {"compaction-garbage-threshold", "0"},
          {"compaction-garbage-threshold", "1.5"},
          {"compaction-rate-limit", "-1"},
          {"compaction-threads", "-1"},
          {"compaction-threads", "17"}
        }) {
      assertThatThrownBy(
              () -> StoreConfig.builder("hashlog").path(dir).option(bad[0], bad[1]).build())
          .as(bad[0] + "=" + bad[1])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(bad[0]);
    }
    assertThat(HashLogProvider.COMPACTION_THRESHOLD.defaultValue()).isEqualTo(0.4);
    assertThat(HashLogProvider.COMPACTION_RATE.defaultValue()).isZero();
    assertThat(HashLogProvider.COMPACTION_RATE.unit()).isEqualTo("bytes/s");
    assertThat(HashLogProvider.COMPACTION_THREADS.defaultValue()).isEqualTo(1);
  }

  @Test
  void compact_reportsReclaimedBytesAndAmplification() {
    try (HashLogStore s = open(dir)) {
      for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 20; i++) {
          s.put(bytes("k" + i), new byte[500]);
        }
      }
      long diskBefore = s.stats().diskBytes();
      long reclaimed = s.reclaim();
      Map<String, Number> f = s.stats().figures();
      assertThat(reclaimed).isPositive();
      assertThat(f.get("compaction-bytes-reclaimed").longValue()).isEqualTo(reclaimed);
      assertThat(s.stats().diskBytes()).isLessThan(diskBefore);
      assertThat(f.get("dead-bytes").longValue()).isZero();
      assertThat(f.get("write-amplification").doubleValue()).isGreaterThan(1.0);
      assertThat(f.get("space-amplification").doubleValue()).isBetween(1.0, 1.5);
      assertThat(f.get("compaction-runs").longValue()).isPositive();
    }
  }
}
