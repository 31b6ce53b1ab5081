package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * Runs the selected scenarios against each engine in turn, in this JVM, and collects {@link
 * Result}s. Per engine: load (fillrandom), footprint after load, the timed scenarios at each thread
 * count, footprint after the update phases; then single-op on a fresh store, then durable-put
 * (SYNC) on another fresh store. Every store lives in its own directory, deleted afterwards.
 */
final class Runner {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final Options options;
  private final Data data;
  private final PrintStream progress;
  private final Path dataRoot;
  private final List<Result> results = new ArrayList<>();
  private final Map<String, Map<String, String>> settings = new LinkedHashMap<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> skipped = new ArrayList<>();
  private final long startNanos = System.nanoTime();
  private int engineNo;
  private int engineCount;

  Runner(Options options, Data data, Path dataRoot, PrintStream progress) {
    this.options = options;
    this.data = data;
    this.dataRoot = dataRoot;
    this.progress = progress;
  }

  List<Result> results() {
    return results;
  }

  Map<String, Map<String, String>> settings() {
    return settings;
  }

  List<String> notes() {
    return notes;
  }

  /** Server engines skipped because their server was not reachable. */
  List<String> skipped() {
    return skipped;
  }

  void run(List<StoreProvider> engines) {
    engineCount = engines.size();
    for (StoreProvider p : engines) {
      engineNo++;
      try {
        runEngine(p);
      } catch (RuntimeException | Error e) {
        log(p.id(), "FAILED: " + e);
        results.add(Result.failed(p.id(), "open", "", 0, options.durability, describe(e)));
      }
    }
  }

  private void runEngine(StoreProvider p) {
    String id = p.id();
    List<Scenario> sel = options.scenarios;
    boolean persistent = p.features().contains(Feature.PERSISTENT);
    boolean ordered = p.features().contains(Feature.ORDERED_SCAN);
    boolean server = Servers.isServer(id);
    StoreConfig main = config(p, "main", options.durability);
    if (server) {
      // Probe the server once (and empty a leftover of an interrupted run): an unreachable server
      // skips the engine with one line instead of failing the run.
      try (Store probe = open(main)) {
        Servers.clear(probe);
      } catch (RuntimeException e) {
        if (!Servers.unreachable(e)) {
          throw e;
        }
        String reason = Servers.skipReason(id, e);
        log(id, reason);
        notes.add(reason);
        skipped.add(id);
        return;
      }
    }
    settings.put(id, effectiveSettings(p, main));

    // The long scenarios measure the engines, not the cost of the abstraction: the raw
    // baselines skip them.
    boolean raw = Abstraction.isRaw(id);
    if (raw && sel.stream().anyMatch(s -> !s.inDefaultSet())) {
      log(id, "raw baseline: skips churn, churn-reads, churn-scans and scale");
    }
    boolean churnReads = sel.contains(Scenario.CHURN_READS) && !raw;
    boolean churnScans = sel.contains(Scenario.CHURN_SCANS) && !raw;
    boolean needLoad =
        sel.contains(Scenario.FILLRANDOM)
            || sel.contains(Scenario.FOOTPRINT)
            || churnReads
            || churnScans
            || sel.stream().anyMatch(Scenario::timedOnLoadedStore);
    if (needLoad) {
      try (Store store = open(main)) {
        Workload wl = new Workload(store, data, options.keys);
        List<Workload.Worker> workers = new ArrayList<>();
        log(id, "loading " + options.keys + " keys (fillrandom, " + options.maxThreads() + "t)");
        Result fill = fill(id, wl, workers, options.maxThreads());
        if (sel.contains(Scenario.FILLRANDOM) || !fill.ok()) {
          add(fill);
        }
        if (!fill.ok()) {
          return;
        }
        if (sel.contains(Scenario.FOOTPRINT) && persistent && !server) {
          add(footprint(id, store, main, wl, "after-load"));
        }
        for (Scenario s : sel) {
          if (!s.timedOnLoadedStore()) {
            continue;
          }
          if (s.needsOrderedScan() && !ordered) {
            add(Result.failed(id, s.id(), "", 0, main.durability(), "n/a: no ordered scans"));
            continue;
          }
          for (int t : options.threads) {
            add(timed(id, s, wl, workers, t, main.durability()));
          }
        }
        if (churnReads) {
          new Churn(this).reads(id, Scenario.CHURN_READS, wl, workers, main.durability());
        }
        if (churnScans) {
          if (ordered) {
            new Churn(this).reads(id, Scenario.CHURN_SCANS, wl, workers, main.durability());
          } else {
            add(
                Result.failed(
                    id,
                    Scenario.CHURN_SCANS.id(),
                    "",
                    0,
                    main.durability(),
                    "n/a: no ordered scans"));
          }
        }
        if (sel.contains(Scenario.FOOTPRINT) && persistent && !server) {
          add(footprint(id, store, main, wl, "after-update"));
        }
        clearIfServer(id, store);
      } finally {
        delete(main.path());
      }
    }
    if (sel.contains(Scenario.SINGLE_OP)) {
      StoreConfig c = config(p, "single-op", options.durability);
      try (Store store = open(c)) {
        clearIfServer(id, store);
        singleOp(id, new Workload(store, data, 0), c.durability());
        clearIfServer(id, store);
      } finally {
        delete(c.path());
      }
    }
    if (sel.contains(Scenario.DURABLE_PUT)) {
      if (!persistent) {
        add(
            Result.failed(
                id, Scenario.DURABLE_PUT.id(), "", 0, Durability.SYNC, "n/a: not persistent"));
      } else {
        StoreConfig c = config(p, "durable", Durability.SYNC);
        try (Store store = open(c)) {
          clearIfServer(id, store);
          Workload wl = new Workload(store, data, options.keys);
          List<Workload.Worker> workers = new ArrayList<>();
          for (int t : options.threads) {
            add(timed(id, Scenario.DURABLE_PUT, wl, workers, t, Durability.SYNC));
          }
          clearIfServer(id, store);
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
          add(
              Result.failed(
                  id, Scenario.DURABLE_PUT.id(), "", 0, Durability.SYNC, "n/a: " + e.getMessage()));
        } finally {
          delete(c.path());
        }
      }
    }
    if (sel.contains(Scenario.CHURN) && !raw) {
      new Churn(this).space(p);
    }
    if (sel.contains(Scenario.SCALE) && !raw) {
      new Scale(this).run(p);
    }
  }

