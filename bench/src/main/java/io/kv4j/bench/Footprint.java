package io.kv4j.bench;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.StoreProvider;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The {@code footprint} kind: allocated bytes on disk ({@code du}) / live key and value bytes of a
 * store at rest, with its apparent bytes (file sizes) and the writes made so far. At rest: after
 * {@code sync()}, once the engine reports no flush or compaction running or due ({@link #quiesce}).
 */
final class Footprint {
  /** On the main store, after the load. */
  static final String AFTER_LOAD = "after-load";

  /** On the main store, after the timed scenarios. */
  static final String AFTER_UPDATE = "after-update";

  /** On the batch-load store, after its load. */
  static final String AFTER_BATCH_LOAD = "after-fillbatch";

  /** On the batch-load store, after {@link #FIXED_UPDATES_PER_KEY} x keys zipfian updates. */
  static final String AFTER_FIXED_UPDATES = "after-fixed-updates";

  /** The phases of footprint rows, in the order a run makes them. */
  static final List<String> PHASES =
      List.of(AFTER_LOAD, AFTER_UPDATE, AFTER_BATCH_LOAD, AFTER_FIXED_UPDATES);

  /**
   * Updates (zipfian single puts, one thread) per loaded key between the two footprints of the
   * batch-load store: the same writes for every engine, so two footprints there are comparable.
   */
  static final int FIXED_UPDATES_PER_KEY = 2;

  /**
   * The {@code stats()} figures that say a flush or compaction is running or due (the rocksdb
   * engine and {@code rocksdb-raw}): a footprint waits until all of them are 0.
   */
  static final List<String> BACKGROUND_FIGURES =
      List.of("running-flushes", "flush-pending", "running-compactions", "compaction-pending");

  /**
   * The {@code stats()} figures of an LSM store's compaction state (the rocksdb engine and {@code
   * rocksdb-raw}), recorded at the phase boundary ({@code boundary-} prefix) and at rest.
   */
  static final List<String> COMPACTION_FIGURES =
      List.of("level0-files", "pending-compaction-bytes");

  /** Longest wait for an engine's background work before a footprint is measured anyway. */
  static final long QUIESCE_MAX_NS = TimeUnit.SECONDS.toNanos(300);

  private static final long QUIESCE_POLL_NS = TimeUnit.MILLISECONDS.toNanos(50);

  private final Rig rig;
  private final String scenario;

  Footprint(Rig rig, Scenario scenario) {
    this.rig = rig;
    this.scenario = scenario.id();
  }

  /**
   * Whether an engine's footprint can be measured: persistent, with its data in local files.
   *
   * @param p the engine
   * @return true if so
   */
  static boolean applies(StoreProvider p) {
    return p.features().contains(Feature.PERSISTENT) && !Servers.isServer(p.id());
  }

  /**
   * The footprint of a store at rest: syncs, waits for the engine's background work, then takes
   * allocated and apparent bytes of the whole store directory, write-ahead logs included.
   *
   * @param id the engine
   * @param store the store
   * @param c its configuration (its path is measured)
   * @param wl the workload that wrote it (live keys, writes made)
   * @param phase one of {@link #PHASES}
   * @return the row
   */
  Result measure(String id, Store store, StoreConfig c, Workload wl, String phase) {
    store.sync();
    // The phase boundary, before any background work is waited for: what the last writes left.
    long boundaryBytes = Disk.allocatedBytes(c.path());
    Map<String, Number> boundary = store.stats().figures();
    Quiesce q =
        quiesce(
            () -> store.stats().figures(),
            () -> Disk.apparentBytes(c.path()),
            QUIESCE_MAX_NS,
            QUIESCE_POLL_NS);
    if (!q.settled()) {
      rig.log(
          id,
          "footprint "
              + phase
              + ": background work still running after "
              + TimeUnit.NANOSECONDS.toSeconds(QUIESCE_MAX_NS)
              + " s; measuring anyway");
    }
    Data data = rig.data();
    long disk = Disk.allocatedBytes(c.path());
    long apparent = Disk.apparentBytes(c.path());
    long live = (long) (wl.liveKeys() * (data.keySize() + data.meanValueSize()));
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("apparent-bytes", (double) apparent);
    f.put("writes", (double) wl.writes());
    f.put("settle-seconds", q.seconds());
    f.put("settled", q.settled() ? 1.0 : 0.0);
    f.put("boundary-bytes", (double) boundaryBytes);
    Map<String, Number> atRest = store.stats().figures();
    for (String k : COMPACTION_FIGURES) {
      if (boundary.get(k) != null) {
        f.put("boundary-" + k, boundary.get(k).doubleValue());
      }
      if (atRest.get(k) != null) {
        f.put(k, atRest.get(k).doubleValue());
      }
    }
    Result r =
        Result.footprint(id, scenario, phase, c.durability(), disk, live).with(disk, live, f);
    rig.log(
        id,
        String.format(
            "footprint %s: %.2fx (%s allocated, %s apparent, %,d writes; at rest after %.1f s;"
                + " at the boundary %s allocated%s)",
            phase,
            r.amplification(),
            Format.mib(disk),
            Format.mib(apparent),
            wl.writes(),
            q.seconds(),
            Format.mib(boundaryBytes),
            compaction(boundary)));
    return r;
  }

  /** The compaction state for the log line, such as ", 3 level0-files, 1.2 MiB pending". */
  private static String compaction(Map<String, Number> figures) {
    StringBuilder b = new StringBuilder();
    Number l0 = figures.get("level0-files");
    Number pending = figures.get("pending-compaction-bytes");
    if (l0 != null) {
      b.append(", ").append(l0.longValue()).append(" level-0 files");
    }
    if (pending != null) {
      b.append(", ").append(Format.mib(pending.longValue())).append(" compaction pending");
    }
    return b.toString();
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
   * @return how it ended
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
      Timing.sleepUntil(now + pollNs);
    }
  }
}
