package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ChildWatchTest {
  @Test
  void silentChild_isKilledAfterTheSilence() throws Exception {
    Process p = new ProcessBuilder("sleep", "600").start();
    try (ChildWatch watch = new ChildWatch(p, Duration.ofMillis(300), Duration.ofSeconds(600))) {
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("killed well before 600 s").isTrue();
      assertThat(watch.killed()).startsWith("no progress for 0.3 s");
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void progressingChild_runsPastTheSilence_untilTheBackstop() throws Exception {
    // A line every 50 ms: never silent for 1 s, however long it runs.
    Process p =
        new ProcessBuilder("sh", "-c", "while true; do echo line; sleep 0.05; done").start();
    long started = System.nanoTime();
    try (ChildWatch watch = new ChildWatch(p, Duration.ofSeconds(1), Duration.ofSeconds(4));
        BufferedReader out =
            new BufferedReader(
                new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))) {
      long lines = 0;
      while (out.readLine() != null) { // EOF once the watch killed it
        watch.progress();
        lines++;
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("killed").isTrue();
      assertThat(System.nanoTime() - started)
          .as("ran to the backstop after %d lines", lines)
          .isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(4));
      assertThat(watch.killed()).startsWith("still running after 4 s");
    } finally {
      p.destroyForcibly();
    }
  }
}
