package io.kv4j.server;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Runs one connection's tasks one at a time, in submission order, on a shared pool (or inline, when
 * there is no pool), so a connection's replies stay in request order while a slow command (an
 * fsync, a big KEYS) holds only its own connection. A connection with a long queue gives its worker
 * back after {@link #BATCH} tasks, so it cannot starve others that share the pool.
 */
final class Serial implements Executor {
  static final int BATCH = 16;

  private final Executor pool;
  private final Consumer<Throwable> onFailure;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pending = new AtomicInteger();

  /**
   * @param pool where to run, or null to run inline on the submitting thread (a task submitted by a
   *     running task is queued, never run re-entrantly)
   * @param onFailure gets whatever a task throws
   */
  Serial(Executor pool, Consumer<Throwable> onFailure) {
    this.pool = pool;
    this.onFailure = onFailure;
  }

  @Override
  public void execute(Runnable task) {
    tasks.add(task);
    if (pending.getAndIncrement() == 0) {
      if (pool == null) {
        drain();
      } else {
        submit();
      }
    }
  }

  /**
   * Claims the connection for the calling thread when none of its tasks is queued or running: the
   * caller then runs its work here, as a task would, and must call {@link #leave()} after it. False
   * when the connection is busy (queue the work with {@link #execute} instead).
   */
  boolean enter() {
    return pending.compareAndSet(0, 1);
  }

  /** Ends what {@link #enter()} began; starts the tasks queued meanwhile, in order. */
  void leave() {
    if (pending.decrementAndGet() != 0) {
      if (pool == null) {
        drain();
      } else {
        submit();
      }
    }
  }

  /** Tasks submitted and not yet finished. */
  boolean busy() {
    return pending.get() != 0;
  }

  private void submit() {
    try {
      pool.execute(this::drain);
    } catch (RuntimeException e) {
      // The pool is shut down (server closing): run here so buffers are still released.
      drain();
    }
  }

  private void drain() {
    int ran = 0;
    do {
      Runnable t = tasks.poll();
      try {
        t.run();
      } catch (Throwable e) {
        try {
          onFailure.accept(e);
        } catch (Throwable ignored) {
          // The failure handler closes the connection; nothing else may escape a worker.
        }
      }
      if (++ran == BATCH && pool != null && pending.get() > 1) {
        pending.decrementAndGet();
        submit(); // to the back of the pool's queue: others get a turn
        return;
      }
    } while (pending.decrementAndGet() != 0);
  }
}
