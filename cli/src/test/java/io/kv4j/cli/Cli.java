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
import java.util.regex.Pattern;

/** Runs {@code kv4j} as a user would: {@code java -jar target/kv4j.jar ...}, or in this JVM. */
final class Cli {
  static final Path JAR = Path.of("target", "kv4j.jar").toAbsolutePath();

  /** How long a child kv4j may run before the test calls it hung. */
  static final long TIMEOUT_MINUTES = 15;

  /**
   * The java launcher's own messages when it cannot start the jar or its JVM: printed before any
   * kv4j code runs (a {@code java -jar} child cannot go through {@link io.kv4j.tck.ChildMain}'s
   * marker without changing how it is started: the jar's manifest flags apply only to {@code
   * -jar}).
   */
  private static final Pattern LAUNCHER_FAILED =
      Pattern.compile(
          "(?m)^(Error: (Unable to access jarfile|Invalid or corrupt jarfile"
              + "|Could not find or load main class|Unable to initialize main class"
              + "|LinkageError occurred while loading main class"
              + "|Could not create the Java Virtual Machine)"
              + "|Error occurred during initialization of (VM|boot layer)"
              + "|no main manifest attribute|Unrecognized (VM )?option"
              + "|Invalid (initial|maximum) heap size)");

  /** What a run printed and returned. */
  record Run(int exit, String out, String err) {
    @Override
    public String toString() {
      return exitDescription(exit, err) + "\n--- stdout\n" + out + "--- stderr\n" + err;
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
                + " minutes (killed); stderr so far:\n"
                + err.toString(StandardCharsets.UTF_8)
                + "\n--- stdout so far, "
                + tail(out.toString(StandardCharsets.UTF_8)));
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

  /**
   * A child kv4j's exit code in words: whether its JVM could not start the jar at all (the java
   * launcher's message is in {@code stderr}), or the signal that killed it.
   */
  static String exitDescription(int exit, String stderr) {
    if (exit != 0 && LAUNCHER_FAILED.matcher(stderr).find()) {
      return "exit "
          + exit
          + ": COULD NOT START: the java launcher failed before kv4j's main ran (see stderr)";
    }
    if (exit > 128 && exit < 160) {
      return "exit " + exit + " (killed by signal " + (exit - 128) + ")";
    }
    return "exit " + exit;
  }

  /**
   * How a child kv4j started by a test itself ended, for an assertion message: its exit (waiting up
   * to 30 s for it), the last lines of its stderr the test read, and of its stdout file.
   */
  static String ended(Process p, List<String> stderrTail, Path stdout) {
    String exit;
    try {
      exit =
          p.waitFor(30, TimeUnit.SECONDS)
              ? exitDescription(p.exitValue(), String.join("\n", stderrTail))
              : "still running 30 s after its stderr ended";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exit = "(interrupted while waiting for its exit)";
    }
    String out;
    try {
      out = Files.exists(stdout) ? Files.readString(stdout, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      out = "(unreadable: " + e + ")";
    }
    return "kv4j child "
        + p.pid()
        + ": "
        + exit
        + "\n--- stderr, "
        + tail(String.join("\n", stderrTail))
        + "\n--- stdout, "
        + tail(out);
  }

  /** The last 30 lines of {@code text}, introduced by how many they are. */
  static String tail(String text) {
    List<String> lines = text.lines().toList();
    int from = Math.max(0, lines.size() - 30);
    return (from == 0 ? "all " + lines.size() : "last 30 of " + lines.size())
        + " lines:\n"
        + String.join("\n", lines.subList(from, lines.size()));
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
