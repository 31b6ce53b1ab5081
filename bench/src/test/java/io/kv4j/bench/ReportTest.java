package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The report end to end, from hand-made rows: picks, captions and verdict in every output. */
class ReportTest {

  /** A successful one-thread BUFFERED row with made-up latencies (shared with other tests). */
  static Result ok(String engine, String scenario, String phase, double opsPerSec) {
    return new Result(
        engine,
        scenario,
        phase,
        1,
        Durability.BUFFERED,
        1000,
        1.0,
        opsPerSec,
        100,
        200,
        300,
        400,
        50,
        0,
        0,
        0,
        null);
  }

  /** An outcome of rows of real engines, as the command line selects them. */
  static Outcome outcome(String engines, Result... results) {
    Options o = Options.parse("--engines", engines);
    List<StoreProvider> providers = Engines.select(o);
    return Outcome.of(o, new Data(16, 64, false, 1), providers, List.of(results));
  }

  private static Quietness.Calibration tenMs() {
    return new Quietness.Calibration(new long[] {10_000_000, 10_100_000, 10_200_000});
  }

  /** A verdict failing on the load average (12 on 2 CPUs). */
  static Quietness.Verdict noisy() {
    return Quietness.judge(
        new Quietness.Readings(2, 12.0, 1.5, 1.6, 1.9, 0.03, 60, tenMs(), tenMs(), null));
  }

  /** A verdict within every limit. */
  static Quietness.Verdict quiet() {
    return Quietness.judge(
        new Quietness.Readings(2, 0.1, 0.01, 0.02, 0.3, 0, 60, tenMs(), tenMs(), null));
  }

  @Test
  void advice_peersFasterThanTheKv4jEngines_areReferenceNumbersNeverThePick() {
    Report r =
        new Report(
            outcome(
                "hashlog,chronicle-map,lmdb,mvstore",
                ok("chronicle-map", "ycsb-a", "", 500_000),
                ok("mvstore", "ycsb-a", "", 400_000),
                ok("hashlog", "ycsb-a", "", 300_000),
                ok("lmdb", "ycsb-a", "", 150_000)));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .contains(
            "- ycsb-a @1t: **hashlog**, 300,000 ops/s, 2.00x lmdb; for reference, not kv4j"
                + " engines: chronicle-map 500,000 ops/s (1.67x hashlog; loses acknowledged writes"
                + " to kill -9, rule 7.5), mvstore 400,000 ops/s (1.33x hashlog; loses"
                + " acknowledged writes to kill -9, rules 7.2 and 7.5)")
        .contains("Wins per kv4j engine: hashlog 1.")
        .doesNotContain("**chronicle-map**")
        .doesNotContain("- chronicle-map:");
    assertThat(r.markdown(List.of()))
        .containsSubsequence(
            "| hashlog | ycsb-a | 1 | 300,000",
            "| lmdb | ycsb-a | 1 | 150,000",
            "| *chronicle-map* (peer, not a kv4j engine) | ycsb-a | 1 | 500,000",
            "| *mvstore* (peer, not a kv4j engine) | ycsb-a | 1 | 400,000");
    assertThat(r.markdown(List.of()))
        .contains(
            "Command: `java -jar bench/target/kv4j-bench.jar --engines"
                + " hashlog,chronicle-map,lmdb,mvstore`")
        .contains(
            "not power loss, except with chronicle-map (rule 7.5), mvstore (rules 7.2 and 7.5): the"
                + " kv4j TCK shows each");
  }

  @Test
  void advice_slowerPeer_isReferenceToo() {
    Report r =
        new Report(
            outcome(
                "hashlog,chronicle-map,lmdb",
                ok("hashlog", "readrandom", "", 600_000),
                ok("chronicle-map", "readrandom", "", 500_000),
                ok("lmdb", "readrandom", "", 300_000)));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .contains(
            "- readrandom @1t: **hashlog**, 600,000 ops/s, 2.00x lmdb; for reference, not kv4j"
                + " engines: chronicle-map 500,000 ops/s (0.83x hashlog; loses acknowledged"
                + " writes to kill -9, rule 7.5)");
  }

  @Test
  void advice_realLmdb_neverNoneDeclared() {
    Report r =
        new Report(
            outcome("hashlog,lmdb", ok("lmdb", "scan", "", 5000), ok("hashlog", "scan", "", 4000)));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .contains("**Caveats of the engines picked above**")
        .contains("- lmdb: keys up to 511 B (others here: 64 KiB)")
        .contains("one writer at a time")
        .doesNotContain("none declared");
  }

  @Test
  void report_noisyRun_verdictHeadsThePicksInEveryOutput() {
    Outcome o =
        outcome(
                "hashlog,lmdb",
                ok("hashlog", "readrandom", "", 600_000),
                ok("lmdb", "readrandom", "", 300_000),
                ok("hashlog", "ycsb-a", "", 200_000),
                ok("lmdb", "ycsb-a", "", 100_000))
            .withQuietness(noisy());
    Report r = new Report(o);
    List<String> advice = r.advice();
    assertThat(advice.get(0))
        .startsWith("**NOT quiet enough to trust the picks:** load average 12");
    assertThat(advice.get(2)).startsWith("Readings: 2 CPUs");
    List<String> picks = advice.stream().filter(l -> l.contains(": **")).toList();
    assertThat(picks).hasSize(2).allMatch(l -> l.endsWith(" [noisy run: not to be trusted]"));
    assertThat(r.console()).contains("NOT quiet enough to trust the picks: load average 12");
    assertThat(r.markdown(List.of())).contains("**NOT quiet enough to trust the picks:**");
    assertThat(ResultFiles.json(o, advice))
        .contains("\"quietness\": {\"quiet\": false, \"problems\": [\"load average");
  }

  @Test
  void report_runWithServers_printsTheServersLineAfterTheReadingsInEveryOutput() {
    Quietness.Verdict v =
        Quietness.judge(
            new Quietness.Readings(
                2,
                0.1,
                0.01,
                0.02,
                0.3,
                0,
                60,
                tenMs(),
                tenMs(),
                new Quietness.ServerUse("redis 127.0.0.1:6379 (pid 7)", 0.0, 0.9)));
    Outcome o = outcome("hashlog,lmdb", ok("hashlog", "readrandom", "", 600_000)).withQuietness(v);
    Report r = new Report(o);
    List<String> advice = r.advice();
    assertThat(advice.get(0)).isEqualTo("**Quiet enough to trust the picks: yes.**");
    assertThat(advice.get(2)).startsWith("Readings: 2 CPUs");
    assertThat(advice.get(4))
        .startsWith("Servers the run talked to")
        .contains("0.90 cores on average during the run")
        .endsWith("Found: redis 127.0.0.1:6379 (pid 7).");
    assertThat(r.console()).contains("\nServers the run talked to");
    assertThat(r.markdown(List.of())).contains("\nServers the run talked to");
    assertThat(ResultFiles.json(o, advice)).contains(", \"servers\": \"Servers the run talked to");
    // Without server engines the JSON has no servers field (reports of embedded runs unchanged).
    assertThat(ResultFiles.json(o.withQuietness(quiet()), advice)).doesNotContain("\"servers\"");
  }

  @Test
  void advice_quietRun_saysSoAndMarksNothing() {
    Report r =
        new Report(
            outcome(
                    "hashlog,lmdb",
                    ok("hashlog", "readrandom", "", 600_000),
                    ok("lmdb", "readrandom", "", 300_000))
                .withQuietness(quiet()));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .startsWith("**Quiet enough to trust the picks: yes.**")
        .doesNotContain("noisy run");
  }
}
