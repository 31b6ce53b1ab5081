package io.kv4j.bench;

import io.kv4j.StoreInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What measuring a run collected, in the order it happened: the rows, every engine's effective
 * settings and the {@link StoreInfo} of its main store, notes for the report, and the server
 * engines skipped as unreachable.
 */
final class Measurements {
  private final List<Result> results = new ArrayList<>();
  private final Map<String, Map<String, String>> settings = new LinkedHashMap<>();
  private final Map<String, StoreInfo> storeInfos = new LinkedHashMap<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> skipped = new ArrayList<>();

  /**
   * Adds a row.
   *
   * @param r the row
   */
  void add(Result r) {
    results.add(r);
  }

  /**
   * The rows so far.
   *
   * @return the live list
   */
  List<Result> results() {
    return results;
  }

  /**
   * Each engine's settings as opened: every option, defaults included.
   *
   * @return by engine id, the live map
   */
  Map<String, Map<String, String>> settings() {
    return settings;
  }

  /**
   * The {@link StoreInfo} of each engine's main store as opened: what the engine declares for the
   * store it measured (the caveats read it).
   *
   * @return by engine id, the live map
   */
  Map<String, StoreInfo> storeInfos() {
    return storeInfos;
  }

  /**
   * Notes for the report's workload section.
   *
   * @return the live list
   */
  List<String> notes() {
    return notes;
  }

  /**
   * Server engines skipped because their server was not reachable.
   *
   * @return the live list
   */
  List<String> skipped() {
    return skipped;
  }
}
