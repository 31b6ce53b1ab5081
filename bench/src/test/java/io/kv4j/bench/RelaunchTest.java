package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RelaunchTest {
  private static final Path JAVA_25 = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
  private static final Duration RUN_WAIT = Duration.ofSeconds(300);

  @TempDir Path tmp;

  @Test
  void command_beforeJava24_isEmpty() {
    for (int feature = 17; feature <= 23; feature++) {
      assertThat(Relaunch.command(feature, List.of("-Xmx2g"), new String[] {"--help"}))
          .as("Java %d rejects the flag and needs no relaunch", feature)
          .isEmpty();
    }
  }

  @Test
  void command_onJava24_keepsJvmOptionsAndArgumentsAndAddsTheFlags() {
    List<String> cmd =
        Relaunch.command(24, List.of("-Xms2g", "-Xmx2g"), new String[] {"--engines", "a,b"});
    assertThat(cmd)
        .contains("-Xms2g", "-Xmx2g", Relaunch.UNSAFE_FLAG, "-Dkv4j.bench.relaunched=true");
    assertThat(cmd).containsAll(Relaunch.MANIFEST_FLAGS);
    assertThat(cmd.subList(cmd.size() - 3, cmd.size()))
        .containsExactly(Main.class.getName(), "--engines", "a,b");
  }

  @Test
  void command_whenTheUserChoseAnUnsafeMode_isEmpty() {
    assertThat(
            Relaunch.command(
                25, List.of("--sun-misc-unsafe-memory-access=warn"), new String[] {"--help"}))
        .isEmpty();
  }

  /**
   * The runner on Java 25 with no flag at all, as {@code java -jar} would start it (the jar's
   * manifest flags are added by the relaunch), on the two peers that use Unsafe: it works and
   * prints no warning.
   */
  @Test
  void main_onJava25WithoutFlags_printsNoWarning() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(JAVA_25), "no Java 25 at " + JAVA_25);
    try (ChildProcess c = bench("-Dkv4j.bench.noop=true")) {
      c.assertSucceeded(RUN_WAIT);
      assertThat(c.stderr())
          .as("stderr on Java 25: %s", c.describe())
          .doesNotContain("WARNING")
          .isBlank();
      assertThat(c.stdout()).as("%s", c.describe()).contains("chronicle-map", "mapdb");
    }
    assertThat(tmp.resolve("out/report.md")).exists();
  }

  /** Why the relaunch exists: the same run kept in the first JVM warns (or fails) on Java 25. */
  @Test
  void main_onJava25WithoutTheRelaunch_warns() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(JAVA_25), "no Java 25 at " + JAVA_25);
    try (ChildProcess c = bench("-D" + Relaunch.MARK + "=true")) {
      c.await(RUN_WAIT); // fails with the child's state if it hangs
      assertThat(c.started()).as("the bench's main ran: %s", c.describe()).isTrue();
      assertThat(c.stderr())
          .as("stderr on Java 25 without the relaunch: %s", c.describe())
          .isNotBlank();
    }
  }

  /**
   * The bench's main on Java 25 with {@code property} and no other JVM option, through {@link
   * ChildProcess} (so a JVM that could not start is told apart from a run that failed).
   */
  private ChildProcess bench(String property) throws java.io.IOException {
    return ChildProcess.java(
            Main.class,
            "--engines",
            "chronicle-map,mapdb",
            "--scenarios",
            "readrandom",
            "--keys",
            "2000",
            "--threads",
            "1",
            "--duration",
            "0.2",
            "--warmup",
            "0.1",
            "--data-dir",
            tmp.resolve("data").toString(),
            "--out",
            tmp.resolve("out").toString())
        .javaHome(JAVA_25.getParent().getParent())
        .jvmOptions(property)
        .start();
  }
}
