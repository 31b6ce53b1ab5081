package io.kv4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * How quiet the machine was before and during a run, and whether that was quiet enough to trust the
 * run's picks. Numbers measured on a machine where other processes compete for the CPU can reverse
 * a ranking (under a load average of 9-16 on 2 cores the runner once printed lmdb 2.25x hashlog on
 * readrandom, the opposite of quiet runs), so every pick is printed next to this verdict.
 *
 * <p>Readings (Linux {@code /proc}; elsewhere only the calibration loop):
 *
 * <ul>
 *   <li>the 1-minute load average just before the run, against the machine's CPUs;
 *   <li>the CPU time of <em>other</em> processes (all CPUs' busy time from {@code /proc/stat} minus
 *       this process's CPU time, and minus the CPU time of the database servers the run's server
 *       engines talk to: {@link ServerProcesses}, their work is the measured work) in cores, over a
 *       short window before the run, on average over the run and in its worst second; the servers'
 *       own figures on a line of their own;
 *   <li>steal time (CPU the hypervisor gave to other guests) as a share of all CPU time in the run;
 *   <li>a fixed single-threaded calibration loop timed several times before and after the run: its
 *       spread (slowest / fastest - 1) shows preemption and frequency changes, its drift (median
 *       after / median before - 1) a machine that changed speed during the run.
 * </ul>
 *
 * <p>{@link #judge(Readings)} turns readings into a {@link Verdict} with fixed limits (the
 * constants below); it is pure, so tests feed it synthetic readings.
 */
final class Quietness {
  /** Largest 1-minute load average per CPU before the run. */
  static final double MAX_LOAD_PER_CPU = 1.0;

  /** Largest CPU use of other processes, as a share of all CPUs, before and during the run. */
  static final double MAX_OTHERS_SHARE = 0.10;

  /** Largest share of CPU time stolen by the hypervisor during the run. */
  static final double MAX_STEAL_SHARE = 0.02;

  /** Largest spread of the calibration loop's times (slowest / fastest - 1), before and after. */
  static final double MAX_SPREAD = 0.10;

  /** Largest change of the calibration loop's median from before to after the run. */
  static final double MAX_DRIFT = 0.10;

  /** Timed repetitions of the calibration loop, after {@link #CALIBRATION_WARMUP} untimed ones. */
  static final int CALIBRATION_REPS = 9;

  static final int CALIBRATION_WARMUP = 4;

  /** Iterations of one calibration repetition: a few milliseconds of integer work. */
  private static final int CALIBRATION_ITERATIONS = 4_000_000;

  private static final long SAMPLE_MS = 1000;

  private Quietness() {}

  /**
   * The timed repetitions of the calibration loop.
   *
   * @param nanos the time of each repetition, in nanoseconds
   */
  record Calibration(long[] nanos) {
    Calibration {
      nanos = nanos.clone();
      Arrays.sort(nanos);
    }

    double medianMs() {
      int n = nanos.length;
      return (n % 2 == 1 ? nanos[n / 2] : (nanos[n / 2 - 1] + nanos[n / 2]) / 2.0) / 1e6;
    }

    /** Slowest / fastest - 1; NaN without readings. */
    double spread() {
      return nanos.length == 0 || nanos[0] <= 0
          ? Double.NaN
          : (double) nanos[nanos.length - 1] / nanos[0] - 1;
    }
  }

  /**
   * Everything measured around a run. NaN marks a reading that was not available (no {@code
   * /proc}).
   *
   * @param cpus the machine's CPUs (from {@code /proc/stat}, else the JVM's available processors)
   * @param loadBefore the 1-minute load average just before the run
   * @param othersBefore the CPU use of other processes in the short window before the run, in cores
   * @param othersDuring their average CPU use over the run, in cores
   * @param othersWorstSecond their CPU use in the worst one-second sample of the run, in cores
   * @param stealShare stolen CPU time / all CPU time over the run
   * @param seconds the run's wall time
   * @param before the calibration loop before the run
   * @param after the calibration loop after the run
   * @param servers the CPU use of the database servers the run's server engines talked to, taken
   *     out of the "other processes" figures; null when it measured no server engine
   */
  record Readings(
      int cpus,
      double loadBefore,
      double othersBefore,
      double othersDuring,
      double othersWorstSecond,
      double stealShare,
      double seconds,
      Calibration before,
      Calibration after,
      ServerUse servers) {}

