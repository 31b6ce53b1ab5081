package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.bench.Scenario.Kind;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Measures the selected scenarios on each engine in turn, in this JVM: which procedure runs where
 * and when. Per engine: the load of the main store and its footprint, the timed scenarios at each
 * thread count, the during-churn scenarios and the footprint after the updates; then each scenario
 * of its own store (batch-load, single-op, fresh timed such as durable-put, churn, scale), in
 * catalogue order. Every store lives in its own directory, deleted afterwards. With {@code --rounds
 * N} the timed scenarios take turns across engines instead ({@link Rounds}).
 */
final class Session {
  private final Rig rig;
  private final Options options;
  private final Loads loads;
  private final Scenario load = Catalogue.standard().load();

  Session(Rig rig) {
    this.rig = rig;
    this.options = rig.options();
    this.loads = new Loads(rig);
  }

  /**
   * Measures every engine; a failure of one is its row, and the run goes on.
   *
   * @param engines the engines, in order
   */
  void run(List<StoreProvider> engines) {
    rig.progress().engines(engines.size());
    if (options.rounds > 1) {
      new Rounds(rig, this).run(engines);
      return;
    }
    List<StoreProvider> rest = new ArrayList<>();
    for (StoreProvider p : engines) {
      rig.progress().nextEngine();
      try {
        if (runEngine(p)) {
          rest.add(p);
        }
      } catch (RuntimeException | Error e) {
        failed(p.id(), e);
      }
    }
    batchRounds(rest);
  }

  /**
   * The batch-load scenario with the engines taking turns ({@link BatchRounds}), if it applies and
   * is selected: after everything else, so each load is a fresh store in a JVM that has run.
   *
   * @param engines the engines that were not skipped
   */
  void batchRounds(List<StoreProvider> engines) {
    if (!BatchRounds.applies(options) || engines.isEmpty()) {
      return;
    }
    for (Scenario s : selected(Kind.BATCH_LOAD)) {
      new BatchRounds(rig, loads).run(engines, s, footprint());
    }
  }

  /** Records an engine's failure outside a scenario as its {@code open} row. */
  void failed(String id, Throwable e) {
    rig.log(id, "FAILED: " + e);
    rig.add(Result.failed(id, "open", "", 0, options.durability, Rows.describe(e)));
  }

  /** An engine's scenarios; false if it was skipped. */
  private boolean runEngine(StoreProvider p) {
    Loaded l = load(p);
    if (l == null) {
      return false;
    }
    if (l.store() != null) {
      try {
        for (Scenario s : timedScenarios(l)) {
          for (int t : s.threads().counts(options.threads)) {
            rig.add(timed(l, s, t));
          }
        }
        afterTimed(l);
      } finally {
        l.close();
      }
    }
    standalone(p);
    return true;
  }

  /** One window of a timed scenario on the loaded store, as a row. */
  private Result timed(Loaded l, Scenario s, int threads) {
    Window w = rig.run(l.id(), s, l.wl(), l.workers(), threads);
    return rig.summarize(l.id(), s.id(), "", threads, l.main().durability(), w);
  }

  /**
   * An engine's main store, loaded, with the workers that use it; or {@code store == null} when the
   * selected scenarios need no loaded store.
   */
  record Loaded(
      StoreProvider p,
      StoreConfig main,
      Store store,
      Workload wl,
      List<Workload.Worker> workers,
      List<Scenario> duringChurn) {
    String id() {
      return p.id();
    }

    boolean ordered() {
      return p.features().contains(Feature.ORDERED_SCAN);
    }

    void close() {
      try {
        store.close();
      } finally {
        Disk.delete(main.path());
      }
    }
  }

  /** The selected scenarios of a kind, in catalogue order. */
  private List<Scenario> selected(Kind kind) {
    return Catalogue.standard().ofKind(kind).stream()
        .filter(options.scenarios::contains)
        .collect(Collectors.toList());
  }

