package io.kv4j.bench.jmh;

import io.kv4j.bench.Scenario;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The per-operation scenarios on a loaded store: one operation per invocation, every read verified.
 * Sample-time mode gives throughput and latency percentiles; run at 1 and 2 threads with {@code
 * -t}. {@code scan} and {@code ycsbE} fail for engines without ordered scans.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {
      JvmFlags.HEAP_MIN,
      JvmFlags.HEAP_MAX,
      JvmFlags.OPEN_NIO,
      JvmFlags.OPEN_NIO_CH,
      JvmFlags.NATIVE,
      JvmFlags.EXPORT_REF,
      JvmFlags.EXPORT_NIO_CH,
      JvmFlags.EXPORT_JAVAC,
      JvmFlags.OPEN_LANG,
      JvmFlags.OPEN_REFLECT,
      JvmFlags.NO_ANALYTICS
    })
public class ScenarioBenchmarks {
  /** Creates the benchmark; JMH instantiates it. */
  public ScenarioBenchmarks() {}

  /**
   * Uniform random gets.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long readrandom(ThreadWorker w) {
    return w.worker().op(Scenario.READRANDOM);
  }

  /**
   * YCSB A: 50% read, 50% update.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long ycsbA(ThreadWorker w) {
    return w.worker().op(Scenario.YCSB_A);
  }

  /**
   * YCSB B: 95% read, 5% update.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long ycsbB(ThreadWorker w) {
    return w.worker().op(Scenario.YCSB_B);
  }

  /**
   * YCSB C: reads only.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long ycsbC(ThreadWorker w) {
    return w.worker().op(Scenario.YCSB_C);
  }

  /**
   * YCSB D: 95% read of recent keys, 5% insert.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long ycsbD(ThreadWorker w) {
    return w.worker().op(Scenario.YCSB_D);
  }

  /**
   * YCSB E: 95% short scans, 5% insert.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long ycsbE(ThreadWorker w) {
    return w.worker().op(Scenario.YCSB_E);
  }

  /**
   * YCSB F: 50% read, 50% read-modify-write.
   *
   * @param w the thread's worker
   * @return a value byte
   */
  @Benchmark
  public long ycsbF(ThreadWorker w) {
    return w.worker().op(Scenario.YCSB_F);
  }

  /**
   * Uniform random updates.
   *
   * @param w the thread's worker
   * @return the slot written
   */
  @Benchmark
  public long overwrite(ThreadWorker w) {
    return w.worker().op(Scenario.OVERWRITE);
  }

  /**
   * Scans of 100 keys from a uniform start.
   *
   * @param w the thread's worker
   * @return a checksum of the entries
   */
  @Benchmark
  public long scan(ThreadWorker w) {
    return w.worker().op(Scenario.SCAN);
  }
}
