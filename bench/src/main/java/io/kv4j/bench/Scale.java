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
 * The {@code scale} scenario: index memory and reopen time at many keys. A fresh store is loaded
 * with {@code --scale-keys} keys of {@code --scale-value-size}-byte values, in a pseudo-random
 * order (an affine permutation of the indices, so the order costs no memory), with write batches of
 * {@value #BATCH} where the engine has atomic batches, else single puts; the load stops at {@code
 * --scale-max-seconds}. Then the heap used, after full GCs until it settles, minus the heap used
 * before the store was opened, per key loaded; then the store is closed and reopened, and the open
 * plus one verified get of a random loaded key is timed. The page cache stays warm (no root to drop
 * it).
 */
final class Scale {
  /** Puts per write batch. */
  static final int BATCH = 1000;

  /** Estimated on-disk bytes per key beyond the key and value bytes, for the free-space check. */
  static final int OVERHEAD_ESTIMATE = 32;

  private static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final Runner runner;
  private final Options options;

  Scale(Runner runner) {
    this.runner = runner;
    this.options = runner.options();
  }

  void run(StoreProvider p) {
    String id = p.id();
    String scenario = Scenario.SCALE.id();
    Durability d = options.durability;
    if (!runner.onLocalDisk(p, scenario, d)) {
      return;
    }
    Data base = runner.data();
    Data data = new Data(base.keySize(), options.scaleValueSize, base.compressible(), options.seed);
    long n = options.scaleKeys;
    long estimate = n * (data.keySize() + data.valueSize() + OVERHEAD_ESTIMATE);
    long free = usableSpace();
    if (free >= 0 && free < 3 * estimate) {
      String why =
          String.format(
              Locale.ROOT,
              "n/a: skipped, %s free under %s is less than 3x the estimated %s",
              Runner.mib(free),
              runner.dataRoot(),
              Runner.mib(estimate));
      runner.log(id, "scale " + why);
      runner.add(Result.failed(id, scenario, "", 0, d, why));
      return;
    }
    StoreConfig c = runner.config(p, "scale", d, n, data.valueSize());
    try {
      runner.add(measure(p, c, data));
    } catch (OutOfMemoryError e) {
      String why =
          String.format(
              Locale.ROOT,
              "OutOfMemoryError loading %,d keys with a max heap of %d MiB: run with a larger"
                  + " heap (java -Xmx4g -jar ...) or fewer --scale-keys",
              n,
              Runtime.getRuntime().maxMemory() >> 20);
      runner.log(id, "scale FAILED: " + why);
      runner.add(Result.failed(id, scenario, "", 1, d, why));
    } catch (RuntimeException e) {
      runner.log(id, "scale FAILED: " + e);
      runner.add(Result.failed(id, scenario, "", 1, d, Runner.describe(e)));
    } finally {
      Runner.delete(c.path());
    }
  }

  private long usableSpace() {
    try {
      return Files.getFileStore(runner.dataRoot()).getUsableSpace();
    } catch (IOException e) {
      return -1;
    }
  }

  private Result measure(StoreProvider p, StoreConfig c, Data data) {
    String id = p.id();
    long n = options.scaleKeys;
    boolean batched = p.features().contains(Feature.ATOMIC_BATCH);
    Permutation order = new Permutation(n);
    SplittableRandom random = new SplittableRandom(options.seed);
    byte[] key = new byte[data.keySize()];
    byte[] value = new byte[data.valueSize()];
    runner.log(
        id,
        String.format(
            Locale.ROOT,
            "scale: loading %,d keys of %d B values (%s), cap %.0f s",
            n,
            data.valueSize(),
            batched ? "batches of " + BATCH : "single puts",
            options.scaleMaxSeconds));
    long heapBefore = settledHeap();
    long loaded = 0;
    long loadNanos;
    long cpuNanos;
    long disk;
    double engineIndex = Double.NaN;
    long heapAfter;
    try (Store store = Runner.open(c)) {
      WriteBatch batch = new WriteBatch();
      long cpu0 = Runner.processCpu();
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
          runner.log(
              id,
              String.format(
                  Locale.ROOT,
                  "scale: %,d keys loaded (%s keys/s)",
                  loaded,
                  Report.rate(loaded / ((now - t0) / 1e9))));
        }
        int chunk = (int) Math.min(BATCH, n - loaded);
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
      loadNanos = System.nanoTime() - t0;
      cpuNanos = Runner.processCpu() - cpu0;
      store.sync();
      disk = Runner.allocatedBytes(c.path());
      try {
        Number v = store.stats().figures().get("index-bytes-per-key");
        if (v != null) {
          engineIndex = v.doubleValue();
        }
      } catch (RuntimeException e) {
        // stats() is informational: a failure leaves the figure out.
      }
      heapAfter = settledHeap();
    }
    if (loaded == 0) {
      return Result.failed(id, Scenario.SCALE.id(), "", 1, c.durability(), "no key loaded");
    }
    long pick = order.at(random.nextLong(loaded));
    long r0 = System.nanoTime();
    long reopenNanos;
    try (Store store = Runner.open(c)) {
      byte[] got = store.get(data.key(pick));
      reopenNanos = System.nanoTime() - r0;
      data.verify(pick, got);
    }
    double secs = loadNanos / 1e9;
    double perKey = (double) (heapAfter - heapBefore) / loaded;
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("keys-target", (double) n);
    f.put("capped", loaded < n ? 1.0 : 0.0);
    f.put("max-seconds", options.scaleMaxSeconds);
    f.put("batched", batched ? 1.0 : 0.0);
    f.put("heap-before-bytes", (double) heapBefore);
    f.put("heap-after-bytes", (double) heapAfter);
    f.put("max-heap-bytes", (double) Runtime.getRuntime().maxMemory());
    f.put("heap-bytes-per-key", perKey);
    f.put("heap-bytes-per-key-minus-key", perKey - data.keySize());
    if (!Double.isNaN(engineIndex)) {
      f.put("index-bytes-per-key", engineIndex);
    }
    f.put("reopen-seconds", reopenNanos / 1e9);
    Result r =
        new Result(
            id,
            Scenario.SCALE.id(),
            "",
            1,
            c.durability(),
            loaded,
            secs,
            loaded / secs,
            0,
            0,
            0,
            0,
            cpuNanos / 1e3 / loaded,
            0,
            disk,
            loaded * (data.keySize() + data.valueSize()),
            null,
            java.util.Collections.unmodifiableMap(f));
    runner.log(
        id,
        String.format(
            Locale.ROOT,
            "scale: %,d of %,d keys in %.1f s (%s keys/s)%s; heap %.1f B/key (%.1f + %d key"
                + " bytes)%s; disk/live %.2fx; reopen + get %.3f s",
            loaded,
            n,
            secs,
            Report.rate(r.opsPerSec()),
            loaded < n ? " INCOMPLETE (capped)" : "",
            perKey,
            perKey - data.keySize(),
            data.keySize(),
            Double.isNaN(engineIndex)
                ? ""
                : String.format(Locale.ROOT, ", engine index %.1f B/key", engineIndex),
            r.amplification(),
            reopenNanos / 1e9));
    return r;
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
