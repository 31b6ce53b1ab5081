package io.kv4j.bench;

import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * What one measured stretch of threads recorded, per thread: latencies, operations and thread CPU;
 * the wall time from the end of the warm-up to the last thread's last operation; the process CPU in
 * between; the first failure of any thread.
 *
 * @param hist latencies in ns, per thread
 * @param ops operations measured, per thread
 * @param cpu CPU time of each thread over its measured operations, ns
 * @param wallNs measured wall time
 * @param processCpuNs CPU time of the whole process over the same time
 * @param failure the first failure, or holding null
 */
record Window(
    Histogram[] hist,
    long[] ops,
    long[] cpu,
    long wallNs,
    long processCpuNs,
    AtomicReference<Throwable> failure) {

  /**
   * A window that failed before any thread ran.
   *
   * @param e the failure
   * @return an empty window holding it
   */
  static Window failed(Throwable e) {
    return new Window(new Histogram[0], new long[0], new long[0], 0, 0, new AtomicReference<>(e));
  }

  /**
   * One thread's share, as a window of its own (its CPU stands for the process's).
   *
   * @param t the thread
   * @return the thread's window
   */
  Window thread(int t) {
    return new Window(
        new Histogram[] {hist[t]},
        new long[] {ops[t]},
        new long[] {cpu[t]},
        wallNs,
        cpu[t],
        failure);
  }

  /**
   * Operations per second over the wall time.
   *
   * @return the rate
   */
  double opsPerSec() {
    long total = 0;
    for (long n : ops) {
      total += n;
    }
    return total / (wallNs / 1e9);
  }
}
