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

/**
 * The {@code scale} kind: index memory and reopen time at many keys. A fresh store is loaded with
 * the scenario's key count ({@code --scale-keys}) of its value size ({@code --scale-value-size}),
 * in a pseudo-random order (an affine permutation of the indices, so the order costs no memory),
 * with write batches of the scenario's batch size where the engine has atomic batches, else single
 * puts; the load stops at {@code --scale-max-seconds}. Then the heap used, after full GCs until it
 * settles, minus the heap used before the store was opened, per key loaded; then the store is
 * closed and reopened, and the open plus one verified get of a random loaded key is timed. The page
 * cache stays warm (no root to drop it).
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

  /** What the load left: keys loaded, its time and CPU, the disk, the heap, the engine's index. */
  private record Loaded(
      long keys, long nanos, long cpuNanos, long disk, double engineIndex, long heapAfter) {}

  private Result measure(StoreProvider p, StoreConfig c, Data data, long n) {
    String id = p.id();
    boolean batched = p.features().contains(Feature.ATOMIC_BATCH);
    Permutation order = new Permutation(n);
    SplittableRandom random = new SplittableRandom(options.seed);
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s: loading %,d keys of %d B values (%s), cap %.0f s",
            scale.id(),
            n,
            data.valueSize(),
            batched ? "batches of " + scale.batch() : "single puts",
            options.scaleMaxSeconds));
    long heapBefore = settledHeap();
    Loaded l;
    try (Store store = Rig.open(c)) {
      l = load(id, store, c, data, n, order, random, batched);
    }
    if (l.keys() == 0) {
      return Result.failed(id, scale.id(), "", 1, c.durability(), "no key loaded");
    }
    long pick = order.at(random.nextLong(l.keys()));
    long r0 = System.nanoTime();
    long reopenNanos;
    try (Store store = Rig.open(c)) {
      byte[] got = store.get(data.key(pick));
      reopenNanos = System.nanoTime() - r0;
      data.verify(pick, got);
    }
    Result r = row(id, c, data, n, batched, heapBefore, l, reopenNanos);
    double perKey = r.figure("heap-bytes-per-key");
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s: %,d of %,d keys in %.1f s (%s keys/s)%s; heap %.1f B/key (%.1f + %d key"
                + " bytes)%s; disk/live %.2fx; reopen + get %.3f s",
            scale.id(),
            l.keys(),
            n,
            r.seconds(),
            Format.rate(r.opsPerSec()),
            l.keys() < n ? " INCOMPLETE (capped)" : "",
            perKey,
            perKey - data.keySize(),
            data.keySize(),
            Double.isNaN(l.engineIndex())
                ? ""
                : String.format(Locale.ROOT, ", engine index %.1f B/key", l.engineIndex()),
            r.amplification(),
            reopenNanos / 1e9));
    return r;
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
          store.put(key, value);
        }
      }
      if (batched) {
        store.write(batch);
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
    return new Loaded(loaded, nanos, cpu, disk, engineIndex, settledHeap());
  }

  private Result row(
      String id,
      StoreConfig c,
      Data data,
      long n,
      boolean batched,
      long heapBefore,
      Loaded l,
      long reopenNanos) {
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
    f.put("reopen-seconds", reopenNanos / 1e9);
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
