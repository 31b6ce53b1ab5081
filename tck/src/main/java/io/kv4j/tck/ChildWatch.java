package io.kv4j.tck;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Kills a crash rule's child JVM that stopped making progress: no progress ({@link #progress()},
 * called for each line or acknowledgement the rule reads) for {@link #SILENCE}, or still running
 * after the backstop ({@code kv4j.tck.childTimeoutSeconds}) however it progresses. A slow disk or a
 * loaded machine slows a correct child without silencing it; a hung one falls silent. The kill is
 * SIGKILL through the process handle, which keeps the pipes: the output stays readable to its end.
 */
final class ChildWatch implements AutoCloseable {
  /** How long a child may go without progress before it is killed. */
  static final Duration SILENCE = Duration.ofSeconds(120);

  /**
   * How long to wait for one line: longer than {@link #SILENCE}, so the watch's kill ends a hang.
   */
  static final Duration LINE_WAIT = SILENCE.plusSeconds(60);

  private final Process process;
  private final long started = System.nanoTime();
  private final long silence;
  private final long backstop;
  private final Thread thread;
  private volatile long lastProgress = started;
  private volatile String killed;

  /**
   * Starts watching {@code process}.
   *
   * @param backstop how long it may run at most, however it progresses
   */
  ChildWatch(Process process, Duration backstop) {
    this(process, SILENCE, backstop);
  }

  /** As above, with a silence of its own (a test's). */
  ChildWatch(Process process, Duration silence, Duration backstop) {
    this.process = process;
    this.silence = silence.toNanos();
    this.backstop = backstop.toNanos();
    thread = new Thread(this::watch, "kv4j-tck-child-watch-" + process.pid());
    thread.setDaemon(true);
    thread.start();
  }

  /** Notes progress: the child wrote a line, or acknowledged an operation. */
  void progress() {
    lastProgress = System.nanoTime();
  }

  /** Why the watch killed the child ("silent for 120 s", ...), or null if it did not. */
  String killed() {
    return killed;
  }

  /** Why a watch with {@code backstop} would kill a child now, or null: also for polling rules. */
  static String overdue(long started, long lastProgress, long backstopNanos) {
    return overdue(started, lastProgress, SILENCE.toNanos(), backstopNanos);
  }

  private static String overdue(
      long started, long lastProgress, long silenceNanos, long backstopNanos) {
    long now = System.nanoTime();
    if (now - lastProgress >= silenceNanos) {
      return "no progress for "
          + TimeUnit.NANOSECONDS.toMillis(silenceNanos) / 1000.0
          + " s (after "
          + TimeUnit.NANOSECONDS.toSeconds(lastProgress - started)
          + " s of progress)";
    }
    if (now - started >= backstopNanos) {
      return "still running after "
          + TimeUnit.NANOSECONDS.toSeconds(backstopNanos)
          + " s (kv4j.tck.childTimeoutSeconds), though making progress";
    }
    return null;
  }

  private void watch() {
    try {
      while (true) {
        long now = System.nanoTime();
        long untilSilent = lastProgress + silence - now;
        long untilBackstop = started + backstop - now;
        long wait = Math.max(1, Math.min(untilSilent, untilBackstop));
        if (process.waitFor(wait, TimeUnit.NANOSECONDS)) {
          return;
        }
        String why = overdue(started, lastProgress, silence, backstop);
        if (why != null) {
          killed = why;
          process.toHandle().destroyForcibly(); // keeps the pipes: its output stays readable
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closed: the rule is done with the child
    }
  }

  /** Stops watching; the child, if still running, is the rule's to end. */
  @Override
  public void close() {
    thread.interrupt();
  }
}