  /**
   * The CPU use of the database servers a run talked to.
   *
   * @param found which server processes ({@link ServerProcesses#description()}), empty for none
   * @param before their CPU use in the short window before the run, in cores
   * @param during their average CPU use over the run, in cores
   */
  record ServerUse(String found, double before, double during) {}

  /**
   * Whether a run was quiet enough to trust its picks.
   *
   * @param quiet true when every reading was available and within its limit
   * @param problems what was over its limit or not measured, one phrase each
   * @param numbers all the readings, as one line
   * @param servers the servers' CPU use as one line, null when the run measured no server engine
   */
  record Verdict(boolean quiet, List<String> problems, String numbers, String servers) {
    Verdict {
      problems = List.copyOf(problems);
    }

    /**
     * The lines printed above the picks: the verdict, then the readings, then the servers' line
     * when there is one (markdown bold marks; the console strips them).
     */
    List<String> lines() {
      List<String> out = new ArrayList<>();
      if (quiet) {
        out.add("**Quiet enough to trust the picks: yes.**");
      } else {
        out.add(
            "**NOT quiet enough to trust the picks:** "
                + String.join("; ", problems)
                + ". Re-run on a quiet machine before believing a ranking (for a ratio between two"
                + " engines: `--rounds` or `bench/pairs.sh`).");
      }
      out.add("");
      out.add(numbers);
      if (servers != null) {
        out.add("");
        out.add(servers);
      }
      return List.copyOf(out);
    }
  }

  /**
   * Judges readings against the limits of this class.
   *
   * @param r the readings
   * @return the verdict
   */
  static Verdict judge(Readings r) {
    List<String> problems = new ArrayList<>();
    double cpus = r.cpus();
    if (Double.isNaN(r.loadBefore())) {
      problems.add("load average not measured (no /proc/loadavg)");
    } else if (r.loadBefore() > MAX_LOAD_PER_CPU * cpus) {
      problems.add(
          String.format(
              Locale.ROOT,
              "load average %.2f before the run (limit %.2f for %d CPUs)",
              r.loadBefore(),
              MAX_LOAD_PER_CPU * cpus,
              r.cpus()));
    }
    others(problems, r);
    if (Double.isNaN(r.stealShare())) {
      problems.add("steal time not measured (no /proc/stat)");
    } else if (r.stealShare() > MAX_STEAL_SHARE) {
      problems.add(
          String.format(
              Locale.ROOT,
              "the hypervisor stole %.1f%% of the CPU time (limit %.0f%%)",
              r.stealShare() * 100,
              MAX_STEAL_SHARE * 100));
    }
    spread(problems, "before", r.before());
    spread(problems, "after", r.after());
    double drift = drift(r);
    if (!Double.isNaN(drift) && Math.abs(drift) > MAX_DRIFT) {
      problems.add(
          String.format(
              Locale.ROOT,
              "the calibration loop's median moved %+.0f%% from before to after the run (limit"
                  + " ±%.0f%%)",
              drift * 100,
              MAX_DRIFT * 100));
    }
    return new Verdict(problems.isEmpty(), problems, numbers(r), serversLine(r));
  }

  private static void others(List<String> problems, Readings r) {
    double othersLimit = MAX_OTHERS_SHARE * r.cpus();
    if (Double.isNaN(r.othersBefore()) || Double.isNaN(r.othersDuring())) {
      problems.add("CPU use of other processes not measured (no /proc/stat)");
    } else {
      if (r.othersBefore() > othersLimit) {
        problems.add(
            String.format(
                Locale.ROOT,
                "other processes used %.2f of %d CPUs just before the run (limit %.2f)",
                r.othersBefore(),
                r.cpus(),
                othersLimit));
      }
      if (r.othersDuring() > othersLimit) {
        problems.add(
            String.format(
                Locale.ROOT,
                "other processes used %.2f of %d CPUs on average during the run (limit %.2f)",
                r.othersDuring(),
                r.cpus(),
                othersLimit));
      }
    }
  }

  private static void spread(List<String> problems, String when, Calibration c) {
    double s = c.spread();
    if (Double.isNaN(s)) {
      problems.add("calibration loop " + when + " the run not measured");
    } else if (s > MAX_SPREAD) {
      problems.add(
          String.format(
              Locale.ROOT,
              "the calibration loop's times spread %.0f%% %s the run (limit %.0f%%)",
              s * 100,
              when,
              MAX_SPREAD * 100));
    }
  }

