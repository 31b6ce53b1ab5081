package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
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
 * Decides "what to pick" from a run's rows: for each durability and each scenario and thread count
 * of the persistent embedded engines, the winner by ops/s, the runner-up, the lowest p99 and, when
 * the winner loses acknowledged writes to kill -9, the best engine that keeps them; the smallest
 * footprint after the updates; the caveats of every engine picked; the wins per engine. Numbers
 * only: {@link AdviceText} writes them.
 */
final class Picks {
  /** A winner within this factor of the runner-up is a tie: within run-to-run noise. */
  static final double TIE = 1.1;

  /**
   * Engines whose BUFFERED mode loses acknowledged writes to a kill -9, with the TCK rule that
   * shows it (see {@code bench/results/conformance}). The advice names, beside such a winner, the
   * best of the engines that keep them.
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
   * The winner of one scenario, phase and thread count.
   *
   * @param group the scenario label and thread count, such as {@code readrandom @2t}
   * @param durability the table's durability
   * @param winner the fastest row
   * @param runnerUp the second fastest, or null when only one engine was measured
   * @param lowestP99 the row of lowest p99, or null when it is the winner's
   * @param killSafe for a BUFFERED winner that loses writes to kill -9, the rows of the engines
   *     that keep them, fastest first (maybe none); else null
   */
  record Pick(
      String group,
      Durability durability,
      Result winner,
      Result runnerUp,
      Result lowestP99,
      List<Result> killSafe) {
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
  }

  /**
   * The footprint verdict: the smallest disk / live after the updates, and the largest.
   *
   * @param smallest the smallest
   * @param largest the largest, or null when only one engine was measured
   */
  record Smallest(Result smallest, Result largest) {}

  /**
   * Every verdict of a run.
   *
   * @param picks the winners by durability (in the tables' order), each in table order
   * @param footprint the footprint verdict, or null
   * @param nothingRun true when no throughput table and no footprint after updates exists
   * @param quietness the run's quietness verdict, or null
   * @param caveats the caveats of every engine picked, in the order first picked
   * @param wins the pick count per engine, most first
   */
  record Verdicts(
      Map<Durability, List<Pick>> picks,
      Smallest footprint,
      boolean nothingRun,
      Quietness.Verdict quietness,
      Map<String, String> caveats,
      Map<String, Long> wins) {
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
    Map<Durability, List<Pick>> picks = new LinkedHashMap<>();
    Map<Durability, List<Result>> tables = Grouping.byDurability(o.results(), false);
    for (Map.Entry<Durability, List<Result>> t : tables.entrySet()) {
      List<Pick> ps = table(t.getKey(), t.getValue(), o.engines());
      if (ps.isEmpty()) {
        continue;
      }
      for (Pick p : ps) {
        if (p.killSafe() != null && !p.killSafe().isEmpty()) {
          winners.add(p.killSafe().get(0).engine());
        }
        winners.add(p.winner().engine());
      }
      picks.put(t.getKey(), ps);
    }
    List<Result> fp =
        Grouping.footprints(o.results()).stream()
            .filter(r -> r.phase().equals(Footprint.AFTER_UPDATE))
            .sorted(Comparator.comparingDouble(Result::amplification))
            .collect(Collectors.toList());
    Smallest smallest = null;
    if (!fp.isEmpty()) {
      smallest = new Smallest(fp.get(0), fp.size() > 1 ? fp.get(fp.size() - 1) : null);
      winners.add(fp.get(0).engine());
    }
    Caveats caveats = new Caveats(o.engines(), o.storeInfos());
    Map<String, String> c = new LinkedHashMap<>();
    winners.forEach(w -> c.put(w, caveats.of(w)));
    return new Verdicts(
        picks, smallest, tables.isEmpty() && fp.isEmpty(), o.quietness(), c, wins(picks));
  }

  /** The picks of one durability table: one per scenario label and thread count. */
  private static List<Pick> table(
      Durability d, List<Result> rows, Map<String, StoreProvider> engines) {
    Map<String, List<Result>> groups = new LinkedHashMap<>();
    for (Result r : Grouping.sorted(rows)) {
      StoreProvider p = engines.get(r.engine());
      if (r.ok() && p != null && p.features().contains(Feature.PERSISTENT)) {
        groups.computeIfAbsent(r.label() + " @" + r.threads() + "t", k -> new ArrayList<>()).add(r);
      }
    }
    List<Pick> out = new ArrayList<>();
    for (Map.Entry<String, List<Result>> g : groups.entrySet()) {
      List<Result> rs = new ArrayList<>(g.getValue());
      rs.sort(Comparator.comparingDouble(Result::opsPerSec).reversed());
      Result win = rs.get(0);
      Result lowP99 = rs.stream().min(Comparator.comparingDouble(Result::p99Us)).orElseThrow();
      List<Result> safe = null;
      if (d == Durability.BUFFERED && LOSES_WRITES_ON_KILL.containsKey(win.engine())) {
        safe =
            rs.stream()
                .filter(r -> !LOSES_WRITES_ON_KILL.containsKey(r.engine()))
                .collect(Collectors.toList());
      }
      out.add(
          new Pick(
              g.getKey(),
              d,
              win,
              rs.size() > 1 ? rs.get(1) : null,
              lowP99.engine().equals(win.engine()) ? null : lowP99,
              safe));
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
