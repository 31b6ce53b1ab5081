package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The quietness verdict, fed synthetic readings, and the parsing of {@code /proc}. */
class QuietnessTest {
  /** Nine calibration times of about 10 ms, 2% apart at most. */
  private static Quietness.Calibration steady(long baseNs) {
    long[] ns = new long[9];
    for (int i = 0; i < ns.length; i++) {
      ns[i] = baseNs + (i % 3) * baseNs / 100;
    }
    return new Quietness.Calibration(ns);
  }

  private static final Quietness.Calibration TEN_MS = steady(10_000_000L);

  private static Quietness.Readings quiet() {
    return quiet(null);
  }

  private static Quietness.Readings quiet(Quietness.ServerUse servers) {
    return new Quietness.Readings(2, 0.15, 0.02, 0.03, 0.4, 0.001, 95, TEN_MS, TEN_MS, servers);
  }

  @Test
  void judge_quietMachine_trustsThePicksAndShowsTheNumbers() {
    Quietness.Verdict v = Quietness.judge(quiet());
    assertThat(v.quiet()).isTrue();
    assertThat(v.problems()).isEmpty();
    assertThat(v.lines().get(0)).isEqualTo("**Quiet enough to trust the picks: yes.**");
    assertThat(v.numbers())
        .contains("2 CPUs")
        .contains("load average 0.15")
        .contains("other processes 0.03 cores on average, 0.40 in the worst second")
        .contains("steal 0.1%")
        .contains("median 10.10 ms, spread 2% before");
  }

  @Test
  void judge_loadAverageAboveTheCpus_isNotQuietAndNamesLoadAndLimit() {
    Quietness.Readings r =
        new Quietness.Readings(2, 9.5, 0.02, 0.03, 0.4, 0.001, 95, TEN_MS, TEN_MS, null);
    Quietness.Verdict v = Quietness.judge(r);
    assertThat(v.quiet()).isFalse();
    assertThat(v.problems())
        .containsExactly("load average 9.50 before the run (limit 2.00 for 2 CPUs)");
    assertThat(v.lines().get(0))
        .startsWith("**NOT quiet enough to trust the picks:** load average 9.50")
        .contains("Re-run on a quiet machine");
  }

  @Test
  void judge_loadAtTheLimit_isStillQuiet() {
    Quietness.Readings r =
        new Quietness.Readings(2, 2.0, 0.02, 0.03, 0.4, 0.001, 95, TEN_MS, TEN_MS, null);
    assertThat(Quietness.judge(r).quiet()).isTrue();
  }

  @Test
  void judge_otherProcessesBusyBeforeOrDuring_isNotQuiet() {
    Quietness.Verdict before =
        Quietness.judge(
            new Quietness.Readings(2, 0.1, 0.9, 0.03, 0.4, 0, 95, TEN_MS, TEN_MS, null));
    assertThat(before.quiet()).isFalse();
    assertThat(before.problems())
        .containsExactly("other processes used 0.90 of 2 CPUs just before the run (limit 0.20)");
    Quietness.Verdict during =
        Quietness.judge(
            new Quietness.Readings(2, 0.1, 0.02, 1.65, 1.8, 0, 95, TEN_MS, TEN_MS, null));
    assertThat(during.problems())
        .containsExactly(
            "other processes used 1.65 of 2 CPUs on average during the run (limit 0.20)");
  }

  @Test
  void judge_worstSecondAlone_doesNotCondemnTheRun() {
    // A cron job's second of work is in the numbers but not a verdict: the average decides.
    Quietness.Readings r =
        new Quietness.Readings(2, 0.1, 0.02, 0.05, 1.9, 0, 95, TEN_MS, TEN_MS, null);
    assertThat(Quietness.judge(r).quiet()).isTrue();
  }

  @Test
  void judge_stealAboveTwoPercent_isNotQuiet() {
    Quietness.Verdict v =
        Quietness.judge(
            new Quietness.Readings(2, 0.1, 0.02, 0.03, 0.4, 0.032, 95, TEN_MS, TEN_MS, null));
    assertThat(v.problems())
        .containsExactly("the hypervisor stole 3.2% of the CPU time (limit 2%)");
  }

  @Test
  void judge_calibrationSpreadOrDrift_isNotQuiet() {
    long[] jumpy = {10_000_000, 10_100_000, 26_500_000, 10_050_000, 10_000_000};
    Quietness.Verdict spread =
        Quietness.judge(
            new Quietness.Readings(
                2, 0.1, 0.02, 0.03, 0.4, 0, 95, new Quietness.Calibration(jumpy), TEN_MS, null));
    assertThat(spread.problems())
        .containsExactly("the calibration loop's times spread 165% before the run (limit 10%)");
    Quietness.Verdict drift =
        Quietness.judge(
            new Quietness.Readings(
                2, 0.1, 0.02, 0.03, 0.4, 0, 95, TEN_MS, steady(13_000_000L), null));
    assertThat(drift.problems())
        .containsExactly(
            "the calibration loop's median moved +30% from before to after the run (limit ±10%)");
  }

  @Test
  void judge_nothingMeasured_isNotQuiet() {
    Quietness.Calibration none = new Quietness.Calibration(new long[0]);
    Quietness.Verdict v =
        Quietness.judge(
            new Quietness.Readings(
                4,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                10,
                none,
                none,
                null));
    assertThat(v.quiet()).isFalse();
    assertThat(v.problems())
        .contains(
            "load average not measured (no /proc/loadavg)",
            "CPU use of other processes not measured (no /proc/stat)",
            "steal time not measured (no /proc/stat)",
            "calibration loop before the run not measured");
    assertThat(v.numbers()).contains("load average n/a").contains("steal n/a");
  }

