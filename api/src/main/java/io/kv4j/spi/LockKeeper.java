package io.kv4j.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps a server-side lock or lease of an open store alive: runs a refresh task every period (a
 * lease's renewal, a check that the lock's session still lives and taking the lock again after a
 * server restart) until {@link #close()}. For server engines, whose exclusive open lock lives on a
 * server rather than in a local file.
 *
 * <p>One timer thread serves every keeper of the JVM; each refresh runs on a pooled daemon thread,
 * so a slow refresh (a connect timing out while a server restarts) never delays another store's. A
 * keeper's refreshes never overlap: a tick that finds the previous refresh still running is
 * skipped. A refresh that throws is counted ({@link #failures()}) and tried again at the next tick;
 * a refresh should catch what it expects itself.
 */
public final class LockKeeper implements AutoCloseable {
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final ScheduledExecutorService TIMER =
      Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "kv4j-lock-keeper-timer"));
  private static final ExecutorService RUNNERS =
      Executors.newCachedThreadPool(
          r -> daemon(r, "kv4j-lock-keeper-" + THREADS.incrementAndGet()));

  private final String what;
  private final Runnable refresh;
  private final Object guard = new Object();
  private final AtomicLong refreshes = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final ScheduledFuture<?> tick;
  private boolean running; // guarded by guard
  private boolean closed; // guarded by guard
  private Thread runner; // guarded by guard: the thread running a refresh now
  private volatile RuntimeException lastFailure;

  private LockKeeper(String what, Duration period, Runnable refresh) {
    this.what = what;
    this.refresh = refresh;
    long ms = period.toMillis();
    this.tick = TIMER.scheduleWithFixedDelay(this::dispatch, ms, ms, TimeUnit.MILLISECONDS);
  }

  /**
   * Starts running {@code refresh} every {@code period}, the first time one period from now.
   *
   * @param what what is kept, for thread dumps and messages, e.g. {@code "lock of postgres table
   *     t"}
   * @param period time between refreshes, at least 1 ms
   * @param refresh the refresh; it must not call {@link #close()} on its own keeper
   * @return the running keeper; close it when the store closes
   */
  public static LockKeeper start(String what, Duration period, Runnable refresh) {
    Objects.requireNonNull(what, "what");
    Objects.requireNonNull(period, "period");
    Objects.requireNonNull(refresh, "refresh");
    if (period.toMillis() < 1) {
      throw new IllegalArgumentException("period must be at least 1 ms, not " + period);
    }
    return new LockKeeper(what, period, refresh);
  }

  private void dispatch() {
    synchronized (guard) {
      if (closed || running) {
        return;
      }
      running = true;
    }
    try {
      RUNNERS.execute(this::runOnce);
    } catch (RuntimeException rejected) {
      synchronized (guard) {
        running = false;
        guard.notifyAll();
      }
    }
  }

  private void runOnce() {
    synchronized (guard) {
      if (closed) {
        running = false;
        guard.notifyAll();
        return;
      }
      runner = Thread.currentThread();
    }
    try {
      refresh.run();
      refreshes.incrementAndGet();
    } catch (RuntimeException e) {
      failures.incrementAndGet();
      lastFailure = e;
    } finally {
      synchronized (guard) {
        running = false;
        runner = null;
        guard.notifyAll();
      }
    }
  }

  /**
   * Refreshes that completed without throwing.
   *
   * @return the count since start
   */
  public long refreshes() {
    return refreshes.get();
  }

  /**
   * Refreshes that threw.
   *
   * @return the count since start
   */
  public long failures() {
    return failures.get();
  }

  /**
   * The exception the latest failed refresh threw.
   *
   * @return it, or null if none failed
   */
  public RuntimeException lastFailure() {
    return lastFailure;
  }

  /**
   * Stops the refreshes and waits for one in progress to end, so that none runs after this returns.
   * Idempotent.
   *
   * @throws IllegalStateException if called from the keeper's own refresh
   */
  @Override
  public void close() {
    synchronized (guard) {
      if (runner == Thread.currentThread()) {
        throw new IllegalStateException("the refresh of " + what + " cannot close its own keeper");
      }
      closed = true;
      tick.cancel(false);
      boolean interrupted = false;
      while (running) {
        try {
          guard.wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return "LockKeeper[" + what + "]";
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
