package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Stores;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Decides "what to pick" from a run's rows, among the engines a user can pick: the persistent kv4j
 * engines ({@link Engines.Role#KV4J}). The peer stores (and the raw libraries, the instruments) are
 * never ranked, never a winner, never counted in the wins: each verdict carries them as reference
 * rows instead. For the user's workload ({@code --workload}): the kv4j engines that ran it, those
 * that cannot and why, the peers, and the pick. For each durability and each scenario and thread
 * count: the winner by ops/s, the runner-up, the lowest p99, and with {@code --rounds} whether the
 * difference exceeds the spread between rounds; the smallest footprint after the updates; the
 * caveats of every engine picked; the wins per engine. Numbers only: {@link AdviceText} writes
 * them.
 */
final class Picks {
  /** A winner within this factor of the runner-up is a tie: within run-to-run noise. */
  static final double TIE = 1.1;

  /**
   * Peers whose BUFFERED mode loses acknowledged writes to a kill -9, with the TCK rule that shows
   * it (see {@code bench/results/conformance}): said beside their reference numbers.
   */
  static final Map<String, String> LOSES_WRITES_ON_KILL =
      Map.of(
          "chronicle-map",
          "rule 7.5",
          "mapdb",
          "rules 7.2 and 7.5",
          "mvstore",
          "rules 7.2 and 7.5");

  /**
   * How a winner's lead compares with the spread between rounds ({@code --rounds}): the rounds took
   * turns window by window, so a slow minute of a busy machine hit every engine; a lead that
   * survives the worst round of the winner against the best of the runner-up is not the machine's
   * doing.
   */
  enum Spread {
    /** Fewer than 2 rounds for either engine (or no runner-up): nothing to compare. */
    NO_ROUNDS,
    /** The winner's slowest round beat the runner-up's fastest. */
    BEYOND,
    /** The rounds' ranges overlap: the difference is within what the machine varied. */
    WITHIN;

    /**
     * The spread verdict of two rows.
     *
     * @param winner the faster row
     * @param runnerUp the slower, or null
     * @return the verdict
     */
    static Spread of(Result winner, Result runnerUp) {
      if (runnerUp == null || rounds(winner) < 2 || rounds(runnerUp) < 2) {
        return NO_ROUNDS;
      }
      return winner.figure("ops-per-sec-min") > runnerUp.figure("ops-per-sec-max")
          ? BEYOND
          : WITHIN;
    }

    private static double rounds(Result r) {
      double n = r.figure("rounds");
      return Double.isNaN(n) ? 1 : n;
    }
  }

  /**
   * The winner of one scenario, phase and thread count, among the kv4j engines.
   *
   * @param group the scenario label and thread count, such as {@code readrandom @2t}
   * @param durability the table's durability
   * @param winner the fastest kv4j engine's row
   * @param runnerUp the second fastest kv4j engine's, or null when only one was measured
   * @param lowestP99 the kv4j row of lowest p99, or null when it is the winner's
   * @param peers the rows of the stores that are not kv4j engines (peers, raw libraries), fastest
   *     first: reference only
   */
  record Pick(
      String group,
      Durability durability,
      Result winner,
      Result runnerUp,
      Result lowestP99,
      List<Result> peers) {
    /**
     * How many times the runner-up's ops/s the winner's is.
     *
     * @return the margin, NaN without a runner-up
     */
    double margin() {
      return runnerUp == null ? Double.NaN : winner.opsPerSec() / runnerUp.opsPerSec();
    }

    /**
     * Whether the margin is within run-to-run noise.
     *
     * @return true below {@link #TIE}
     */
    boolean tie() {
      return margin() < TIE;
    }

    /**
     * The lead against the spread between rounds.
     *
     * @return the verdict
     */
    Spread spread() {
      return Spread.of(winner, runnerUp);
    }
  }

  /**
   * The footprint verdict among the kv4j engines: the smallest disk / live after the updates, and
   * the largest; the peers' for reference.
   *
   * @param smallest the smallest
   * @param largest the largest, or null when only one kv4j engine was measured
   * @param peers the footprints of the stores that are not kv4j engines, smallest first
   */
  record Smallest(Result smallest, Result largest, List<Result> peers) {}

  /**
   * The user's workload, as its section shows it.
   *
   * @param description the workload
   * @param ranked the persistent kv4j engines that ran it, fastest first: the pick is the first
   * @param unranked kv4j engines that ran it but cannot be picked for it (not persistent, server
   *     engines): reference rows after the ranked
   * @param cannot the kv4j engines that did not run it, each as the row that says why (n/a or
   *     failed)
   * @param peers the rows of the stores that are not kv4j engines, ok ones fastest first
   * @param disk each engine's footprint after the run (allocated bytes), where measured
   * @param able when no kv4j engine of the run can be picked: the kv4j engines found on the
   *     classpath but not in the run that could run it (persistent, embedded, the features and
   *     limits it needs)
   */
  record Yours(
      WorkloadDescription description,
      List<Result> ranked,
      List<Result> unranked,
      List<Result> cannot,
      List<Result> peers,
      Map<String, Result> disk,
      List<String> able) {
    /**
     * The pick: the fastest persistent kv4j engine.
     *
     * @return its row, or null when none ran it
     */
    Result pick() {
      return ranked.isEmpty() ? null : ranked.get(0);
    }

    /**
     * The next kv4j engine.
     *
     * @return its row, or null
     */
    Result runnerUp() {
      return ranked.size() < 2 ? null : ranked.get(1);
    }

    /**
     * How many times the runner-up's ops/s the pick's is.
     *
     * @return the margin, NaN without a runner-up
     */
    double margin() {
      Result r = runnerUp();
      return r == null ? Double.NaN : pick().opsPerSec() / r.opsPerSec();
    }

    /**
     * Whether the pick and the runner-up are within noise: under {@link #TIE}, or with rounds whose
     * ranges overlap.
     *
     * @return true for a tie
     */
    boolean tie() {
      return margin() < TIE || Spread.of(pick(), runnerUp()) == Spread.WITHIN;
    }
  }

  /**
   * Every verdict of a run.
   *
   * @param picks the winners by durability (in the tables' order), each in table order
   * @param footprint the footprint verdict, or null
   * @param nothingRun true when no throughput table and no footprint after updates exists
   * @param quietness the run's quietness verdict, or null
   * @param caveats the caveats of every engine picked, in the order first picked
   * @param wins the pick count per kv4j engine, most first
   * @param yours the user's workload, or null without {@code --workload}
   */
  record Verdicts(
      Map<Durability, List<Pick>> picks,
      Smallest footprint,
      boolean nothingRun,
      Quietness.Verdict quietness,
      Map<String, String> caveats,
      Map<String, Long> wins,
      Yours yours) {
    /**
     * Whether the run was measured on a machine too busy to trust.
     *
     * @return true for a verdict that is not quiet
     */
    boolean noisy() {
      return quietness != null && !quietness.quiet();
    }
  }

  private Picks() {}

  /**
   * The verdicts of a run.
   *
   * @param o what the run found
   * @return the verdicts
   */
  static Verdicts decide(Outcome o) {
    Set<String> winners = new LinkedHashSet<>();
    Yours yours = o.options().workload == null ? null : yours(o);
    if (yours != null && yours.pick() != null) {
      winners.add(yours.pick().engine());
    }
    Map<Durability, List<Pick>> picks = new LinkedHashMap<>();
    Map<Durability, List<Result>> tables = Grouping.byDurability(o.results(), false);
    for (Map.Entry<Durability, List<Result>> t : tables.entrySet()) {
      List<Pick> ps = table(t.getKey(), t.getValue(), o.engines());
      if (ps.isEmpty()) {
        continue;
      }
      for (Pick p : ps) {
        winners.add(p.winner().engine());
      }
      picks.put(t.getKey(), ps);
    }
    List<Result> fp =
        Grouping.footprints(o.results()).stream()
            .filter(r -> r.phase().equals(Footprint.AFTER_UPDATE))
            .sorted(Comparator.comparingDouble(Result::amplification))
            .collect(Collectors.toList());
    List<Result> fpKv4j = fp.stream().filter(r -> pickable(r, o.engines())).toList();
    Smallest smallest = null;
    if (!fpKv4j.isEmpty()) {
      smallest =
          new Smallest(
              fpKv4j.get(0),
              fpKv4j.size() > 1 ? fpKv4j.get(fpKv4j.size() - 1) : null,
              fp.stream().filter(r -> !Engines.role(r.engine()).pickable()).toList());
      winners.add(fpKv4j.get(0).engine());
    }
    Caveats caveats = new Caveats(o.engines(), o.storeInfos());
    Map<String, String> c = new LinkedHashMap<>();
    winners.forEach(w -> c.put(w, caveats.of(w)));
    return new Verdicts(
        picks, smallest, tables.isEmpty() && fp.isEmpty(), o.quietness(), c, wins(picks), yours);
  }

  /** Whether a row's engine can be picked: a persistent kv4j engine of the run. */
  private static boolean pickable(Result r, Map<String, StoreProvider> engines) {
    StoreProvider p = engines.get(r.engine());
    return p != null
        && Engines.role(p).pickable()
        && p.features().contains(Feature.PERSISTENT)
        && !Servers.isServer(r.engine());
  }

  /** The user's workload's rows, sorted into the section's groups. */
  private static Yours yours(Outcome o) {
    List<Result> ranked = new ArrayList<>();
    List<Result> unranked = new ArrayList<>();
    List<Result> cannot = new ArrayList<>();
    List<Result> peers = new ArrayList<>();
    List<Result> peersWithout = new ArrayList<>();
    Map<String, Result> disk = new LinkedHashMap<>();
    for (Result r : Grouping.footprints(o.results())) {
      if (r.phase().equals(Footprint.AFTER_UPDATE)) {
        disk.put(r.engine(), r);
      }
    }
    for (StoreProvider p : o.engines().values()) {
      String id = p.id();
      Result row =
          o.results().stream()
              .filter(r -> r.engine().equals(id) && r.scenario().equals(Scenario.YOURS))
              .findFirst()
              .orElse(null);
      if (row == null || !row.ok()) {
        // Why it has no numbers: its own n/a or failure, else the engine's first failed row.
        Result why =
            row != null
                ? row
                : o.results().stream()
                    .filter(r -> r.engine().equals(id) && !r.ok())
                    .findFirst()
                    .orElse(
                        Result.failed(
                            id, Scenario.YOURS, "", 0, o.options().durability, "not measured"));
        (Engines.role(p).pickable() ? cannot : peersWithout).add(why);
      } else if (!Engines.role(p).pickable()) {
        peers.add(row);
      } else if (pickable(row, o.engines())) {
        ranked.add(row);
      } else {
        unranked.add(row);
      }
    }
    Comparator<Result> fastest = Comparator.comparingDouble(Result::opsPerSec).reversed();
    ranked.sort(fastest);
    unranked.sort(fastest);
    peers.sort(fastest);
    peers.addAll(peersWithout);
    List<String> able = new ArrayList<>();
    if (ranked.isEmpty()) {
      for (StoreProvider p : Stores.providers()) {
        if (!o.engines().containsKey(p.id())
            && Engines.role(p).pickable()
            && !Servers.isServer(p.id())
            && p.features().contains(Feature.PERSISTENT)
            && (!o.options().workload.scans() || p.features().contains(Feature.ORDERED_SCAN))
            && Session.beyondLimits(p, o.data()) == null) {
          able.add(p.id());
        }
      }
    }
    return new Yours(o.options().workload, ranked, unranked, cannot, peers, disk, able);
  }

  /** The picks of one durability table: one per scenario label and thread count. */
  private static List<Pick> table(
      Durability d, List<Result> rows, Map<String, StoreProvider> engines) {
    Map<String, List<Result>> groups = new LinkedHashMap<>();
    Map<String, List<Result>> reference = new LinkedHashMap<>();
    for (Result r : Grouping.sorted(rows)) {
      if (!r.ok()) {
        continue;
      }
      String group = r.label() + " @" + r.threads() + "t";
      if (pickable(r, engines)) {
        groups.computeIfAbsent(group, k -> new ArrayList<>()).add(r);
      } else if (engines.containsKey(r.engine()) && !Engines.role(r.engine()).pickable()) {
        reference.computeIfAbsent(group, k -> new ArrayList<>()).add(r);
      }
    }
    List<Pick> out = new ArrayList<>();
    Comparator<Result> fastest = Comparator.comparingDouble(Result::opsPerSec).reversed();
    for (Map.Entry<String, List<Result>> g : groups.entrySet()) {
      List<Result> rs = new ArrayList<>(g.getValue());
      rs.sort(fastest);
      Result win = rs.get(0);
      Result lowP99 = rs.stream().min(Comparator.comparingDouble(Result::p99Us)).orElseThrow();
      List<Result> peers = new ArrayList<>(reference.getOrDefault(g.getKey(), List.of()));
      peers.sort(fastest);
      out.add(
          new Pick(
              g.getKey(),
              d,
              win,
              rs.size() > 1 ? rs.get(1) : null,
              lowP99.engine().equals(win.engine()) ? null : lowP99,
              peers));
    }
    return out;
  }

  /** The picks per engine, most first (ties in the order first picked). */
  private static Map<String, Long> wins(Map<Durability, List<Pick>> picks) {
    Map<String, Long> count = new LinkedHashMap<>();
    picks.values().forEach(ps -> ps.forEach(p -> count.merge(p.winner().engine(), 1L, Long::sum)));
    Map<String, Long> out = new LinkedHashMap<>();
    count.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  /**
   * The engines of a table that lose acknowledged writes to kill -9, with the rule that shows it.
   *
   * @param table the rows of a durability table
   * @return such as {@code chronicle-map (rule 7.5)}, sorted
   */
  static Set<String> losingWrites(List<Result> table) {
    Set<String> lossy = new TreeSet<>();
    for (Result r : table) {
      if (LOSES_WRITES_ON_KILL.containsKey(r.engine())) {
        lossy.add(r.engine() + " (" + LOSES_WRITES_ON_KILL.get(r.engine()) + ")");
      }
    }
    return lossy;
  }
}
