package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RelaunchTest {
  private static final Path JAVA_25 = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");

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
    Process p = bench("-Dkv4j.bench.noop=true");
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("the run ended").isTrue();
    assertThat(p.exitValue()).as("exit status; stderr: %s", err).isZero();
    assertThat(err).as("stderr on Java 25").doesNotContain("WARNING").isBlank();
    assertThat(new String(out, StandardCharsets.UTF_8)).contains("chronicle-map", "mapdb");
    assertThat(tmp.resolve("out/report.md")).exists();
  }

  /** Why the relaunch exists: the same run kept in the first JVM warns (or fails) on Java 25. */
  @Test
  void main_onJava25WithoutTheRelaunch_warns() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(JAVA_25), "no Java 25 at " + JAVA_25);
    Process p = bench("-D" + Relaunch.MARK + "=true");
    p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("the run ended").isTrue();
    assertThat(err).as("stderr on Java 25 without the relaunch").isNotBlank();
  }

  private Process bench(String property) throws java.io.IOException {
    return new ProcessBuilder(
            JAVA_25.toString(),
            property,
            "-cp",
            System.getProperty("java.class.path"),
            Main.class.getName(),
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
        .start();
  }
}
