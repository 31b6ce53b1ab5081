package io.kv4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A run's report: decides the picks once ({@link Picks}), then writes them and the rows as the
 * console text and the report folder (report.md, results.csv, results.json, charts/*.png).
 */
final class Report {
  private final Outcome outcome;
  private final Picks.Verdicts verdicts;

  Report(Outcome outcome) {
    this.outcome = outcome;
    this.verdicts = Picks.decide(outcome);
  }

  /**
   * The "what to pick" lines.
   *
   * @return markdown lines
   */
  List<String> advice() {
    return AdviceText.lines(verdicts);
  }

  /**
   * The tables and picks for the console.
   *
   * @return the text
   */
  String console() {
    return ConsoleReport.text(outcome, verdicts);
  }

  /**
   * report.md's text.
   *
   * @param charts the chart files, relative to the report
   * @return markdown
   */
  String markdown(List<String> charts) {
    return MarkdownReport.text(outcome, verdicts, charts);
  }

  /**
   * Writes the report folder.
   *
   * @param dir the folder, created if absent
   * @return the chart files written, relative to it
   * @throws IOException if writing fails
   */
  List<String> write(Path dir) throws IOException {
    Files.createDirectories(dir);
    List<String> charts = Charts.write(dir, outcome.results());
    Files.writeString(dir.resolve("report.md"), markdown(charts), StandardCharsets.UTF_8);
    Files.writeString(
        dir.resolve("results.csv"), ResultFiles.csv(outcome.results()), StandardCharsets.UTF_8);
    Files.writeString(
        dir.resolve("results.json"), ResultFiles.json(outcome, advice()), StandardCharsets.UTF_8);
    return charts;
  }
}
