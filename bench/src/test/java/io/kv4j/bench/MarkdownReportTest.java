package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** report.md written from fixed rows: sections, table rows, captions. */
class MarkdownReportTest {
  private static String markdown(Outcome o) {
    return MarkdownReport.text(o, Picks.decide(o), List.of("charts/x.png"));
  }

  private static Result timed(String engine, String scenario, int threads, double ops) {
    return new Result(
        engine,
        scenario,
        "",
        threads,
        Durability.BUFFERED,
        100,
        1,
        ops,
        1.5,
        12,
        150,
        20_000,
        3.25,
        0.4,
        0,
        0,
        null);
  }

  @Test
  void text_durabilityTable_rowsInCatalogueOrderWithNaRowsAndEscapedErrors() {
    Outcome o =
        ReportTest.outcome(
            "hashlog,chronicle-map",
            timed("hashlog", "scan", 1, 1_000),
            timed("hashlog", "readrandom", 1, 2_000),
            Result.failed("chronicle-map", "scan", "", 0, Durability.BUFFERED, "n/a: a | b"));
    String md = markdown(o);
    assertThat(md)
        .contains(
            "| engine | scenario | threads | ops/s | p50 | p99 | p99.9 | CPU µs/op | bg |\n"
                + "|---|---|--:|--:|--:|--:|--:|--:|--:|\n"
                + "| hashlog | readrandom | 1 | 2,000 | 1.50 µs | 12 µs | 150 µs | 3.3 | 40% |\n"
                + "| *chronicle-map* (peer, not a kv4j engine) | scan |  | n/a: a / b | | | | | |\n"
                + "| hashlog | scan | 1 | 1,000 | 1.50 µs | 12 µs | 150 µs | 3.3 | 40% |\n")
        .contains("![charts/x.png](charts/x.png)")
        .contains("## Conformance\n\nNot run in this report")
        .contains("## Cost of the abstraction (kv4j / raw library)\n\nNot measured");
  }

  @Test
  void text_workload_listsTheSelectedScenariosWithTheirCatalogueDescriptions() {
    Options opt = Options.parse("--scenarios", "ycsb-e,readrandom", "--rounds", "3");
    Outcome o =
        Outcome.of(opt, new Data(16, 64, true, 1), List.of(), List.of())
            .withSettings(Map.of(), List.of("a note"), "Machine: test");
    String md = markdown(o);
    assertThat(md)
        .contains("Machine: test\n\n## Workload\n\n- 100,000 keys of 16 bytes")
        .contains("values of 64 bytes, compressible (~2:1)")
        .contains("- 3 rounds (`--rounds`)")
        .contains("- a note\n")
        .contains(
            "Scenarios:\n\n- `ycsb-e`: 95% scan (1-100 keys) / 5% insert, zipfian\n"
                + "- `readrandom`: uniform random gets\n");
  }

  @Test
  void text_footprintAndOwnTables_withTheirCaptions() {
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("apparent-bytes", 1_048_576.0);
    f.put("writes", 2_000.0);
    f.put("settled", 0.0);
    Result fp =
        Result.footprint(
                "hashlog", "footprint", "after-load", Durability.BUFFERED, 2 << 20, 1 << 20)
            .with(2 << 20, 1 << 20, f);
    Map<String, Double> g = new LinkedHashMap<>();
    g.put("retention", 0.5);
    Outcome o =
        ReportTest.outcome(
            "hashlog",
            fp,
            ReportTest.ok("hashlog", "churn-scans", "read-only", 200),
            ReportTest.ok("hashlog", "churn-scans", "reads", 100).with(0, 0, g),
            ReportTest.ok("hashlog", "churn-scans", "writes", 50));
    String md = markdown(o);
    assertThat(md)
        .contains("| hashlog | after-load | 2.0 MiB | 1.0 MiB | 1.0 MiB | 2.00x | 2,000 |")
        .contains(
            "Not at rest when measured (background work outlasted the wait): hashlog after-load.")
        .contains(
            "## Scans during churn\n\nOn the loaded store: one thread of verified scans of 100")
        .contains("Retention = scans/s during churn / scans/s alone.")
        .contains("| hashlog | 1 + 1 | 200 | 100 | 0.50 | 50 | 200 µs | 200 µs |")
        .doesNotContain("## Reads during churn")
        .doesNotContain("## Space under churn");
  }

  @Test
  void table_firstTwoColumnsLeftTheRestRight_pipesEscaped() {
    assertThat(
            MarkdownReport.table(
                List.of(new String[] {"a", "b", "c"}, new String[] {"x|y", "", "1"})))
        .isEqualTo("| a | b | c |\n|---|---|--:|\n| x/y |  | 1 |\n");
  }
}
