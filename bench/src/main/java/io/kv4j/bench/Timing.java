package io.kv4j.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * Runs operations on threads and times them: for a duration after a warm-up ({@link #window}) or a
 * known number of operations ({@link #fixed}). Latency per operation in HdrHistogram (3 significant
 * digits), CPU per thread and for the process; the first failure stops every thread.
 */
final class Timing {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private Timing() {}

  /**
   * Work of a known size for one thread: {@code count} calls of {@code op}.
   *
   * @param count how many calls
   * @param op the call, given its index
   */
  record FixedTask(int count, IntToLongFunction op) {}

  /**
   * Runs one thread per operation for {@code warmup} then {@code duration} seconds; only the
   * operations after the warm-up are recorded.
   *
   * @param name names the threads
   * @param threadOps one operation per thread
   * @param warmup warm-up seconds
   * @param duration measured seconds
   * @return what was measured
   */
  static Window window(String name, LongSupplier[] threadOps, double warmup, double duration) {
    int threads = threadOps.length;
    long warmNs = (long) (warmup * 1e9);
    long measureNs = Math.max(1, (long) (duration * 1e9));
    Histogram[] hist = new Histogram[threads];
    long[] ops = new long[threads];
    long[] cpu = new long[threads];
    long[] lastEnd = new long[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    long[] times = new long[2]; // measure start, end; written before start.countDown()
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int ti = t;
      LongSupplier op = threadOps[t];
      hist[t] = new Histogram(3);
      Runnable body =
          () -> {
            long sink = 0;
            try {
              start.await();
              sink = measure(op, times[0], times[1], hist[ti], ops, cpu, lastEnd, ti, failure);
            } catch (Throwable e) {
              failure.compareAndSet(null, e);
            }
            Blackhole.consume(sink);
          };
      ts.add(new Thread(body, "kv4j-bench-" + name + "-" + t));
    }
    ts.forEach(Thread::start);
    long now = System.nanoTime();
    times[0] = now + warmNs;
    times[1] = times[0] + measureNs;
    start.countDown();
    sleepUntil(times[0]);
    long cpu0 = processCpu();
    joinAll(ts);
    long cpu1 = processCpu();
    long last = times[1];
    for (long e : lastEnd) {
      last = Math.max(last, e);
    }
    return new Window(hist, ops, cpu, last - times[0], cpu1 - cpu0, failure);
  }

  /** One thread of a window: operations until {@code end}, recorded from {@code from} on. */
  private static long measure(
      LongSupplier op,
      long from,
      long end,
      Histogram hist,
      long[] ops,
      long[] cpu,
      long[] lastEnd,
      int ti,
      AtomicReference<Throwable> failure) {
    long sink = 0;
    long c0 = 0;
    boolean measuring = false;
    long b = System.nanoTime();
    while (failure.get() == null) {
      long a = System.nanoTime();
      // Past the end, but with nothing measured yet (one operation outlasted the whole window, as
      // on an overloaded machine): measure one more.
      if (a >= end && ops[ti] > 0) {
        break;
      }
      if (!measuring && (a >= from || a >= end)) {
        measuring = true;
        c0 = THREADS.getCurrentThreadCpuTime();
      }
      sink += op.getAsLong();
      b = System.nanoTime();
      if (measuring) {
        hist.recordValue(b - a);
        ops[ti]++;
      }
    }
    lastEnd[ti] = b;
    if (measuring) {
      cpu[ti] = THREADS.getCurrentThreadCpuTime() - c0;
    }
    return sink;
  }

  /**
   * Runs {@code threads} threads, each its task's calls, all recorded.
   *
   * @param name names the threads
   * @param threads how many
   * @param tasks each thread's task, given its index
   * @return what was measured; the wall time from the start to the last thread's end
   */
  static Window fixed(String name, int threads, IntFunction<FixedTask> tasks) {
    Histogram[] hist = new Histogram[threads];
    long[] ops = new long[threads];
    long[] cpu = new long[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int ti = t;
      FixedTask task = tasks.apply(t);
      hist[t] = new Histogram(3);
      Runnable body =
          () -> {
            long sink = 0;
            try {
              start.await();
              long c0 = THREADS.getCurrentThreadCpuTime();
              for (int i = 0; i < task.count() && failure.get() == null; i++) {
                long a = System.nanoTime();
                sink += task.op().applyAsLong(i);
                hist[ti].recordValue(System.nanoTime() - a);
                ops[ti]++;
              }
              cpu[ti] = THREADS.getCurrentThreadCpuTime() - c0;
            } catch (Throwable e) {
              failure.compareAndSet(null, e);
            }
            Blackhole.consume(sink);
          };
      ts.add(new Thread(body, "kv4j-bench-" + name + "-" + t));
    }
    ts.forEach(Thread::start);
    long cpu0 = processCpu();
    long t0 = System.nanoTime();
    start.countDown();
    joinAll(ts);
    long wall = System.nanoTime() - t0;
    long cpu1 = processCpu();
    return new Window(hist, ops, cpu, wall, cpu1 - cpu0, failure);
  }

  /**
   * CPU time of the calling thread.
   *
   * @return ns
   */
  static long threadCpu() {
    return THREADS.getCurrentThreadCpuTime();
  }

  /**
   * CPU time of this process, all threads.
   *
   * @return ns, or 0 where the JVM does not tell
   */
  static long processCpu() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
    }
    return 0;
  }

  /**
   * Sleeps until a {@link System#nanoTime()} deadline; returns early, interrupted flag set, when
   * interrupted.
   *
   * @param deadline the deadline
   */
  static void sleepUntil(long deadline) {
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      try {
        TimeUnit.NANOSECONDS.sleep(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * Joins every thread, keeping an interrupt for the caller.
   *
   * @param ts the threads
   */
  static void joinAll(List<Thread> ts) {
    for (Thread t : ts) {
      boolean interrupted = false;
      while (true) {
        try {
          t.join();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Keeps results alive so the JIT cannot drop the work that produced them. */
  static final class Blackhole {
    static volatile long sink;

    private Blackhole() {}

    static void consume(long v) {
      sink += v;
    }
  }
}
