package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kv4j tck through the jar: the kit runs inside the shaded jar with the JUnit Platform Launcher.
 */
class TckCommandTest {
  @TempDir Path dir;

  @Test
  void tck_hashlog_passesAndPrintsTheReport() throws Exception {
    Path reports = dir.resolve("reports");
    Cli.Run r =
        Cli.process(
            dir,
            "tck",
            "hashlog:?segment-size=64KiB",
            "--ops",
            "300",
            "--threads",
            "2",
            "--many-keys",
            "2000",
            "--crash-rounds",
            "1",
            "--report-dir",
            reports.toString());
    assertThat(r.exit()).as("%s", r).isZero();
    assertThat(r.out())
        .contains("# kv4j TCK report: engine `hashlog`")
        .contains("| r7.1 | required | killSyncKeepsAcknowledgedWrites | passed |")
        .containsPattern("\\d+ rules: \\d+ passed, 0 failed, \\d+ skipped");
    assertThat(Files.readString(reports.resolve("UriTck.json"))).contains("\"failed\": 0");
  }

  @Test
  void tck_unknownEngine_listsAvailableOnes() {
    Cli.Run r = Cli.inProcess("tck", "nosuch:");
    assertThat(r.exit()).isEqualTo(ExitCode.USAGE);
    assertThat(r.err()).contains("unknown engine 'nosuch'; available:", "hashlog");
  }
}
