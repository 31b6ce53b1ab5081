package io.kv4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The conformance matrix as markdown and JSON, in report.md or in a folder of its own. */
final class ConformanceReport {
  private ConformanceReport() {}

  /**
   * The matrix as markdown.
   *
   * @param rows the rows
   * @param depth the depth settings used
   * @param relativeTo the folder the markdown is written to (links to the per-engine reports)
   * @return markdown, starting with a level-2 heading
   */
  static String markdown(List<Conformance.Row> rows, Map<String, String> depth, Path relativeTo) {
    StringBuilder b = new StringBuilder("## Conformance (kv4j TCK)\n\n");
    b.append(
        "The kv4j compatibility kit (`io.kv4j.tck.UriTck`, every rule of `tck/SPEC.md`) run in"
            + " this JVM against each engine with its default options. Skipped = a feature the"
            + " engine does not declare (never counted as passed). A failed rule of a peer is a"
            + " finding about that store, not an error of the run. Reduced depth:");
    depth.forEach((k, v) -> b.append(" `-D").append(k).append('=').append(v).append('`'));
    b.append(" (the kit's defaults are 3000 / 4 / 2 / 100000).\n\n");
    b.append("| engine | passed | failed | skipped | time | per-rule report |\n");
    b.append("|---|---:|---:|---:|---:|---|\n");
    for (Conformance.Row r : rows) {
      String link = relativize(relativeTo, r.reportDir().resolve("UriTck.md"));
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %.0f s | [%s](%s) |%n",
              r.engine(),
              r.passed(),
              r.failed(),
              r.skipped(),
              r.seconds(),
              link,
              link));
    }
    boolean any = rows.stream().anyMatch(r -> !r.failures().isEmpty());
    if (any) {
      b.append("\nFailed rules:\n\n");
      for (Conformance.Row r : rows) {
        for (String f : r.failures()) {
          b.append("- **")
              .append(r.engine())
              .append("** ")
              .append(f.replace("|", "\\|"))
              .append('\n');
        }
      }
    }
    return b.toString();
  }

  private static String relativize(Path base, Path p) {
    try {
      return base.toAbsolutePath().relativize(p.toAbsolutePath()).toString().replace('\\', '/');
    } catch (IllegalArgumentException e) {
      return p.toString();
    }
  }

  /**
   * The matrix as JSON.
   *
   * @param rows the rows
   * @param depth the depth settings used
   * @return a JSON object
   */
  static String json(List<Conformance.Row> rows, Map<String, String> depth) {
    StringBuilder b = new StringBuilder("{\n  \"depth\": {");
    int i = 0;
    for (Map.Entry<String, String> e : depth.entrySet()) {
      b.append(i++ == 0 ? "" : ", ")
          .append(Format.str(e.getKey()))
          .append(": ")
          .append(e.getValue());
    }
    b.append("},\n  \"engines\": [");
    i = 0;
    for (Conformance.Row r : rows) {
      b.append(i++ == 0 ? "\n    " : ",\n    ");
      b.append(
          String.format(
              Locale.ROOT,
              "{\"engine\": %s, \"passed\": %d, \"failed\": %d, \"skipped\": %d, \"seconds\": %.1f,"
                  + " \"failures\": [",
              Format.str(r.engine()),
              r.passed(),
              r.failed(),
              r.skipped(),
              r.seconds()));
      int j = 0;
      for (String f : r.failures()) {
        b.append(j++ == 0 ? "" : ", ").append(Format.str(f));
      }
      b.append("]}");
    }
    return b.append("\n  ]\n}\n").toString();
  }

  /**
   * Writes {@code conformance.md} and {@code conformance.json} to a folder.
   *
   * @param dir the folder
   * @param rows the rows
   * @param depth the depth settings used
   * @param args the command line, stated in the markdown
   * @throws IOException if writing fails
   */
  static void write(
      Path dir, List<Conformance.Row> rows, Map<String, String> depth, List<String> args)
      throws IOException {
    Files.createDirectories(dir);
    Files.writeString(
        dir.resolve("conformance.md"),
        "# kv4j conformance matrix\n\nCommand: `"
            + Machine.command(args)
            + "`\n\n"
            + Machine.environment()
            + "\n\n"
            + markdown(rows, depth, dir),
        StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("conformance.json"), json(rows, depth), StandardCharsets.UTF_8);
  }
}
