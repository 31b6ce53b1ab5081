package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreIOException;
import io.kv4j.StoreStats;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A background thread's failure is never silent: compaction that throws (an {@code Error} too)
 * leaves the store {@code DEGRADED} in {@code stats()} and {@code verify()} until a run works
 * again; a background thread that dies fails the store until reopened, naming the thread.
 */
final class BackgroundFailureTest {
  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(120);

  @TempDir Path tmp;

  private HashLogStore open() {
    return TestStores.open(
        tmp.resolve("store"),
        Durability.BUFFERED,
        "segment-size",
        "65536",
        "compaction-garbage-threshold",
        "0.2");
  }

  /** Overwrites 200 keys {@code rounds} times: plenty of garbage for compaction. */
  private static void churn(HashLogStore s, int rounds) {
    for (int i = 0; i < rounds * 200; i++) {
      s.put(key(i % 200), new byte[300]);
    }
  }

  private static void await(String what, Supplier<Boolean> condition) {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!condition.get()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: %s", what).isNegative();
      Thread.onSpinWait();
    }
  }

  @Test
  void compaction_throwsAnError_storeIsDegradedUntilCompactionWorksAgain() {
    try (HashLogStore s = open()) {
      s.compactor.hook =
          step -> {
            throw new OutOfMemoryError("injected: Java heap space");
          };
      churn(s, 40);
      await("compaction failed", () -> s.stats().health() == StoreStats.Health.DEGRADED);
      StoreStats st = s.stats();
      assertThat(st.problem())
          .contains("background compaction fails and is retried", "injected: Java heap space");
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("background compaction fails");
      s.put(key(1), new byte[] {1}); // degraded, not failed: writes go on
      assertThat(s.get(key(1))).containsExactly(1);

      s.compactor.hook = null;
      churn(s, 5); // seals segments, which wakes compaction
      await("compaction recovered", () -> s.stats().health() == StoreStats.Health.OK);
      assertThat(s.stats().problem()).isNull();
      s.verify();
    }
  }

  @Test
  void compactorThread_dies_failsTheStoreNamingTheThread() {
    try (HashLogStore s = open()) {
      s.compactor.hook =
          step -> {
            throw BackgroundFailureTest.<RuntimeException>sneaky(
                new Throwable("injected: not an Exception nor an Error"));
          };
      assertThatThrownBy(() -> churn(s, 1_000)) // writes are refused once the thread died
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("died");
      assertThat(s.stats().health()).isEqualTo(StoreStats.Health.FAILED);
      assertThat(s.stats().problem())
          .contains("failed until reopened", "kv4j-hashlog-compactor-", "died", "injected");
      assertThatThrownBy(() -> s.put(key(1), new byte[1]))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("died");
      assertThatThrownBy(s::verify).isInstanceOf(StoreIOException.class);
      assertThat(s.get(key(1))).as("reads go on").isNotNull();
    }
    try (HashLogStore s = open()) { // reopening recovers
      assertThat(s.stats().health()).isEqualTo(StoreStats.Health.OK);
      s.verify();
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  private static byte[] key(int i) {
    return ByteBuffer.allocate(8).putLong(i).array();
  }
}
