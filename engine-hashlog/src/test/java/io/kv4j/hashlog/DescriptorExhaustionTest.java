package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Durability;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The process runs out of file descriptors while a store is written (rolls, seals, compaction
 * outputs and directory syncs all open files): the store fails with a {@link
 * io.kv4j.StoreIOException} naming the engine, the directory and the cause, the JVM lives on, and a
 * reopen finds every acknowledged write. The exhaustion happens in a child process ({@link
 * DescriptorExhaustionChild}), which starves everything in it of descriptors; a child that fails
 * for any other reason fails the test with its exit and output.
 */
final class DescriptorExhaustionTest {
  private static final Duration WAIT = Duration.ofMinutes(3);

  @TempDir Path tmp;

  /** What the child reported. */
  private record Outcome(int acked, String failure) {}

  /**
   * Each durability, {@code -Dkv4j.test.descriptorRounds} times (default once): a hunt for load
   * dependence runs it many times inside the module's full run, beside CPU hogs and memory
   * pressure.
   */
  static Stream<Arguments> rounds() {
    int rounds = Integer.getInteger("kv4j.test.descriptorRounds", 1);
    return IntStream.rangeClosed(1, rounds)
        .boxed()
        .flatMap(r -> Stream.of(Durability.values()).map(d -> Arguments.of(d, r)));
  }

  @ParameterizedTest(name = "{0}, round {1}")
  @MethodSource("rounds")
  void writes_whenDescriptorsRunOut_failTheStoreCleanly_andKeepEveryAcknowledgedWrite(
      Durability d, int round) throws Exception {
    Path dir = tmp.resolve("store");
    Outcome o = run(dir, d, "hog");
    try (HashLogStore s = TestStores.open(dir, d)) {
      for (int k = 0; k < DescriptorExhaustionChild.KEYS && k < o.acked; k++) {
        int last =
            k
                + ((o.acked - 1 - k) / DescriptorExhaustionChild.KEYS)
                    * DescriptorExhaustionChild.KEYS;
        assertThat(s.get(DescriptorExhaustionChild.key(k)))
            .as("key %d: its last acknowledged write was #%d of %d", k, last, o.acked)
            .isEqualTo(DescriptorExhaustionChild.value(last));
      }
      s.verify();
      s.put(DescriptorExhaustionChild.key(0), DescriptorExhaustionChild.value(1));
      assertThat(s.get(DescriptorExhaustionChild.key(0)))
          .isEqualTo(DescriptorExhaustionChild.value(1));
    }
  }

  /** The harness itself: a child that fails before it writes fails the test with its stderr. */
  @Test
  void run_childExitsBeforeItWrites_failsWithTheChildsExitAndStderr() {
    Throwable t = catchThrowable(() -> run(tmp.resolve("store"), Durability.SYNC, "exit-early"));
    assertThat(t)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("FAILED (exit 1, after its main started)")
        .hasMessageContaining(DescriptorExhaustionChild.EARLY_EXIT_MESSAGE);
  }

  /**
   * Runs the child in {@code mode} and checks what it must report: exit 0, the number of writes
   * acknowledged before the descriptors ran out, and the store's typed failure.
   */
  private static Outcome run(Path dir, Durability d, String mode) throws Exception {
    int acked = -1;
    String failure = null;
    try (ChildProcess c =
        TestStores.child(256, DescriptorExhaustionChild.class, dir.toString(), d.name(), mode)) {
      for (String line = c.readLine(WAIT); line != null; line = c.readLine(WAIT)) {
        if (line.startsWith("acked ")) {
          acked = Integer.parseInt(line.substring(6).trim());
        } else if (line.startsWith("failure ")) {
          failure = line.substring(8);
        }
      }
      c.assertSucceeded(WAIT);
      assertThat(acked)
          .as("writes acknowledged before the descriptors ran out: %s", c.describe())
          .isGreaterThanOrEqualTo(DescriptorExhaustionChild.HOG_AT)
          .isLessThan(DescriptorExhaustionChild.MAX_WRITES);
      assertThat(failure)
          .as("the store's failure: %s", c.describe())
          .startsWith("io.kv4j.StoreIOException")
          .contains("hashlog", dir.toString(), "Too many open files");
    }
    return new Outcome(acked, failure);
  }
}