  Options options() {
    return options;
  }

  Data data() {
    return data;
  }

  Path dataRoot() {
    return dataRoot;
  }

  /** Server stores outlive the run on the server: emptied before and after use. */
  private void clearIfServer(String id, Store store) {
    if (Servers.isServer(id)) {
      long n = Servers.clear(store);
      if (n > 0) {
        log(id, "emptied the server-side store (" + n + " keys)");
      }
    }
  }

  private StoreConfig config(StoreProvider p, String name, Durability d) {
    return config(p, name, d, options.keys, data.valueSize());
  }

  /** A store's configuration, sized for {@code keys} keys of {@code valueSize}-byte values. */
  StoreConfig config(StoreProvider p, String name, Durability d, long keys, int valueSize) {
    StoreConfig.Builder b =
        StoreConfig.builder(p.id()).path(dataRoot.resolve(p.id() + "-" + name)).durability(d);
    Map<String, String> opts = new LinkedHashMap<>(Servers.naming(p.id(), name));
    if (p.id().equals("chronicle-map")) {
      // Its capacity is fixed and preallocated: size it to the data set, with room for the
      // inserts of ycsb-d/e, instead of the provider's default of 1,000,000 entries.
      opts.put("entries", String.valueOf(keys * 2 + 100_000));
      opts.put("average-key-size", String.valueOf(data.keySize()));
      opts.put("average-value-size", String.valueOf(valueSize));
    }
    // Caches sized alike: about 1.25x the data set, as the seed comparison did.
    long cache = (long) (keys * (double) (data.keySize() + valueSize) * 1.25);
    for (OptionSpec<?> spec : p.options()) {
      if (spec.name().equals("cache-size") || spec.name().equals("block-cache-size")) {
        if (spec.type().equals("size")) {
          opts.put(spec.name(), String.valueOf(cache));
        } else if ("MiB".equals(spec.unit())) {
          opts.put(spec.name(), String.valueOf(Math.max(1, cache >> 20)));
        }
      }
    }
    Map<String, String> user = options.engineOptions.get(p.id());
    if (user != null) {
      opts.putAll(user);
    }
    opts.forEach(b::option);
    return b.build();
  }

