package io.kv4j.bench;

import io.kv4j.StoreInfo;
import io.kv4j.spi.StoreProvider;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a run found, as deciding and formatting read it: the options and data it ran with, the
 * engines, the rows, each engine's settings and store info, the notes, the machine, the conformance
 * matrix and the quietness verdict (both null when not made).
 *
 * @param options the command line
 * @param data the keys and values
 * @param engines the engines compared, by id, in order
 * @param results every row
 * @param settings each engine's effective settings
 * @param notes notes for the workload section
 * @param environment the machine line
 * @param storeInfos the {@link StoreInfo} of each engine's main store as opened
 * @param conformance the conformance matrix, or null
 * @param conformanceDepth its depth settings, or null
 * @param quietness the quietness verdict, or null
 */
record Outcome(
    Options options,
    Data data,
    Map<String, StoreProvider> engines,
    List<Result> results,
    Map<String, Map<String, String>> settings,
    List<String> notes,
    String environment,
    Map<String, StoreInfo> storeInfos,
    List<Conformance.Row> conformance,
    Map<String, String> conformanceDepth,
    Quietness.Verdict quietness) {

  /**
   * An outcome of rows alone: no settings, notes, store infos, matrix or verdict.
   *
   * @param options the command line
   * @param data the keys and values
   * @param providers the engines compared
   * @param results the rows
   * @return the outcome
   */
  static Outcome of(
      Options options, Data data, List<StoreProvider> providers, List<Result> results) {
    Map<String, StoreProvider> engines = new LinkedHashMap<>();
    for (StoreProvider p : providers) {
      engines.put(p.id(), p);
    }
    return new Outcome(
        options, data, engines, results, Map.of(), List.of(), "", Map.of(), null, null, null);
  }

  Outcome withSettings(Map<String, Map<String, String>> s, List<String> n, String env) {
    return new Outcome(
        options,
        data,
        engines,
        results,
        s,
        n,
        env,
        storeInfos,
        conformance,
        conformanceDepth,
        quietness);
  }

  Outcome withStoreInfos(Map<String, StoreInfo> infos) {
    return new Outcome(
        options,
        data,
        engines,
        results,
        settings,
        notes,
        environment,
        infos,
        conformance,
        conformanceDepth,
        quietness);
  }

  Outcome withConformance(List<Conformance.Row> rows, Map<String, String> depth) {
    return new Outcome(
        options,
        data,
        engines,
        results,
        settings,
        notes,
        environment,
        storeInfos,
        rows,
        depth,
        quietness);
  }

  Outcome withQuietness(Quietness.Verdict verdict) {
    return new Outcome(
        options,
        data,
        engines,
        results,
        settings,
        notes,
        environment,
        storeInfos,
        conformance,
        conformanceDepth,
        verdict);
  }
}
