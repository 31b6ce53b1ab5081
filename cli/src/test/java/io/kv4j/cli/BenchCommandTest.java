package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BenchCommandTest {
  @Test
  void childFlags_allowUnsafeMemoryAccessFromJava24Only() {
    assertThat(BenchCommand.childFlags(17)).isEmpty();
    assertThat(BenchCommand.childFlags(21)).isEmpty();
    assertThat(BenchCommand.childFlags(23)).isEmpty();
    assertThat(BenchCommand.childFlags(24))
        .containsExactly("--sun-misc-unsafe-memory-access=allow");
    assertThat(BenchCommand.childFlags(25))
        .containsExactly("--sun-misc-unsafe-memory-access=allow");
  }

  /**
   * The JVM running the suite (17 or 25 in CI) starts, silently, with the flags given its child.
   */
  @Test
  void childFlags_ofThisJvm_areAcceptedByItsJava() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(BenchCommand.childFlags(Runtime.version().feature()));
    cmd.add("-version");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as("%s: %s", cmd, out).isZero();
    assertThat(out).doesNotContainIgnoringCase("warning").doesNotContain("Unrecognized");
  }
}
