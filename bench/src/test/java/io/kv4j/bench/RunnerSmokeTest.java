package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunnerSmokeTest {
  @TempDir Path tmp;

  private String run(int expectedStatus, String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status = Main.run(args, out);
    }
    String text = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(text).isEqualTo(expectedStatus);
    return text;
  }

  @Test
  void run_everyScenarioOnMemory_writesTablesReportCsvJsonAndCharts() throws Exception {
    Path out = tmp.resolve("report");
    String console =
        run(
            0,
            "--engines",
            "memory",
            "--keys",
            "2000",
            "--threads",
            "1,2",
            "--duration",
            "0.05",
            "--warmup",
            "0.02",
            "--single-op-count",
            "200",
            "--data-dir",
            tmp.resolve("data").toString(),
            "--out",
            out.toString());

    assertThat(console)
        .containsPattern(
            "engine +\\| scenario +\\| threads \\| ops/s +\\| p50 +\\| p99 +\\| p99.9 +\\|"
                + " CPU µs/op")
        .contains("== what to pick ==");
    String md = Files.readString(out.resolve("report.md"));
    for (Scenario s : Scenario.defaults()) {
      if (s != Scenario.FOOTPRINT && s != Scenario.DURABLE_PUT) {
        assertThat(md).as("scenario %s in report.md", s.id()).contains("| memory | " + s.id());
      }
    }
    // memory is not persistent: no durable table numbers, no footprint, nothing to pick.
    assertThat(md).contains("n/a: not persistent").contains("nothing to pick");
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    long timedRows = csv.stream().filter(l -> l.startsWith("memory,ycsb-")).count();
    assertThat(timedRows).isEqualTo(6 * 2);
    assertThat(csv.stream().filter(l -> l.startsWith("memory,") && l.endsWith(","))).isNotEmpty();
    String json = Files.readString(out.resolve("results.json"));
    assertThat(json).startsWith("{").contains("\"scenario\": \"ycsb-e\"").endsWith("}\n");
    List<Path> pngs;
    try (Stream<Path> s = Files.list(out.resolve("charts"))) {
      pngs = s.collect(Collectors.toList());
    }
    assertThat(pngs).isNotEmpty();
    for (Path p : pngs) {
      byte[] head = java.util.Arrays.copyOf(Files.readAllBytes(p), 4);
      assertThat(head).as(p.toString()).containsExactly(0x89, 'P', 'N', 'G');
    }
    assertThat(tmp.resolve("data")).isEmptyDirectory();
  }

  @Test
  void run_engineReturningWrongValues_failsTheRunInsteadOfReportingSpeed() {
    String console =
        run(
            1,
            "--engines",
            "corrupting",
            "--scenarios",
            "readrandom",
            "--keys",
            "500",
            "--threads",
            "1",
            "--duration",
            "0.05",
            "--warmup",
            "0",
            "--out",
            tmp.resolve("r").toString());
    assertThat(console).contains("VerificationException").contains("FAILED");
  }

  @Test
  void run_unknownEngine_namesTheAvailableOnes() {
    String console = run(2, "--engines", "nope", "--out", tmp.toString());
    assertThat(console).contains("unknown engine 'nope'").contains("memory").contains("mapdb");
  }

  @Test
  void list_showsPeersWithTheirOptions() {
    String console = run(0, "--list");
    assertThat(console)
        .contains("mapdb")
        .contains("mvstore")
        .contains("chronicle-map")
        .contains("entries (long, default 1000000");
  }
}
