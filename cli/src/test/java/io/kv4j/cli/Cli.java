package io.kv4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs {@code kv4j} as a user would: {@code java -jar target/kv4j.jar ...}, or in this JVM. */
final class Cli {
  static final Path JAR = Path.of("target", "kv4j.jar").toAbsolutePath();

  /** How long a child kv4j may run before the test calls it hung. */
  static final long TIMEOUT_MINUTES = 15;

  /** What a run printed and returned. */
  record Run(int exit, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  private Cli() {}

  /** The command line that starts the jar. */
  static List<String> command(String... args) {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR + " is missing: the tests run after 'mvn package'");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx512m");
    cmd.add("-jar");
    cmd.add(JAR.toString());
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** Runs the jar in a child JVM and waits for it. */
  static Run process(Path workDir, Map<String, String> env, byte[] stdin, String... args) {
    ProcessBuilder pb = new ProcessBuilder(command(args)).directory(workDir.toFile());
    pb.environment().putAll(env);
    try {
      Process p = pb.start();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      Thread t1 = pump(p.getInputStream(), out);
      Thread t2 = pump(p.getErrorStream(), err);
      if (stdin != null) {
        p.getOutputStream().write(stdin);
      }
      p.getOutputStream().close();
      // Only a guard against a hang: `kv4j tck` (crash rounds, damage child JVMs) took over 180 s
      // on a 2-core machine at load average ~25, and failed an earlier 180 s deadline there.
      if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new AssertionError(
            "kv4j "
                + String.join(" ", args)
                + " did not finish in "
                + TIMEOUT_MINUTES
                + " minutes; stderr so far:\n"
                + err.toString(StandardCharsets.UTF_8));
      }
      t1.join();
      t2.join();
      return new Run(
          p.exitValue(),
          out.toString(StandardCharsets.UTF_8),
          err.toString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  static Run process(Path workDir, String... args) {
    return process(workDir, Map.of(), null, args);
  }

  /** Runs kv4j in this JVM (fast; for option handling and output formats). */
  static Run inProcess(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, out.toString(), err.toString());
  }

  private static Thread pump(InputStream in, ByteArrayOutputStream to) {
    Thread t =
        new Thread(
            () -> {
              try (in) {
                in.transferTo(to);
              } catch (IOException e) {
                // the process ended
              }
            });
    t.setDaemon(true);
    t.start();
    return t;
  }
}
