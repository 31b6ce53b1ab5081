package io.kv4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * Runs the comparison runner {@code io.kv4j.bench.Main}: in this JVM when it is on the classpath,
 * else from the bench jar ({@code $KV4J_BENCH_JAR}, or {@code bench/target/kv4j-bench.jar} next to
 * this jar's module) in a child JVM.
 */
@Command(
    name = "bench",
    description = {
      "Run the engine comparison (io.kv4j.bench.Main); every argument is passed to it as given.",
      "Measure your own workload: 'kv4j bench --workload my.properties --set readproportion=0.9'"
          + " (YCSB core workload properties; shipped: workloada .. workloadf).",
      "'kv4j bench --help' shows the runner's options. The runner is taken from the classpath, or"
          + " from the jar in $KV4J_BENCH_JAR, or from bench/target/kv4j-bench.jar of this"
          + " repository."
    })
final class BenchCommand implements Runnable {
  static final String MAIN = "io.kv4j.bench.Main";

  static final String NOT_FOUND =
      "the bench runner is not in this jar and no bench jar was found; build it with 'mvn -q -pl"
          + " bench -am package -DskipTests' in the kv4j repository, then run 'java -jar"
          + " bench/target/kv4j-bench.jar --help' (or set KV4J_BENCH_JAR to its path)";

  @Spec CommandSpec spec;

  @Unmatched List<String> args = new ArrayList<>();

  @Override
  public void run() {
    String[] a = args.toArray(new String[0]);
    int code = inProcess(a);
    if (code < 0) {
      Path jar = benchJar();
      if (jar == null && (args.contains("--help") || args.contains("-h"))) {
        spec.commandLine().usage(spec.commandLine().getOut());
        spec.commandLine().getOut().println();
        spec.commandLine().getOut().println(NOT_FOUND);
        return;
      }
      if (jar == null) {
        throw new CliException(ExitCode.USAGE, NOT_FOUND);
      }
      code = child(jar, a);
    }
    if (code != 0) {
      throw new CliException(
          code == 2 ? ExitCode.USAGE : ExitCode.CHECK_FAILED,
          "the bench runner exited with status " + code);
    }
  }

  /** Runs the runner in this JVM; returns -1 if it is not on the classpath. */
  private int inProcess(String[] a) {
    Class<?> main;
    try {
      main = Class.forName(MAIN);
    } catch (ClassNotFoundException e) {
      return -1;
    }
    PrintWriter out = spec.commandLine().getOut();
    out.flush();
    try {
      Method run = main.getMethod("run", String[].class, PrintStream.class);
      return (int) run.invoke(null, a, new PrintStream(System.out, true, StandardCharsets.UTF_8));
    } catch (InvocationTargetException e) {
      Throwable t = e.getCause();
      throw t instanceof RuntimeException r ? r : new IllegalStateException(t);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot call " + MAIN + ".run: " + e, e);
    }
  }

  static Path benchJar() {
    String env = System.getenv("KV4J_BENCH_JAR");
    if (env != null && !env.isBlank()) {
      Path p = Path.of(env);
      return Files.isRegularFile(p) ? p : null;
    }
    try {
      Path self =
          Path.of(BenchCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      // self is cli/target/kv4j.jar (or cli/target/classes); the bench jar is bench/target/.
      Path repo = self.toAbsolutePath().getParent().getParent().getParent();
      Path p = repo.resolve("bench").resolve("target").resolve("kv4j-bench.jar");
      return Files.isRegularFile(p) ? p : null;
    } catch (URISyntaxException | RuntimeException e) {
      return null;
    }
  }

  /**
   * JVM flags for the bench jar that its manifest cannot carry. On Java 24+ the peer stores it
   * compares (Chronicle Map, MapDB) and its raw lmdbjava baseline call {@code sun.misc.Unsafe}'s
   * memory methods, which print a warning (JEP 498) unless this flag allows them; Java 17-22 do not
   * know the flag (23 does, but does not warn).
   *
   * @param javaFeature the feature release of the JVM that runs the child
   * @return the flags, empty before Java 24
   */
  static List<String> childFlags(int javaFeature) {
    return javaFeature >= 24 ? List.of("--sun-misc-unsafe-memory-access=allow") : List.of();
  }

  private int child(Path jar, String[] a) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(childFlags(Runtime.version().feature()));
    cmd.add("-jar");
    cmd.add(jar.toString());
    cmd.addAll(List.of(a));
    spec.commandLine().getErr().println("running " + String.join(" ", cmd));
    spec.commandLine().getErr().flush();
    try {
      Process p = new ProcessBuilder(cmd).inheritIO().start();
      return p.waitFor();
    } catch (IOException e) {
      throw new CliException(ExitCode.IO, "cannot start " + cmd.get(0) + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException(ExitCode.IO, "interrupted while the bench runner was running");
    }
  }
}
