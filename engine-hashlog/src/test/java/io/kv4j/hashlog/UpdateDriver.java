package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * A measuring harness for issue #27, not a test (run it with {@code java -cp}, see the module
 * README): 100,000 keys of 16 bytes with 1 KiB values in {@code BUFFERED} stores, then timed
 * windows of {@code overwrite} (uniform puts), {@code ycsb-a} (zipfian 0.99 scrambled, 50% gets,
 * 50% puts) or {@code readrandom} (uniform gets, every value checked).
 *
 * <p>{@code profile <scenario> <threads> <seconds> <rounds>}: prints per window the rate, process
 * CPU per operation (and the sealer's and compactor's share), minor page faults per operation and
 * the throttle's waits; run it under JFR or perf. (Its {@code ab} mode compared, in the same JVM, a
 * store opened with the older BUFFERED write path: one {@code write(2)} per record, forced behind
 * the writer and at each seal. That path is deleted; to measure it, build the git tag {@code
 * hashlog-legacy-buffered} and run the two builds in turn.)
 *
 * <p>Engine options may follow as {@code key=value}. On a loaded machine only the ratios and shares
 * mean anything, not the rates.
 */
final class UpdateDriver {
  static final int KEYS = 100_000;
  static final int VALUE = 1024;

  private UpdateDriver() {}

