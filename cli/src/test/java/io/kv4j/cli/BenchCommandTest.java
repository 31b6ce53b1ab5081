package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    try (ChildProcess c = ChildProcess.command(cmd).start()) {
      c.assertSucceeded(Duration.ofSeconds(60)); // its exit code and output when it fails or hangs
      assertThat(c.stdout() + "\n" + c.stderr())
          .as("%s", c.describe())
          .doesNotContainIgnoringCase("warning")
          .doesNotContain("Unrecognized");
    }
  }
}
