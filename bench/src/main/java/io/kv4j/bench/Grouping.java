package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** Which rows go together: the durability tables, their order, the footprints, a scenario's. */
final class Grouping {
  private Grouping() {}

  /**
   * Rows of the durability tables, grouped by durability (SYNC and BUFFERED never mix): those of
   * the embedded engines, or those of the server engines (network round trips).
   *
   * @param results every row
   * @param servers true for the server engines' tables
   * @return rows by durability, in the enum's order
   */
  static Map<Durability, List<Result>> byDurability(List<Result> results, boolean servers) {
    Catalogue c = Catalogue.standard();
    Map<Durability, List<Result>> m = new TreeMap<>();
    for (Result r : results) {
      if (!c.ownTable(r.scenario()) && Servers.isServer(r.engine()) == servers) {
        m.computeIfAbsent(r.durability(), k -> new ArrayList<>()).add(r);
      }
    }
    return m;
  }

  /**
   * Rows in table order: by scenario (the user's workload first, then catalogue order), phase,
   * threads, the kv4j engines before the stores that are not (peers, raw libraries), then fastest
   * first.
   *
   * @param rs the rows
   * @return a sorted copy
   */
  static List<Result> sorted(List<Result> rs) {
    Catalogue c = Catalogue.standard();
    List<Result> out = new ArrayList<>(rs);
    out.sort(
        Comparator.comparing((Result r) -> c.order(r.scenario()))
            .thenComparing(Result::phase)
            .thenComparingInt(Result::threads)
            .thenComparing(r -> !Engines.role(r.engine()).pickable())
            .thenComparing(r -> -r.opsPerSec()));
    return out;
  }

  /**
   * The footprint rows with numbers, in the order measured.
   *
   * @param results every row
   * @return the footprints
   */
  static List<Result> footprints(List<Result> results) {
    String id = Catalogue.standard().footprint().id();
    return results.stream().filter(r -> r.scenario().equals(id) && r.ok()).toList();
  }

  /**
   * The rows of a scenario, in the order measured.
   *
   * @param results every row
   * @param scenario the scenario id
   * @return its rows
   */
  static List<Result> rows(List<Result> results, String scenario) {
    return results.stream().filter(r -> r.scenario().equals(scenario)).collect(Collectors.toList());
  }
}
