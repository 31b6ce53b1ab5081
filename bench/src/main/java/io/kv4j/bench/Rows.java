package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Turns what {@link Timing} measured into {@link Result} rows: one window, or the windows of {@code
 * --rounds}. Pure arithmetic on recorded numbers: no clock is read here.
 */
final class Rows {
  private Rows() {}

  /**
   * One window as a row: failed when a thread failed or nothing completed, else its numbers.
   *
   * @param id the engine
   * @param scenario the scenario id
   * @param phase its phase, or empty
   * @param threads the thread count
   * @param d the durability
   * @param w the window
   * @return the row
   */
  static Result summarize(
      String id, String scenario, String phase, int threads, Durability d, Window w) {
    Throwable f = w.failure().get();
    if (f != null) {
      return Result.failed(id, scenario, phase, threads, d, describe(f));
    }
    Histogram all = new Histogram(3);
    long total = 0;
    long fg = 0;
    for (int t = 0; t < w.hist().length; t++) {
      all.add(w.hist()[t]);
      total += w.ops()[t];
      fg += w.cpu()[t];
    }
    if (total == 0) {
      return Result.failed(id, scenario, phase, threads, d, "no operation completed");
    }
    return measured(
        id, scenario, phase, threads, d, all, total, w.wallNs(), fg, w.processCpuNs(), Double.NaN);
  }

  /**
   * One row from the windows of {@code --rounds}: ops/s is the median window's (the mean of the two
   * middle ones for an even count), with the lowest and highest as the figures {@code
   * ops-per-sec-min} and {@code ops-per-sec-max} and the count as {@code rounds}; latency
   * percentiles are over every operation of every window; CPU per operation over all of them.
   *
   * @param id the engine
   * @param scenario the scenario id
   * @param threads the thread count
   * @param d the durability
   * @param ws the windows, none failed
   * @return the row; failed when there is no window
   */
  static Result combine(String id, String scenario, int threads, Durability d, List<Window> ws) {
    if (ws.isEmpty()) {
      return Result.failed(id, scenario, "", threads, d, "no window completed");
    }
    double[] rates = new double[ws.size()];
    Histogram all = new Histogram(3);
    long total = 0;
    long fg = 0;
    long wall = 0;
    long process = 0;
    for (int i = 0; i < ws.size(); i++) {
      Window w = ws.get(i);
      rates[i] = w.opsPerSec();
      for (int t = 0; t < w.hist().length; t++) {
        all.add(w.hist()[t]);
        total += w.ops()[t];
        fg += w.cpu()[t];
      }
      wall += w.wallNs();
      process += w.processCpuNs();
    }
    Arrays.sort(rates);
    int m = rates.length / 2;
    double median = rates.length % 2 == 1 ? rates[m] : (rates[m - 1] + rates[m]) / 2;
    Map<String, Double> figures = new LinkedHashMap<>();
    figures.put("rounds", (double) ws.size());
    figures.put("ops-per-sec-min", rates[0]);
    figures.put("ops-per-sec-max", rates[rates.length - 1]);
    return measured(id, scenario, "", threads, d, all, total, wall, fg, process, median)
        .with(0, 0, figures);
  }

  /**
   * A row of numbers.
   *
   * @param all every operation's latency, ns
   * @param total operations
   * @param wallNs wall time
   * @param fgCpuNs CPU time of the worker threads
   * @param processCpuNs CPU time of the process over the same time
   * @param opsPerSec the rate, or NaN for {@code total} over {@code wallNs}
   * @return the row
   */
  static Result measured(
      String id,
      String scenario,
      String phase,
      int threads,
      Durability d,
      Histogram all,
      long total,
      long wallNs,
      long fgCpuNs,
      long processCpuNs,
      double opsPerSec) {
    double secs = wallNs / 1e9;
    double rate = Double.isNaN(opsPerSec) ? total / secs : opsPerSec;
    double cpuPerOp = processCpuNs / 1e3 / total;
    double bg = processCpuNs > 0 ? Math.max(0, 1 - (double) fgCpuNs / processCpuNs) : 0;
    return new Result(
        id,
        scenario,
        phase,
        threads,
        d,
        total,
        secs,
        rate,
        all.getValueAtPercentile(50) / 1e3,
        all.getValueAtPercentile(99) / 1e3,
        all.getValueAtPercentile(99.9) / 1e3,
        all.getMaxValue() / 1e3,
        cpuPerOp,
        bg,
        0,
        0,
        null);
  }

  /**
   * A failure as a row's error: the exception's simple name and message on one line.
   *
   * @param e the failure
   * @return such as {@code VerificationException: key 5: wrong value}
   */
  static String describe(Throwable e) {
    String m = e.getMessage();
    return e.getClass().getSimpleName() + (m == null ? "" : ": " + m.replace('\n', ' '));
  }
}
