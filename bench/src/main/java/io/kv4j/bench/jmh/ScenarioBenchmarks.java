package io.kv4j.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The per-operation (timed) scenarios of the catalogue, the scenario a {@code @Param} ({@code -p
 * scenario=ycsb-a,scan}): one operation per invocation on a loaded store (a fresh SYNC one for
 * {@code durable-put}), every read verified. Sample-time mode gives throughput and latency
 * percentiles; run at 1 and 2 threads with {@code -t}. {@code scan} and {@code ycsb-e} fail for
 * engines without ordered scans.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ScenarioBenchmarks extends ForkedBenchmark {
  /** Creates the benchmark; JMH instantiates it. */
  public ScenarioBenchmarks() {}

  /**
   * One operation of the scenario given by {@code -p scenario=...} (every timed scenario of the
   * catalogue by default), every read verified.
   *
   * @param w the thread's worker
   * @return a value derived from what was read or written
   */
  @Benchmark
  public long op(ThreadWorker w) {
    return w.op();
  }
}
