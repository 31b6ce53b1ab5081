package io.kv4j.bench;

import io.kv4j.bench.Scenario.Kind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The cells of the tables the long scenarios have of their own (space under churn, reads or scans
 * during churn, scale), a header row first; the console aligns them, report.md pipes them.
 */
final class OwnTables {
  private OwnTables() {}

  /** The rows of every scenario of a kind, in catalogue order. */
  private static List<Result> rows(List<Result> results, Kind kind) {
    List<Result> out = new ArrayList<>();
    for (Scenario s : Catalogue.standard().ofKind(kind)) {
      out.addAll(Grouping.rows(results, s.id()));
    }
    return out;
  }

  /** A row with the error of a result in the fourth cell (where the console expects it). */
  private static String[] errorRow(int cols, String engine, String phase, String error) {
    String[] r = new String[cols];
    Arrays.fill(r, "");
    r[0] = engine;
    r[1] = phase;
    r[3] = error;
    return r;
  }

  /**
   * The churn table: a header, then a row per engine and phase.
   *
   * @param results every row
   * @return the cells
   */
  static List<String[]> churn(List<Result> results) {
    List<String[]> out = new ArrayList<>();
    out.add(
        new String[] {
          "engine",
          "phase",
          "threads",
          "rounds done",
          "updates/s",
          "update p99",
          "disk/live at end",
          "worst disk/live"
        });
    for (Result r : rows(results, Kind.CHURN)) {
      if (!r.ok()) {
        out.add(errorRow(8, r.engine(), r.phase(), r.error()));
        continue;
      }
      String rounds = Format.number(r.figure("rounds-done"), "%.1f");
      if (r.figure("capped") > 0) {
        rounds +=
            String.format(
                Locale.ROOT,
                " of %.0f (capped at %s s)",
                r.figure("rounds-target"),
                Format.seconds(r.figure("max-seconds")));
      }
      out.add(
          new String[] {
            r.engine(),
            r.phase(),
            String.valueOf(r.threads()),
            rounds,
            Format.rate(r.opsPerSec()),
            Format.micros(r.p99Us()),
            Format.ratio(r.amplification()),
            Format.ratio(r.figure("worst-disk-per-live"))
          });
    }
    return out;
  }

  /**
   * The engines' own stats() figures at the end of each churn phase, as note lines.
   *
   * @param results every row
   * @return the lines
   */
  static List<String> churnNotes(List<Result> results) {
    List<String> out = new ArrayList<>();
    for (Result r : rows(results, Kind.CHURN)) {
      List<String> parts = new ArrayList<>();
      for (Map.Entry<String, Double> f : r.figures().entrySet()) {
        if (f.getKey().startsWith("engine-")) {
          parts.add(
              String.format(
                  Locale.ROOT, "%s %.2f", f.getKey().substring("engine-".length()), f.getValue()));
        }
      }
      if (!parts.isEmpty()) {
        out.add(
            "- "
                + r.engine()
                + " stats() after "
                + r.phase()
                + ": "
                + String.join(", ", parts)
                + " (the engine's own accounting)");
      }
    }
    return out;
  }

  /**
   * What a during-churn scenario's thread does, as its table names it.
   *
   * @param s the scenario
   * @return {@code scan} or {@code read}
   */
  static String operation(Scenario s) {
    return s.needsOrderedScan() ? "scan" : "read";
  }

