package io.kv4j.tck;

import static io.kv4j.tck.RuleGroup.rule;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * The {@code strace} of rule 7.6 ({@link
 * Group07Crashes#required_r7_6_syncAcknowledgesOnlyAfterASync}): how to run it, which calls it
 * traces, and the check of its output that with SYNC every acknowledgement (the child's {@code ack
 * N} line on its standard output) follows a completed fsync, fdatasync, msync, sync_file_range,
 * sync/syncfs, or a write to a file opened O_SYNC/O_DSYNC, made since the previous acknowledgement.
 */
final class SyncTrace {
  /** The system calls rule 7.6 traces: syncs, writes (acks and O_DSYNC files) and opens. */
  static final String TRACED =
      "trace=write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,msync,sync_file_range,sync,"
          + "syncfs,open,openat";

  // An ack counts once written: a write that failed (EPIPE after the parent stopped reading) is no
  // acknowledgement.
  private static final Pattern ACK =
      Pattern.compile("write\\(1, \"ack (\\d+)\\\\n\", \\d+\\)\\s+= [1-9]");
  // The same write split by another thread's call: "write(1, "ack 5\n", 6 <unfinished ...>", then
  // "<... write resumed>) = 6" on the same thread.
  private static final Pattern ACK_START =
      Pattern.compile("^(\\d+)\\s+write\\(1, \"ack (\\d+)\\\\n\", \\d+ <unfinished");
  private static final Pattern WRITE_RESUMED =
      Pattern.compile("^(\\d+)\\s+<\\.\\.\\. write resumed>.*= [1-9]");
  private static final Pattern SYNC_DONE =
      Pattern.compile(
          "(?:^\\d+\\s+|<\\.\\.\\. )(?:fsync|fdatasync|msync|sync_file_range|syncfs|sync)"
              + "(?:\\(| resumed>).*\\)\\s+= 0");
  private static final Pattern OPEN_DSYNC =
      Pattern.compile("open(?:at)?\\(.*O_D?SYNC.*\\)\\s+= (\\d+)");
  private static final Pattern WRITE_DONE =
      Pattern.compile("^\\d+\\s+p?writev?(?:64|2)?\\((\\d+),.*\\)\\s+= [1-9]");

  private SyncTrace() {}

  /** strace with the flags rule 7.6 needs, or skips the rule naming why it cannot run. */
  static List<String> command() throws InterruptedException {
    return command("7.6");
  }

  /** strace with the flags rules 7.6 and 7.9 need, or skips {@code ruleId} naming why not. */
  static List<String> command(String ruleId) throws InterruptedException {
    String why = "";
    for (List<String> cmd :
        List.of(List.of("strace", "-f", "-qq", "--seccomp-bpf"), List.of("strace", "-f", "-qq"))) {
      List<String> probe = new ArrayList<>(cmd);
      probe.addAll(List.of("-o", "/dev/null", "-e", "trace=fsync", "true"));
      try (ChildProcess p = ChildProcess.command(probe).start()) {
        if (!p.process().waitFor(30, TimeUnit.SECONDS)) {
          why = "strace did not trace 'true' within 30 s: " + p.describe();
          continue;
        }
        if (RuleGroup.await(ruleId, p, Duration.ofSeconds(30)) == 0) {
          return cmd;
        }
        why = "strace cannot trace here (ptrace not permitted?): " + p.describe();
      } catch (IOException e) {
        why = "strace is not installed (" + e.getMessage() + ")";
      }
    }
    Assumptions.abort("[" + ruleId + "] skipped: " + why);
    throw new AssertionError(rule(ruleId, why)); // not reached: abort throws
  }

  /**
   * Reads the traced child's acknowledgements ({@code ack N} lines) until {@code target}, then
   * kills the traced JVM (SIGKILL: no close, no shutdown hook) and the tracer, and waits for the
   * JVM to exit, so that its lock is released before the store is opened again; returns the last
   * ack read. Fails {@code ruleId} with the child's state if it stopped before {@code target}, or
   * made no progress: no line for {@link ChildWatch#SILENCE}, or {@code target} not reached within
   * {@code backstop} (a slow disk slows a correct child without silencing it).
   *
   * @param backstop how long the child may take at most ({@code kv4j.tck.childTimeoutSeconds})
   * @param acked what the acknowledgements are, for the failure message (e.g. "SYNC writes")
   */
  static long acksThenKill(
      String ruleId, ChildProcess c, long target, Duration backstop, String acked)
      throws InterruptedException {
    long started = System.nanoTime();
    long lastLine = started;
    long lastAck = -1;
    String overdue = null;
    try {
      String line = "";
      while (lastAck < target
          && line != null
          && (overdue = ChildWatch.overdue(started, lastLine, backstop.toNanos())) == null) {
        long wait =
            Math.min(
                lastLine + ChildWatch.SILENCE.toNanos() - System.nanoTime(),
                started + backstop.toNanos() - System.nanoTime());
        line = c.readLine(Duration.ofNanos(Math.max(1, wait)));
        lastLine = System.nanoTime();
        if (line != null && line.startsWith("ack ")) {
          lastAck = Long.parseLong(line.substring(4).trim());
        }
      }
    } catch (AssertionError silent) {
      // No line in time: the assertion below says so, with the child's state.
      overdue = ChildWatch.overdue(started, lastLine, backstop.toNanos());
    }
    String state = c.describe(); // still running (as it should), or how it ended
    List<ProcessHandle> traced = c.process().descendants().toList(); // the traced JVM
    traced.forEach(ProcessHandle::destroyForcibly);
    c.kill();
    for (ProcessHandle h : traced) {
      try {
        h.onExit().get(30, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        throw new AssertionError(rule(ruleId, "the killed child JVM did not exit: " + e), e);
      }
    }
    if (lastAck < target) {
      fail(
          rule(
              ruleId,
              "the traced child JVM was to acknowledge "
                  + target
                  + " "
                  + acked
                  + ", but its last ack was "
                  + lastAck
                  + (overdue != null ? " (" + overdue + ")" : " (its output ended)")
                  + "; "
                  + state));
    }
    return lastAck;
  }

  /**
   * Fails rule 7.6 at the first ack in {@code trace} with no sync completed since the previous one,
   * showing the trace's lines before it; returns the number of acks.
   *
   * @param seed the child's seed, for the failure message
   */
  static long acksAfterSyncs(Path trace, long seed) throws IOException {
    return acksAfterSyncs(
        "7.6", "with SYNC, ack", "a write acknowledged before it was durable", trace, seed);
  }

  /**
   * As above for rule {@code ruleId}: an ack with no sync since the previous one fails it with
   * {@code "<ackIs> N was written with no fsync ...: <meaning>"}.
   */
  static long acksAfterSyncs(String ruleId, String ackIs, String meaning, Path trace, long seed)
      throws IOException {
    long syncs = 0;
    long acks = 0;
    Set<String> dsyncFds = new HashSet<>();
    Map<String, String> ackInFlight = new HashMap<>();
    List<String> lines = Files.readAllLines(trace, StandardCharsets.UTF_8);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher m;
      String ack = null;
      if ((m = ACK.matcher(line)).find()) {
        ack = m.group(1);
      } else if ((m = ACK_START.matcher(line)).find()) {
        ackInFlight.put(m.group(1), m.group(2));
      } else if ((m = WRITE_RESUMED.matcher(line)).find() && ackInFlight.containsKey(m.group(1))) {
        ack = ackInFlight.remove(m.group(1));
      }
      if (ack != null) {
        if (syncs == 0) {
          fail(
              rule(
                  ruleId,
                  ackIs
                      + " "
                      + ack
                      + " was written with no fsync, fdatasync, msync, sync_file_range or write to"
                      + " an O_SYNC/O_DSYNC file completed since the previous ack: "
                      + meaning
                      + " (a power loss would lose it); seed "
                      + seed
                      + ", trace "
                      + trace
                      + ", ending:\n"
                      + String.join("\n", lines.subList(Math.max(0, i - 12), i + 1))));
        }
        syncs = 0;
        acks++;
      } else if (SYNC_DONE.matcher(line).find()) {
        syncs++;
      } else if ((m = OPEN_DSYNC.matcher(line)).find()) {
        dsyncFds.add(m.group(1));
      } else if ((m = WRITE_DONE.matcher(line)).find() && dsyncFds.contains(m.group(1))) {
        syncs++;
      }
    }
    return acks;
  }
}
