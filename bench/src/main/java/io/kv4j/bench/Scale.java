package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * The {@code scale} kind: index memory and reopen time at many keys. A fresh store is loaded with
 * the scenario's key count ({@code --scale-keys}) of its value size ({@code --scale-value-size}),
 * in a pseudo-random order (an affine permutation of the indices, so the order costs no memory),
 * with write batches of the scenario's batch size where the engine has atomic batches, else single
 * puts; the load stops at {@code --scale-max-seconds}. Then the heap used, after full GCs until it
 * settles, minus the heap used before the store was opened, per key loaded; then the store is
 * closed and reopened, and the open plus one verified get of a random loaded key is timed; the heap
 * per key is read again with the reopened store; then random gets of loaded keys, each value
 * verified, for {@code --scale-read-seconds}, one latency per get in an HdrHistogram. The garbage
 * collector's pauses ({@link GcPauses}: count, sum, longest) are reported for the load, the reopen
 * and the reads apart. The page cache stays warm (no root to drop it).
 */
final class Scale {
  /** Estimated on-disk bytes per key beyond the key and value bytes, for the free-space check. */
  static final int OVERHEAD_ESTIMATE = 32;

  private static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final Rig rig;
  private final Scenario scale;
  private final Options options;

  Scale(Rig rig, Scenario scale) {
    this.rig = rig;
    this.scale = scale;
    this.options = rig.options();
  }

  /**
   * The scenario on a fresh store of the engine: one row, or n/a (not persistent, a server engine,
   * too little free disk).
   *
   * @param p the engine
   */
  void run(StoreProvider p) {
    String id = p.id();
    String scenario = scale.id();
    Durability d = scale.durability(options.durability);
    if (!rig.onLocalDisk(p, scenario, d)) {
      return;
    }
    Data base = rig.data();
    int valueSize = options.valueSize(scale.valueSizeOption());
    Data data = new Data(base.keySize(), valueSize, base.compressible(), options.seed);
    long n = options.keys(scale.keysOption());
    long estimate = n * (data.keySize() + data.valueSize() + OVERHEAD_ESTIMATE);
    long free = usableSpace();
    if (free >= 0 && free < 3 * estimate) {
      String why =
          String.format(
              Locale.ROOT,
              "n/a: skipped, %s free under %s is less than 3x the estimated %s",
              Format.mib(free),
              rig.dataRoot(),
              Format.mib(estimate));
      rig.log(id, scenario + " " + why);
      rig.add(Result.failed(id, scenario, "", 0, d, why));
      return;
    }
    StoreConfig c = rig.config(p, scale.storeName(), d, n, data.valueSize());
    try {
      rig.add(measure(p, c, data, n));
    } catch (OutOfMemoryError e) {
      String why =
          String.format(
              Locale.ROOT,
              "OutOfMemoryError loading %,d keys with a max heap of %d MiB: run with a larger"
                  + " heap (java -Xmx4g -jar ...) or fewer --scale-keys",
              n,
              Runtime.getRuntime().maxMemory() >> 20);
      rig.log(id, scenario + " FAILED: " + why);
      rig.add(Result.failed(id, scenario, "", 1, d, why));
    } catch (RuntimeException e) {
      rig.log(id, scenario + " FAILED: " + e);
      rig.add(Result.failed(id, scenario, "", 1, d, Rows.describe(e)));
    } finally {
      Disk.delete(c.path());
    }
  }

  private long usableSpace() {
    try {
      return Files.getFileStore(rig.dataRoot()).getUsableSpace();
    } catch (IOException e) {
      return -1;
    }
  }

  /**
   * What the load left: keys loaded, its time and CPU, its longest write (a batch or a put), the
   * disk, the heap, the engine's index.
   */
  private record Loaded(
      long keys,
      long nanos,
      long cpuNanos,
      long maxWriteNanos,
      long disk,
      double engineIndex,
      long heapAfter) {}

  /**
   * What the reopen left: its time (open + one verified get), the wait for the engine's preload
   * after it (seconds, NaN if none), and the settled heap after both.
   */
  private record Reopened(long nanos, double preloadSeconds, long heapAfter) {}