  /**
   * A during-churn table: a header, then a row per engine of its mix's thread alone and next to a
   * writer.
   *
   * @param results every row
   * @param s the during-churn scenario
   * @return the cells
   */
  static List<String[]> duringChurn(List<Result> results, Scenario s) {
    String op = operation(s);
    List<String[]> out = new ArrayList<>();
    out.add(
        new String[] {
          "engine",
          "threads",
          op + "s/s alone",
          op + "s/s during churn",
          "retention",
          "writes/s during churn",
          op + " p99 alone",
          op + " p99 during churn"
        });
    Map<String, Map<String, Result>> byEngine = new LinkedHashMap<>();
    for (Result r : Grouping.rows(results, s.id())) {
      byEngine.computeIfAbsent(r.engine(), k -> new LinkedHashMap<>()).put(r.phase(), r);
    }
    for (Map.Entry<String, Map<String, Result>> e : byEngine.entrySet()) {
      Result alone = e.getValue().get(DuringChurn.ALONE);
      Result reads = e.getValue().get(DuringChurn.DURING);
      Result writes = e.getValue().get(DuringChurn.WRITES);
      Result bad = e.getValue().values().stream().filter(r -> !r.ok()).findFirst().orElse(null);
      if (bad != null || alone == null || reads == null || writes == null) {
        out.add(
            errorRow(
                8, e.getKey(), "", bad == null ? "incomplete: a window is missing" : bad.error()));
        continue;
      }
      out.add(
          new String[] {
            e.getKey(),
            "1 + 1",
            Format.rate(alone.opsPerSec()),
            Format.rate(reads.opsPerSec()),
            Format.number(reads.figure("retention"), "%.2f"),
            Format.rate(writes.opsPerSec()),
            Format.micros(alone.p99Us()),
            Format.micros(reads.p99Us())
          });
    }
    return out;
  }

  /**
   * The scale table: a header, then a row per engine. GC pauses are "count / total / max" in ms.
   *
   * @param results every row
   * @return the cells
   */
  static List<String[]> scale(List<Result> results) {
    List<String[]> out = new ArrayList<>();
    String[] header = {
      "engine",
      "load",
      "keys loaded",
      "load s",
      "load keys/s",
      "longest write",
      "GC load n / total / max",
      "heap B/key",
      "heap B/key - key",
      "engine index B/key",
      "disk/live",
      "reopen + get",
      "heap B/key reopened",
      "GC reopen n / total / max",
      "gets/s",
      "get p50 / p99 / p99.9",
      "GC gets n / total / max"
    };
    out.add(header);
    for (Result r : rows(results, Kind.SCALE)) {
      if (!r.ok()) {
        out.add(errorRow(header.length, r.engine(), "", r.error()));
        continue;
      }
      String keys = String.format(Locale.ROOT, "%,d", r.ops());
      if (r.figure("capped") > 0) {
        keys +=
            String.format(
                Locale.ROOT,
                " of %,.0f (incomplete: capped at %s s)",
                r.figure("keys-target"),
                Format.seconds(r.figure("max-seconds")));
      }
      out.add(
          new String[] {
            r.engine(),
            r.figure("batched") > 0 ? "batches" : "single puts",
            keys,
            Format.number(r.seconds(), "%.1f s"),
            Format.rate(r.opsPerSec()),
            Format.number(r.figure("load-max-write-ms"), "%.1f ms"),
            pauses(r, "load"),
            Format.number(r.figure("heap-bytes-per-key"), "%.1f"),
            Format.number(r.figure("heap-bytes-per-key-minus-key"), "%.1f"),
            Format.number(r.figure("index-bytes-per-key"), "%.1f"),
            Format.ratio(r.amplification()),
            Format.number(r.figure("reopen-seconds"), "%.3f s")
                + (Double.isNaN(r.figure("preload-seconds"))
                    ? ""
                    : Format.number(r.figure("preload-seconds"), " (+ %.1f s preload)")),
            Format.number(r.figure("heap-bytes-per-key-reopened"), "%.1f"),
            pauses(r, "reopen"),
            Format.rate(r.figure("reads-per-second")),
            Format.micros(r.figure("read-p50-us"))
                + " / "
                + Format.micros(r.figure("read-p99-us"))
                + " / "
                + Format.micros(r.figure("read-p999-us")),
            pauses(r, "read")
          });
    }
    return out;
  }

  /** A phase's GC pauses as "count / total ms / max ms". */
  private static String pauses(Result r, String phase) {
    return String.format(
        Locale.ROOT,
        "%.0f / %.0f ms / %.0f ms",
        r.figure(phase + "-gc-pauses"),
        r.figure(phase + "-gc-pause-total-ms"),
        r.figure(phase + "-gc-pause-max-ms"));
  }
}