  private static double drift(Readings r) {
    if (r.before().nanos().length == 0 || r.after().nanos().length == 0) {
      return Double.NaN;
    }
    return r.after().medianMs() / r.before().medianMs() - 1;
  }

  /** All readings as one line, for the report (NaN as "n/a"). */
  static String numbers(Readings r) {
    return String.format(
        Locale.ROOT,
        "Readings: %d CPUs; before the run: load average %s, other processes %s cores; during"
            + " the run (%.0f s): other processes %s cores on average, %s in the worst second,"
            + " steal %s; calibration loop (%d × %,d iterations): median %s ms, spread %s"
            + " before, median %s ms, spread %s after (drift %s).",
        r.cpus(),
        fmt(r.loadBefore(), "%.2f"),
        fmt(r.othersBefore(), "%.2f"),
        r.seconds(),
        fmt(r.othersDuring(), "%.2f"),
        fmt(r.othersWorstSecond(), "%.2f"),
        pct(r.stealShare(), "%.1f%%"),
        CALIBRATION_REPS,
        CALIBRATION_ITERATIONS,
        fmt(r.before().nanos().length == 0 ? Double.NaN : r.before().medianMs(), "%.2f"),
        pct(r.before().spread(), "%.0f%%"),
        fmt(r.after().nanos().length == 0 ? Double.NaN : r.after().medianMs(), "%.2f"),
        pct(r.after().spread(), "%.0f%%"),
        pct(drift(r), "%+.0f%%"));
  }

  /**
   * The servers' line: which server processes the run talked to and their CPU use, which the "other
   * processes" figures leave out; null when the run measured no server engine.
   */
  static String serversLine(Readings r) {
    ServerUse s = r.servers();
    if (s == null) {
      return null;
    }
    return String.format(
        Locale.ROOT,
        "Servers the run talked to (their CPU is the measured engines' own work, so the figures"
            + " of other processes above leave it out): %s cores on average during the run, %s"
            + " just before it. Found: %s.",
        fmt(s.during(), "%.2f"),
        fmt(s.before(), "%.2f"),
        s.found().isEmpty() ? "none" : s.found());
  }

