package io.kv4j.tck;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The clock a history check's budget is measured on: the CPU time of the checking thread where the
 * JVM can measure it (HotSpot on Linux can), so that a check on a starved machine gets the same
 * search as on an idle one and a correct engine never fails for want of time; wall time where it
 * cannot.
 */
final class CheckClock {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** Whether {@link #now()} is CPU time (else wall time). */
  static final boolean CPU = cpuTimeAvailable();

  private CheckClock() {}

  private static boolean cpuTimeAvailable() {
    try {
      return THREADS.isCurrentThreadCpuTimeSupported()
          && THREADS.isThreadCpuTimeEnabled()
          && THREADS.getCurrentThreadCpuTime() >= 0;
    } catch (UnsupportedOperationException | SecurityException e) {
      return false;
    }
  }

  /** Nanoseconds on this clock: the calling thread's CPU time, or {@link System#nanoTime()}. */
  static long now() {
    return CPU ? THREADS.getCurrentThreadCpuTime() : System.nanoTime();
  }

  /** What {@link #now()} measures, for a verdict's message. */
  static String measured() {
    return CPU ? "of the checking thread's CPU time" : "of wall time";
  }
}
