package io.kv4j.bench;

import java.io.PrintStream;

/**
 * The progress lines of a run: {@code [elapsed n/N engine] message}, flushed as they are written.
 */
final class Progress {
  private final PrintStream out;
  private final long startNanos = System.nanoTime();
  private int engineNo;
  private int engineCount;

  Progress(PrintStream out) {
    this.out = out;
  }

  /**
   * Sets how many engines the run measures.
   *
   * @param count the engine count
   */
  void engines(int count) {
    engineCount = count;
  }

  /** Moves on to the next engine. */
  void nextEngine() {
    engineNo++;
  }

  /**
   * Prints a line.
   *
   * @param engine the engine it is about
   * @param msg the message
   */
  void log(String engine, String msg) {
    double el = (System.nanoTime() - startNanos) / 1e9;
    out.printf("[%5.1fs %d/%d %s] %s%n", el, engineNo, engineCount, engine, msg);
    out.flush();
  }

  /**
   * Prints a row's numbers.
   *
   * @param r the row, with numbers
   * @param suffix said in brackets after the numbers, or empty
   */
  void result(Result r, String suffix) {
    log(
        r.engine(),
        String.format(
            "%-18s t=%d %,12.0f ops/s  p50 %s  p99 %s  p99.9 %s  CPU %.1f µs/op%s",
            r.label(),
            r.threads(),
            r.opsPerSec(),
            Format.micros(r.p50Us()),
            Format.micros(r.p99Us()),
            Format.micros(r.p999Us()),
            r.cpuUsPerOp(),
            suffix.isEmpty() ? "" : "  (" + suffix + ")"));
  }
}
