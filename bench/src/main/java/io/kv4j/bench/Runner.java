package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
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
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * Runs the selected scenarios against each engine in turn, in this JVM, and collects {@link
 * Result}s. Per engine: load (fillrandom), footprint after load, the timed scenarios at each thread
 * count, footprint after the update phases; then fillbatch on a fresh store (with the footprint
 * after it and after a fixed number of updates), single-op on another, then durable-put (SYNC) on
 * another. Every store lives in its own directory, deleted afterwards. With {@code --rounds N} the
 * timed scenarios take turns across engines instead (see {@link #runInterleaved}).
 */
final class Runner {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** Puts per write batch of {@link Scenario#FILLBATCH}. */
  static final int BATCH = 1000;

  /**
   * Updates (zipfian single puts, one thread) per loaded key between the two footprints of the
   * fillbatch store: the same writes for every engine, so two footprints there are comparable.
   */
  static final int FIXED_UPDATES_PER_KEY = 2;

  /**
   * The {@code stats()} figures that say a flush or compaction is running or due (the rocksdb
   * engine and {@code rocksdb-raw}): a footprint waits until all of them are 0.
   */
  static final List<String> BACKGROUND_FIGURES =
      List.of("running-flushes", "flush-pending", "running-compactions", "compaction-pending");

  /** Longest wait for an engine's background work before a footprint is measured anyway. */
  static final long QUIESCE_MAX_NS = TimeUnit.SECONDS.toNanos(300);

  private static final long QUIESCE_POLL_NS = TimeUnit.MILLISECONDS.toNanos(50);

  private final Options options;
  private final Data data;
  private final PrintStream progress;
  private final Path dataRoot;
  private final List<Result> results = new ArrayList<>();
  private final Map<String, Map<String, String>> settings = new LinkedHashMap<>();
  private final Map<String, StoreInfo> storeInfos = new LinkedHashMap<>();
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

  /**
   * The {@link StoreInfo} of each engine's main store as opened: what the engine declares for the
   * store it measured (the report's caveats read it).
   */
  Map<String, StoreInfo> storeInfos() {
    return storeInfos;
  }

  /** Server engines skipped because their server was not reachable. */
  List<String> skipped() {
    return skipped;
  }

  void run(List<StoreProvider> engines) {
    engineCount = engines.size();
    if (options.rounds > 1) {
      runInterleaved(engines);
      return;
    }
    for (StoreProvider p : engines) {
      engineNo++;
      try {
        runEngine(p);
      } catch (RuntimeException | Error e) {
        failed(p.id(), e);
      }
    }
  }

  private void failed(String id, Throwable e) {
    log(id, "FAILED: " + e);
    results.add(Result.failed(id, "open", "", 0, options.durability, describe(e)));
  }

  private void runEngine(StoreProvider p) {
    Loaded l = load(p);
    if (l == null) {
      return;
    }
    if (l.store() != null) {
      try {
        for (Scenario s : timedScenarios(l)) {
          for (int t : options.threads) {
            add(timed(l.id(), s, l.wl(), l.workers(), t, l.main().durability()));
          }
        }
        afterTimed(l);
      } finally {
        l.close();
      }
    }
    standalone(p);
  }

  /**
   * {@code --rounds N}: loads every engine's main store first and keeps them all open; then, for
   * each timed scenario and thread count, the engines take turns window by window, N windows each,
   * the order rotating every round (for two engines: A B, B A, A B, ...), each window after {@link
   * #settle()}. A drift of the machine over the minutes of a run then lands on every engine alike
   * instead of on whichever ran last. The rest (churn-reads, footprint after update, single-op,
   * durable-put, churn, scale) runs engine by engine as without rounds.
   */
  private void runInterleaved(List<StoreProvider> engines) {
    List<Loaded> loaded = new ArrayList<>();
    List<StoreProvider> rest = new ArrayList<>();
    try {
      for (StoreProvider p : engines) {
        engineNo++;
        try {
          Loaded l = load(p);
          if (l != null) {
            rest.add(p);
            if (l.store() != null) {
              loaded.add(l);
            }
          }
        } catch (RuntimeException | Error e) {
          failed(p.id(), e);
        }
      }
      Map<Loaded, List<Scenario>> can = new LinkedHashMap<>();
      for (Loaded l : loaded) {
        can.put(l, timedScenarios(l));
      }
      for (Scenario s : options.scenarios) {
        List<Loaded> able = new ArrayList<>();
        for (Loaded l : loaded) {
          if (can.get(l).contains(s)) {
            able.add(l);
          }
        }
        for (int t : options.threads) {
          interleave(able, s, t);
        }
      }
      for (Loaded l : List.copyOf(loaded)) {
        try {
          afterTimed(l);
        } catch (RuntimeException | Error e) {
          failed(l.id(), e);
        } finally {
          loaded.remove(l);
          l.close();
        }
      }
    } finally {
      for (Loaded l : loaded) {
        try {
          l.close();
        } catch (RuntimeException e) {
          log(l.id(), "close failed: " + e);
        }
      }
    }
    for (StoreProvider p : rest) {
      try {
        standalone(p);
      } catch (RuntimeException | Error e) {
        failed(p.id(), e);
      }
    }
  }

  private void interleave(List<Loaded> engines, Scenario s, int threads) {
    int n = engines.size();
    List<List<Window>> windows = new ArrayList<>();
    boolean[] out = new boolean[n];
    for (int e = 0; e < n; e++) {
      windows.add(new ArrayList<>());
    }
    // One window per engine that is not counted: in a fresh JVM the first second or two of any
    // engine's operations run slow (the heap's pages are touched for the first time, the JIT is
    // still compiling), and without it the engine that happens to go first in round 1 pays for
    // that alone (seen: a 542k/s window among three of 0.9-1.0M/s, which set its p99).
    for (int e = 0; e < n; e++) {
      Loaded l = engines.get(e);
      Window w = turn(l, s, threads, out, e);
      if (w == null) {
        continue;
      }
      log(
          l.id(),
          String.format(
              "%-18s t=%d warm-up window (not counted) %,12.0f ops/s",
              s.id(), threads, opsPerSec(w)));
    }
    for (int r = 0; r < options.rounds; r++) {
      for (int k = 0; k < n; k++) {
        int e = (k + r) % n;
        if (out[e]) {
          continue;
        }
        Loaded l = engines.get(e);
        Window w = turn(l, s, threads, out, e);
        if (w == null) {
          continue;
        }
        windows.get(e).add(w);
        log(
            l.id(),
            String.format(
                "%-18s t=%d round %d/%d %,12.0f ops/s",
                s.id(), threads, r + 1, options.rounds, opsPerSec(w)));
      }
    }
    for (int e = 0; e < n; e++) {
      if (!out[e]) {
        Loaded l = engines.get(e);
        Result r = combine(l.id(), s.id(), threads, l.main().durability(), windows.get(e));
        logResult(l.id(), r, "median of " + windows.get(e).size());
        add(r);
      }
    }
  }

  /**
   * One window of engine {@code e} once the process is quiet; or, if it failed, null: the failure
   * is recorded as the engine's row and the engine is marked {@code out} for the scenario.
   */
  private Window turn(Loaded l, Scenario s, int threads, boolean[] out, int e) {
    settle(l.id());
    Window w;
    try {
      w = window(l.id(), operations(s, l.wl(), l.workers(), threads));
    } catch (RuntimeException | Error x) {
      AtomicReference<Throwable> f = new AtomicReference<>(x);
      w = new Window(new Histogram[0], new long[0], new long[0], 0, 0, f);
    }
    if (w.failure().get() != null) {
      out[e] = true;
      add(summarize(l.id(), s.id(), "", threads, l.main().durability(), w));
      return null;
    }
    return w;
  }

  private static final long SETTLE_SAMPLE_NS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long SETTLE_MAX_NS = TimeUnit.SECONDS.toNanos(10);

  /**
   * Waits until the process has used under a tenth of one core over 100 ms, for at most 10 s: the
   * previous window's background work (an engine's compaction or flushes, GC) then ends before the
   * next engine's window starts, instead of being charged to it.
   */
  private void settle(String next) {
    long deadline = System.nanoTime() + SETTLE_MAX_NS;
    while (true) {
      long c0 = processCpu();
      long t0 = System.nanoTime();
      sleepUntil(t0 + SETTLE_SAMPLE_NS);
      long used = processCpu() - c0;
      long now = System.nanoTime();
      if (used < (now - t0) / 10 || Thread.currentThread().isInterrupted()) {
        return;
      }
      if (now >= deadline) {
        log(next, "process still busy after 10 s of settling; measuring anyway");
        return;
      }
    }
  }

  /**
   * An engine's main store, loaded, with the workers that use it; or {@code store == null} when the
   * selected scenarios need no loaded store.
   */
  private record Loaded(
      StoreProvider p,
      StoreConfig main,
      Store store,
      Workload wl,
      List<Workload.Worker> workers,
      boolean churnReads,
      boolean churnScans) {
    String id() {
      return p.id();
    }

    boolean persistent() {
      return p.features().contains(Feature.PERSISTENT);
    }

    boolean ordered() {
      return p.features().contains(Feature.ORDERED_SCAN);
    }

    void close() {
      try {
        store.close();
      } finally {
        delete(main.path());
      }
    }
  }

  /**
   * Probes a server engine, records the settings, and loads the main store if a selected scenario
   * needs it (then also measures fillrandom and the footprint after load). Returns null when the
   * engine is to be skipped altogether (server unreachable, load failed).
   */
  private Loaded load(StoreProvider p) {
    String id = p.id();
    List<Scenario> sel = options.scenarios;
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
        return null;
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
    if (!needLoad) {
      return new Loaded(p, main, null, null, null, false, false);
    }
    Store store;
    try {
      store = open(main);
    } catch (RuntimeException | Error e) {
      delete(main.path());
      throw e;
    }
    storeInfos.put(id, store.info());
    Loaded l =
        new Loaded(
            p,
            main,
            store,
            new Workload(store, data, options.keys),
            new ArrayList<>(),
            churnReads,
            churnScans);
    boolean keep = false;
    try {
      log(id, "loading " + options.keys + " keys (fillrandom, " + options.maxThreads() + "t)");
      Result fill = fill(id, l.wl(), l.workers(), options.maxThreads());
      if (sel.contains(Scenario.FILLRANDOM) || !fill.ok()) {
        add(fill);
      }
      if (!fill.ok()) {
        return null;
      }
      if (sel.contains(Scenario.FOOTPRINT) && onLocalDisk(p, "footprint", main.durability())) {
        add(footprint(id, store, main, l.wl(), "after-load"));
      }
      keep = true;
      return l;
    } finally {
      if (!keep) {
        l.close();
      }
    }
  }

  /**
   * The selected timed scenarios the loaded engine can run, in order; records an n/a row for those
   * it cannot (scans without ordered scans).
   */
  private List<Scenario> timedScenarios(Loaded l) {
    List<Scenario> out = new ArrayList<>();
    for (Scenario s : options.scenarios) {
      if (!s.timedOnLoadedStore()) {
        continue;
      }
      if (s.needsOrderedScan() && !l.ordered()) {
        add(Result.failed(l.id(), s.id(), "", 0, l.main().durability(), "n/a: no ordered scans"));
        continue;
      }
      out.add(s);
    }
    return out;
  }

  /** Churn-reads, churn-scans and the footprint after the updates, on the loaded store. */
  private void afterTimed(Loaded l) {
    String id = l.id();
    Durability d = l.main().durability();
    if (l.churnReads()) {
      new Churn(this).reads(id, Scenario.CHURN_READS, l.wl(), l.workers(), d);
    }
    if (l.churnScans()) {
      if (l.ordered()) {
        new Churn(this).reads(id, Scenario.CHURN_SCANS, l.wl(), l.workers(), d);
      } else {
        add(Result.failed(id, Scenario.CHURN_SCANS.id(), "", 0, d, "n/a: no ordered scans"));
      }
    }
    if (options.scenarios.contains(Scenario.FOOTPRINT) && l.persistent() && !Servers.isServer(id)) {
      add(footprint(id, l.store(), l.main(), l.wl(), "after-update"));
    }
    clearIfServer(id, l.store());
  }

  /** The scenarios that use stores of their own: single-op, durable-put, churn and scale. */
  private void standalone(StoreProvider p) {
    String id = p.id();
    List<Scenario> sel = options.scenarios;
    boolean persistent = p.features().contains(Feature.PERSISTENT);
    boolean raw = Abstraction.isRaw(id);
    if (sel.contains(Scenario.FILLBATCH)) {
      fillBatchStore(p);
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

  /** Indices {@code 0..--keys-1} in the seeded random order of the loads. */
  private long[] loadOrder() {
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
    return order;
  }

  Result fill(String id, Workload wl, List<Workload.Worker> workers, int threads) {
    long[] order = loadOrder();
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

  /**
   * {@link Scenario#FILLBATCH} on a fresh store of its own; with {@code footprint} selected (and a
   * persistent, local engine), the footprint after that load, then after {@value
   * #FIXED_UPDATES_PER_KEY} x {@code --keys} zipfian single-put updates on one thread: the same
   * writes in the same order for every engine, unlike the timed scenarios, whose count depends on
   * the engine's speed. Engines without atomic batches get an n/a row.
   */
  private void fillBatchStore(StoreProvider p) {
    String id = p.id();
    String scenario = Scenario.FILLBATCH.id();
    if (!p.features().contains(Feature.ATOMIC_BATCH)) {
      add(Result.failed(id, scenario, "", 1, options.durability, "n/a: no atomic batches"));
      return;
    }
    boolean footprints =
        options.scenarios.contains(Scenario.FOOTPRINT)
            && p.features().contains(Feature.PERSISTENT)
            && !Servers.isServer(id);
    StoreConfig c = config(p, "fillbatch", options.durability);
    try (Store store = open(c)) {
      clearIfServer(id, store);
      Workload wl = new Workload(store, data, options.keys);
      Result r = fillBatch(id, wl, c.durability());
      add(r);
      if (r.ok() && footprints) {
        add(footprint(id, store, c, wl, "after-fillbatch"));
        long n = FIXED_UPDATES_PER_KEY * options.keys;
        log(id, "footprint: " + n + " zipfian single-put updates on 1 thread");
        Workload.Worker w = wl.worker(options.seed ^ 0x29L);
        for (long i = 0; i < n; i++) {
          w.overwriteZipfian();
        }
        add(footprint(id, store, c, wl, "after-fixed-updates"));
      }
      clearIfServer(id, store);
    } finally {
      delete(c.path());
    }
  }

  /**
   * The batched load, timed on this thread: every key once in the loads' random order, {@value
   * #BATCH} puts per {@link WriteBatch} (building the batch included, as a caller's code would).
   * The row counts puts (ops/s, CPU per put); its latencies are per batch.
   */
  Result fillBatch(String id, Workload wl, Durability d) {
    long[] order = loadOrder();
    int batches = (order.length + BATCH - 1) / BATCH;
    log(id, "fillbatch: " + order.length + " keys in " + batches + " batches of " + BATCH);
    Workload.Worker w = wl.worker(options.seed);
    WriteBatch batch = new WriteBatch();
    Histogram hist = new Histogram(3);
    long sink = 0;
    long cpu0 = processCpu();
    long fg0 = THREADS.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    try {
      for (int b = 0; b < batches; b++) {
        long a = System.nanoTime();
        sink += w.putBatch(batch, order, b * BATCH, Math.min(order.length, (b + 1) * BATCH));
        hist.recordValue(System.nanoTime() - a);
      }
    } catch (RuntimeException e) {
      log(id, Scenario.FILLBATCH.id() + " FAILED: " + e);
      return Result.failed(id, Scenario.FILLBATCH.id(), "", 1, d, describe(e));
    }
    long wall = System.nanoTime() - t0;
    long fg = THREADS.getCurrentThreadCpuTime() - fg0;
    long process = processCpu() - cpu0;
    Blackhole.consume(sink);
    if (order.length == 0) {
      return Result.failed(id, Scenario.FILLBATCH.id(), "", 1, d, "no operation completed");
    }
    Result r =
        measured(
            id,
            Scenario.FILLBATCH.id(),
            "",
            1,
            d,
            hist,
            order.length,
            wall,
            fg,
            process,
            Double.NaN);
    logResult(id, r, "puts/s; latency per batch of " + BATCH);
    return r;
  }

  /**
   * Disk footprint at rest: syncs, waits until the engine reports no flush or compaction running or
   * due ({@link #quiesce}), then takes allocated ({@code du}) and apparent bytes (file sizes) of
   * the whole store directory, write-ahead logs included, and the writes made so far.
   */
  private Result footprint(String id, Store store, StoreConfig c, Workload wl, String phase) {
    store.sync();
    Quiesce q =
        quiesce(
            () -> store.stats().figures(),
            () -> apparentBytes(c.path()),
            QUIESCE_MAX_NS,
            QUIESCE_POLL_NS);
    if (!q.settled()) {
      log(
          id,
          "footprint "
              + phase
              + ": background work still running after "
              + TimeUnit.NANOSECONDS.toSeconds(QUIESCE_MAX_NS)
              + " s; measuring anyway");
    }
    long disk = allocatedBytes(c.path());
    long apparent = apparentBytes(c.path());
    long live = wl.liveKeys() * (data.keySize() + data.valueSize());
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("apparent-bytes", (double) apparent);
    f.put("writes", (double) wl.writes());
    f.put("settle-seconds", q.seconds());
    f.put("settled", q.settled() ? 1.0 : 0.0);
    Result r = Result.footprint(id, phase, c.durability(), disk, live).with(disk, live, f);
    log(
        id,
        String.format(
            "footprint %s: %.2fx (%s allocated, %s apparent, %,d writes; at rest after %.1f s)",
            phase, r.amplification(), mib(disk), mib(apparent), wl.writes(), q.seconds()));
    return r;
  }

  /**
   * How waiting for an engine's background work ended.
   *
   * @param settled whether it ended at rest (false: the deadline passed)
   * @param seconds how long it waited
   * @param polls how often it read the figures
   */
  record Quiesce(boolean settled, double seconds, int polls) {}

  /**
   * Waits until the engine is at rest: every {@link #BACKGROUND_FIGURES} figure it reports is 0 at
   * two polls in a row with the same apparent directory size in between (so files a finished job
   * deletes are gone). An engine that reports none of them has no background work to wait for.
   *
   * @param figures reads the store's {@code stats()} figures
   * @param apparent reads the directory's apparent size
   * @param maxNs deadline
   * @param pollNs pause between polls
   */
  static Quiesce quiesce(
      Supplier<Map<String, Number>> figures, LongSupplier apparent, long maxNs, long pollNs) {
    long t0 = System.nanoTime();
    boolean idleBefore = false;
    long sizeBefore = -1;
    for (int polls = 1; ; polls++) {
      Map<String, Number> f = figures.get();
      boolean reported = false;
      boolean idle = true;
      for (String k : BACKGROUND_FIGURES) {
        Number v = f.get(k);
        if (v != null) {
          reported = true;
          idle &= v.longValue() == 0;
        }
      }
      long now = System.nanoTime();
      if (!reported) {
        return new Quiesce(true, (now - t0) / 1e9, polls);
      }
      long size = idle ? apparent.getAsLong() : -1;
      if (idle && idleBefore && size == sizeBefore) {
        return new Quiesce(true, (now - t0) / 1e9, polls);
      }
      if (now - t0 >= maxNs || Thread.currentThread().isInterrupted()) {
        return new Quiesce(false, (now - t0) / 1e9, polls);
      }
      idleBefore = idle;
      sizeBefore = size;
      sleepUntil(now + pollNs);
    }
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
    return summarize(id, s.id(), "", threads, d, window(id, operations(s, wl, workers, threads)));
  }

  private static java.util.function.LongSupplier[] operations(
      Scenario s, Workload wl, List<Workload.Worker> workers, int threads) {
    ensureWorkers(wl, workers, threads);
    java.util.function.LongSupplier[] ops = new java.util.function.LongSupplier[threads];
    for (int t = 0; t < threads; t++) {
      Workload.Worker w = workers.get(t);
      ops[t] = () -> w.op(s);
    }
    return ops;
  }

  Result summarize(String id, String scenario, String phase, int threads, Durability d, Window w) {
    return summarize(
        id,
        scenario,
        phase,
        threads,
        d,
        w.hist(),
        w.ops(),
        w.cpu(),
        w.wallNs(),
        w.processCpuNs(),
        w.failure());
  }

  /** Operations per second of one window. */
  static double opsPerSec(Window w) {
    long total = 0;
    for (long n : w.ops()) {
      total += n;
    }
    return total / (w.wallNs() / 1e9);
  }

  /**
   * One row from the windows of {@code --rounds}: ops/s is the median window's (the mean of the two
   * middle ones for an even count), with the lowest and highest as the figures {@code
   * ops-per-sec-min} and {@code ops-per-sec-max} and the count as {@code rounds}; latency
   * percentiles are over every operation of every window; CPU per operation over all of them.
   */
  static Result combine(String id, String scenario, int threads, Durability d, List<Window> ws) {
    if (ws.isEmpty()) {
      return Result.failed(id, scenario, "", threads, d, "no window completed");
    }
    double[] rates = new double[ws.size()];
    Histogram all = new Histogram(3);
    long total = 0;
    long fg = 0;
    long wall = 0;
    long process = 0;
    for (int i = 0; i < ws.size(); i++) {
      Window w = ws.get(i);
      rates[i] = opsPerSec(w);
      for (int t = 0; t < w.hist().length; t++) {
        all.add(w.hist()[t]);
        total += w.ops()[t];
        fg += w.cpu()[t];
      }
      wall += w.wallNs();
      process += w.processCpuNs();
    }
    java.util.Arrays.sort(rates);
    int m = rates.length / 2;
    double median = rates.length % 2 == 1 ? rates[m] : (rates[m - 1] + rates[m]) / 2;
    Map<String, Double> figures = new LinkedHashMap<>();
    figures.put("rounds", (double) ws.size());
    figures.put("ops-per-sec-min", rates[0]);
    figures.put("ops-per-sec-max", rates[rates.length - 1]);
    return measured(id, scenario, "", threads, d, all, total, wall, fg, process, median)
        .with(0, 0, figures);
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
    Result r =
        measured(id, scenario, phase, threads, d, all, total, wallNs, fg, processCpuNs, Double.NaN);
    logResult(id, r, "");
    return r;
  }

  /**
   * A row of numbers; {@code opsPerSec} NaN means {@code total} over {@code wallNs}.
   *
   * @param fgCpuNs CPU time of the worker threads
   * @param processCpuNs CPU time of the process over the same time
   */
  private static Result measured(
      String id,
      String scenario,
      String phase,
      int threads,
      Durability d,
      Histogram all,
      long total,
      long wallNs,
      long fgCpuNs,
      long processCpuNs,
      double opsPerSec) {
    double secs = wallNs / 1e9;
    double rate = Double.isNaN(opsPerSec) ? total / secs : opsPerSec;
    double cpuPerOp = processCpuNs / 1e3 / total;
    double bg = processCpuNs > 0 ? Math.max(0, 1 - (double) fgCpuNs / processCpuNs) : 0;
    return new Result(
        id,
        scenario,
        phase,
        threads,
        d,
        total,
        secs,
        rate,
        all.getValueAtPercentile(50) / 1e3,
        all.getValueAtPercentile(99) / 1e3,
        all.getValueAtPercentile(99.9) / 1e3,
        all.getMaxValue() / 1e3,
        cpuPerOp,
        bg,
        0,
        0,
        null);
  }

  private void logResult(String id, Result r, String suffix) {
    log(
        id,
        String.format(
            "%-18s t=%d %,12.0f ops/s  p50 %s  p99 %s  p99.9 %s  CPU %.1f µs/op%s",
            r.label(),
            r.threads(),
            r.opsPerSec(),
            Report.micros(r.p50Us()),
            Report.micros(r.p99Us()),
            Report.micros(r.p999Us()),
            r.cpuUsPerOp(),
            suffix.isEmpty() ? "" : "  (" + suffix + ")"));
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
   * files count as allocated blocks), else the sum of file sizes ({@link #apparentBytes}).
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
    return apparentBytes(dir);
  }

  /**
   * The sum of the sizes of the regular files under a directory (what {@code ls} shows; a file
   * deleted while it is walked counts as 0).
   */
  static long apparentBytes(Path dir) {
    long[] sum = new long[1];
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
              if (a.isRegularFile()) {
                sum[0] += a.size();
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) {
              return FileVisitResult.CONTINUE; // deleted by the engine meanwhile
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
