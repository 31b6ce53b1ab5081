package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
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
            "--stress-threads",
            "4",
            "--stress-ops",
            "500",
            "--report-dir",
            reports.toString());
    assertThat(r.exit()).as("%s", r).isZero();
    assertThat(r.out())
        .contains("# kv4j TCK report: engine `hashlog`")
        .contains("| r7.1 | required | killSyncKeepsAcknowledgedWrites | passed |")
        .containsPattern("\\d+ rules: \\d+ passed, 0 failed, \\d+ skipped");
    assertThat(Files.readString(reports.resolve("UriTck.json"))).contains("\"failed\": 0");
    assertThat(r.out().strip().lines().reduce((a, b) -> b).orElseThrow())
        .as("the run ends with where its report is")
        .isEqualTo(
            "report: "
                + reports.resolve("UriTck.md").toAbsolutePath()
                + " (and "
                + reports.resolve("UriTck.json").toAbsolutePath()
                + ")");
  }

  /**
   * An engine built outside this repository: tck/README.md's {@code mini} engine, compiled against
   * nothing but kv4j.jar and packed into a jar of its own, is found when that jar follows kv4j.jar
   * on the classpath ({@code java -cp kv4j.jar:mini.jar io.kv4j.cli.Main tck mini:}, as the READMEs
   * say; here through {@link ChildProcess}'s {@code ChildMain}, which kv4j.jar carries, so that a
   * JVM that could not start is told apart from a kit that failed), and passes the kit; without it,
   * the same command does not know the engine.
   */
  @Test
  void tck_engineJarOnTheClasspath_runsTheKitOnIt() throws Exception {
    Path engineJar = miniEngineJar();
    Cli.Run without = Cli.process(dir, "tck", "mini:");
    assertThat(without.exit()).as("%s", without).isEqualTo(ExitCode.USAGE);
    assertThat(without.err()).contains("unknown engine 'mini'");

    Path reports = dir.resolve("mini-reports");
    try (ChildProcess c =
        ChildProcess.java(
                Main.class,
                "tck",
                "mini:",
                "--ops",
                "300",
                "--many-keys",
                "2000",
                "--stress-ops",
                "500",
                "--report-dir",
                reports.toString())
            .jvmOptions("-Xmx512m")
            .classPath(Cli.JAR + java.io.File.pathSeparator + engineJar)
            .directory(dir)
            .start()) {
      int exit = c.await(Duration.ofSeconds(300)); // fails with the child's state if it hangs
      // The kit's report and failures are on stdout, whole (they may be more than the tail).
      assertThat(exit).as("%s%n--- its whole stdout:%n%s", c.describe(), c.stdout()).isZero();
      String printed = c.stdout() + "\n--- stderr\n" + c.stderr();
      assertThat(printed)
          .contains("# kv4j TCK report: engine `mini`")
          .contains("| r8.8 | required | manyWritersMatchModel | passed |")
          .containsPattern("\\d+ rules: \\d+ passed, 0 failed, \\d+ skipped")
          .contains("report: " + reports.resolve("UriTck.md").toAbsolutePath());
    }
  }

  /** tck/README.md's provider, store and services file, compiled against kv4j.jar and jarred. */
  private Path miniEngineJar() throws Exception {
    String readme = Files.readString(Path.of("..", "tck", "README.md"), StandardCharsets.UTF_8);
    Matcher m =
        Pattern.compile(
                "<!-- tck-skeleton:begin src/main/(\\S+) -->\\n```[a-z]*\\n(.*?)```\\n",
                Pattern.DOTALL)
            .matcher(readme);
    Path src = dir.resolve("mini-src");
    Path classes = dir.resolve("mini-classes");
    List<String> args =
        new ArrayList<>(
            List.of("--release", "17", "-d", classes.toString(), "-classpath", Cli.JAR.toString()));
    while (m.find()) {
      String path = m.group(1);
      Path to = path.startsWith("java/") ? src.resolve(path) : classes.resolve(path.substring(10));
      Files.createDirectories(to.getParent());
      Files.writeString(to, m.group(2), StandardCharsets.UTF_8);
      if (path.startsWith("java/")) {
        args.add(to.toString());
      }
    }
    assertThat(args).as("the README shows the provider and the store").hasSize(8);
    assertThat(classes.resolve("META-INF/services/io.kv4j.spi.StoreProvider")).exists();
    ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    int rc =
        ToolProvider.getSystemJavaCompiler()
            .run(null, diagnostics, diagnostics, args.toArray(String[]::new));
    assertThat(rc).as("javac: %s", diagnostics.toString(StandardCharsets.UTF_8)).isZero();
    Path jar = dir.resolve("mini-engine.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        var walk = Files.walk(classes)) {
      for (Path f : walk.filter(Files::isRegularFile).sorted().toList()) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        out.write(Files.readAllBytes(f));
        out.closeEntry();
      }
    }
    return jar;
  }

  @Test
  void tck_unknownEngine_listsAvailableOnes() {
    Cli.Run r = Cli.inProcess("tck", "nosuch:");
    assertThat(r.exit()).isEqualTo(ExitCode.USAGE);
    assertThat(r.err()).contains("unknown engine 'nosuch'; available:", "hashlog");
  }

  @Test
  void tck_depthBelowOne_isAUsageErrorBeforeAnyRuleRuns() {
    Cli.Run r = Cli.inProcess("tck", "hashlog:", "--crash-rounds", "0");
    assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.USAGE);
    assertThat(r.err())
        .contains("crash rounds (kv4j.tck.crashRounds) must be at least 1, not 0")
        .contains("see 'kv4j tck --help'");
    assertThat(r.out()).doesNotContain("kv4j TCK against");
  }
}