  @Test
  void parseStat_sumsBusyAndStealAndCountsCpus() {
    String stat =
        "cpu  61041 5 6902 81043 650 7 210 663 0 0\n"
            + "cpu0 29587 0 3074 42083 119 0 63 309 0 0\n"
            + "cpu1 31453 5 3828 38959 531 7 147 354 0 0\n"
            + "intr 855636 0 0\n";
    CpuTimes t = CpuTimes.parseStat(stat);
    assertThat(t.cpus()).isEqualTo(2);
    assertThat(t.busy()).isEqualTo(61041 + 5 + 6902 + 7 + 210);
    assertThat(t.steal()).isEqualTo(663);
    assertThat(t.total()).isEqualTo(t.busy() + 81043 + 650 + 663);
    assertThatThrownBy(() -> CpuTimes.parseStat("intr 1\n"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void othersCores_subtractsThisProcessFromTheMachinesBusyTime() {
    // 2 CPUs for 1 s = 200 ticks; 150 busy = 1.5 cores, of which this process used 1.0 s.
    CpuTimes a = new CpuTimes(1000, 10, 5000, 2);
    CpuTimes b = new CpuTimes(1150, 14, 5200, 2);
    assertThat(CpuTimes.othersCores(a, b, 1_000_000_000L, 1_000_000_000L, 0))
        .isCloseTo(0.5, within(1e-9));
    assertThat(CpuTimes.stealShare(a, b)).isCloseTo(0.02, within(1e-9));
    // Never below 0 (tick granularity), NaN for an empty interval.
    assertThat(CpuTimes.othersCores(a, b, 2_000_000_000L, 1_000_000_000L, 0)).isEqualTo(0);
    assertThat(CpuTimes.othersCores(a, a, 0, 1, 0)).isNaN();
  }

  @Test
  void othersCores_serversTheRunTalksTo_countAsTheRunsWorkNotAsOthers() {
    // 2 CPUs for 1 s = 200 ticks; 180 busy = 1.8 cores: this JVM 0.5 s, the servers 120 ticks
    // (1.2 cores), so other processes used 0.1 core.
    CpuTimes a = new CpuTimes(1000, 0, 5000, 2);
    CpuTimes b = new CpuTimes(1180, 0, 5200, 2);
    assertThat(CpuTimes.serverCores(a, b, 120)).isCloseTo(1.2, within(1e-9));
    assertThat(CpuTimes.othersCores(a, b, 500_000_000L, 1_000_000_000L, 120))
        .isCloseTo(0.1, within(1e-9));
    // Without the servers taken out, their work would be "other processes" (the 0.90).
    assertThat(CpuTimes.othersCores(a, b, 500_000_000L, 1_000_000_000L, 0))
        .isCloseTo(1.3, within(1e-9));
    // A servers' reading above the machine's (ticks read a moment apart) never goes below 0.
    assertThat(CpuTimes.othersCores(a, b, 500_000_000L, 1_000_000_000L, 400)).isEqualTo(0);
    assertThat(CpuTimes.serverCores(a, a, 5)).isNaN();
  }

  @Test
  void judge_withServers_addsTheirLineAfterTheReadingsAndJudgesOnlyTheOthers() {
    Quietness.Verdict v =
        Quietness.judge(
            quiet(new Quietness.ServerUse("postgres 127.0.0.1:5432 (pid 2957)", 0.01, 0.87)));
    assertThat(v.quiet()).isTrue();
    assertThat(v.lines()).hasSize(5);
    assertThat(v.lines().subList(0, 3))
        .containsExactly("**Quiet enough to trust the picks: yes.**", "", v.numbers());
    assertThat(v.lines().get(3)).isEmpty();
    assertThat(v.servers())
        .isEqualTo(v.lines().get(4))
        .startsWith("Servers the run talked to (their CPU is the measured engines' own work")
        .contains("0.87 cores on average during the run, 0.01 just before it")
        .endsWith("Found: postgres 127.0.0.1:5432 (pid 2957).");
    assertThat(v.numbers()).doesNotContain("Servers");
  }

  @Test
  void judge_withoutServers_printsNoServersLine() {
    Quietness.Verdict v = Quietness.judge(quiet());
    assertThat(v.servers()).isNull();
    assertThat(v.lines()).hasSize(3);
    Quietness.Readings none = quiet(new Quietness.ServerUse("", Double.NaN, Double.NaN));
    assertThat(Quietness.judge(none).servers())
        .contains("n/a cores on average during the run")
        .endsWith("Found: none.");
  }

  @Test
  void parseLoad_readsTheOneMinuteAverage() {
    assertThat(Quietness.parseLoad("16.42 15.74 9.05 15/310 29002\n")).isEqualTo(16.42);
  }

  @Test
  void calibration_medianAndSpread() {
    Quietness.Calibration c = new Quietness.Calibration(new long[] {12, 10, 11, 20});
    assertThat(c.medianMs()).isCloseTo(11.5e-6, within(1e-12));
    assertThat(c.spread()).isCloseTo(1.0, within(1e-9));
    assertThat(Quietness.calibrate().nanos()).hasSize(Quietness.CALIBRATION_REPS);
  }
}
