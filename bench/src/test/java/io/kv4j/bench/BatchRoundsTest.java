package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kv4j.Durability;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --batch-sizes}: parsing, the ABBA order of the engines, the rows and the ratios. */
class BatchRoundsTest {
  @TempDir Path tmp;

  @Test
  void parse_batchSizes_keepsTheListInOrder() {
    assertThat(Options.parse("--batch-sizes", "100,1000,10_000").batchSizes)
        .containsExactly(100, 1000, 10_000);
    assertThat(Options.parse("--batch-sizes=10000, 100").batchSizes).containsExactly(10_000, 100);
    assertThat(Options.parse().batchSizes).isEmpty();
    assertThat(BatchRounds.applies(Options.parse())).isFalse();
    assertThat(BatchRounds.applies(Options.parse("--batch-sizes", "1000"))).isTrue();
    assertThat(BatchRounds.applies(Options.parse("--rounds", "3"))).isTrue();
  }

  @Test
  void parse_badBatchSizes_areRefusedWithTheReason() {
    assertThatThrownBy(() -> Options.parse("--batch-sizes", "100,0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--batch-sizes values must be 1..1000000, got 0");
    assertThatThrownBy(() -> Options.parse("--batch-sizes", "2000000"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("got 2000000");
    assertThatThrownBy(() -> Options.parse("--batch-sizes", "100,100"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("100 given twice");
    assertThatThrownBy(() -> Options.parse("--batch-sizes", ","))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least one size");
    assertThatThrownBy(() -> Options.parse("--batch-sizes", "1k"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a number");
  }

  @Test
  void order_reversesEveryOtherRound_soEachEngineGoesFirstAsOften() {
    assertThat(BatchRounds.order(2, 0)).containsExactly(0, 1);
    assertThat(BatchRounds.order(2, 1)).containsExactly(1, 0);
    assertThat(BatchRounds.order(2, 2)).containsExactly(0, 1);
    assertThat(BatchRounds.order(3, 1)).containsExactly(2, 1, 0);
    assertThat(BatchRounds.order(1, 1)).containsExactly(0);
    // Over any two consecutive rounds every engine's positions add up to n - 1.
    for (int n = 1; n <= 5; n++) {
      for (int r = 0; r < 4; r++) {
        int[] a = BatchRounds.order(n, r);
        int[] b = BatchRounds.order(n, r + 1);
        int[] sum = new int[n];
        for (int pos = 0; pos < n; pos++) {
          sum[a[pos]] += pos;
          sum[b[pos]] += pos;
        }
        for (int e = 0; e < n; e++) {
          assertThat(sum[e]).as("n=%d rounds %d,%d engine %d", n, r, r + 1, e).isEqualTo(n - 1);
        }
      }
    }
  }

  @Test
  void ratios_ofRoundsBothCompleted_giveMedianAndRange() {
    BatchRounds.Ratios q =
        BatchRounds.Ratios.of(new double[] {100, 200, 300, 50}, new double[] {100, 100, 200, 0});
    assertThat(q.perRound()).containsExactly(1.0, 2.0, 1.5);
    assertThat(q.median()).isEqualTo(1.5);
    assertThat(q.min()).isEqualTo(1.0);
    assertThat(q.max()).isEqualTo(2.0);
    assertThat(BatchRounds.Ratios.of(new double[] {1, 3}, new double[] {1, 1}).median())
        .isEqualTo(2.0);
    assertThat(BatchRounds.Ratios.of(new double[] {0}, new double[] {5})).isNull();
  }

  @Test
  void combine_rounds_isTheMedianRowWithItsRange() {
    Result r =
        BatchRounds.combine(
            List.of(
                ReportTest.ok("e", "fillbatch", "batch-100", 300),
                ReportTest.ok("e", "fillbatch", "batch-100", 100),
                ReportTest.ok("e", "fillbatch", "batch-100", 200)));
    assertThat(r.opsPerSec()).isEqualTo(200);
    assertThat(r.phase()).isEqualTo("batch-100");
    assertThat(r.figure("rounds")).isEqualTo(3);
    assertThat(r.figure("ops-per-sec-min")).isEqualTo(100);
    assertThat(r.figure("ops-per-sec-max")).isEqualTo(300);
    assertThat(r.durability()).isEqualTo(Durability.BUFFERED);
    Result even =
        BatchRounds.combine(
            List.of(
                ReportTest.ok("e", "fillbatch", "", 100),
                ReportTest.ok("e", "fillbatch", "", 400)));
    assertThat(even.opsPerSec()).isCloseTo(250, within(1e-9));
  }

  @Test
  void run_twoSizesThreeRounds_alternatesTheEnginesAndNotesTheRatio() throws Exception {
    Path out = tmp.resolve("report");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status =
          Main.run(
              new String[] {
                "--engines", "rocksdb,rocksdb-raw,memory",
                "--scenarios", "fillbatch",
                "--batch-sizes", "100,500",
                "--rounds", "3",
                "--keys", "2000",
                "--data-dir", tmp.resolve("data").toString(),
                "--out", out.toString()
              },
              ps);
    }
    String console = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(console).isEqualTo(0);
    for (String phase : List.of("batch-100", "batch-500")) {
      List<String> turns = new ArrayList<>();
      Matcher m =
          Pattern.compile(
                  "\\[[^]]* (\\S+)\\] fillbatch " + phase + " +(uncounted load|round \\d/3)")
              .matcher(console);
      while (m.find()) {
        turns.add(m.group(2) + " " + m.group(1));
      }
      // The log line's bracket ends with the engine: "[  4.2s 3/3 rocksdb] fillbatch ...".
      assertThat(turns)
          .as(console)
          .containsExactly(
              "uncounted load rocksdb",
              "uncounted load rocksdb-raw",
              "uncounted load memory",
              "round 1/3 rocksdb",
              "round 1/3 rocksdb-raw",
              "round 1/3 memory",
              "round 2/3 memory",
              "round 2/3 rocksdb-raw",
              "round 2/3 rocksdb",
              "round 3/3 rocksdb",
              "round 3/3 rocksdb-raw",
              "round 3/3 memory");
      assertThat(console)
          .containsPattern(
              "fillbatch "
                  + phase
                  + ": rocksdb / rocksdb-raw puts/s round by round [0-9.]+, [0-9.]+, [0-9.]+"
                  + " \\(median [0-9.]+, range [0-9.]+-[0-9.]+ over 3 rounds");
    }
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    for (String engine : List.of("rocksdb", "rocksdb-raw", "memory")) {
      for (String phase : List.of("batch-100", "batch-500")) {
        assertThat(csv)
            .as("%s %s in %s", engine, phase, csv)
            .anyMatch(l -> l.startsWith(engine + ",fillbatch," + phase + ","));
      }
    }
    assertThat(Files.readString(out.resolve("report.md")))
        .contains("rocksdb / rocksdb-raw puts/s round by round");
  }

  @Test
  void run_withFootprint_measuresOneStorePerEngineWithItsCompactionState() throws Exception {
    Path out = tmp.resolve("report");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status =
          Main.run(
              new String[] {
                "--engines", "rocksdb,rocksdb-raw",
                "--scenarios", "fillbatch,footprint",
                "--batch-sizes", "200,300",
                "--rounds", "2",
                "--keys", "2000",
                "--data-dir", tmp.resolve("data").toString(),
                "--out", out.toString()
              },
              ps);
    }
    String console = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(console).isEqualTo(0);
    String json = Files.readString(out.resolve("results.json"));
    for (String engine : List.of("rocksdb", "rocksdb-raw")) {
      for (String phase : Footprint.PHASES) {
        Matcher m =
            Pattern.compile(
                    "\\{\"engine\": \""
                        + Pattern.quote(engine)
                        + "\", \"scenario\": \"footprint\", \"phase\": \""
                        + phase
                        + "\"[^\n]*")
                .matcher(json);
        assertThat(m.find()).as("%s %s in %s", engine, phase, json).isTrue();
        // Both RocksDB stores report their level-0 files and pending compaction bytes, at the
        // phase boundary and at rest.
        assertThat(m.group())
            .contains("\"boundary-bytes\"")
            .contains("\"boundary-level0-files\"")
            .contains("\"boundary-pending-compaction-bytes\"")
            .contains("\"level0-files\"")
            .contains("\"pending-compaction-bytes\"");
        // One footprint of each phase: the batched loads measure it in the last round of the
        // first size only (the scenario's own 1,000 is not among the sizes).
        assertThat(m.find()).as("second %s %s in %s", engine, phase, json).isFalse();
      }
    }
    assertThat(console)
        .containsPattern("rocksdb-raw\\] footprint after-fillbatch: .* level-0 files");
  }
}
