package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  /**
   * {@code kv4j bench --workload FILE --set P=V ...} hands the runner every argument as given, in
   * order: a stand-in runner jar (compiled here) prints the arguments it received.
   */
  @Test
  void bench_workloadAndSets_reachTheRunnerAsGiven(@TempDir Path dir) throws Exception {
    Path src = dir.resolve("src").resolve("EchoBench.java");
    Files.createDirectories(src.getParent());
    Files.writeString(
        src,
        "public class EchoBench { public static void main(String[] a) {"
            + " for (String s : a) System.out.println(\"arg:\" + s); } }");
    Path classes = dir.resolve("classes");
    assertThat(
            ToolProvider.getSystemJavaCompiler()
                .run(null, null, null, "-d", classes.toString(), src.toString()))
        .isZero();
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "EchoBench");
    Path jar = dir.resolve("echo-bench.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), m)) {
      out.putNextEntry(new JarEntry("EchoBench.class"));
      out.write(Files.readAllBytes(classes.resolve("EchoBench.class")));
      out.closeEntry();
    }
    List<String> args =
        List.of(
            "--workload",
            "my workload.properties",
            "--set",
            "readproportion=0.9",
            "--set=updateproportion=0.1",
            "--engines",
            "hashlog");
    List<String> cmd = new ArrayList<>(List.of("bench"));
    cmd.addAll(args);
    Cli.Run r =
        Cli.process(
            dir, Map.of("KV4J_BENCH_JAR", jar.toString()), null, cmd.toArray(new String[0]));
    assertThat(r.exit()).as("%s", r).isZero();
    assertThat(r.out().lines().filter(l -> l.startsWith("arg:")))
        .as("%s", r)
        .containsExactlyElementsOf(args.stream().map(a -> "arg:" + a).toList());
  }
}
