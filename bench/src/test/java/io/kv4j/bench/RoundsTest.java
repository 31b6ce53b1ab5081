package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kv4j.Durability;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** How {@code --rounds} windows become one row, and how the option is validated. */
class RoundsTest {

  /** A one-second window of one thread: {@code ops} operations, each {@code latencyNs} long. */
  private static Window window(long ops, long latencyNs, long threadCpuNs, long cpuNs) {
    Histogram h = new Histogram(3);
    h.recordValueWithCount(latencyNs, ops);
    return new Window(
        new Histogram[] {h},
        new long[] {ops},
        new long[] {threadCpuNs},
        1_000_000_000L,
        cpuNs,
        new AtomicReference<>());
  }

  @Test
  void combine_oddCount_takesTheMiddleWindowAndKeepsTheRange() {
    Result r =
        Rows.combine(
            "e",
            "readrandom",
            1,
            Durability.BUFFERED,
            List.of(
                window(300, 2_000, 500_000_000L, 600_000_000L),
                window(100, 50_000, 500_000_000L, 600_000_000L),
                window(200, 1_000, 500_000_000L, 600_000_000L)));
    assertThat(r.ok()).isTrue();
    assertThat(r.opsPerSec()).isEqualTo(200);
    assertThat(r.figure("ops-per-sec-min")).isEqualTo(100);
    assertThat(r.figure("ops-per-sec-max")).isEqualTo(300);
    assertThat(r.figure("rounds")).isEqualTo(3);
    assertThat(r.ops()).isEqualTo(600);
    assertThat(r.seconds()).isEqualTo(3.0);
    // Percentiles over every operation of every window: the slow window's 100 of 600 operations
    // are the top 16.7%, so p99 is slow; p50 falls among the 300 at 2 µs.
    assertThat(r.p99Us()).isCloseTo(50, within(0.1));
    assertThat(r.p50Us()).isCloseTo(2, within(0.01));
    // 1.8 s of process CPU over 600 operations; workers used 1.5 s of it.
    assertThat(r.cpuUsPerOp()).isCloseTo(3000, within(0.001));
    assertThat(r.bgCpuShare()).isCloseTo(1.0 / 6, within(1e-9));
  }

  @Test
  void combine_evenCount_averagesTheTwoMiddleWindows() {
    Result r =
        Rows.combine(
            "e",
            "ycsb-a",
            2,
            Durability.SYNC,
            List.of(
                window(10, 1, 1, 1),
                window(40, 1, 1, 1),
                window(20, 1, 1, 1),
                window(1000, 1, 1, 1)));
    assertThat(r.opsPerSec()).isEqualTo(30);
    assertThat(r.threads()).isEqualTo(2);
    assertThat(r.durability()).isEqualTo(Durability.SYNC);
    assertThat(r.figure("ops-per-sec-max")).isEqualTo(1000);
  }

  @Test
  void combine_noWindows_isAFailedRow() {
    Result r = Rows.combine("e", "readrandom", 1, Durability.BUFFERED, List.of());
    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("no window");
  }

  @Test
  void rate_roundsRow_showsMedianAndRange() {
    Result r =
        Rows.combine(
            "e",
            "readrandom",
            1,
            Durability.BUFFERED,
            List.of(window(1_000, 1, 1, 1), window(3_000, 1, 1, 1), window(2_000, 1, 1, 1)));
    assertThat(Format.rate(r)).isEqualTo("2,000 (1,000–3,000)");
    assertThat(Format.rate(ReportTest.ok("e", "readrandom", "", 2_000))).isEqualTo("2,000");
  }

  @Test
  void parse_rounds_acceptsOneToAThousand() {
    assertThat(Options.parse("--rounds", "7").rounds).isEqualTo(7);
    assertThat(Options.parse().rounds).isEqualTo(1);
    assertThatThrownBy(() -> Options.parse("--rounds", "0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--rounds must be positive");
    assertThatThrownBy(() -> Options.parse("--rounds", "1001"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--rounds must be 1..1000");
    assertThatThrownBy(() -> Options.parse("--rounds", "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a number");
  }
}