  private static String fmt(double v, String format) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, format, v);
  }

  private static String pct(double v, String format) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, format, v * 100);
  }

  /**
   * Parses the 1-minute load average from {@code /proc/loadavg}.
   *
   * @param text the file's content
   * @return the load average
   */
  static double parseLoad(String text) {
    return Double.parseDouble(text.trim().split("\\s+")[0]);
  }

  private static double load() {
    try {
      return parseLoad(Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII));
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** Times the calibration loop: untimed warm-up repetitions, then the timed ones. */
  static Calibration calibrate() {
    long sink = 0;
    for (int i = 0; i < CALIBRATION_WARMUP; i++) {
      sink += loop(CALIBRATION_ITERATIONS, i);
    }
    long[] nanos = new long[CALIBRATION_REPS];
    for (int i = 0; i < nanos.length; i++) {
      long t0 = System.nanoTime();
      sink += loop(CALIBRATION_ITERATIONS, i);
      nanos[i] = System.nanoTime() - t0;
    }
    Timing.Blackhole.consume(sink);
    return new Calibration(nanos);
  }

  /** Fixed integer work (xorshift and multiply), the same every time; no memory traffic. */
  private static long loop(int iterations, long seed) {
    long x = seed * 0x9E3779B97F4A7C15L + 1;
    long acc = 0;
    for (int i = 0; i < iterations; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      acc += x * 0xBF58476D1CE4E5B9L;
    }
    return acc;
  }

  /**
   * Starts watching: reads the load average, times the calibration loop while measuring the other
   * processes' CPU use around it, then samples once a second until {@link Watch#stop()}.
   *
   * @param servers the local server processes the run talks to ({@link ServerProcesses#none()}
   *     without server engines): their CPU counts as the run's, not as other processes'
   * @return the running watch
   */
  static Watch watch(ServerProcesses servers) {
    return new Watch(servers);
  }

  /** The measurement of one run, from {@link #watch(ServerProcesses)} to {@link #stop()}. */
  static final class Watch {
    private final ServerProcesses servers;
    private final int cpus;
    private final double loadBefore;
    private final double othersBefore;
    private final double serversBefore;
    private final Calibration before;
    private final CpuTimes start;
    private final long startOwn;
    private final long startServers;
    private final long startNanos;
    private final Thread sampler;
    private volatile boolean stopping;
    private double worst = Double.NaN;
    private long lastServerTicks;

    private Watch(ServerProcesses servers) {
      this.servers = servers;
      loadBefore = load();
      CpuTimes a = CpuTimes.read();
      long own0 = Timing.processCpu();
      long servers0 = serverTicks();
      long t0 = System.nanoTime();
      before = calibrate();
      CpuTimes b = CpuTimes.read();
      long servers1 = serverTicks();
      othersBefore =
          a == null || b == null
              ? Double.NaN
              : CpuTimes.othersCores(
                  a, b, Timing.processCpu() - own0, System.nanoTime() - t0, servers1 - servers0);
      serversBefore =
          a == null || b == null || servers.isNone()
              ? Double.NaN
              : CpuTimes.serverCores(a, b, servers1 - servers0);
      cpus = b != null && b.cpus() > 0 ? b.cpus() : Runtime.getRuntime().availableProcessors();
      start = CpuTimes.read();
      startOwn = Timing.processCpu();
      startServers = serverTicks();
      startNanos = System.nanoTime();
      sampler = new Thread(this::sample, "kv4j-bench-quietness");
      sampler.setDaemon(true);
      if (start != null) {
        sampler.start();
      }
    }

    /**
     * The servers' CPU time so far in ticks (a counter that only grows); 0 without server engines
     * or without /proc, and the last value read on any failure to read it (the watch must never
     * stop a run).
     */
    private synchronized long serverTicks() {
      if (!servers.isNone()) {
        try {
          long t = servers.ticks();
          if (t >= 0) {
            lastServerTicks = t;
          }
        } catch (RuntimeException e) {
          // keep the last value: this interval's server time then counts as other processes'
        }
      }
      return lastServerTicks;
    }

    /** The readings taken before the run, as one line for the progress output. */
    String beforeLine() {
      return String.format(
          Locale.ROOT,
          "machine before the run: load average %s on %d CPUs, other processes %s cores,%s"
              + " calibration loop %s ms (spread %s)",
          fmt(loadBefore, "%.2f"),
          cpus,
          fmt(othersBefore, "%.2f"),
          servers.isNone() ? "" : " servers " + fmt(serversBefore, "%.2f") + " cores,",
          fmt(before.medianMs(), "%.2f"),
          pct(before.spread(), "%.0f%%"));
    }

    private void sample() {
      CpuTimes prev = start;
      long prevOwn = startOwn;
      long prevServers = startServers;
      long prevT = startNanos;
      while (!stopping) {
        try {
          TimeUnit.MILLISECONDS.sleep(SAMPLE_MS);
        } catch (InterruptedException e) {
          return;
        }
        CpuTimes now = CpuTimes.read();
        long own = Timing.processCpu();
        long srv = serverTicks();
        long t = System.nanoTime();
        if (now == null) {
          return;
        }
        double o = CpuTimes.othersCores(prev, now, own - prevOwn, t - prevT, srv - prevServers);
        synchronized (this) {
          if (!Double.isNaN(o) && (Double.isNaN(worst) || o > worst)) {
            worst = o;
          }
        }
        prev = now;
        prevOwn = own;
        prevServers = srv;
        prevT = t;
      }
    }

    /**
     * Stops sampling, times the calibration loop again and returns every reading.
     *
     * @return the readings of the run
     */
    Readings stop() {
      CpuTimes end = CpuTimes.read();
      long own = Timing.processCpu();
      long srv = serverTicks() - startServers;
      long wall = System.nanoTime() - startNanos;
      stopping = true;
      sampler.interrupt();
      Timing.joinAll(List.of(sampler));
      Calibration after = calibrate();
      boolean measured = start != null && end != null;
      double during =
          measured ? CpuTimes.othersCores(start, end, own - startOwn, wall, srv) : Double.NaN;
      double steal = measured ? CpuTimes.stealShare(start, end) : Double.NaN;
      double w;
      synchronized (this) {
        w = Double.isNaN(worst) ? during : Math.max(worst, during);
      }
      ServerUse use =
          servers.isNone()
              ? null
              : new ServerUse(
                  servers.description(),
                  serversBefore,
                  measured ? CpuTimes.serverCores(start, end, srv) : Double.NaN);
      return new Readings(
          cpus, loadBefore, othersBefore, during, w, steal, wall / 1e9, before, after, use);
    }
  }
}
