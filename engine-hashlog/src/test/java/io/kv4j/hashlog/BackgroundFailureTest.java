package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreIOException;
import io.kv4j.StoreStats;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
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
  void compaction_failsOnADamagedSegment_storeStaysDegradedThroughPassesThatFindNothing()
      throws Exception {
    Path dir = tmp.resolve("damaged");
    byte[] live = new byte[300];
    Arrays.fill(live, (byte) 0x5A);
    // Written with no compaction: the first segment ends up garbage but for one value, the
    // newer ones hold no garbage.
    try (HashLogStore s =
        TestStores.open(dir, Durability.SYNC, "segment-size", "65536", "compaction-threads", "0")) {
      s.put(TestStores.bytes("live"), live);
      churn(s, 2);
    }
    // Invert one byte of the live value (in the first segment): compaction, copying it, finds it.
    Path first = dir.resolve(Segment.fileName(1));
    byte[] file = Files.readAllBytes(first);
    int at = indexOf(file, live);
    assertThat(at).as("the live value in %s", first).isPositive();
    file[at + 100] ^= (byte) 0xFF;
    Files.write(first, file);

    try (HashLogStore s =
        TestStores.open(
            dir, Durability.SYNC, "segment-size", "65536", "compaction-garbage-threshold", "0.2")) {
      // The first pass takes the damaged segment and fails; it is never chosen again, and
      // nothing else is above the threshold: the passes after it find nothing to compact, which
      // is not compaction working again. (The store takes no writes: nothing else wakes it.)
      await("three background passes", () -> s.compactor.passes() >= 3);
      StoreStats st = s.stats();
      assertThat(st.health())
          .as("after passes that compacted nothing: %s", st.figures())
          .isEqualTo(StoreStats.Health.DEGRADED);
      assertThat(st.problem()).contains("background compaction", "bad checksum");
      assertThat(TestStores.figure(s, "compaction-runs")).isZero();
    }
  }

  private static int indexOf(byte[] in, byte[] what) {
    for (int i = 0; i + what.length <= in.length; i++) {
      if (Arrays.equals(in, i, i + what.length, what, 0, what.length)) {
        return i;
      }
    }
    return -1;
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
