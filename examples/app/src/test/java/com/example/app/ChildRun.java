package com.example.app;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A program a test runs to its end, such as a plain {@code java} command run as an application is
 * run. Its stdout and stderr go to files (so neither can fill up and block it) and are kept whole;
 * {@link #toString()} tells how it ended, for assertion messages: the JVM could not start (the java
 * launcher's own error: a bad flag, a main class or module not found), it exited with a code, or a
 * signal killed it; with the last lines of its stderr and stdout. One that does not exit in time is
 * killed and fails the test the same way.
 */
final class ChildRun {
  private static final int TAIL_LINES = 30;

  /** What the java launcher prints when the JVM cannot start or find the main class or module. */
  private static final Pattern LAUNCHER_FAILED =
      Pattern.compile(
          "(?m)^(Error: (Could not find or load main class|Unable to initialize main class"
              + "|LinkageError occurred while loading main class"
              + "|Could not create the Java Virtual Machine|Unable to access jarfile)"
              + "|Error occurred during initialization of (VM|boot layer)"
              + "|Unrecognized (VM )?option|Invalid (initial|maximum) heap size)");

  private final List<String> command;
  private final int exit;
  private final String stdout;
  private final String stderr;

  private ChildRun(List<String> command, int exit, String stdout, String stderr) {
    this.command = command;
    this.exit = exit;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /**
   * Runs {@code command} with nothing on its stdin until it exits.
   *
   * @param dir where its output files go
   * @throws AssertionError naming its output so far if it does not exit within {@code timeout}
   */
  static ChildRun run(List<String> command, Path dir, Duration timeout)
      throws IOException, InterruptedException {
    return run(command, dir, Path.of(""), timeout);
  }

  /** {@link #run(List, Path, Duration)} in the working directory {@code workDir}. */
  static ChildRun run(List<String> command, Path dir, Path workDir, Duration timeout)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile(dir, "child-", ".stdout");
    Path err = Files.createTempFile(dir, "child-", ".stderr");
    Process p =
        new ProcessBuilder(command)
            .directory(workDir.toAbsolutePath().toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    p.getOutputStream().close();
    boolean ended = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (!ended) {
      p.destroyForcibly();
      p.waitFor();
    }
    ChildRun r =
        new ChildRun(
            List.copyOf(command),
            p.exitValue(),
            Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8));
    if (!ended) {
      throw new AssertionError(
          "did not exit within " + timeout.toSeconds() + " s, killed: " + r.describe(false));
    }
    return r;
  }

  int exit() {
    return exit;
  }

  String stdout() {
    return stdout;
  }

  String stderr() {
    return stderr;
  }

  @Override
  public String toString() {
    return describe(true);
  }

  private String describe(boolean ended) {
    StringBuilder b = new StringBuilder(shortCommand()).append(": ");
    if (!ended) {
      b.append("exit ").append(exit);
    } else if (exit != 0 && LAUNCHER_FAILED.matcher(stderr).find()) {
      b.append("COULD NOT START: the JVM exited with code ")
          .append(exit)
          .append(" before the program's main ran (the java launcher's error is in stderr)");
    } else if (exit > 128 && exit < 160) {
      b.append("killed by signal ").append(exit - 128).append(" (exit ").append(exit).append(')');
    } else {
      b.append(exit == 0 ? "exited normally (exit 0)" : "FAILED (exit " + exit + ")");
    }
    tail(b, "stderr", stderr);
    tail(b, "stdout", stdout);
    return b.toString();
  }

  /** The command, its class path (long, and the same as the test's) shown as a placeholder. */
  private String shortCommand() {
    List<String> shown = new ArrayList<>(command);
    for (int i = 0; i + 1 < shown.size(); i++) {
      if (List.of("-cp", "-classpath", "--class-path").contains(shown.get(i))) {
        shown.set(i + 1, "<class path>");
      }
    }
    return String.join(" ", shown);
  }

  private static void tail(StringBuilder b, String name, String text) {
    List<String> lines = text.lines().toList();
    if (lines.isEmpty()) {
      b.append("\n--- ").append(name).append(": (empty)");
      return;
    }
    int from = Math.max(0, lines.size() - TAIL_LINES);
    b.append("\n--- ").append(name);
    b.append(from == 0 ? ":" : " (last " + TAIL_LINES + " of " + lines.size() + " lines):");
    for (String line : lines.subList(from, lines.size())) {
      b.append("\n  ").append(line);
    }
  }
}
