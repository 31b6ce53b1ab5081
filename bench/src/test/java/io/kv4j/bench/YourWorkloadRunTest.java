package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The user's workload end to end, from the runner's entry point at a tiny size (200 records, 500
 * operations): its section comes first in the console and report.md, its advice names a kv4j
 * engine, and a peer appears only as a reference row, never in the advice or the wins.
 */
class YourWorkloadRunTest {
  @TempDir Path tmp;

  private String run(Path out, String... args) {
    List<String> a = new ArrayList<>(List.of(args));
    a.addAll(
        List.of(
            "--set",
            "recordcount=200",
            "--set",
            "operationcount=500",
            "--warmup",
            "0",
            "--data-dir",
            tmp.resolve("data").toString(),
            "--out",
            out.toString()));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status = Main.run(a.toArray(new String[0]), ps);
    }
    String text = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(text).isZero();
    assertThat(tmp.resolve("data")).isEmptyDirectory();
    return text;
  }

  /** The workload's row of an engine in results.csv: the engine, the id, its operations. */
  private static String csvRow(Path out, String engine) throws Exception {
    return Files.readAllLines(out.resolve("results.csv")).stream()
        .filter(l -> l.startsWith(engine + "," + Scenario.YOURS + ","))
        .findFirst()
        .orElseThrow(() -> new AssertionError(engine + " has no workload row"));
  }

  @Test
  void workloadA_onMemoryHashlogAndAPeer_comesFirstAndAdvisesTheKv4jEngine() throws Exception {
    Path out = tmp.resolve("a");
    String console = run(out, "--workload", "workloada", "--engines", "memory,hashlog,mvstore");

    assertThat(console.indexOf("== your workload: workloada =="))
        .as(console)
        .isNotNegative()
        .isLessThan(console.indexOf("== durability BUFFERED =="));
    assertThat(console)
        .contains(
            "50% read, 50% update; zipfian keys (YCSB's scrambled zipfian, 0.99); 200 records")
        .contains("advice: Pick hashlog for this workload");
    String md = Files.readString(out.resolve("report.md"));
    int yours = md.indexOf("## Your workload: workloada");
    assertThat(yours).as(md).isPositive().isLessThan(md.indexOf("## The run"));
    assertThat(md.indexOf("## The run")).isLessThan(md.indexOf("## What to pick"));
    assertThat(md.substring(yours, md.indexOf("## The run")))
        .contains("Properties from shipped workloada, then --set: `recordcount=200 (--set)`")
        .containsPattern("\\| 1\\. hashlog \\| 1 \\| [0-9,]+ \\|")
        .containsPattern("\\| memory \\(not persistent, reference only\\) \\| 1 \\| [0-9,]+ \\|")
        .containsPattern("\\| \\*mvstore\\* \\(peer, not a kv4j engine\\) \\| 1 \\| [0-9,]+ \\|")
        .contains(
            "**Advice:** Pick **hashlog** for this workload: the only persistent kv4j engine"
                + " measured that runs it");
    // Every row of the workload ran exactly operationcount operations.
    for (String engine : List.of("memory", "hashlog", "mvstore")) {
      assertThat(csvRow(out, engine)).as(engine).startsWith(engine + ",workload,,1,BUFFERED,500,");
    }
    // The peer never enters the advice or the wins: only the words "for reference" introduce it.
    String pick = md.substring(md.indexOf("## What to pick"), md.indexOf("## Durability"));
    assertThat(pick)
        .contains("**Your workload (workloada):** Pick **hashlog**")
        .doesNotContain("**mvstore**")
        .contains("Wins per kv4j engine: hashlog ");
    for (String line : pick.split("\n")) {
      if (line.contains("mvstore")) {
        assertThat(line.indexOf("mvstore"))
            .as(line)
            .isGreaterThan(line.indexOf(AdviceText.REFERENCE));
      }
    }
    assertThat(pick.substring(pick.indexOf("Wins per kv4j engine:"))).doesNotContain("mvstore");
    assertThat(Files.readString(out.resolve("results.json")))
        .contains("\"yourWorkload\": {\"name\": \"workloada\"")
        .contains("\"recordcount\": \"200\"");
  }

  @Test
  void workloadE_onMemoryAndHashlog_scansOnHashlogAndAdvisesIt() throws Exception {
    Path out = tmp.resolve("e");
    String console = run(out, "--workload", "workloade", "--engines", "memory,hashlog");
    assertThat(console).contains("95% scan 1-100, 5% insert").contains("advice: Pick hashlog");
    assertThat(csvRow(out, "hashlog")).startsWith("hashlog,workload,,1,BUFFERED,500,");
    String md = Files.readString(out.resolve("report.md"));
    assertThat(md.indexOf("## Your workload: workloade")).isLessThan(md.indexOf("## The run"));
    assertThat(md).contains("**Advice:** Pick **hashlog** for this workload");
    assertThat(out.resolve("charts/throughput-buffered-workload.png")).isRegularFile();
    assertThat(out.resolve("charts/latency-buffered-workload-1t.png")).isRegularFile();
  }

  @Test
  void workloadE_onMemoryAlone_namesTheKv4jEnginesOnTheClasspathThatCanRunIt() throws Exception {
    Path out = tmp.resolve("m");
    run(out, "--workload", "workloade", "--engines", "memory");
    String md = Files.readString(out.resolve("report.md"));
    assertThat(md)
        .contains(
            "**Advice:** No persistent kv4j engine in this run can run it (memory: not"
                + " persistent, reference only); kv4j engines on the classpath that can: ")
        .containsPattern("can: [a-z, ]*hashlog[a-z, ]*\\(add them with --engines [a-z,]+\\)\\.")
        .doesNotContain("can: chronicle-map")
        .doesNotContain("mapdb,");
  }

  @Test
  void keysAboveAnEnginesLimit_sayWhyItCannotRunTheWorkload() throws Exception {
    Path out = tmp.resolve("k");
    String console =
        run(
            out,
            "--workload",
            "workloadc",
            "--set",
            "kv4j.keylength=600",
            "--engines",
            "hashlog,lmdb");
    assertThat(console)
        .contains("cannot run it: lmdb: n/a: keys of 600 B, above its limit of 511 B");
    String md = Files.readString(out.resolve("report.md"));
    assertThat(md)
        .contains("| lmdb | n/a: keys of 600 B, above its limit of 511 B |")
        .contains("**Advice:** Pick **hashlog**");
  }
}
