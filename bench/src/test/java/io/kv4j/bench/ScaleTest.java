package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scale scenario's figures beyond heap and reopen: the load's time and longest write, the
 * verified gets after the reopen with their latencies, and the GC pauses of each phase.
 */
class ScaleTest {
  @TempDir Path tmp;

  private Result runScale(StringBuilder log, String... extra) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of("--engines", "hashlog", "--scenarios", "scale", "--scale-value-size", "100"));
    args.addAll(List.of(extra));
    Measurements m = LongScenariosTest.run(tmp, log, args.toArray(String[]::new));
    assertThat(m.results()).as(log.toString()).hasSize(1);
    return m.results().get(0);
  }

  @Test
  void run_smallStore_reportsLoadReopenReadsAndGcPerPhase() throws Exception {
    StringBuilder log = new StringBuilder();
    Result r = runScale(log, "--scale-keys", "5000", "--scale-read-seconds", "0.2");
    String ctx = log + " " + r;
    assertThat(r.ok()).as(ctx).isTrue();
    assertThat(r.ops()).isEqualTo(5000);
    assertThat(r.liveBytes()).isEqualTo(5000L * (16 + 100));
    assertThat(r.figure("load-seconds")).as(ctx).isPositive().isEqualTo(r.seconds());
    assertThat(r.figure("load-max-write-ms")).as(ctx).isPositive();
    assertThat(r.figure("load-max-write-ms") / 1e3).isLessThanOrEqualTo(r.seconds());
    assertThat(r.figure("reopen-seconds")).as(ctx).isPositive();
    assertThat(r.figure("heap-bytes-per-key-reopened")).as(ctx).isFinite();
    assertThat(r.figure("heap-after-reopen-bytes")).as(ctx).isPositive();

    // Reads: ran for about the asked time, every value verified (a wrong one fails the row).
    assertThat(r.figure("reads")).as(ctx).isGreaterThanOrEqualTo(1);
    assertThat(r.figure("read-seconds")).as(ctx).isGreaterThanOrEqualTo(0.2).isLessThan(30);
    assertThat(r.figure("reads-per-second"))
        .isCloseTo(
            r.figure("reads") / r.figure("read-seconds"),
            org.assertj.core.data.Offset.offset(1e-6));
    double p50 = r.figure("read-p50-us");
    double p99 = r.figure("read-p99-us");
    double p999 = r.figure("read-p999-us");
    double max = r.figure("read-max-us");
    assertThat(p50).as(ctx).isPositive();
    assertThat(p99).as(ctx).isGreaterThanOrEqualTo(p50);
    assertThat(p999).as(ctx).isGreaterThanOrEqualTo(p99);
    // HdrHistogram keeps 3 significant digits: a percentile may round above the exact maximum.
    assertThat(max).as(ctx).isGreaterThanOrEqualTo(p999 * 0.999);

    for (String phase : List.of("load", "reopen", "read")) {
      double n = r.figure(phase + "-gc-pauses");
      double total = r.figure(phase + "-gc-pause-total-ms");
      double longest = r.figure(phase + "-gc-pause-max-ms");
      assertThat(n).as(ctx + phase).isNotNaN().isGreaterThanOrEqualTo(0);
      assertThat(longest).as(ctx + phase).isGreaterThanOrEqualTo(0).isLessThanOrEqualTo(total);
      if (n == 0) {
        assertThat(total).as(ctx + phase).isZero();
      }
    }
    assertThat(log).contains("verified gets in").contains("GC pauses");

    List<String[]> table = OwnTables.scale(List.of(r));
    assertThat(table).hasSize(2);
    assertThat(table.get(0))
        .contains("load s", "gets/s", "get p50 / p99 / p99.9", "GC gets n / total / max");
    assertThat(table.get(1)).hasSameSizeAs(table.get(0));
    assertThat(String.join("|", table.get(1)))
        .containsPattern("\\|[0-9]+ / [0-9]+ ms / [0-9]+ ms\\|")
        .contains(Format.micros(p99));
  }

  @Test
  void run_withPreload_waitsForItAndReportsItBesideTheReopen() throws Exception {
    StringBuilder log = new StringBuilder();
    Result r =
        runScale(
            log,
            "--scale-keys",
            "20000",
            "--scale-read-seconds",
            "0.2",
            "--engine-option",
            "hashlog:preload=true",
            "--engine-option",
            "hashlog:segment-size=256KiB");
    String ctx = log + " " + r;
    assertThat(r.ok()).as(ctx).isTrue();
    assertThat(r.figure("preload-seconds")).as(ctx).isNotNaN().isGreaterThanOrEqualTo(0);
    assertThat(log).contains("s of preload");
    assertThat(String.join("|", OwnTables.scale(List.of(r)).get(1))).contains(" s preload)");

    StringBuilder without = new StringBuilder();
    Result plain = runScale(without, "--scale-keys", "2000", "--scale-read-seconds", "0.1");
    assertThat(plain.figure("preload-seconds")).as("no preload, no wait").isNaN();
    assertThat(without).doesNotContain("preload");
  }

  @Test
  void options_scaleReadSeconds_parsedAndChecked() {
    assertThat(Options.parse().scaleReadSeconds).isEqualTo(5);
    assertThat(Options.parse("--scale-read-seconds", "250ms").scaleReadSeconds).isEqualTo(0.25);
    assertThatThrownBy(() -> Options.parse("--scale-read-seconds", "-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--scale-read-seconds");
    assertThat(Options.USAGE).contains("--scale-read-seconds");
  }

  @Test
  void isPause_leavesOutSystemGcAndConcurrentCycles() {
    assertThat(GcPauses.isPause("G1 Young Generation", "end of minor GC", "G1 Evacuation Pause"))
        .isTrue();
    assertThat(GcPauses.isPause("G1 Old Generation", "end of major GC", "Allocation Failure"))
        .isTrue();
    assertThat(GcPauses.isPause("G1 Old Generation", "end of major GC", "System.gc()")).isFalse();
    assertThat(GcPauses.isPause("ZGC Cycles", "end of GC cycle", "Allocation Rate")).isFalse();
    assertThat(GcPauses.isPause("G1 Concurrent GC", "end of concurrent GC pause", "x")).isFalse();
    assertThat(GcPauses.isPause("ZGC Pauses", "end of GC pause", "Allocation Rate")).isTrue();
  }

  @Test
  void summarise_countsOnlyTheCollectionsBetweenTheMarks() {
    List<GcPauses.Pause> all =
        List.of(
            new GcPauses.Pause("young", 4, 50), // before the window: not counted
            new GcPauses.Pause("young", 5, 7),
            new GcPauses.Pause("young", 6, 12),
            new GcPauses.Pause("old", 2, 3),
            new GcPauses.Pause("young", 7, 40), // after the window: not counted
            new GcPauses.Pause("other", 1, 99)); // a collector no mark knows: not counted
    GcPauses.Mark from = new GcPauses.Mark(Map.of("young", 4L, "old", 1L));
    GcPauses.Mark to = new GcPauses.Mark(Map.of("young", 6L, "old", 2L));
    GcPauses.Summary s = GcPauses.summarise(all, from, to);
    assertThat(s).isEqualTo(new GcPauses.Summary(3, 22, 12));
    assertThat(GcPauses.summarise(all, to, to)).isEqualTo(new GcPauses.Summary(0, 0, 0));
    Map<String, Double> f = new LinkedHashMap<>();
    s.into(f, "read");
    assertThat(f)
        .containsExactly(
            Map.entry("read-gc-pauses", 3.0),
            Map.entry("read-gc-pause-total-ms", 22.0),
            Map.entry("read-gc-pause-max-ms", 12.0));
  }

  @Test
  void between_seesACollectionTheProgramDidNotAskFor() {
    try (GcPauses gc = new GcPauses()) {
      GcPauses.Mark t0 = GcPauses.mark();
      long before = collections();
      // Garbage until the collector runs by itself (not System.gc(), which is left out).
      long sink = 0;
      for (int i = 0; i < 200_000_000 && collections() == before; i++) {
        byte[] garbage = new byte[64 << 10];
        sink += garbage.length;
      }
      assertThat(collections()).as("no collection after " + sink + " bytes").isGreaterThan(before);
      GcPauses.Mark t1 = GcPauses.mark();
      // Notifications come on the JMX thread: wait as long as a loaded machine needs.
      GcPauses.Summary s = gc.between(t0, t1, TimeUnit.SECONDS.toNanos(60));
      assertThat(s.count()).as(s.toString()).isPositive();
      assertThat(s.maxMillis()).isLessThanOrEqualTo(s.totalMillis());
      // The program's own collection is no pause of it.
      System.gc();
      GcPauses.Mark t2 = GcPauses.mark();
      assertThat(gc.between(t1, t2).count()).isZero();
    }
  }

  private static long collections() {
    long n = 0;
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, b.getCollectionCount());
    }
    return n;
  }
}
