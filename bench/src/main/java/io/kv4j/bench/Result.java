package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One measured row: an engine, a scenario (and phase), a thread count and a durability.
 *
 * @param engine engine id
 * @param scenario scenario id
 * @param phase part of the scenario ({@code insert}/{@code read} for single-op, {@code after-load}
 *     /{@code after-update} for footprint), or empty
 * @param threads worker threads
 * @param durability the durability writes were acknowledged with
 * @param ops operations measured
 * @param seconds measured wall time
 * @param opsPerSec throughput
 * @param p50Us median latency, µs
 * @param p99Us 99th percentile latency, µs
 * @param p999Us 99.9th percentile latency, µs
 * @param maxUs largest latency, µs
 * @param cpuUsPerOp process CPU time per operation, µs (all threads: workers, compaction, GC)
 * @param bgCpuShare share of that CPU spent outside the worker threads, 0..1
 * @param diskBytes allocated bytes on disk (footprint rows)
 * @param liveBytes live key and value bytes (footprint rows)
 * @param error why the row has no numbers, or null
 * @param figures further numbers of the scenarios with their own tables (churn, churn-reads,
 *     scale), by name, such as {@code rounds-done} or {@code heap-bytes-per-key}, in insertion
 *     order and not modified after the row is made; empty for the other scenarios
 */
public record Result(
    String engine,
    String scenario,
    String phase,
    int threads,
    Durability durability,
    long ops,
    double seconds,
    double opsPerSec,
    double p50Us,
    double p99Us,
    double p999Us,
    double maxUs,
    double cpuUsPerOp,
    double bgCpuShare,
    long diskBytes,
    long liveBytes,
    String error,
    Map<String, Double> figures) {

  Result(
      String engine,
      String scenario,
      String phase,
      int threads,
      Durability durability,
      long ops,
      double seconds,
      double opsPerSec,
      double p50Us,
      double p99Us,
      double p999Us,
      double maxUs,
      double cpuUsPerOp,
      double bgCpuShare,
      long diskBytes,
      long liveBytes,
      String error) {
    this(
        engine,
        scenario,
        phase,
        threads,
        durability,
        ops,
        seconds,
        opsPerSec,
        p50Us,
        p99Us,
        p999Us,
        maxUs,
        cpuUsPerOp,
        bgCpuShare,
        diskBytes,
        liveBytes,
        error,
        Map.of());
  }

  static Result failed(
      String engine, String scenario, String phase, int threads, Durability d, String error) {
    return new Result(engine, scenario, phase, threads, d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, error);
  }

  static Result footprint(
      String engine, String scenario, String phase, Durability d, long diskBytes, long liveBytes) {
    return new Result(
        engine, scenario, phase, 0, d, 0, 0, 0, 0, 0, 0, 0, 0, 0, diskBytes, liveBytes, null);
  }

  /** This row with other disk and live bytes and further figures. */
  Result with(long disk, long live, Map<String, Double> more) {
    Map<String, Double> f = new LinkedHashMap<>(figures);
    f.putAll(more);
    return new Result(
        engine,
        scenario,
        phase,
        threads,
        durability,
        ops,
        seconds,
        opsPerSec,
        p50Us,
        p99Us,
        p999Us,
        maxUs,
        cpuUsPerOp,
        bgCpuShare,
        disk,
        live,
        error,
        Collections.unmodifiableMap(f));
  }

  /**
   * One of the further figures.
   *
   * @param name such as {@code rounds-done}
   * @return its value, or NaN if the row does not have it
   */
  public double figure(String name) {
    Double v = figures.get(name);
    return v == null ? Double.NaN : v;
  }

  /**
   * Whether the row has numbers.
   *
   * @return true if no error
   */
  public boolean ok() {
    return error == null;
  }

  /**
   * Allocated disk bytes per live byte, for footprint rows.
   *
   * @return the ratio, or NaN
   */
  public double amplification() {
    return liveBytes > 0 ? (double) diskBytes / liveBytes : Double.NaN;
  }

  /**
   * Scenario and phase, as a label.
   *
   * @return such as {@code single-op insert}
   */
  public String label() {
    return phase.isEmpty() ? scenario : scenario + " " + phase;
  }
}
