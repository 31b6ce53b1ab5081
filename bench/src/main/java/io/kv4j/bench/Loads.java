package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * The loads: the {@code load} kind (every key once in a seeded random order, single puts, on all
 * threads) and the {@code batch-load} kind (the same keys in the same order in atomic write
 * batches, on a fresh store, with the footprints after it and after a fixed number of updates).
 */
final class Loads {
  private final Rig rig;

  Loads(Rig rig) {
    this.rig = rig;
  }

  /** Indices {@code 0..--keys-1} in the seeded random order of the loads. */
  private long[] order() {
    long n = rig.options().keys;
    if (n > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("--keys above 2^31 is not supported");
    }
    long[] order = new long[(int) n];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    SplittableRandom r = new SplittableRandom(rig.options().seed);
    for (int i = order.length - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      long tmp = order[i];
      order[i] = order[j];
      order[j] = tmp;
    }
    return order;
  }

  /**
   * Loads every key once in the loads' order with single puts, the keys split between threads.
   *
   * @param id the engine
   * @param load the load scenario (its id names the row)
   * @param wl the workload on the store
   * @param workers its workers, added to as needed
   * @param threads how many threads
   * @return the row
   */
  Result fill(String id, Scenario load, Workload wl, List<Workload.Worker> workers, int threads) {
    long[] order = order();
    Rig.ensureWorkers(wl, workers, threads);
    int per = (order.length + threads - 1) / threads;
    Window w =
        Timing.fixed(
            id,
            threads,
            t -> {
              Workload.Worker worker = workers.get(t);
              int from = Math.min(order.length, t * per);
              int to = Math.min(order.length, from + per);
              return new Timing.FixedTask(to - from, i -> worker.put(order[from + i]));
            });
    return rig.summarize(id, load.id(), "", threads, wl.store().info().durability(), w);
  }

  /**
   * A {@code batch-load} scenario on a fresh store of its own, at the scenario's batch size;
   * engines without atomic batches get an n/a row. See {@link #freshBatchLoad}.
   *
   * @param p the engine
   * @param s the scenario
   * @param footprint measures the footprints, or null when footprint is not selected
   */
  void batchStore(StoreProvider p, Scenario s, Footprint footprint) {
    if (!p.features().contains(Feature.ATOMIC_BATCH)) {
      Durability d = s.durability(rig.options().durability);
      rig.add(Result.failed(p.id(), s.id(), "", 1, d, "n/a: no atomic batches"));
      return;
    }
    freshBatchLoad(p, s, s.batch(), "", footprint, rig::add);
  }

  /**
   * One batched load on a fresh store of its own, deleted afterwards; with {@code footprint} (a
   * non-null {@code footprint}, for a persistent, local engine), the footprint after that load,
   * then after {@value Footprint#FIXED_UPDATES_PER_KEY} x {@code --keys} zipfian single-put updates
   * on one thread: the same writes in the same order for every engine, unlike the timed scenarios,
   * whose count depends on the engine's speed. The footprint rows are added to the run's; the
   * load's row goes to {@code row} first.
   *
   * @param p the engine, with atomic batches
   * @param s the scenario
   * @param size puts per batch
   * @param phase the row's phase
   * @param footprint measures the footprints, or null for none
   * @param row takes the load's row
   * @return the load's row
   */
  Result freshBatchLoad(
      StoreProvider p,
      Scenario s,
      int size,
      String phase,
      Footprint footprint,
      Consumer<Result> row) {
    String id = p.id();
    Durability d = s.durability(rig.options().durability);
    boolean footprints = footprint != null && Footprint.applies(p);
    StoreConfig c = rig.config(p, s.storeName(), d);
    try (Store store = Rig.open(c)) {
      rig.clearIfServer(id, store);
      Workload wl = new Workload(store, rig.data(), rig.options().keys);
      Result r = batchLoad(id, s, size, phase, wl, c.durability());
      row.accept(r);
      if (r.ok() && footprints) {
        rig.add(footprint.measure(id, store, c, wl, Footprint.AFTER_BATCH_LOAD));
        long n = Footprint.FIXED_UPDATES_PER_KEY * rig.options().keys;
        rig.log(id, "footprint: " + n + " zipfian single-put updates on 1 thread");
        Workload.Worker w = wl.worker(rig.options().seed ^ 0x29L);
        for (long i = 0; i < n; i++) {
          w.update(Scenario.Distribution.ZIPFIAN);
        }
        rig.add(footprint.measure(id, store, c, wl, Footprint.AFTER_FIXED_UPDATES));
      }
      rig.clearIfServer(id, store);
      return r;
    } finally {
      Disk.delete(c.path());
    }
  }

  /**
   * The batched load, timed on this thread: every key once in the loads' order, {@code size} puts
   * per {@link WriteBatch} (building the batch included, as a caller's code would). The row counts
   * puts (ops/s, CPU per put); its latencies are per batch.
   *
   * @return the row
   */
  private Result batchLoad(
      String id, Scenario s, int size, String phase, Workload wl, Durability d) {
    long[] order = order();
    int batches = (order.length + size - 1) / size;
    rig.log(id, s.id() + ": " + order.length + " keys in " + batches + " batches of " + size);
    Workload.Worker w = wl.worker(rig.options().seed);
    WriteBatch batch = new WriteBatch();
    Histogram hist = new Histogram(3);
    long sink = 0;
    long cpu0 = Timing.processCpu();
    long fg0 = Timing.threadCpu();
    long t0 = System.nanoTime();
    try {
      for (int b = 0; b < batches; b++) {
        long a = System.nanoTime();
        sink += w.putBatch(batch, order, b * size, Math.min(order.length, (b + 1) * size));
        hist.recordValue(System.nanoTime() - a);
      }
    } catch (RuntimeException e) {
      rig.log(id, s.id() + " FAILED: " + e);
      return Result.failed(id, s.id(), phase, 1, d, Rows.describe(e));
    }
    long wall = System.nanoTime() - t0;
    long fg = Timing.threadCpu() - fg0;
    long process = Timing.processCpu() - cpu0;
    Timing.Blackhole.consume(sink);
    if (order.length == 0) {
      return Result.failed(id, s.id(), phase, 1, d, "no operation completed");
    }
    Result r =
        Rows.measured(id, s.id(), phase, 1, d, hist, order.length, wall, fg, process, Double.NaN);
    rig.progress().result(r, "puts/s; latency per batch of " + size);
    return r;
  }
}
