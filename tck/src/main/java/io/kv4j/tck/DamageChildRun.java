package io.kv4j.tck;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What one child JVM of the damage rules (group 12, {@link Group12Damage}) did: results by case,
 * the case it was in when it ended, how it ended: whether its JVM started the worker's {@code main}
 * at all ({@link ChildProcess#started()}), its exit, and its stderr.
 */
record DamageChildRun(
    Map<Integer, String> results,
    int running,
    boolean done,
    int exit,
    boolean timedOut,
    boolean started,
    String stderr,
    List<String> output,
    long pid) {
  boolean ok() {
    return done && exit == 0 && !timedOut;
  }

  /**
   * What the child printed besides its protocol (a JVM crash banner goes to stdout), its stderr,
   * and where the crash report of a JVM that crashed is.
   */
  String said(Path report) throws IOException {
    StringBuilder sb = new StringBuilder();
    if (!output.isEmpty()) {
      sb.append("; its output ends with:\n").append(String.join("\n", output));
    }
    sb.append("\nits stderr ends with:\n").append(tail(stderr));
    if (Files.exists(report)) {
      sb.append("\nJVM crash report: ").append(report);
    }
    return sb.toString();
  }

  /** An exit code in words: above 128 it is 128 plus the signal that ended the process. */
  static String exitDescription(int code) {
    if (code == -1) {
      return "no exit (still running after being killed)";
    }
    if (code <= 128) {
      return "exit code " + code;
    }
    int sig = code - 128;
    String name =
        switch (sig) {
          case 6 -> "SIGABRT: the JVM aborted, as it does after a SIGBUS or SIGSEGV in native code";
          case 7 -> "SIGBUS";
          case 9 -> "SIGKILL";
          case 11 -> "SIGSEGV";
          default -> "signal " + sig;
        };
    return "exit code " + code + " (" + name + ")";
  }

  /** The last lines of a child's stderr. */
  static String tail(String stderr) {
    List<String> lines = List.of(stderr.split("\n"));
    String last = String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    return last.length() > 4000 ? "..." + last.substring(last.length() - 4000) : last;
  }
}
