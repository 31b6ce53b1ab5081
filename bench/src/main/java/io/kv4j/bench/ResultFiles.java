package io.kv4j.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** results.csv and results.json: every row with all its figures, for tools. */
final class ResultFiles {
  private ResultFiles() {}

  /**
   * results.csv: a header, then one line per row (n/a rows included), further figures as {@code
   * name=value;...} in the last column.
   *
   * @param results every row
   * @return the CSV text
   */
  static String csv(List<Result> results) {
    StringBuilder b = new StringBuilder();
    for (Column c : COLUMNS) {
      b.append(c.csv()).append(',');
    }
    b.append("error,figures\n");
    for (Result r : results) {
      for (Column c : COLUMNS) {
        b.append(c.value(r)).append(',');
      }
      b.append(r.error() == null ? "" : "\"" + r.error().replace("\"", "\"\"") + "\"")
          .append(',')
          .append(
              r.figures().entrySet().stream()
                  .map(e -> e.getKey() + "=" + Format.jsonNumber(e.getValue()))
                  .collect(Collectors.joining(";")))
          .append(System.lineSeparator());
    }
    return b.toString();
  }

  /**
   * results.json: the command, machine, quietness, workload, settings, every row, the conformance
   * matrix, the abstraction ratios and the advice.
   *
   * @param o what the run found
   * @param advice the advice lines
   * @return the JSON text
   */
  static String json(Outcome o, List<String> advice) {
    StringBuilder b = new StringBuilder("{\n  \"command\": ");
    b.append(
        Format.str("java -jar bench/target/kv4j-bench.jar " + String.join(" ", o.options().args)));
    b.append(",\n  \"environment\": ").append(Format.str(o.environment()));
    b.append(",\n  \"quietness\": ");
    Quietness.Verdict q = o.quietness();
    if (q == null) {
      b.append("null");
    } else {
      b.append("{\"quiet\": ")
          .append(q.quiet())
          .append(", \"problems\": [")
          .append(q.problems().stream().map(Format::str).collect(Collectors.joining(", ")))
          .append("], \"readings\": ")
          .append(Format.str(q.numbers()));
      if (q.servers() != null) {
        b.append(", \"servers\": ").append(Format.str(q.servers()));
      }
      b.append('}');
    }
    b.append(",\n  \"keys\": ").append(o.options().keys);
    b.append(",\n  \"keySize\": ").append(o.data().keySize());
    b.append(",\n  \"valueSize\": ").append(o.data().valueSize());
    b.append(",\n  \"compressible\": ").append(o.data().compressible());
    b.append(",\n  \"yourWorkload\": ").append(yourWorkload(o.options().workload));
    settings(b, o.settings());
    b.append("\n  },\n  \"results\": [");
    int i = 0;
    for (Result r : o.results()) {
      b.append(i++ == 0 ? "\n    " : ",\n    ").append(row(r));
    }
    b.append("\n  ],\n  \"conformance\": ")
        .append(
            o.conformance() == null
                ? "null"
                : ConformanceReport.json(o.conformance(), o.conformanceDepth())
                    .strip()
                    .replace("\n", "\n  "));
    b.append(",\n  \"abstraction\": ").append(AbstractionReport.json(o.results()));
    b.append(",\n  \"abstractionDisk\": ").append(AbstractionReport.diskJson(o.results()));
    b.append(",\n  \"advice\": [");
    i = 0;
    for (String a : advice) {
      b.append(i++ == 0 ? "\n    " : ",\n    ").append(Format.str(a));
    }
    return b.append("\n  ]\n}\n").toString();
  }

  /** The user's workload: name, sources, every property's effective value, in words; or null. */
  private static String yourWorkload(WorkloadDescription w) {
    if (w == null) {
      return "null";
    }
    Map<String, String> values = w.values();
    return "{\"name\": "
        + Format.str(w.name())
        + ", \"sources\": ["
        + w.sources().stream().map(Format::str).collect(Collectors.joining(", "))
        + "], \"properties\": {"
        + WorkloadDescription.PROPERTIES.keySet().stream()
            .map(k -> Format.str(k) + ": " + Format.str(values.get(k)))
            .collect(Collectors.joining(", "))
        + "}, \"description\": "
        + Format.str(w.describe())
        + "}";
  }

  private static void settings(StringBuilder b, Map<String, Map<String, String>> settings) {
    b.append(",\n  \"settings\": {");
    int i = 0;
    for (Map.Entry<String, Map<String, String>> e : settings.entrySet()) {
      b.append(i++ == 0 ? "\n    " : ",\n    ").append(Format.str(e.getKey())).append(": {");
      int j = 0;
      for (Map.Entry<String, String> s : e.getValue().entrySet()) {
        b.append(j++ == 0 ? "" : ", ")
            .append(Format.str(s.getKey()))
            .append(": ")
            .append(Format.str(s.getValue()));
      }
      b.append('}');
    }
  }

  private static String row(Result r) {
    StringBuilder b = new StringBuilder("{");
    for (Column c : COLUMNS) {
      String v = c.value(r);
      b.append(Format.str(c.json())).append(": ").append(c.text() ? Format.str(v) : v).append(", ");
    }
    return b.append("\"error\": ")
        .append(r.error() == null ? "null" : Format.str(r.error()))
        .append(", \"figures\": {")
        .append(
            r.figures().entrySet().stream()
                .map(e -> Format.str(e.getKey()) + ": " + Format.jsonNumber(e.getValue()))
                .collect(Collectors.joining(", ")))
        .append("}}")
        .toString();
  }

  /**
   * A field of a row, in results.csv and results.json alike (the error and the further figures,
   * written differently in each, follow them).
   *
   * @param csv the CSV column's name
   * @param json the JSON field's name
   * @param text true for text (quoted in JSON), false for a number
   * @param format the number's format (for text: {@code %s})
   * @param get the value of a row
   */
  private record Column(
      String csv, String json, boolean text, String format, Function<Result, Object> get) {
    String value(Result r) {
      return String.format(Locale.ROOT, format, get.apply(r));
    }
  }

  private static Column text(String csv, String json, Function<Result, Object> get) {
    return new Column(csv, json, true, "%s", get);
  }

  private static Column number(
      String csv, String json, String format, Function<Result, Object> get) {
    return new Column(csv, json, false, format, get);
  }

  private static final List<Column> COLUMNS =
      List.of(
          text("engine", "engine", Result::engine),
          text("scenario", "scenario", Result::scenario),
          text("phase", "phase", Result::phase),
          number("threads", "threads", "%d", Result::threads),
          text("durability", "durability", r -> r.durability().name()),
          number("ops", "ops", "%d", Result::ops),
          number("seconds", "seconds", "%.3f", Result::seconds),
          number("ops_per_sec", "opsPerSec", "%.1f", Result::opsPerSec),
          number("p50_us", "p50Us", "%.2f", Result::p50Us),
          number("p99_us", "p99Us", "%.2f", Result::p99Us),
          number("p999_us", "p999Us", "%.2f", Result::p999Us),
          number("max_us", "maxUs", "%.2f", Result::maxUs),
          number("cpu_us_per_op", "cpuUsPerOp", "%.3f", Result::cpuUsPerOp),
          number("bg_cpu_share", "bgCpuShare", "%.3f", Result::bgCpuShare),
          number("disk_bytes", "diskBytes", "%d", Result::diskBytes),
          number("live_bytes", "liveBytes", "%d", Result::liveBytes));
}