  /**
   * When the engine maps its files ahead of the reads after an open (hashlog's option {@code
   * preload}: figure {@code preload-finished}), waits until it is done, so the reads measure the
   * warmed store and the warm-up is reported beside the reopen; NaN when there is nothing to wait
   * for. Capped by {@code --scale-max-seconds}.
   */
  private double awaitPreload(Store store) {
    long t0 = System.nanoTime();
    long cap = (long) (options.scaleMaxSeconds * 1e9);
    while (true) {
      Number done = store.stats().figures().get("preload-finished");
      if (done == null) {
        return Double.NaN;
      }
      if (done.intValue() == 1 || System.nanoTime() - t0 > cap) {
        return (System.nanoTime() - t0) / 1e9;
      }
      LockSupport.parkNanos(50_000_000L); // a stats() call per 50 ms: no load on the engine
    }
  }

  /** The reads after the reopen: one latency per verified get, in ns; their wall time. */
  private record Reads(Histogram latencies, long nanos) {}

  /** The GC pauses of the load, the reopen and the reads. */
  private record Pauses(GcPauses.Summary load, GcPauses.Summary reopen, GcPauses.Summary reads) {}

  private Result measure(StoreProvider p, StoreConfig c, Data data, long n) {
    String id = p.id();
    boolean batched = p.features().contains(Feature.ATOMIC_BATCH);
    Permutation order = new Permutation(n);
    SplittableRandom random = new SplittableRandom(options.seed);
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s: loading %,d keys of %d B values (%s), cap %.0f s; collectors %s",
            scale.id(),
            n,
            data.valueSize(),
            batched ? "batches of " + scale.batch() : "single puts",
            options.scaleMaxSeconds,
            GcPauses.collectors()));
    long heapBefore = settledHeap();
    try (GcPauses gc = new GcPauses()) {
      GcPauses.Mark g0 = GcPauses.mark();
      Loaded l;
      try (Store store = Rig.open(c)) {
        l = load(id, store, c, data, n, order, random, batched);
      }
      // The settling GCs in it are the bench's own, System.gc(): GcPauses leaves them out.
      GcPauses.Mark g1 = GcPauses.mark();
      if (l.keys() == 0) {
        return Result.failed(id, scale.id(), "", 1, c.durability(), "no key loaded");
      }
      long pick = order.at(random.nextLong(l.keys()));
      GcPauses.Mark g2 = GcPauses.mark();
      long r0 = System.nanoTime();
      try (Store store = Rig.open(c)) {
        byte[] got = store.get(data.key(pick));
        long reopenNanos = System.nanoTime() - r0;
        GcPauses.Mark g3 = GcPauses.mark();
        data.verify(pick, got);
        double preload = awaitPreload(store);
        Reopened o = new Reopened(reopenNanos, preload, settledHeap());
        GcPauses.Mark g4 = GcPauses.mark();
        Reads reads = read(id, store, data, l.keys(), order, random);
        GcPauses.Mark g5 = GcPauses.mark();
        Pauses pauses = new Pauses(gc.between(g0, g1), gc.between(g2, g3), gc.between(g4, g5));
        Result r = row(id, c, data, n, batched, heapBefore, l, o, reads, pauses);
        log(id, data, n, l, r, pauses);
        return r;
      }
    }
  }

  private void log(String id, Data data, long n, Loaded l, Result r, Pauses pauses) {
    double perKey = r.figure("heap-bytes-per-key");
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s: %,d of %,d keys in %.1f s (%s keys/s)%s, longest write %.1f ms, %s; heap %.1f"
                + " B/key (%.1f + %d key bytes)%s; disk/live %.2fx; reopen + get %.3f s (%s)%s,"
                + " heap %.1f B/key after it",
            scale.id(),
            l.keys(),
            n,
            r.seconds(),
            Format.rate(r.opsPerSec()),
            l.keys() < n ? " INCOMPLETE (capped)" : "",
            l.maxWriteNanos() / 1e6,
            pauses.load(),
            perKey,
            perKey - data.keySize(),
            data.keySize(),
            Double.isNaN(l.engineIndex())
                ? ""
                : String.format(Locale.ROOT, ", engine index %.1f B/key", l.engineIndex()),
            r.amplification(),
            r.figure("reopen-seconds"),
            pauses.reopen(),
            Double.isNaN(r.figure("preload-seconds"))
                ? ""
                : Format.number(r.figure("preload-seconds"), ", then %.1f s of preload"),
            r.figure("heap-bytes-per-key-reopened")));
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s: %,.0f verified gets in %.1f s (%s gets/s), p50 %s p99 %s p99.9 %s max %s; %s",
            scale.id(),
            r.figure("reads"),
            r.figure("read-seconds"),
            Format.rate(r.figure("reads-per-second")),
            Format.micros(r.figure("read-p50-us")),
            Format.micros(r.figure("read-p99-us")),
            Format.micros(r.figure("read-p999-us")),
            Format.micros(r.figure("read-max-us")),
            pauses.reads()));
  }

  /**
   * Random gets of loaded keys for {@code --scale-read-seconds} (at least one), each value verified
   * outside the timed part; a wrong value fails the row.
   */
  private Reads read(
      String id, Store store, Data data, long loaded, Permutation order, SplittableRandom random) {
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s: verified random gets for %.1f s",
            scale.id(),
            options.scaleReadSeconds));
    Histogram hist = new Histogram(3);
    byte[] key = new byte[data.keySize()];
    long t0 = System.nanoTime();
    long deadline = t0 + (long) (options.scaleReadSeconds * 1e9);
    long now = t0;
    do {
      long index = order.at(random.nextLong(loaded));
      data.key(index, key);
      long a = System.nanoTime();
      byte[] got = store.get(key);
      now = System.nanoTime();
      hist.recordValue(now - a);
      data.verify(index, got);
    } while (now - deadline < 0);
    return new Reads(hist, now - t0);
  }

  /** Loads up to {@code n} keys until the cap, then syncs and reads disk, heap and index. */
  private Loaded load(
      String id,
      Store store,
      StoreConfig c,
      Data data,
      long n,
      Permutation order,
      SplittableRandom random,
      boolean batched) {
    byte[] key = new byte[data.keySize()];
    byte[] value = new byte[data.valueSize()];
    WriteBatch batch = new WriteBatch();
    long loaded = 0;
    long cpu0 = Timing.processCpu();
    long t0 = System.nanoTime();
    long deadline = t0 + (long) (options.scaleMaxSeconds * 1e9);
    long nextProgress = t0 + PROGRESS_NANOS;
    long maxWrite = 0;
    while (loaded < n) {
      long now = System.nanoTime();
      if (now - deadline > 0) {
        break;
      }
      if (now - nextProgress > 0) {
        nextProgress = now + PROGRESS_NANOS;
        rig.log(
            id,
            String.format(
                Locale.ROOT,
                "%s: %,d keys loaded (%s keys/s)",
                scale.id(),
                loaded,
                Format.rate(loaded / ((now - t0) / 1e9))));
      }
      int chunk = (int) Math.min(scale.batch(), n - loaded);
      for (int j = 0; j < chunk; j++) {
        long index = order.at(loaded + j);
        data.key(index, key);
        data.value(index, random.nextInt(), value);
        if (batched) {
          batch.put(key, value);
        } else {
          long a = System.nanoTime();
          store.put(key, value);
          maxWrite = Math.max(maxWrite, System.nanoTime() - a);
        }
      }
      if (batched) {
        long a = System.nanoTime();
        store.write(batch);
        maxWrite = Math.max(maxWrite, System.nanoTime() - a);
        batch.clear();
      }
      loaded += chunk;
    }
    long nanos = System.nanoTime() - t0;
    long cpu = Timing.processCpu() - cpu0;
    store.sync();
    long disk = Disk.allocatedBytes(c.path());
    double engineIndex = Double.NaN;
    try {
      Number v = store.stats().figures().get("index-bytes-per-key");
      if (v != null) {
        engineIndex = v.doubleValue();
      }
    } catch (RuntimeException e) {
      // stats() is informational: a failure leaves the figure out.
    }
    return new Loaded(loaded, nanos, cpu, maxWrite, disk, engineIndex, settledHeap());
  }

  private Result row(
      String id,
      StoreConfig c,
      Data data,
      long n,
      boolean batched,
      long heapBefore,
      Loaded l,
      Reopened o,
      Reads reads,
      Pauses pauses) {
    double secs = l.nanos() / 1e9;
    double perKey = (double) (l.heapAfter() - heapBefore) / l.keys();
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("keys-target", (double) n);
    f.put("capped", l.keys() < n ? 1.0 : 0.0);
    f.put("max-seconds", options.scaleMaxSeconds);
    f.put("batched", batched ? 1.0 : 0.0);
    f.put("heap-before-bytes", (double) heapBefore);
    f.put("heap-after-bytes", (double) l.heapAfter());
    f.put("max-heap-bytes", (double) Runtime.getRuntime().maxMemory());
    f.put("heap-bytes-per-key", perKey);
    f.put("heap-bytes-per-key-minus-key", perKey - data.keySize());
    if (!Double.isNaN(l.engineIndex())) {
      f.put("index-bytes-per-key", l.engineIndex());
    }
    f.put("load-seconds", secs);
    f.put("load-max-write-ms", l.maxWriteNanos() / 1e6);
    pauses.load().into(f, "load");
    f.put("reopen-seconds", o.nanos() / 1e9);
    if (!Double.isNaN(o.preloadSeconds())) {
      f.put("preload-seconds", o.preloadSeconds());
    }
    pauses.reopen().into(f, "reopen");
    f.put("heap-after-reopen-bytes", (double) o.heapAfter());
    f.put("heap-bytes-per-key-reopened", (double) (o.heapAfter() - heapBefore) / l.keys());
    Histogram h = reads.latencies();
    double readSecs = reads.nanos() / 1e9;
    f.put("reads", (double) h.getTotalCount());
    f.put("read-seconds", readSecs);
    f.put("reads-per-second", h.getTotalCount() / readSecs);
    f.put("read-p50-us", h.getValueAtPercentile(50) / 1e3);
    f.put("read-p99-us", h.getValueAtPercentile(99) / 1e3);
    f.put("read-p999-us", h.getValueAtPercentile(99.9) / 1e3);
    f.put("read-max-us", h.getMaxValue() / 1e3);
    pauses.reads().into(f, "read");
    return new Result(
        id,
        scale.id(),
        "",
        1,
        c.durability(),
        l.keys(),
        secs,
        l.keys() / secs,
        0,
        0,
        0,
        0,
        l.cpuNanos() / 1e3 / l.keys(),
        0,
        l.disk(),
        l.keys() * (data.keySize() + data.valueSize()),
        null,
        java.util.Collections.unmodifiableMap(f));
  }

  /**
   * Heap bytes in use after full collections, repeated until two readings agree within 1% (or 1
   * MiB); at most 10 collections.
   */
  static long settledHeap() {
    MemoryMXBean m = ManagementFactory.getMemoryMXBean();
    long prev = -1;
    for (int i = 0; i < 10; i++) {
      System.gc();
      long used = m.getHeapMemoryUsage().getUsed();
      if (prev >= 0 && Math.abs(prev - used) <= Math.max(1 << 20, used / 100)) {
        return Math.min(prev, used);
      }
      prev = used;
    }
    return prev;
  }

  /** The bijection {@code i -> (a * i + b) mod n} with {@code gcd(a, n) = 1}: a load order. */
  static final class Permutation {
    private final long n;
    private final long a;
    private final long b;

    Permutation(long n) {
      if (n < 1 || n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("permutation size must be 1..2^31-1, got " + n);
      }
      this.n = n;
      long m = Math.max(1, (long) (n * 0.6180339887));
      while (gcd(m, n) != 1) {
        m++;
      }
      this.a = m % n == 0 ? 1 : m;
      this.b = n / 3;
    }

    long at(long i) {
      // a < n and i < n <= 2^31: the product fits in a long.
      return (a * i + b) % n;
    }

    private static long gcd(long x, long y) {
      while (y != 0) {
        long t = x % y;
        x = y;
        y = t;
      }
      return x;
    }
  }
}
