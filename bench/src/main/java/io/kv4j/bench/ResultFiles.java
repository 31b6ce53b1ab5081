package io.kv4j.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;
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
    b.append(
        "engine,scenario,phase,threads,durability,ops,seconds,ops_per_sec,p50_us,p99_us,"
            + "p999_us,max_us,cpu_us_per_op,bg_cpu_share,disk_bytes,live_bytes,error,figures\n");
    for (Result r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "%s,%s,%s,%d,%s,%d,%.3f,%.1f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%d,%d,%s,%s%n",
              r.engine(),
              r.scenario(),
              r.phase(),
              r.threads(),
              r.durability(),
              r.ops(),
              r.seconds(),
              r.opsPerSec(),
              r.p50Us(),
              r.p99Us(),
              r.p999Us(),
              r.maxUs(),
              r.cpuUsPerOp(),
              r.bgCpuShare(),
              r.diskBytes(),
              r.liveBytes(),
              r.error() == null ? "" : "\"" + r.error().replace("\"", "\"\"") + "\"",
              r.figures().entrySet().stream()
                  .map(e -> e.getKey() + "=" + Format.jsonNumber(e.getValue()))
                  .collect(Collectors.joining(";"))));
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
    return String.format(
        Locale.ROOT,
        "{\"engine\": %s, \"scenario\": %s, \"phase\": %s, \"threads\": %d,"
            + " \"durability\": %s, \"ops\": %d, \"seconds\": %.3f, \"opsPerSec\": %.1f,"
            + " \"p50Us\": %.2f, \"p99Us\": %.2f, \"p999Us\": %.2f, \"maxUs\": %.2f,"
            + " \"cpuUsPerOp\": %.3f, \"bgCpuShare\": %.3f, \"diskBytes\": %d,"
            + " \"liveBytes\": %d, \"error\": %s, \"figures\": {%s}}",
        Format.str(r.engine()),
        Format.str(r.scenario()),
        Format.str(r.phase()),
        r.threads(),
        Format.str(r.durability().name()),
        r.ops(),
        r.seconds(),
        r.opsPerSec(),
        r.p50Us(),
        r.p99Us(),
        r.p999Us(),
        r.maxUs(),
        r.cpuUsPerOp(),
        r.bgCpuShare(),
        r.diskBytes(),
        r.liveBytes(),
        r.error() == null ? "null" : Format.str(r.error()),
        r.figures().entrySet().stream()
            .map(e -> Format.str(e.getKey()) + ": " + Format.jsonNumber(e.getValue()))
            .collect(Collectors.joining(", ")));
  }
}