  /** Entry point; see the class comment for the arguments. */
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String scenario = args[1];
    int threads = Integer.parseInt(args[2]);
    double seconds = Double.parseDouble(args[3]);
    int rounds = Integer.parseInt(args[4]);
    String[] options = new String[(args.length - 5) * 2];
    for (int i = 5; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      options[(i - 5) * 2] = kv[0];
      options[(i - 5) * 2 + 1] = kv[1];
    }
    if (!mode.equals("profile")) {
      throw new IllegalArgumentException("mode: profile (the A/B mode is gone, see the comment)");
    }
    profile(scenario, threads, seconds, rounds, options);
  }

  static void profile(String scenario, int threads, double seconds, int rounds, String[] options)
      throws Exception {
    Path dir = Files.createTempDirectory("hashlog-driver");
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, options)) {
      load(s);
      for (int round = 0; round < rounds; round++) {
        long f0 = minorFaults();
        long cpu0 = processCpuNanos();
        long[] bg0 = backgroundCpu();
        long[] done = new long[1];
        double ops = run(s, scenario, threads, seconds, done);
        long n = Math.max(1, done[0]);
        long[] bg1 = backgroundCpu();
        System.out.printf(
            "%s %d threads: %,.0f ops/s, %.2f cpu-us/op (sealer %.2f, compactor %.2f), %.2f minor"
                + " faults/op, throttled %d ms total%n",
            scenario,
            threads,
            ops,
            (processCpuNanos() - cpu0) / 1e3 / n,
            (bg1[0] - bg0[0]) / 1e3 / n,
            (bg1[1] - bg0[1]) / 1e3 / n,
            (minorFaults() - f0) / (double) n,
            TestStores.figure(s, "compaction-throttled-ms"));
      }
      System.out.println(s.stats().figures());
    } finally {
      deleteTree(dir);
    }
  }

  static void load(HashLogStore s) {
    byte[] value = new byte[VALUE];
    SplittableRandom r = new SplittableRandom(1);
    for (int i = 0; i < KEYS; i++) {
      r.nextBytes(value);
      s.put(key(i), value.clone());
    }
  }

  static byte[] key(long i) {
    byte[] k = new byte[16];
    for (int b = 0; b < 8; b++) {
      k[b] = (byte) (i >>> (56 - 8 * b));
    }
    return k;
  }

  /**
   * Runs the scenario for {@code seconds}; operations per second ({@code done[0]}: operations,
   * {@code done[1]} if present: CPU nanoseconds of the calling threads).
   */
  static double run(HashLogStore s, String scenario, int threads, double seconds, long[] done)
      throws InterruptedException {
    LongAdder ops = new LongAdder();
    LongAdder cpu = new LongAdder();
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long until = System.nanoTime() + (long) (seconds * 1e9);
    Thread[] ts = new Thread[threads];
    boolean ycsb = scenario.equals("ycsb-a");
    boolean reads = scenario.equals("readrandom");
    Zipf z = ycsb ? Zipf.of(KEYS) : null;
    for (int t = 0; t < threads; t++) {
      long seed = 1000 + t;
      ts[t] =
          new Thread(
              () -> {
                long c0 = mx.getCurrentThreadCpuTime();
                SplittableRandom r = new SplittableRandom(seed);
                byte[] pool = new byte[256 << 10];
                r.nextBytes(pool);
                long n = 0;
                while ((n & 63) != 0 || System.nanoTime() < until) {
                  long k = ycsb ? z.next(r.nextDouble()) : r.nextLong(KEYS);
                  if (reads || (ycsb && r.nextBoolean())) {
                    byte[] v = s.get(key(k));
                    if (v == null || v.length != VALUE) {
                      throw new AssertionError("key " + k + " missing or short");
                    }
                  } else {
                    int from = r.nextInt(pool.length - VALUE);
                    s.put(key(k), Arrays.copyOfRange(pool, from, from + VALUE));
                  }
                  n++;
                }
                ops.add(n);
                cpu.add(mx.getCurrentThreadCpuTime() - c0);
              });
    }
    long t0 = System.nanoTime();
    for (Thread t : ts) {
      t.start();
    }
    for (Thread t : ts) {
      t.join();
    }
    done[0] = ops.sum();
    if (done.length > 1) {
      done[1] = cpu.sum();
    }
    return ops.sum() / ((System.nanoTime() - t0) / 1e9);
  }

  /** YCSB's scrambled zipfian (0.99) over {@code items}. */
  static final class Zipf {
    private static Zipf cached;
    private final long items;
    private final double zetan;
    private final double alpha;
    private final double eta;
    private final double half;

    static synchronized Zipf of(long items) {
      if (cached == null || cached.items != items) {
        cached = new Zipf(items);
      }
      return cached;
    }

    private Zipf(long items) {
      double theta = 0.99;
      this.items = items;
      double z = 0;
      for (long i = 0; i < items; i++) {
        z += 1 / Math.pow(i + 1, theta);
      }
      this.zetan = z;
      double zeta2 = 1 + 1 / Math.pow(2, theta);
      this.alpha = 1.0 / (1.0 - theta);
      this.eta = (1 - Math.pow(2.0 / items, 1 - theta)) / (1 - zeta2 / zetan);
      this.half = 1 + Math.pow(0.5, theta);
    }

    long next(double u) {
      double uz = u * zetan;
      long rank;
      if (uz < 1.0) {
        rank = 0;
      } else if (uz < half) {
        rank = 1;
      } else {
        rank = Math.min((long) (items * Math.pow(eta * u - eta + 1, alpha)), items - 1);
      }
      long h = 0xCBF29CE484222325L;
      long v = rank;
      for (int i = 0; i < 8; i++) {
        h ^= v & 0xff;
        h *= 0x100000001B3L;
        v >>>= 8;
      }
      return Math.floorMod(h, items);
    }
  }

  /** CPU time of the store's sealer and compactor threads so far, in nanoseconds. */
  static long[] backgroundCpu() {
    ThreadMXBean b = ManagementFactory.getThreadMXBean();
    long[] out = new long[2];
    for (ThreadInfo t : b.getThreadInfo(b.getAllThreadIds())) {
      if (t == null) {
        continue;
      }
      long c = Math.max(0, b.getThreadCpuTime(t.getThreadId()));
      if (t.getThreadName().startsWith("kv4j-hashlog-sealer")) {
        out[0] += c;
      } else if (t.getThreadName().startsWith("kv4j-hashlog-compactor")) {
        out[1] += c;
      }
    }
    return out;
  }

  /** CPU time so far of the background threads of the store in directory {@code name}. */
  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Minor page faults of this process so far (Linux), 0 elsewhere. */
  static long minorFaults() {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(f[7]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> w = Files.walk(dir)) {
      w.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