  /**
   * Probes a server engine, records the settings, and loads the main store if a selected scenario
   * needs it (then also measures the load and the footprint after it). Returns null when the engine
   * is to be skipped altogether (server unreachable, load failed).
   */
  Loaded load(StoreProvider p) {
    String id = p.id();
    StoreConfig main = rig.config(p, "main", options.durability);
    if (Servers.isServer(id) && !reachable(id, main)) {
      return null;
    }
    rig.out().settings().put(id, Rig.effectiveSettings(p, main));
    // The long scenarios measure the engines, not the cost of the abstraction: the raw
    // baselines skip them.
    boolean raw = Abstraction.isRaw(id);
    if (raw && options.scenarios.stream().anyMatch(Scenario::longRunning)) {
      rig.log(id, "raw baseline: skips " + longIds());
    }
    String beyond = beyondLimits(p, rig.data());
    if (beyond != null) {
      cannot(p, main.durability(), beyond);
      return null;
    }
    List<Scenario> duringChurn =
        selected(Kind.DURING_CHURN).stream().filter(s -> !raw).collect(Collectors.toList());
    boolean needLoad =
        options.scenarios.stream().anyMatch(s -> s.onMainStore() && !(raw && s.longRunning()));
    if (!needLoad) {
      return new Loaded(p, main, null, null, null, List.of());
    }
    Store store;
    try {
      store = Rig.open(main);
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      Disk.delete(main.path());
      if (options.workload == null) {
        throw e;
      }
      // The user's workload asks for what the engine refuses (Chronicle Map and SYNC): it cannot
      // run it, which the workload's section says instead of a failed run.
      cannot(p, main.durability(), "n/a: refuses the store: " + e.getMessage());
      return null;
    } catch (RuntimeException | Error e) {
      Disk.delete(main.path());
      throw e;
    }
    rig.out().storeInfos().put(id, store.info());
    Workload wl = new Workload(store, rig.data(), options.keys);
    Loaded l = new Loaded(p, main, store, wl, new ArrayList<>(), duringChurn);
    boolean keep = false;
    try {
      int threads = load.threads().counts(options.threads).get(0);
      rig.log(id, "loading " + options.keys + " keys (" + load.id() + ", " + threads + "t)");
      Result fill = loads.fill(id, load, l.wl(), l.workers(), threads);
      if (options.scenarios.contains(load) || !fill.ok()) {
        rig.add(fill);
      }
      if (!fill.ok()) {
        return null;
      }
      Footprint footprint = footprint();
      if (footprint != null && onLocalDisk(p, main.durability())) {
        rig.add(footprint.measure(id, store, main, l.wl(), Footprint.AFTER_LOAD));
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
   * Why an engine cannot hold the run's keys and values, from the limits it declares; null when it
   * can.
   *
   * @param p the engine
   * @param data the run's keys and values
   * @return such as {@code n/a: values up to 2.0 MiB, above its limit of 1.0 MiB}, or null
   */
  static String beyondLimits(StoreProvider p, Data data) {
    Limits l = p.limits();
    if (data.keySize() > l.maxKeySize()) {
      return "n/a: keys of "
          + Format.bytes(data.keySize())
          + ", above its limit of "
          + Format.bytes(l.maxKeySize());
    }
    if (data.valueSize() > l.maxValueSize()) {
      return "n/a: values up to "
          + Format.bytes(data.valueSize())
          + ", above its limit of "
          + Format.bytes(l.maxValueSize());
    }
    return null;
  }

  /**
   * Records that an engine cannot run this run's workload, as an n/a row of the user's workload
   * when there is one (else of {@code open}), and skips it.
   */
  private void cannot(StoreProvider p, Durability d, String why) {
    rig.log(p.id(), why);
    rig.add(
        Result.failed(p.id(), options.workload != null ? Scenario.YOURS : "open", "", 0, d, why));
  }

  /**
   * Probes a server engine once (and empties a leftover of an interrupted run): an unreachable
   * server skips the engine with one line instead of failing the run.
   */
  private boolean reachable(String id, StoreConfig main) {
    try (Store probe = Rig.open(main)) {
      Servers.clear(probe);
      return true;
    } catch (RuntimeException e) {
      if (!Servers.unreachable(e)) {
        throw e;
      }
      String reason = Servers.skipReason(id, e);
      rig.log(id, reason);
      rig.out().notes().add(reason);
      rig.out().skipped().add(id);
      return false;
    }
  }

  /** The long scenarios' ids, as "a, b, c and d". */
  private static String longIds() {
    List<String> ids =
        Catalogue.ids(
            Catalogue.standard().all().stream()
                .filter(Scenario::longRunning)
                .collect(Collectors.toList()));
    int n = ids.size();
    return n < 2
        ? String.join("", ids)
        : String.join(", ", ids.subList(0, n - 1)) + " and " + ids.get(n - 1);
  }

  /** The footprint procedure when footprint is selected, else null. */
  private Footprint footprint() {
    List<Scenario> fp = selected(Kind.FOOTPRINT);
    return fp.isEmpty() ? null : new Footprint(rig, fp.get(0));
  }

  private boolean onLocalDisk(StoreProvider p, Durability d) {
    return rig.onLocalDisk(p, selected(Kind.FOOTPRINT).get(0).id(), d);
  }

  /**
   * The selected timed scenarios of the main store the loaded engine can run, in the order given;
   * records an n/a row for those it cannot (scans without ordered scans).
   */
  List<Scenario> timedScenarios(Loaded l) {
    List<Scenario> out = new ArrayList<>();
    for (Scenario s : options.scenarios) {
      if (s.kind() != Kind.TIMED || !s.onMainStore()) {
        continue;
      }
      if (s.needsOrderedScan() && !l.ordered()) {
        rig.add(
            Result.failed(l.id(), s.id(), "", 0, l.main().durability(), "n/a: no ordered scans"));
        continue;
      }
      out.add(s);
    }
    return out;
  }

  /** The during-churn scenarios and the footprint after the updates, on the loaded store. */
  void afterTimed(Loaded l) {
    String id = l.id();
    Durability d = l.main().durability();
    for (Scenario s : l.duringChurn()) {
      if (s.needsOrderedScan() && !l.ordered()) {
        rig.add(Result.failed(id, s.id(), "", 0, d, "n/a: no ordered scans"));
      } else {
        new DuringChurn(rig, s).run(id, l.wl(), l.workers(), d);
      }
    }
    Footprint footprint = footprint();
    if (footprint != null && Footprint.applies(l.p())) {
      rig.add(footprint.measure(id, l.store(), l.main(), l.wl(), Footprint.AFTER_UPDATE));
    }
    rig.clearIfServer(id, l.store());
  }

  /** The selected scenarios that use stores of their own, in catalogue order. */
  void standalone(StoreProvider p) {
    boolean raw = Abstraction.isRaw(p.id());
    for (Scenario s : Catalogue.standard().all()) {
      if (!options.scenarios.contains(s) || s.onMainStore() || (raw && s.longRunning())) {
        continue;
      }
      switch (s.kind()) {
        case BATCH_LOAD -> {
          if (!BatchRounds.applies(options)) {
            loads.batchStore(p, s, footprint());
          }
        }
        case SINGLE_OP -> singleOp(p, s);
        case TIMED -> freshTimed(p, s);
        case CHURN -> new Churn(rig, s, load).run(p);
        case SCALE -> new Scale(rig, s).run(p);
        default -> throw new IllegalStateException(s.kind() + " does not run on a fresh store");
      }
    }
  }

  /**
   * The {@code single-op} kind: on a fresh store, one thread, {@code n} single inserts (one commit
   * each), then {@code n} point reads in the order {@code (i*7919)%n}.
   */
  private void singleOp(StoreProvider p, Scenario s) {
    String id = p.id();
    StoreConfig c = rig.config(p, s.storeName(), s.durability(options.durability));
    try (Store store = Rig.open(c)) {
      rig.clearIfServer(id, store);
      int n = (int) options.keys(s.keysOption());
      Workload.Worker w = new Workload(store, rig.data(), 0).worker(options.seed);
      Durability d = c.durability();
      rig.log(id, s.id() + ": " + n + " single inserts then " + n + " reads");
      Window insert = Timing.fixed(id, 1, t -> new Timing.FixedTask(n, i -> w.put(i)));
      rig.add(rig.summarize(id, s.id(), s.phases().get(0), 1, d, insert));
      Window read = Timing.fixed(id, 1, t -> new Timing.FixedTask(n, i -> w.read((i * 7919L) % n)));
      rig.add(rig.summarize(id, s.id(), s.phases().get(1), 1, d, read));
      rig.clearIfServer(id, store);
    } finally {
      Disk.delete(c.path());
    }
  }

  /**
   * A timed scenario on a fresh store of its own (durable-put: SYNC): n/a for engines that are not
   * persistent when it is SYNC, or that refuse its durability.
   */
  private void freshTimed(StoreProvider p, Scenario s) {
    String id = p.id();
    Durability d = s.durability(options.durability);
    if (s.sync() && !p.features().contains(Feature.PERSISTENT)) {
      rig.add(Result.failed(id, s.id(), "", 0, d, "n/a: not persistent"));
      return;
    }
    StoreConfig c = rig.config(p, s.storeName(), d);
    try (Store store = Rig.open(c)) {
      rig.clearIfServer(id, store);
      Workload wl = new Workload(store, rig.data(), options.keys(s.keysOption()));
      List<Workload.Worker> workers = new ArrayList<>();
      for (int t : s.threads().counts(options.threads)) {
        Window w = rig.run(id, s, wl, workers, t);
        rig.add(rig.summarize(id, s.id(), "", t, d, w));
      }
      rig.clearIfServer(id, store);
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      rig.add(Result.failed(id, s.id(), "", 0, d, "n/a: " + e.getMessage()));
    } finally {
      Disk.delete(c.path());
    }
  }
}
