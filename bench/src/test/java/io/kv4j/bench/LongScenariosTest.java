package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The long scenarios (churn, churn-reads, churn-scans, scale) at tiny sizes, on memory and hashlog.
 */
class LongScenariosTest {
  @TempDir Path tmp;

  /** Runs the runner in this JVM and returns its rows; progress goes to {@code log}. */
  private Measurements run(StringBuilder log, String... args) throws Exception {
    return run(tmp, log, args);
  }

  /**
   * Runs the runner in this JVM with its stores under {@code tmp} and returns its rows; progress
   * goes to {@code log}. Every store is gone afterwards.
   */
  static Measurements run(Path tmp, StringBuilder log, String... args) throws Exception {
    Options o = Options.parse(args);
    Path root = Files.createDirectories(tmp.resolve("data"));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Measurements m = new Measurements();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      Data data = new Data(o.keySize, o.valueSize, o.compressible, o.seed);
      new Session(new Rig(o, data, root, new Progress(out), m)).run(Engines.select(o));
    }
    log.append(bytes.toString(StandardCharsets.UTF_8));
    assertThat(root).as(log.toString()).isEmptyDirectory();
    return m;
  }

  private static Scenario scenario(String id) {
    return Catalogue.standard().byId(id);
  }

  private static Map<String, Result> byKey(List<Result> rs) {
    Map<String, Result> m = new LinkedHashMap<>();
    for (Result r : rs) {
      m.put(r.engine() + " " + r.scenario() + " " + r.phase(), r);
    }
    return m;
  }

  @Test
  void options_longScenariosOnlyWhenNamedOrFull() {
    assertThat(Options.parse().scenarios)
        .doesNotContain(
            scenario("churn"), scenario("churn-reads"), scenario("churn-scans"), scenario("scale"))
        .contains(scenario("readrandom"), scenario("footprint"));
    assertThat(Options.parse("--full").scenarios)
        .containsExactlyElementsOf(Catalogue.standard().all());
    Options o =
        Options.parse(
            "--scenarios",
            "churn,churn-reads,scale",
            "--churn-rounds",
            "3",
            "--churn-max-seconds",
            "500ms",
            "--scale-keys",
            "1_000",
            "--scale-value-size",
            "32",
            "--scale-max-seconds",
            "7");
    assertThat(o.scenarios)
        .containsExactly(scenario("churn"), scenario("churn-reads"), scenario("scale"));
    assertThat(o.churnRounds).isEqualTo(3);
    assertThat(o.churnMaxSeconds).isEqualTo(0.5);
    assertThat(o.scaleKeys).isEqualTo(1000);
    assertThat(o.scaleValueSize).isEqualTo(32);
    assertThat(o.scaleMaxSeconds).isEqualTo(7);
    assertThatThrownBy(() -> Options.parse("--scale-value-size", "8"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 16");
    assertThat(Options.USAGE).contains("--churn-rounds").contains("--scale-keys");
  }

  @Test
  void run_longScenariosOnMemoryAndHashlog_giveRowsWithSaneNumbersAndTables() throws Exception {
    StringBuilder log = new StringBuilder();
    String[] args = {
      "--engines",
      "memory,hashlog",
      "--scenarios",
      "churn,churn-reads,churn-scans,scale",
      "--keys",
      "2000",
      "--churn-rounds",
      "2",
      "--scale-keys",
      "20000",
      "--scale-read-seconds",
      "0.1",
      "--threads",
      "1,2",
      "--duration",
      "0.05",
      "--warmup",
      "0.02"
    };
    Measurements runner = run(log, args);
    List<Result> rs = runner.results();
    Map<String, Result> m = byKey(rs);
    String ctx = log.toString();

    // memory: not persistent, so churn and scale are n/a; reads during churn are measured.
    assertThat(m.get("memory churn ").error()).as(ctx).isEqualTo("n/a: not persistent");
    assertThat(m.get("memory scale ").error()).as(ctx).isEqualTo("n/a: not persistent");
    for (String key :
        List.of(
            "memory churn-reads",
            "memory churn-scans",
            "hashlog churn-reads",
            "hashlog churn-scans")) {
      Result alone = m.get(key + " read-only");
      Result reads = m.get(key + " reads");
      Result writes = m.get(key + " writes");
      assertThat(List.of(alone, reads, writes)).as(ctx).allMatch(Result::ok);
      assertThat(alone.opsPerSec()).as(ctx).isPositive();
      assertThat(writes.opsPerSec()).as(ctx).isPositive();
      assertThat(reads.figure("retention"))
          .as(ctx)
          .isPositive()
          .isCloseTo(
              reads.opsPerSec() / alone.opsPerSec(), org.assertj.core.data.Offset.offset(1e-9));
      assertThat(reads.p99Us()).as(ctx).isPositive();
    }

    for (String phase : List.of("uniform", "zipfian")) {
      Result r = m.get("hashlog churn " + phase);
      assertThat(r).as(ctx).isNotNull();
      assertThat(r.ok()).as(ctx + r).isTrue();
      assertThat(r.threads()).isEqualTo(2);
      assertThat(r.ops()).as(ctx).isEqualTo(2 * 2000);
      assertThat(r.figure("rounds-done")).isEqualTo(2.0);
      assertThat(r.figure("capped")).isZero();
      assertThat(r.liveBytes()).isEqualTo(2000L * (16 + 1024));
      assertThat(r.amplification()).as(ctx).isPositive();
      assertThat(r.figure("worst-disk-per-live")).isGreaterThanOrEqualTo(r.amplification());
      assertThat(r.figure("engine-space-amplification")).as(ctx).isPositive();
      assertThat(r.figure("engine-write-amplification")).as(ctx).isGreaterThanOrEqualTo(1.0);
    }

    Result scale = m.get("hashlog scale ");
    assertThat(scale.ok()).as(ctx + scale).isTrue();
    assertThat(scale.ops()).isEqualTo(20_000);
    assertThat(scale.figure("capped")).isZero();
    assertThat(scale.figure("batched")).isEqualTo(1.0);
    assertThat(scale.liveBytes()).isEqualTo(20_000L * (16 + 16));
    assertThat(scale.amplification()).isPositive();
    // The reopen verified the value it read (a wrong one fails the row); it took some time.
    assertThat(scale.figure("reopen-seconds")).isPositive();
    assertThat(scale.figure("heap-bytes-per-key")).isFinite();
    assertThat(scale.figure("heap-bytes-per-key-minus-key"))
        .isEqualTo(scale.figure("heap-bytes-per-key") - 16);
    assertThat(scale.figure("index-bytes-per-key")).isPositive();
    assertThat(rs.stream().filter(r -> !r.ok() && !r.error().startsWith("n/a"))).isEmpty();

    Options o = Options.parse(args);
    Outcome outcome =
        Outcome.of(
                o, new Data(o.keySize, o.valueSize, o.compressible, o.seed), Engines.select(o), rs)
            .withSettings(runner.settings(), runner.notes(), "test environment");
    Report report = new Report(outcome);
    String md = report.markdown(List.of());
    assertThat(md)
        .contains("## Space under churn")
        .containsPattern("\\| hashlog \\| uniform \\| 2 \\| 2\\.0 \\| [0-9,]+ \\|")
        .contains("| memory |  |  | n/a: not persistent |")
        .contains("hashlog stats() after zipfian: space-amplification")
        .contains("## Reads during churn")
        .contains("## Scans during churn")
        .contains("| engine | threads | scans/s alone | scans/s during churn | retention |")
        .containsPattern("\\| memory \\| 1 \\+ 1 \\| [0-9,]+ \\| [0-9,]+ \\| [0-9.]+ \\|")
        .containsPattern("\\| hashlog \\| 1 \\+ 1 \\| [0-9,]+ \\| [0-9,]+ \\| [0-9.]+ \\|")
        .contains("## Index memory and reopen at scale")
        .containsPattern(
            "\\| hashlog \\| batches \\| 20,000 \\| [0-9.]+ s \\| [0-9,]+ \\| [0-9.]+ ms \\|")
        // The long scenarios are not in the throughput tables or the advice.
        .doesNotContain("| hashlog | churn")
        .doesNotContain("| hashlog | scale");
    String console = report.console();
    assertThat(console)
        .contains("== space under churn")
        .contains("== reads during churn")
        .contains("== scans during churn")
        .contains("== index memory and reopen at scale");
    String csv = ResultFiles.csv(rs);
    assertThat(csv.lines().findFirst().orElseThrow()).endsWith(",error,figures");
    assertThat(csv).contains("rounds-done=2;rounds-target=2;capped=0");
    assertThat(ResultFiles.json(outcome, report.advice()))
        .contains("\"figures\": {\"rounds-done\": 2, \"rounds-target\": 2, \"capped\": 0")
        .contains("\"figures\": {}");
    List<String> charts = report.write(tmp.resolve("report"));
    assertThat(charts).contains("charts/churn.png");
  }

  @Test
  void churn_phaseOverItsCap_stopsAndSaysHowManyRoundsItDid() throws Exception {
    StringBuilder log = new StringBuilder();
    Measurements runner =
        run(
            log,
            "--engines",
            "hashlog",
            "--scenarios",
            "churn",
            "--keys",
            "1000",
            "--threads",
            "1",
            "--churn-rounds",
            "1000000",
            "--churn-max-seconds",
            "50ms");
    List<Result> rs =
        runner.results().stream()
            .filter(r -> r.scenario().equals("churn"))
            .collect(Collectors.toList());
    assertThat(rs).as(log.toString()).hasSize(2).allMatch(Result::ok);
    for (Result r : rs) {
      assertThat(r.figure("capped")).isEqualTo(1.0);
      assertThat(r.figure("rounds-done")).isPositive().isLessThan(1_000_000);
      assertThat(r.figure("rounds-target")).isEqualTo(1_000_000);
    }
    Options o = Options.parse("--engines", "hashlog");
    String md =
        new Report(
                Outcome.of(
                    o,
                    new Data(o.keySize, o.valueSize, o.compressible, o.seed),
                    Engines.select(o),
                    runner.results()))
            .markdown(List.of());
    assertThat(md).contains(" of 1000000 (capped at 0.050 s)");
  }
}
