package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A real SIGKILL of a child JVM while background compaction stands at each of its steps. */
class CompactionKillTest {
  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(Compactor.Step.class)
  void killDuringCompactionStep_keepsEveryAcknowledgedPutAndDelete(Compactor.Step step)
      throws Exception {
    Path dir = tmp.resolve("store");
    int lastAck = runAndKill(dir, step);
    assertThat(lastAck).as("child acknowledged operations").isPositive();
    // The model after every acknowledged operation; the one in flight may or may not be there.
    byte[][] model = new byte[CompactionCrashChild.KEYS][];
    for (int i = 0; i <= lastAck; i++) {
      model[CompactionCrashChild.keyOf(i)] =
          CompactionCrashChild.isDelete(i) ? null : CompactionCrashChild.value(i);
    }
    int inFlight = lastAck + 1;
    int inFlightKey = CompactionCrashChild.keyOf(inFlight);
    for (int round = 0; round < 2; round++) {
      try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "16KiB")) {
        for (int k = 0; k < CompactionCrashChild.KEYS; k++) {
          byte[] got = s.get(CompactionCrashChild.key(k));
          String msg = step + " round " + round + " key " + k + " after " + lastAck + " acks";
          if (k == inFlightKey) {
            byte[] after =
                CompactionCrashChild.isDelete(inFlight)
                    ? null
                    : CompactionCrashChild.value(inFlight);
            assertThat(got).as(msg + " (in flight)").isIn(model[k], after);
          } else {
            assertThat(got).as(msg).isEqualTo(model[k]);
          }
        }
        s.compact(); // and again after a full compaction and another reopen
      }
    }
  }

  private static int runAndKill(Path dir, Compactor.Step step) throws Exception {
    int lastAck = -1;
    boolean reached = false;
    try (ChildProcess c =
        TestStores.child(128, CompactionCrashChild.class, dir.toString(), step.name())) {
      Duration wait = Duration.ofMinutes(5);
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        if (line.startsWith("ack ")) {
          lastAck = Integer.parseInt(line.substring(4).trim());
        } else if (line.equals("step")) {
          reached = true;
          c.kill(); // SIGKILL while compaction stands at the step
        }
      }
      assertThat(reached)
          .as("compaction reached %s before the kill: %s", step, c.describe())
          .isTrue();
    }
    return lastAck;
  }
}
