package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class KillNineTest {
  private static final Duration LINE_WAIT = Duration.ofMinutes(5);

  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(Durability.class)
  void killMidWrite_keepsEveryAcknowledgedWrite_andTruncatesTheTornTailExactly(Durability d)
      throws Exception {
    for (int round = 0; round < 2; round++) {
      int big = 150 + round * 67; // first 64 MiB write; the kill follows its ack
      Path dir = tmp.resolve(d + "-" + round);
      boolean tear = round == 0;
      int lastAck = runAndKill(dir, d, big, tear);
      assertThat(lastAck).as("child acknowledged writes").isGreaterThanOrEqualTo(big - 1);

      Path newest = newestSegment(dir);
      byte[] crashed = Files.readAllBytes(newest);
      long truncated;
      try (HashLogStore s = TestStores.open(dir, d, "segment-size", "1MiB")) {
        truncated = TestStores.figure(s, "truncated-tail-bytes");
        for (int i = 0; i <= lastAck; i++) {
          assertThat(s.get(CrashChild.key(i)))
              .as(d + " acked key " + i)
              .isEqualTo(CrashChild.value(i, big));
        }
        byte[] inFlight = s.get(CrashChild.key(lastAck + 1));
        if (inFlight != null) {
          assertThat(inFlight)
              .as("in-flight write is whole")
              .isEqualTo(CrashChild.value(lastAck + 1, big));
        }
        assertThat(s.get(CrashChild.key(lastAck + 2))).isNull();
        // Recovery cut the newest segment at a record boundary and changed nothing before it;
        // what it reports as discarded is exactly the non-zero bytes it cut.
        byte[] recovered = Files.readAllBytes(newest);
        assertThat(recovered.length).isLessThanOrEqualTo(crashed.length);
        assertThat(Arrays.equals(recovered, 0, recovered.length, crashed, 0, recovered.length))
            .as("recovered prefix unchanged")
            .isTrue();
        int lastNonZero = crashed.length;
        while (lastNonZero > recovered.length && crashed[lastNonZero - 1] == 0) {
          lastNonZero--;
        }
        assertThat(truncated).isEqualTo(lastNonZero - recovered.length);
        if (tear) {
          // Half of the 64 MiB value of key big was in the file: all of it is cut.
          assertThat(lastAck).isEqualTo(big - 1);
          assertThat(truncated).isGreaterThanOrEqualTo(32L << 20);
        }
      }
      try (HashLogStore s = TestStores.open(dir, d, "segment-size", "1MiB")) {
        assertThat(TestStores.figure(s, "truncated-tail-bytes")).isZero();
        assertThat(s.stats().keyCount()).isGreaterThanOrEqualTo(lastAck + 1L);
      }
      System.out.println(
          "kill -9 "
              + d
              + " round "
              + round
              + ": "
              + (lastAck + 1)
              + " acknowledged, "
              + truncated
              + " torn tail bytes discarded");
    }
  }

  private static Path newestSegment(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".log")).sorted().reduce((a, b) -> b).get();
    }
  }

  private static int runAndKill(Path dir, Durability d, int big, boolean tear) throws Exception {
    int lastAck = -1;
    boolean killed = false;
    try (ChildProcess c =
        TestStores.child(
            256,
            CrashChild.class,
            dir.toString(),
            d.name(),
            Integer.toString(big),
            Boolean.toString(tear))) {
      for (String line = c.readLine(LINE_WAIT); line != null; line = c.readLine(LINE_WAIT)) {
        if (line.startsWith("ack ")) {
          lastAck = Integer.parseInt(line.substring(4).trim());
          if (lastAck == big && !tear) {
            c.kill(); // SIGKILL, most likely inside the next 64 MiB write
            killed = true;
          }
        } else if (line.equals("torn")) {
          c.kill(); // SIGKILL with half a record written
          killed = true;
        }
      }
      assertThat(killed).as("the child reached its kill point: %s", c.describe()).isTrue();
    }
    return lastAck;
  }
}
