package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The {@code during-churn} kind, on the loaded store of the main run: one thread of the scenario's
 * mix (verified gets, verified scans) alone for a window, then the same thread next to one writer
 * of zipfian overwrites at full speed for another; the retention is the first thread's throughput
 * in the second window over the first.
 */
final class DuringChurn {
  /** The mix alone. */
  static final String ALONE = "read-only";

  /** The mix's thread next to the writer. */
  static final String DURING = "reads";

  /** The writer. */
  static final String WRITES = "writes";

  /** The phases of its rows, in order. */
  static final List<String> PHASES = List.of(ALONE, DURING, WRITES);

  private final Rig rig;
  private final Scenario scenario;

  DuringChurn(Rig rig, Scenario scenario) {
    this.rig = rig;
    this.scenario = scenario;
  }

  /**
   * Rows {@code read-only}, {@code reads} and {@code writes} of the engine.
   *
   * @param id the engine
   * @param wl the workload on the loaded store
   * @param workers its workers (the first two are used)
   * @param d the store's durability
   */
  void run(String id, Workload wl, List<Workload.Worker> workers, Durability d) {
    String what = scenario.needsOrderedScan() ? "scanner" : "reader";
    Rig.ensureWorkers(wl, workers, 2);
    Workload.Worker reader = workers.get(0);
    Workload.Worker writer = workers.get(1);
    rig.log(
        id,
        scenario.id()
            + ": 1 "
            + what
            + " alone, then 1 "
            + what
            + " + 1 writer (zipfian overwrites)");
    LongSupplier read = () -> reader.op(scenario);
    Window alone = rig.window(id, new LongSupplier[] {read});
    Result readOnly = rig.summarize(id, scenario.id(), ALONE, 1, d, alone.thread(0));
    rig.add(readOnly);
    if (!readOnly.ok()) {
      return;
    }
    LongSupplier write = () -> writer.update(Scenario.Distribution.ZIPFIAN);
    Window mixed = rig.window(id, new LongSupplier[] {read, write});
    Result reads = rig.summarize(id, scenario.id(), DURING, 1, d, mixed.thread(0));
    Result writes = rig.summarize(id, scenario.id(), WRITES, 1, d, mixed.thread(1));
    if (reads.ok()) {
      Map<String, Double> f = new LinkedHashMap<>();
      f.put("read-only-ops-per-sec", readOnly.opsPerSec());
      f.put("retention", reads.opsPerSec() / readOnly.opsPerSec());
      f.put("writes-per-sec", writes.opsPerSec());
      reads = reads.with(0, 0, f);
      rig.log(
          id,
          String.format(
              Locale.ROOT,
              "%s: retention %.2f (%s/s during churn, %s alone)",
              scenario.id(),
              reads.figure("retention"),
              Format.rate(reads.opsPerSec()),
              Format.rate(readOnly.opsPerSec())));
    }
    rig.add(reads);
    rig.add(writes);
  }
}
