package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
    for (Scenario s : Catalogue.standard().defaults()) {
      if (!s.id().equals("footprint") && !s.id().equals("durable-put")) {
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
  void run_rounds_enginesTakeTurnsAndRowsGiveMedianAndRange() throws Exception {
    Path out = tmp.resolve("report");
    String console =
        run(
            0,
            "--engines",
            "memory,hashlog",
            "--scenarios",
            "readrandom,ycsb-a,scan,footprint,single-op",
            "--rounds",
            "3",
            "--keys",
            "1000",
            "--threads",
            "1",
            "--duration",
            "0.05",
            "--warmup",
            "0.01",
            "--single-op-count",
            "50",
            "--data-dir",
            tmp.resolve("data").toString(),
            "--out",
            out.toString());

    // Window by window, the first engine of each round rotating: A B, B A, A B.
    List<String> turns = new ArrayList<>();
    Pattern turn = Pattern.compile(" (\\S+)\\] (\\S+)\\s+t=1 round (\\d)/3 ");
    for (String line : console.split("\n")) {
      Matcher t = turn.matcher(line);
      if (t.find() && t.group(2).equals("readrandom")) {
        turns.add(t.group(1) + "#" + t.group(3));
      }
    }
    assertThat(turns)
        .as(console)
        .containsExactly("memory#1", "hashlog#1", "hashlog#2", "memory#2", "memory#3", "hashlog#3");
    assertThat(console).contains("(median of 3)");
    // Before round 1 each engine runs one window that is not counted (rows still say rounds=3).
    int firstRound = console.indexOf("readrandom         t=1 round 1/3");
    for (String engine : List.of("memory", "hashlog")) {
      int warm = console.indexOf(engine + "] readrandom         t=1 warm-up window (not counted)");
      assertThat(warm).as(console).isNotNegative().isLessThan(firstRound);
    }

    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    for (String engine : List.of("memory", "hashlog")) {
      for (String scenario : List.of("readrandom", "ycsb-a", "scan")) {
        String row =
            csv.stream()
                .filter(l -> l.startsWith(engine + "," + scenario + ","))
                .findFirst()
                .orElseThrow(() -> new AssertionError(engine + " " + scenario + " in " + csv));
        assertThat(row).contains("rounds=3").contains("ops-per-sec-min=");
      }
    }
    // The rest runs as without rounds: footprint after the updates, single-op on its own store.
    assertThat(csv).anyMatch(l -> l.startsWith("hashlog,footprint,after-update,"));
    assertThat(csv).anyMatch(l -> l.startsWith("memory,single-op,read,"));
    String md = Files.readString(out.resolve("report.md"));
    assertThat(md)
        .contains("3 rounds (`--rounds`)")
        .containsPattern("\\| hashlog \\| readrandom \\| 1 \\| [0-9,]+ \\([0-9,]+–[0-9,]+\\) \\|");
    // The machine's quietness, measured around the run, stands above the picks (whatever it
    // was: the verdict's logic is QuietnessTest's), and the caveats of the picks are declared.
    assertThat(console).contains("machine before the run: load average ");
    assertThat(md)
        .containsPattern("## What to pick\n\n\\*\\*(NOT q|Q)uiet enough to trust the picks")
        .contains("Readings: ")
        .contains("**Caveats of the engines picked above**")
        .doesNotContain("none declared");
    assertThat(Files.readString(out.resolve("results.json")))
        .contains("\"quietness\": {\"quiet\": ");
    assertThat(tmp.resolve("data")).isEmptyDirectory();
  }

  @Test
  void run_roundsWithEngineReturningWrongValues_failsThatEngineAndKeepsTheOther() {
    String console =
        run(
            1,
            "--engines",
            "corrupting,memory",
            "--scenarios",
            "readrandom",
            "--rounds",
            "2",
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
    assertThat(console)
        .contains("VerificationException")
        .contains("FAILED")
        .contains("memory] readrandom         t=1 round 2/2")
        .doesNotContain("corrupting] readrandom         t=1 round")
        .doesNotContain("corrupting] readrandom         t=1 warm-up");
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
