package io.kv4j.rocksdb;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/** Waiting on a condition with a deadline, for tests: no bare sleeps. */
final class Waits {
  /** A condition that may throw while it is checked (it then fails the wait). */
  @FunctionalInterface
  interface Check {
    boolean holds() throws Exception;
  }

  private Waits() {}

  /**
   * Checks {@code condition} until it holds, parking the thread between checks (50 µs at first,
   * growing to 1 ms), and fails if it still does not hold at the deadline.
   *
   * @param what what is waited for, for the failure message
   * @param deadline how long to wait at most
   * @param condition the condition
   * @throws AssertionError naming {@code what} and the deadline if the condition never held
   * @throws Exception whatever the condition throws
   */
  static void await(String what, Duration deadline, Check condition) throws Exception {
    long end = System.nanoTime() + deadline.toNanos();
    for (long pause = 50_000; !condition.holds(); pause = Math.min(1_000_000, pause * 2)) {
      if (System.nanoTime() - end > 0) {
        throw new AssertionError("timed out after " + deadline + " waiting for: " + what);
      }
      LockSupport.parkNanos(pause);
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted waiting for: " + what);
      }
    }
  }
}
