package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

  /** A provider that only declares: features and limits, as a test sets them. */
  private record Declared(String id, Set<Feature> features, Limits limits)
      implements StoreProvider {
    @Override
    public String description() {
      return "declares only";
    }

    @Override
    public List<OptionSpec<?>> options() {
      return List.of();
    }

    @Override
    public Store open(StoreConfig config) {
      throw new UnsupportedOperationException("declares only");
    }
  }

  private static final Set<Feature> ALL = EnumSet.allOf(Feature.class);

  private static Set<Feature> without(Feature... fs) {
    Set<Feature> s = EnumSet.allOf(Feature.class);
    for (Feature f : fs) {
      s.remove(f);
    }
    return s;
  }

  private static final Limits WIDE = new Limits(64 << 10, 256 << 20);

  private static Report declared(List<StoreProvider> providers, Result... results) {
    return new Report(
        Options.parse("--engines", "memory"),
        new Data(16, 64, false, 1),
        providers,
        List.of(results),
        Map.of(),
        List.of(),
        "test");
  }

  @Test
  void caveats_comeFromWhatTheEngineDeclaresAtRunTime() {
    Report r =
        declared(
            List.of(
                new Declared("wide", ALL, WIDE),
                new Declared("narrow", without(Feature.CHECKSUMS), new Limits(511, 256 << 20)),
                new Declared(
                    "hashmap",
                    without(
                        Feature.ORDERED_SCAN,
                        Feature.REVERSE_SCAN,
                        Feature.SNAPSHOT_SCAN,
                        Feature.ATOMIC_BATCH),
                    new Limits(64 << 10, 16 << 20))));
    assertThat(r.caveats("wide")).isEmpty();
    assertThat(r.caveats("narrow"))
        .isEqualTo(
            "no checksums (does not declare CHECKSUMS): a damaged record can be read back as a"
                + " wrong value or a missing key; keys up to 511 B (others here: 64 KiB)");
    assertThat(r.caveats("hashmap"))
        .isEqualTo(
            "no ordered scans; no atomic batches; values up to 16 MiB (others here: 256 MiB)");
  }

  @Test
  void caveats_sameEngineDeclaringChecksums_losesThatCaveat() {
    // The same id with and without CHECKSUMS: read from the declaration, not from a table.
    Report before = declared(List.of(new Declared("lmdb", without(Feature.CHECKSUMS), WIDE)));
    Report after = declared(List.of(new Declared("lmdb", ALL, WIDE)));
    assertThat(before.caveats("lmdb")).contains("no checksums");
    assertThat(after.caveats("lmdb"))
        .doesNotContain("checksums")
        .contains("one writer at a time"); // not declarable in the api yet: from the README
  }

  @Test
  void caveats_storeOpenedWithoutChecksums_winsOverTheProvider() {
    Report r = declared(List.of(new Declared("hashlog", ALL, WIDE)));
    assertThat(r.caveats("hashlog")).doesNotContain("no checksums");
    r.storeInfos(
        Map.of(
            "hashlog",
            new StoreInfo(
                "hashlog",
                without(Feature.CHECKSUMS),
                WIDE,
                Durability.BUFFERED,
                "/tmp/x",
                false)));
    assertThat(r.caveats("hashlog")).startsWith("no checksums");
  }

  @Test
  void caveats_onlyEngineAtTheKv4jMinimum_saysSo() {
    Report r = declared(List.of(new Declared("tiny", ALL, new Limits(511, 16 << 20))));
    assertThat(r.caveats("tiny")).isEqualTo("keys up to 511 B (the kv4j minimum)");
  }

  @Test
  void caveats_realLmdb_neverNoneDeclared() {
    Report r =
        report("hashlog,lmdb", ok("lmdb", "scan", "", 5000), ok("hashlog", "scan", "", 4000));
    assertThat(r.caveats("lmdb"))
        .contains("keys up to 511 B (others here: 64 KiB)")
        .contains("one writer at a time");
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .contains("**Caveats of the engines picked above**")
        .contains("- lmdb: ")
        .doesNotContain("none declared");
  }

  @Test
  void advice_killSafeAlternative_getsItsCaveatsToo() {
    Report r =
        report(
            "chronicle-map,lmdb",
            ok("chronicle-map", "readrandom", "", 900_000),
            ok("lmdb", "readrandom", "", 300_000));
    List<String> advice = r.advice();
    assertThat(advice).anyMatch(l -> l.startsWith("- chronicle-map: "));
    assertThat(advice).anyMatch(l -> l.startsWith("- lmdb: "));
  }

  private static Quietness.Calibration tenMs() {
    return new Quietness.Calibration(new long[] {10_000_000, 10_100_000, 10_200_000});
  }

  @Test
  void advice_noisyRun_verdictFirstAndEveryPickMarked() {
    Report r =
        report(
            "hashlog,lmdb",
            ok("hashlog", "readrandom", "", 600_000),
            ok("lmdb", "readrandom", "", 300_000),
            ok("hashlog", "ycsb-a", "", 200_000),
            ok("lmdb", "ycsb-a", "", 100_000));
    r.quietness(
        Quietness.judge(
            new Quietness.Readings(2, 12.0, 1.5, 1.6, 1.9, 0.03, 60, tenMs(), tenMs())));
    List<String> advice = r.advice();
    assertThat(advice.get(0))
        .startsWith("**NOT quiet enough to trust the picks:** load average 12");
    assertThat(advice.get(2)).startsWith("Readings: 2 CPUs");
    List<String> picks = advice.stream().filter(l -> l.contains(": **")).toList();
    assertThat(picks).hasSize(2).allMatch(l -> l.endsWith(" [noisy run: not to be trusted]"));
    assertThat(r.console()).contains("NOT quiet enough to trust the picks: load average 12");
    assertThat(r.markdown(List.of())).contains("**NOT quiet enough to trust the picks:**");
    assertThat(r.json())
        .contains("\"quietness\": {\"quiet\": false, \"problems\": [\"load average");
  }

  @Test
  void advice_quietRun_saysSoAndMarksNothing() {
    Report r =
        report(
            "hashlog,lmdb",
            ok("hashlog", "readrandom", "", 600_000),
            ok("lmdb", "readrandom", "", 300_000));
    r.quietness(
        Quietness.judge(new Quietness.Readings(2, 0.1, 0.01, 0.02, 0.3, 0, 60, tenMs(), tenMs())));
    String advice = String.join("\n", r.advice());
    assertThat(advice)
        .startsWith("**Quiet enough to trust the picks: yes.**")
        .doesNotContain("noisy run");
  }
}
