package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * The {@code churn} kind: space under update churn. A fresh store, loaded with {@code --keys} keys,
 * then one phase of overwrites per phase of the scenario, each with the keys of the distribution
 * the phase names (uniform, then zipfian 0.99 scrambled, YCSB's generator), {@code --churn-rounds}
 * times the key count, at the scenario's thread count. Allocated disk bytes ({@code du}) over live
 * bytes are sampled every 0.5 s during a phase (the worst sample is kept) and measured after a sync
 * at its end. A phase stops at {@code --churn-max-seconds}; its row then says how many rounds were
 * done.
 */
final class Churn {
  /** How often disk usage is sampled during a churn phase. */
  static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The stats() figures of an engine that are copied into the churn rows. */
  private static final List<String> ENGINE_FIGURES =
      List.of("space-amplification", "write-amplification");

  private final Rig rig;
  private final Scenario scenario;
  private final Scenario load;
  private final Options options;
  private final Data data;

  Churn(Rig rig, Scenario scenario, Scenario load) {
    this.rig = rig;
    this.scenario = scenario;
    this.load = load;
    this.options = rig.options();
    this.data = rig.data();
  }

  /**
   * The scenario on a fresh store of the engine: a row per phase.
   *
   * @param p the engine
   */
  void run(StoreProvider p) {
    String id = p.id();
    Durability d = scenario.durability(options.durability);
    if (!rig.onLocalDisk(p, scenario.id(), d)) {
      return;
    }
    int threads = scenario.threads().counts(options.threads).get(0);
    StoreConfig c = rig.config(p, scenario.storeName(), d, options.keys, data.valueSize());
    try (Store store = Rig.open(c)) {
      Workload wl = new Workload(store, data, options.keys);
      List<Workload.Worker> workers = new ArrayList<>();
      rig.log(id, scenario.id() + ": loading " + options.keys + " keys into a fresh store");
      Result fill = new Loads(rig).fill(id, load, wl, workers, threads);
      if (!fill.ok()) {
        rig.add(Result.failed(id, scenario.id(), "load", threads, d, fill.error()));
        return;
      }
      for (String phase : scenario.phases()) {
        Result r = phase(id, store, c, wl, workers, threads, phase);
        rig.add(r);
        if (!r.ok()) {
          return;
        }
      }
    } catch (RuntimeException e) {
      rig.log(id, scenario.id() + " FAILED: " + e);
      rig.add(Result.failed(id, scenario.id(), "", threads, d, Rows.describe(e)));
    } finally {
      Disk.delete(c.path());
    }
  }

  /** One phase: its overwrites on the threads, disk sampled meanwhile, then its row. */
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
    long live = (long) (keys * (data.keySize() + data.meanValueSize()));
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s %s: %d rounds of %,d overwrites, %d thread(s), cap %.0f s",
            scenario.id(),
            phase,
            options.churnRounds,
            keys,
            threads,
            options.churnMaxSeconds));
    Rig.ensureWorkers(wl, workers, threads);
    Overwrites o = new Overwrites(id, workers, threads, target, Catalogue.distribution(phase));
    double worst = o.sampleUntilDone(c, live, phase);
    Result r =
        rig.summarize(id, scenario.id(), phase, threads, store.info().durability(), o.window());
    if (!r.ok()) {
      return r;
    }
    store.sync();
    long disk = Disk.allocatedBytes(c.path());
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
    rig.log(
        id,
        String.format(
            Locale.ROOT,
            "%s %s: %.1f of %d rounds%s, disk/live %.2fx at the end (%s), worst %.2fx",
            scenario.id(),
            phase,
            rounds,
            options.churnRounds,
            r.ops() < target ? " (capped)" : "",
            r.amplification(),
            Format.mib(disk),
            worst));
    return r;
  }

  /** The threads of one phase: each its share of the overwrites, until done or capped. */
  private final class Overwrites {
    private final String id;
    private final Histogram[] hist;
    private final long[] ops;
    private final long[] cpu;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final CountDownLatch done;
    private final List<Thread> ts = new ArrayList<>();
    private final long t0;
    private final long cpu0;
    private long wall;
    private long cpu1;

    Overwrites(
        String id,
        List<Workload.Worker> workers,
        int threads,
        long target,
        Scenario.Distribution keys) {
      this.id = id;
      hist = new Histogram[threads];
      ops = new long[threads];
      cpu = new long[threads];
      done = new CountDownLatch(threads);
      CountDownLatch start = new CountDownLatch(1);
      long[] deadline = new long[1]; // written before start.countDown()
      for (int t = 0; t < threads; t++) {
        int ti = t;
        long share = target / threads + (t < target % threads ? 1 : 0);
        Workload.Worker w = workers.get(t);
        hist[t] = new Histogram(3);
        Runnable body =
            () -> {
              long sink = 0;
              try {
                start.await();
                long end = deadline[0];
                long c0 = Timing.threadCpu();
                for (long i = 0; i < share && failure.get() == null; i++) {
                  long a = System.nanoTime();
                  if ((i & 127) == 0 && a - end > 0) {
                    break;
                  }
                  sink += w.update(keys);
                  hist[ti].recordValue(System.nanoTime() - a);
                  ops[ti]++;
                }
                cpu[ti] = Timing.threadCpu() - c0;
              } catch (Throwable e) {
                failure.compareAndSet(null, e);
              } finally {
                done.countDown();
              }
              Timing.Blackhole.consume(sink);
            };
        ts.add(new Thread(body, "kv4j-bench-" + id + "-churn-" + t));
      }
      ts.forEach(Thread::start);
      cpu0 = Timing.processCpu();
      t0 = System.nanoTime();
      deadline[0] = t0 + (long) (options.churnMaxSeconds * 1e9);
      start.countDown();
    }

    /** Samples disk / live bytes until every thread is done; returns the worst sample. */
    double sampleUntilDone(StoreConfig c, long live, String phase) {
      double worst = 0;
      long nextProgress = t0 + PROGRESS_NANOS;
      try {
        while (!done.await(SAMPLE_NANOS, TimeUnit.NANOSECONDS)) {
          double ratio = (double) Disk.allocatedBytes(c.path()) / live;
          worst = Math.max(worst, ratio);
          long now = System.nanoTime();
          if (now - nextProgress > 0) {
            nextProgress = now + PROGRESS_NANOS;
            rig.log(
                id,
                String.format(
                    Locale.ROOT,
                    "%s %s: %.0f s, disk/live %.2fx now, worst %.2fx",
                    scenario.id(),
                    phase,
                    (now - t0) / 1e9,
                    ratio,
                    worst));
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Timing.joinAll(ts);
      wall = System.nanoTime() - t0;
      cpu1 = Timing.processCpu();
      return worst;
    }

    Window window() {
      return new Window(hist, ops, cpu, wall, cpu1 - cpu0, failure);
    }
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
}
