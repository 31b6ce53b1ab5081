package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.StoreProvider;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * The update-churn scenarios.
 *
 * <p>{@code churn}: a fresh store, loaded with {@code --keys} keys, then two phases of overwrites
 * at the largest thread count: {@code --churn-rounds} times the key count with uniform keys, then
 * as many with zipfian keys (0.99, scrambled, YCSB's generator). Allocated disk bytes ({@code du})
 * over live bytes are sampled every 0.5 s during a phase (the worst sample is kept) and measured
 * after a sync at its end. A phase stops at {@code --churn-max-seconds}; its row then says how many
 * rounds were done.
 *
 * <p>{@code churn-reads}: on the loaded store of the main run, one reader thread of verified
 * uniform gets alone for a window, then the same reader next to one writer of zipfian overwrites at
 * full speed for another; the retention is the reader's throughput in the second window over the
 * first.
 */
final class Churn {
  /** How often disk usage is sampled during a churn phase. */
  static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The stats() figures of an engine that are copied into the churn rows. */
  private static final List<String> ENGINE_FIGURES =
      List.of("space-amplification", "write-amplification");

  private final Runner runner;
  private final Options options;
  private final Data data;

  Churn(Runner runner) {
    this.runner = runner;
    this.options = runner.options();
    this.data = runner.data();
  }

  /** The {@code churn} scenario on a fresh store of the engine: rows for both phases. */
  void space(StoreProvider p) {
    String id = p.id();
    String scenario = Scenario.CHURN.id();
    Durability d = options.durability;
    if (!runner.onLocalDisk(p, scenario, d)) {
      return;
    }
    int threads = options.maxThreads();
    StoreConfig c = runner.config(p, "churn", d, options.keys, data.valueSize());
    try (Store store = Runner.open(c)) {
      Workload wl = new Workload(store, data, options.keys);
      List<Workload.Worker> workers = new ArrayList<>();
      runner.log(id, "churn: loading " + options.keys + " keys into a fresh store");
      Result fill = runner.fill(id, wl, workers, threads);
      if (!fill.ok()) {
        runner.add(Result.failed(id, scenario, "load", threads, d, fill.error()));
        return;
      }
      for (String phase : List.of("uniform", "zipfian")) {
        Result r = phase(id, store, c, wl, workers, threads, phase);
        runner.add(r);
        if (!r.ok()) {
          return;
        }
      }
    } catch (RuntimeException e) {
      runner.log(id, "churn FAILED: " + e);
      runner.add(Result.failed(id, scenario, "", threads, d, Runner.describe(e)));
    } finally {
      Runner.delete(c.path());
    }
  }

  private Result phase(
      String id,
      Store store,
      StoreConfig c,
      Workload wl,
      List<Workload.Worker> workers,
      int threads,
      String phase) {
    long keys = options.keys;
    long target = options.churnRounds * keys;
    long live = keys * (data.keySize() + data.valueSize());
    boolean zipfian = phase.equals("zipfian");
    Durability d = store.info().durability();
    runner.log(
        id,
        String.format(
            Locale.ROOT,
            "churn %s: %d rounds of %,d overwrites, %d thread(s), cap %.0f s",
            phase,
            options.churnRounds,
            keys,
            threads,
            options.churnMaxSeconds));
    Runner.ensureWorkers(wl, workers, threads);
    Histogram[] hist = new Histogram[threads];
    long[] ops = new long[threads];
    long[] cpu = new long[threads];
    long[] deadline = new long[1]; // written before start.countDown()
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(threads);
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int ti = t;
      long share = target / threads + (t < target % threads ? 1 : 0);
      Workload.Worker w = workers.get(t);
      LongSupplier op = zipfian ? w::overwriteZipfian : () -> w.op(Scenario.OVERWRITE);
      hist[t] = new Histogram(3);
      Thread th =
          new Thread(
              () -> {
                long sink = 0;
                try {
                  start.await();
                  long end = deadline[0];
                  long c0 = THREADS.getCurrentThreadCpuTime();
                  for (long i = 0; i < share && failure.get() == null; i++) {
                    long a = System.nanoTime();
                    if ((i & 127) == 0 && a - end > 0) {
                      break;
                    }
                    sink += op.getAsLong();
                    hist[ti].recordValue(System.nanoTime() - a);
                    ops[ti]++;
                  }
                  cpu[ti] = THREADS.getCurrentThreadCpuTime() - c0;
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                } finally {
                  done.countDown();
                }
                Runner.Blackhole.consume(sink);
              },
              "kv4j-bench-" + id + "-churn-" + t);
      ts.add(th);
    }
    ts.forEach(Thread::start);
    long cpu0 = Runner.processCpu();
    long t0 = System.nanoTime();
    deadline[0] = t0 + (long) (options.churnMaxSeconds * 1e9);
    start.countDown();
    double worst = 0;
    long nextProgress = t0 + PROGRESS_NANOS;
    try {
      while (!done.await(SAMPLE_NANOS, TimeUnit.NANOSECONDS)) {
        double ratio = (double) Runner.allocatedBytes(c.path()) / live;
        worst = Math.max(worst, ratio);
        long now = System.nanoTime();
        if (now - nextProgress > 0) {
          nextProgress = now + PROGRESS_NANOS;
          runner.log(
              id,
              String.format(
                  Locale.ROOT,
                  "churn %s: %.0f s, disk/live %.2fx now, worst %.2fx",
                  phase,
                  (now - t0) / 1e9,
                  ratio,
                  worst));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Runner.joinAll(ts);
    long wall = System.nanoTime() - t0;
    long cpu1 = Runner.processCpu();
    Result r =
        runner.summarize(
            id, Scenario.CHURN.id(), phase, threads, d, hist, ops, cpu, wall, cpu1 - cpu0, failure);
    if (!r.ok()) {
      return r;
    }
    store.sync();
    long disk = Runner.allocatedBytes(c.path());
    worst = Math.max(worst, (double) disk / live);
    double rounds = (double) r.ops() / keys;
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("rounds-done", rounds);
    f.put("rounds-target", (double) options.churnRounds);
    f.put("capped", r.ops() < target ? 1.0 : 0.0);
    f.put("max-seconds", options.churnMaxSeconds);
    f.put("worst-disk-per-live", worst);
    f.putAll(engineFigures(store));
    r = r.with(disk, live, f);
    runner.log(
        id,
        String.format(
            Locale.ROOT,
            "churn %s: %.1f of %d rounds%s, disk/live %.2fx at the end (%s), worst %.2fx",
            phase,
            rounds,
            options.churnRounds,
            r.ops() < target ? " (capped)" : "",
            r.amplification(),
            Runner.mib(disk),
            worst));
    return r;
  }

  /** The engine's own space and write amplification, if its stats() has them. */
  private static Map<String, Double> engineFigures(Store store) {
    Map<String, Double> out = new LinkedHashMap<>();
    try {
      Map<String, Number> f = store.stats().figures();
      for (String name : ENGINE_FIGURES) {
        Number v = f.get(name);
        if (v != null) {
          out.put("engine-" + name, v.doubleValue());
        }
      }
    } catch (RuntimeException e) {
      // stats() is informational: a failure leaves the figures out.
    }
    return out;
  }

  /**
   * The {@code churn-reads} or {@code churn-scans} scenario on the loaded store of the main run:
   * rows {@code read-only}, {@code reads} and {@code writes}, where a read is a get ({@code
   * churn-reads}) or a scan of {@value Workload#SCAN_LENGTH} keys ({@code churn-scans}).
   */
  void reads(
      String id, Scenario scenario, Workload wl, List<Workload.Worker> workers, Durability d) {
    Scenario op = scenario == Scenario.CHURN_SCANS ? Scenario.SCAN : Scenario.READRANDOM;
    String what = op == Scenario.SCAN ? "scanner" : "reader";
    Runner.ensureWorkers(wl, workers, 2);
    Workload.Worker reader = workers.get(0);
    Workload.Worker writer = workers.get(1);
    runner.log(
        id,
        scenario.id()
            + ": 1 "
            + what
            + " alone, then 1 "
            + what
            + " + 1 writer (zipfian overwrites)");
    LongSupplier read = () -> reader.op(op);
    Runner.Window alone = runner.window(id, new LongSupplier[] {read});
    Result readOnly = part(id, scenario, "read-only", d, alone, 0);
    runner.add(readOnly);
    if (!readOnly.ok()) {
      return;
    }
    Runner.Window mixed = runner.window(id, new LongSupplier[] {read, writer::overwriteZipfian});
    Result reads = part(id, scenario, "reads", d, mixed, 0);
    Result writes = part(id, scenario, "writes", d, mixed, 1);
    if (reads.ok()) {
      Map<String, Double> f = new LinkedHashMap<>();
      f.put("read-only-ops-per-sec", readOnly.opsPerSec());
      f.put("retention", reads.opsPerSec() / readOnly.opsPerSec());
      f.put("writes-per-sec", writes.opsPerSec());
      reads = reads.with(0, 0, f);
      runner.log(
          id,
          String.format(
              Locale.ROOT,
              "%s: retention %.2f (%s/s during churn, %s alone)",
              scenario.id(),
              reads.figure("retention"),
              Report.rate(reads.opsPerSec()),
              Report.rate(readOnly.opsPerSec())));
    }
    runner.add(reads);
    runner.add(writes);
  }

  /** One thread's share of a window, as a row of its own. */
  private Result part(
      String id, Scenario scenario, String phase, Durability d, Runner.Window w, int t) {
    return runner.summarize(
        id,
        scenario.id(),
        phase,
        1,
        d,
        new Histogram[] {w.hist()[t]},
        new long[] {w.ops()[t]},
        new long[] {w.cpu()[t]},
        w.wallNs(),
        w.cpu()[t],
        w.failure());
  }
}
