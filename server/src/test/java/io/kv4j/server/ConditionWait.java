package io.kv4j.server;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waiting in tests for a condition with a deadline: polls it, parking the thread between polls. A
 * guard against hanging, not a timing assertion: the condition is what the test asserts.
 */
final class ConditionWait {
  private static final long PAUSE_NANOS = Duration.ofMillis(10).toNanos();

  private ConditionWait() {}

  /**
   * Returns once {@code condition} holds.
   *
   * @throws AssertionError naming {@code what} when it does not hold within {@code timeout}
   * @throws InterruptedException when the waiting thread is interrupted
   */
  static void until(String what, Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      LockSupport.parkNanos(PAUSE_NANOS);
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted while waiting for " + what);
      }
    }
  }
}
