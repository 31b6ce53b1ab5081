package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The conformance matrix on the memory engine at a tiny depth, and its summary formats. */
class ConformanceTest {
  @TempDir Path dir;

  @Test
  void conformanceOnly_memoryEngine_writesTheMatrix() throws Exception {
    // Tiny depth; must be set before the kit's classes load (they read it once).
    System.setProperty("kv4j.tck.ops", "100");
    System.setProperty("kv4j.tck.threads", "2");
    System.setProperty("kv4j.tck.manyKeys", "500");
    System.setProperty("kv4j.tck.crashRounds", "1");
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    Path out = dir.resolve("out");
    int exit =
        Main.run(
            new String[] {
              "--engines", "memory", "--scenarios", "none", "--conformance", "--out", out.toString()
            },
            new PrintStream(buf, true, StandardCharsets.UTF_8));
    String console = buf.toString(StandardCharsets.UTF_8);
    assertThat(exit).as(console).isZero();
    assertThat(console).containsPattern("\\[conformance\\] memory +\\d+ passed +0 failed");
    String md = Files.readString(out.resolve("conformance.md"));
    assertThat(md)
        .contains("Command: `java -jar bench/target/kv4j-bench.jar --engines memory")
        .contains("`-Dkv4j.tck.ops=100`")
        .containsPattern("\\| memory \\| [1-9]\\d* \\| 0 \\| \\d+ \\|")
        .contains("(tck/memory/UriTck.md)");
    assertThat(out.resolve("tck/memory/UriTck.md")).isRegularFile();
    assertThat(Files.readString(out.resolve("conformance.json")))
        .contains("\"kv4j.tck.ops\": 100", "\"engine\": \"memory\"", "\"failed\": 0");
  }

  /**
   * A peer adapter is in no engine registry: the kit runs it through its provider, the crash and
   * lock rules' child JVMs included (7.1 and 10.11 pass for mvstore; a child that could not open it
   * would fail them).
   */
  @Test
  void conformanceOnly_peerInstrument_runsTheKitWithItsChildJvms() throws Exception {
    System.setProperty("kv4j.tck.ops", "100");
    System.setProperty("kv4j.tck.threads", "2");
    System.setProperty("kv4j.tck.manyKeys", "500");
    System.setProperty("kv4j.tck.crashRounds", "1");
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    Path out = dir.resolve("out");
    int exit =
        Main.run(
            new String[] {
              "--engines",
              "mvstore",
              "--scenarios",
              "none",
              "--conformance",
              "--out",
              out.toString()
            },
            new PrintStream(buf, true, StandardCharsets.UTF_8));
    String console = buf.toString(StandardCharsets.UTF_8);
    assertThat(exit).as(console).isZero();
    assertThat(console).containsPattern("\\[conformance\\] mvstore +[1-9]\\d+ passed");
    assertThat(console).doesNotContain("unknown engine");
    assertThat(Files.readString(out.resolve("tck/mvstore/UriTck.json")))
        .as("rules whose child JVMs open the store")
        .contains(
            "\"rule\": \"r7.1\", \"level\": \"required\", \"name\": "
                + "\"killSyncKeepsAcknowledgedWrites\", \"status\": \"passed\"",
            "\"rule\": \"r10.11\", \"level\": \"required\", \"name\": "
                + "\"secondProcessIsLocked\", \"status\": \"passed\"");
    assertThat(Files.readString(out.resolve("conformance.md")))
        .containsPattern("\\| mvstore \\| [1-9]\\d+ \\|");
  }

  @Test
  void markdownAndJson_failedRulesOfAPeer_areListedAsData() {
    List<Conformance.Row> rows =
        List.of(
            new Conformance.Row(
                "peer",
                50,
                1,
                3,
                12.0,
                List.of("r7.1 killSync: lost | a write"),
                dir.resolve("p")));
    Map<String, String> depth = Map.of("kv4j.tck.ops", "1000");
    assertThat(ConformanceReport.markdown(rows, depth, dir))
        .contains("| peer | 50 | 1 | 3 | 12 s |")
        .contains("- **peer** r7.1 killSync: lost \\| a write");
    assertThat(ConformanceReport.json(rows, depth))
        .contains("\"failed\": 1", "\"failures\": [\"r7.1 killSync: lost | a write\"]");
  }
}
