package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The footprint's wait for background work ({@link Footprint#quiesce}): it ends only once every
 * background figure is 0 at two polls in a row with the same directory size in between, and never
 * waits for an engine that reports no such figure.
 */
class QuiesceTest {
  private static final long LONG = TimeUnit.MINUTES.toNanos(5);

  /** Figures and directory sizes handed out one poll at a time; the last one repeats. */
  private static final class Script {
    private final Deque<Map<String, Number>> figures = new ArrayDeque<>();
    private final Deque<Long> sizes = new ArrayDeque<>();
    int sizeReads;

    Script figures(Map<String, Number> f) {
      figures.add(f);
      return this;
    }

    Script sizes(Long... s) {
      sizes.addAll(List.of(s));
      return this;
    }

    Supplier<Map<String, Number>> figureSupplier() {
      return () -> figures.size() > 1 ? figures.poll() : figures.peek();
    }

    long size() {
      sizeReads++;
      return sizes.size() > 1 ? sizes.poll() : sizes.peek();
    }
  }

  private static Map<String, Number> busy(String figure) {
    Map<String, Number> m = new java.util.HashMap<>(idle());
    m.put(figure, 1L);
    return m;
  }

  private static Map<String, Number> idle() {
    return Map.of(
        "running-flushes",
        0L,
        "flush-pending",
        0L,
        "running-compactions",
        0L,
        "compaction-pending",
        0L,
        "sst-bytes",
        123L);
  }

  @Test
  void quiesce_waitsUntilEveryFigureIsZeroTwiceWithTheSameSize() {
    Script s =
        new Script()
            .figures(busy("running-flushes"))
            .figures(busy("flush-pending"))
            .figures(busy("running-compactions"))
            .figures(busy("compaction-pending"))
            .figures(idle())
            .sizes(500L, 400L, 400L);
    Footprint.Quiesce q = Footprint.quiesce(s.figureSupplier(), s::size, LONG, 0);
    assertThat(q.settled()).isTrue();
    // Four busy polls, then idle with sizes 500 (a finished job's files still there), 400, 400.
    assertThat(q.polls()).isEqualTo(7);
    assertThat(s.sizeReads).as("the size is read only while idle").isEqualTo(3);
  }

  @Test
  void quiesce_busyAgainBetweenIdlePolls_startsOver() {
    Script s =
        new Script()
            .figures(idle())
            .figures(busy("running-compactions"))
            .figures(idle())
            .sizes(100L);
    Footprint.Quiesce q = Footprint.quiesce(s.figureSupplier(), s::size, LONG, 0);
    assertThat(q.settled()).isTrue();
    assertThat(q.polls()).isEqualTo(4);
  }

  @Test
  void quiesce_engineWithoutBackgroundFigures_doesNotWait() {
    Script s = new Script().figures(Map.of("index-bytes", 5L)).sizes(1L);
    Footprint.Quiesce q = Footprint.quiesce(s.figureSupplier(), s::size, LONG, 0);
    assertThat(q.settled()).isTrue();
    assertThat(q.polls()).isEqualTo(1);
    assertThat(s.sizeReads).isZero();
  }

  @Test
  void quiesce_neverIdle_givesUpAtTheDeadlineAndSaysSo() {
    Script s = new Script().figures(busy("running-compactions")).sizes(1L);
    Footprint.Quiesce q = Footprint.quiesce(s.figureSupplier(), s::size, 0, 0);
    assertThat(q.settled()).isFalse();
    assertThat(q.polls()).isEqualTo(1);
  }
}