  static Store open(StoreConfig c) {
    return Stores.open(c);
  }

  static Map<String, String> effectiveSettings(StoreProvider p, StoreConfig c) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("durability", c.durability().name().toLowerCase(java.util.Locale.ROOT));
    for (OptionSpec<?> spec : p.options()) {
      m.put(spec.name(), String.valueOf(c.get(spec)));
    }
    return m;
  }

  Result fill(String id, Workload wl, List<Workload.Worker> workers, int threads) {
    long n = options.keys;
    if (n > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("--keys above 2^31 is not supported");
    }
    long[] order = new long[(int) n];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    SplittableRandom r = new SplittableRandom(options.seed);
    for (int i = order.length - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      long tmp = order[i];
      order[i] = order[j];
      order[j] = tmp;
    }
    ensureWorkers(wl, workers, threads);
    int per = (order.length + threads - 1) / threads;
    return fixed(
        id,
        Scenario.FILLRANDOM.id(),
        "",
        threads,
        wl.store().info().durability(),
        t -> {
          Workload.Worker w = workers.get(t);
          int from = Math.min(order.length, t * per);
          int to = Math.min(order.length, from + per);
          return new FixedTask(to - from, i -> w.put(order[from + i]));
        });
  }

  private void singleOp(String id, Workload wl, Durability d) {
    int n = options.singleOpCount;
    Workload.Worker w = wl.worker(options.seed);
    log(id, "single-op: " + n + " single inserts then " + n + " reads");
    add(fixed(id, Scenario.SINGLE_OP.id(), "insert", 1, d, t -> new FixedTask(n, i -> w.put(i))));
    add(
        fixed(
            id,
            Scenario.SINGLE_OP.id(),
            "read",
            1,
            d,
            t -> new FixedTask(n, i -> w.read((i * 7919L) % n))));
  }

  private Result footprint(String id, Store store, StoreConfig c, Workload wl, String phase) {
    store.sync();
    long disk = allocatedBytes(c.path());
    long live = wl.liveKeys() * (data.keySize() + data.valueSize());
    Result r = Result.footprint(id, phase, c.durability(), disk, live);
    log(id, String.format("footprint %s: %.2fx (%s on disk)", phase, r.amplification(), mib(disk)));
    return r;
  }

  static void ensureWorkers(Workload wl, List<Workload.Worker> workers, int threads) {
    while (workers.size() < threads) {
      workers.add(wl.worker(0x9E3779B97F4A7C15L * (workers.size() + 1)));
    }
  }

  /** Work of a known size for one thread: {@code count} calls of {@code op}. */
  record FixedTask(int count, java.util.function.IntToLongFunction op) {}

  private Result fixed(
      String id,
      String scenario,
      String phase,
      int threads,
      Durability d,
      java.util.function.IntFunction<FixedTask> tasks) {
    Histogram[] hist = new Histogram[threads];
    long[] ops = new long[threads];
    long[] cpu = new long[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int ti = t;
      FixedTask task = tasks.apply(t);
      hist[t] = new Histogram(3);
      Thread th =
          new Thread(
              () -> {
                long sink = 0;
                try {
                  start.await();
                  long c0 = THREADS.getCurrentThreadCpuTime();
                  for (int i = 0; i < task.count() && failure.get() == null; i++) {
                    long a = System.nanoTime();
                    sink += task.op().applyAsLong(i);
                    hist[ti].recordValue(System.nanoTime() - a);
                    ops[ti]++;
                  }
                  cpu[ti] = THREADS.getCurrentThreadCpuTime() - c0;
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
                Blackhole.consume(sink);
              },
              "kv4j-bench-" + id + "-" + t);
      ts.add(th);
    }
    ts.forEach(Thread::start);
    long cpu0 = processCpu();
    long t0 = System.nanoTime();
    start.countDown();
    joinAll(ts);
    long wall = System.nanoTime() - t0;
    long cpu1 = processCpu();
    return summarize(id, scenario, phase, threads, d, hist, ops, cpu, wall, cpu1 - cpu0, failure);
  }

  private Result timed(
      String id,
      Scenario s,
      Workload wl,
      List<Workload.Worker> workers,
      int threads,
      Durability d) {
    ensureWorkers(wl, workers, threads);
    java.util.function.LongSupplier[] ops = new java.util.function.LongSupplier[threads];
    for (int t = 0; t < threads; t++) {
      Workload.Worker w = workers.get(t);
      ops[t] = () -> w.op(s);
    }
    Window win = window(id, ops);
    return summarize(
        id,
        s.id(),
        "",
        threads,
        d,
        win.hist(),
        win.ops(),
        win.cpu(),
        win.wallNs(),
        win.processCpuNs(),
        win.failure());
  }

  /**
   * What one timed window measured, per thread: latencies, operations and thread CPU; the wall time
   * from the end of the warm-up to the last thread's last operation; the process CPU in between.
   */
  record Window(
      Histogram[] hist,
      long[] ops,
      long[] cpu,
      long wallNs,
      long processCpuNs,
      AtomicReference<Throwable> failure) {}

  /**
   * Runs one thread per operation for {@code --warmup} then {@code --duration} seconds; only the
   * operations after the warm-up are recorded.
   */
  Window window(String id, java.util.function.LongSupplier[] threadOps) {
    int threads = threadOps.length;
    long warmNs = (long) (options.warmup * 1e9);
    long measureNs = Math.max(1, (long) (options.duration * 1e9));
    Histogram[] hist = new Histogram[threads];
    long[] ops = new long[threads];
    long[] cpu = new long[threads];
    long[] lastEnd = new long[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    long[] times = new long[2]; // measure start, end; written before start.countDown()
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int ti = t;
      java.util.function.LongSupplier op = threadOps[t];
      hist[t] = new Histogram(3);
      Thread th =
          new Thread(
              () -> {
                long sink = 0;
                try {
                  start.await();
                  long from = times[0];
                  long end = times[1];
                  long c0 = 0;
                  boolean measuring = false;
                  long b = System.nanoTime();
                  while (failure.get() == null) {
                    long a = System.nanoTime();
                    // Past the end, but with nothing measured yet (one operation outlasted the
                    // whole window, as on an overloaded machine): measure one more.
                    if (a >= end && ops[ti] > 0) {
                      break;
                    }
                    if (!measuring && (a >= from || a >= end)) {
                      measuring = true;
                      c0 = THREADS.getCurrentThreadCpuTime();
                    }
                    sink += op.getAsLong();
                    b = System.nanoTime();
                    if (measuring) {
                      hist[ti].recordValue(b - a);
                      ops[ti]++;
                    }
                  }
                  lastEnd[ti] = b;
                  if (measuring) {
                    cpu[ti] = THREADS.getCurrentThreadCpuTime() - c0;
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
                Blackhole.consume(sink);
              },
              "kv4j-bench-" + id + "-" + t);
      ts.add(th);
    }
    ts.forEach(Thread::start);
    long now = System.nanoTime();
    times[0] = now + warmNs;
    times[1] = times[0] + measureNs;
    start.countDown();
    sleepUntil(times[0]);
    long cpu0 = processCpu();
    joinAll(ts);
    long cpu1 = processCpu();
    long last = times[1];
    for (long e : lastEnd) {
      last = Math.max(last, e);
    }
    return new Window(hist, ops, cpu, last - times[0], cpu1 - cpu0, failure);
  }

  Result summarize(
      String id,
      String scenario,
      String phase,
      int threads,
      Durability d,
      Histogram[] hist,
      long[] ops,
      long[] threadCpu,
      long wallNs,
      long processCpuNs,
      AtomicReference<Throwable> failure) {
    Throwable f = failure.get();
    String label = phase.isEmpty() ? scenario : scenario + " " + phase;
    if (f != null) {
      log(id, label + " t=" + threads + " FAILED: " + f);
      return Result.failed(id, scenario, phase, threads, d, describe(f));
    }
    Histogram all = new Histogram(3);
    long total = 0;
    long fg = 0;
    for (int t = 0; t < hist.length; t++) {
      all.add(hist[t]);
      total += ops[t];
      fg += threadCpu[t];
    }
    if (total == 0) {
      return Result.failed(id, scenario, phase, threads, d, "no operation completed");
    }
    double secs = wallNs / 1e9;
    double opsPerSec = total / secs;
    double cpuPerOp = processCpuNs / 1e3 / total;
    double bg = processCpuNs > 0 ? Math.max(0, 1 - (double) fg / processCpuNs) : 0;
    Result r =
        new Result(
            id,
            scenario,
            phase,
            threads,
            d,
            total,
            secs,
            opsPerSec,
            all.getValueAtPercentile(50) / 1e3,
            all.getValueAtPercentile(99) / 1e3,
            all.getValueAtPercentile(99.9) / 1e3,
            all.getMaxValue() / 1e3,
            cpuPerOp,
            bg,
            0,
            0,
            null);
    log(
        id,
        String.format(
            "%-18s t=%d %,12.0f ops/s  p50 %s  p99 %s  p99.9 %s  CPU %.1f µs/op",
            label,
            threads,
            opsPerSec,
            Report.micros(r.p50Us()),
            Report.micros(r.p99Us()),
            Report.micros(r.p999Us()),
            cpuPerOp));
    return r;
  }

  /**
   * Whether a scenario that measures local files can run on the engine; if not, records why as an
   * n/a row.
   */
  boolean onLocalDisk(StoreProvider p, String scenario, Durability d) {
    String why =
        !p.features().contains(Feature.PERSISTENT)
            ? "n/a: not persistent"
            : Servers.isServer(p.id()) ? "n/a: server engine (no local disk)" : null;
    if (why != null) {
      add(Result.failed(p.id(), scenario, "", 0, d, why));
    }
    return why == null;
  }

  void add(Result r) {
    results.add(r);
  }

  void log(String engine, String msg) {
    double el = (System.nanoTime() - startNanos) / 1e9;
    progress.printf("[%5.1fs %d/%d %s] %s%n", el, engineNo, engineCount, engine, msg);
    progress.flush();
  }

  static String describe(Throwable e) {
    String m = e.getMessage();
    return e.getClass().getSimpleName() + (m == null ? "" : ": " + m.replace('\n', ' '));
  }

  static long processCpu() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
    }
    return 0;
  }

  private static void sleepUntil(long deadline) {
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      try {
        TimeUnit.NANOSECONDS.sleep(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  static void joinAll(List<Thread> ts) {
    for (Thread t : ts) {
      boolean interrupted = false;
      while (true) {
        try {
          t.join();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Allocated bytes under a directory: {@code du -s -B1} where available (sparse and preallocated
   * files count as allocated blocks), else the sum of file sizes.
   */
  static long allocatedBytes(Path dir) {
    try {
      Process p =
          new ProcessBuilder("du", "-s", "-B1", dir.toString()).redirectErrorStream(true).start();
      String out;
      try (InputStream in = p.getInputStream()) {
        out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      }
      if (p.waitFor() == 0) {
        return Long.parseLong(out.split("\\s+")[0]);
      }
    } catch (IOException | NumberFormatException e) {
      // fall through to apparent sizes
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long[] sum = new long[1];
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
              sum[0] += a.size();
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sum[0];
  }

  static void delete(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
              Files.delete(f);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
              Files.delete(d);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }

  static String mib(long bytes) {
    return String.format("%.1f MiB", bytes / 1048576.0);
  }

  /** Keeps results alive so the JIT cannot drop the work that produced them. */
  static final class Blackhole {
    static volatile long sink;

    private Blackhole() {}

    static void consume(long v) {
      sink += v;
    }
  }
}
