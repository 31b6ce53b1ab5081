package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The advice and captions of the report, from hand-made results. */
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

  private static Report report(String engines, Result... results) {
    Options o = Options.parse("--engines", engines);
    List<StoreProvider> providers = Main.select(o);
    return new Report(
        o, new Data(16, 64, false, 1), providers, List.of(results), Map.of(), List.of(), "test");
  }

  @Test
  void advice_winnerThatLosesWritesToKill_namesTheBestEngineThatKeepsThem() {
    Report r =
        report(
            "hashlog,chronicle-map,lmdb,mvstore",
            ok("chronicle-map", "ycsb-a", "", 500_000),
            ok("mvstore", "ycsb-a", "", 400_000),
            ok("hashlog", "ycsb-a", "", 300_000),
            ok("lmdb", "ycsb-a", "", 150_000));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .contains(
            "- ycsb-a @1t: **chronicle-map**, 500,000 ops/s, 1.25x mvstore; of the engines that"
                + " keep acknowledged writes through kill -9: hashlog, 300,000 ops/s, 2.00x lmdb")
        .contains("overwrites in place: a kill -9 during an overwrite can lose the key");
    assertThat(r.markdown(List.of()))
        .contains(
            "Command: `java -jar bench/target/kv4j-bench.jar --engines"
                + " hashlog,chronicle-map,lmdb,mvstore`")
        .contains(
            "not power loss, except with chronicle-map (rule 7.5), mvstore (rules 7.2 and 7.5): the"
                + " kv4j TCK shows each");
  }

  @Test
  void advice_winnerThatKeepsWritesThroughKill_addsNothing() {
    Report r =
        report(
            "hashlog,chronicle-map,lmdb",
            ok("hashlog", "readrandom", "", 600_000),
            ok("chronicle-map", "readrandom", "", 500_000),
            ok("lmdb", "readrandom", "", 300_000));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .contains("- readrandom @1t: **hashlog**, 600,000 ops/s, 1.20x chronicle-map")
        .doesNotContain("through kill -9");
  }
}
