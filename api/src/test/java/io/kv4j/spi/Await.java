package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition that has no notification to block on (another thread's progress inside a
 * gate), polling every millisecond up to a deadline that only a wedged thread reaches: the test
 * waits as long as a loaded machine needs and fails with {@code what} instead of hanging.
 */
final class Await {
  private Await() {}

  static void until(String what, Duration limit, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("%s within %s", what, limit).isNegative();
      LockSupport.parkNanos(1_000_000);
    }
  }
}
