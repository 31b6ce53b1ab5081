package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * What every measuring procedure shares: the options, the data, where stores go, the progress lines
 * and the rows collected; how a store of an engine is configured (caches sized alike, server names
 * pinned), opened and emptied; timing a window and turning it into a row.
 */
final class Rig {
  private final Options options;
  private final Data data;
  private final Path dataRoot;
  private final Progress progress;
  private final Measurements out;

  Rig(Options options, Data data, Path dataRoot, Progress progress, Measurements out) {
    this.options = options;
    this.data = data;
    this.dataRoot = dataRoot;
    this.progress = progress;
    this.out = out;
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

  Progress progress() {
    return progress;
  }

  Measurements out() {
    return out;
  }

  /**
   * Adds a row to the run's.
   *
   * @param r the row
   */
  void add(Result r) {
    out.add(r);
  }

  /**
   * Prints a progress line.
   *
   * @param engine the engine it is about
   * @param msg the message
   */
  void log(String engine, String msg) {
    progress.log(engine, msg);
  }

  /**
   * Times one window of the run's {@code --warmup} and {@code --duration}.
   *
   * @param id the engine (names the threads)
   * @param threadOps one operation per thread
   * @return what was measured
   */
  Window window(String id, LongSupplier[] threadOps) {
    return Timing.window(id, threadOps, options.warmup, options.duration);
  }

  /**
   * Measures a timed scenario once on a loaded store: for {@code --duration} after {@code
   * --warmup}, or, for a scenario of a fixed number of operations (a {@code --workload}), those
   * operations split among the threads (the first threads take one more when they do not divide),
   * after {@code --warmup} seconds of the same mix that are not counted.
   *
   * @param id the engine (names the threads)
   * @param s the scenario
   * @param wl the workload on the store
   * @param workers the workers so far; more are added as needed
   * @param threads the thread count
   * @return what was measured
   */
  Window run(String id, Scenario s, Workload wl, List<Workload.Worker> workers, int threads) {
    LongSupplier[] ops = operations(s, wl, workers, threads);
    if (s.operations() == 0) {
      return window(id, ops);
    }
    if (options.warmup > 0) {
      Window warm = Timing.window(id, ops, options.warmup, 0);
      if (warm.failure().get() != null) {
        return warm;
      }
    }
    long total = s.operations();
    return Timing.fixed(
        id,
        threads,
        t ->
            new Timing.FixedTask(
                (int) (total / threads + (t < total % threads ? 1 : 0)), i -> ops[t].getAsLong()));
  }

  /**
   * A window as a row, with a progress line: its numbers, or its failure.
   *
   * @return the row
   */
  Result summarize(String id, String scenario, String phase, int threads, Durability d, Window w) {
    Throwable f = w.failure().get();
    if (f != null) {
      String label = phase.isEmpty() ? scenario : scenario + " " + phase;
      log(id, label + " t=" + threads + " FAILED: " + f);
    }
    Result r = Rows.summarize(id, scenario, phase, threads, d, w);
    if (r.ok()) {
      progress.result(r, "");
    }
    return r;
  }

  /**
   * Whether a scenario that measures local files can run on the engine; if not, records why as an
   * n/a row.
   *
   * @return true if it can
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

  /** Server stores outlive the run on the server: emptied before and after use. */
  void clearIfServer(String id, Store store) {
    if (Servers.isServer(id)) {
      long n = Servers.clear(store);
      if (n > 0) {
        log(id, "emptied the server-side store (" + n + " keys)");
      }
    }
  }

  /** A store's configuration, sized for {@code --keys} keys of {@code --value-size} values. */
  StoreConfig config(StoreProvider p, String name, Durability d) {
    return config(p, name, d, options.keys, data.valueSize());
  }

  /**
   * A store's configuration, sized for {@code keys} keys of {@code valueSize}-byte values: its own
   * directory under the data root (or a pinned server table), caches of about 1.25x the data set,
   * Chronicle Map's capacity fitted to it, then the user's {@code --engine-option}s.
   *
   * @return the configuration
   */
  StoreConfig config(StoreProvider p, String name, Durability d, long keys, int valueSize) {
    StoreConfig.Builder b =
        StoreConfig.builderFor(p).path(dataRoot.resolve(p.id() + "-" + name)).durability(d);
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

  /**
   * Opens a store.
   *
   * @param c its configuration
   * @return the store
   */
  static Store open(StoreConfig c) {
    return Stores.open(c);
  }

  /**
   * Every option of an engine as a configuration has it, defaults included, and the durability.
   *
   * @return option name to value
   */
  static Map<String, String> effectiveSettings(StoreProvider p, StoreConfig c) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("durability", c.durability().name().toLowerCase(Locale.ROOT));
    for (OptionSpec<?> spec : p.options()) {
      m.put(spec.name(), String.valueOf(c.get(spec)));
    }
    return m;
  }

  /**
   * Adds workers to {@code workers} until there are {@code threads}, each with its own seed.
   *
   * @param wl the workload
   * @param workers the workers so far
   * @param threads how many are needed
   */
  static void ensureWorkers(Workload wl, List<Workload.Worker> workers, int threads) {
    while (workers.size() < threads) {
      workers.add(wl.worker(0x9E3779B97F4A7C15L * (workers.size() + 1)));
    }
  }

  /**
   * One operation of a scenario per thread, each on its own worker.
   *
   * @return the operations
   */
  static LongSupplier[] operations(
      Scenario s, Workload wl, List<Workload.Worker> workers, int threads) {
    ensureWorkers(wl, workers, threads);
    LongSupplier[] ops = new LongSupplier[threads];
    for (int t = 0; t < threads; t++) {
      Workload.Worker w = workers.get(t);
      ops[t] = () -> w.op(s);
    }
    return ops;
  }
}
