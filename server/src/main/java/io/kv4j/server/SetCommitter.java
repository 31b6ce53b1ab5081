package io.kv4j.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Writes the plain SETs that event loops gathered from many connections as one batch, on one
 * thread: on a SYNC engine, one fsync for every SET that arrived while the previous batch was being
 * forced — what Redis does with {@code appendfsync always}, where one fdatasync after each pass of
 * its event loop covers every client served in it. An event loop never waits here: it hands a
 * connection's SETs over ({@link #submit}) and that connection waits for its callback, which gets
 * null (written and durable) or the error text for each SET.
 *
 * <p>A connection's submissions are woken up together at the end of the event loop's pass (a task
 * queued on the loop runs after its I/O), so the batch holds what the whole pass gathered rather
 * than the first connection's SETs.
 */
final class SetCommitter implements AutoCloseable {
  /** What the committer writes: one batch of a session's SETs (database 0) and whom to tell. */
  record Entry(Session session, PendingSets sets, Consumer<String> done) {}

  /** Writes entries as one batch; returns null or the error text of every SET in them. */
  interface Writer {
    String write(List<Entry> entries);
  }

  private final Writer writer;
  private final ConcurrentLinkedQueue<Entry> incoming = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean kicked = new AtomicBoolean();
  private final Runnable wake = this::wake;
  private final Thread thread;
  private volatile boolean stopping;

  SetCommitter(Writer writer) {
    this.writer = writer;
    this.thread = new Thread(this::run, "kv4j-set-committer");
    thread.setDaemon(true);
    thread.start();
  }

  /** Hands {@code e} over from an event loop ({@code loop}: where to queue the wake-up). */
  void submit(Entry e, Executor loop) {
    incoming.add(e);
    if (kicked.compareAndSet(false, true)) {
      try {
        loop.execute(wake);
      } catch (RuntimeException closing) {
        wake();
      }
    }
  }

  private void wake() {
    kicked.set(false);
    LockSupport.unpark(thread);
  }

  private void run() {
    List<Entry> batch = new ArrayList<>();
    while (true) {
      Entry e;
      while ((e = incoming.poll()) != null) {
        batch.add(e);
      }
      if (batch.isEmpty()) {
        if (stopping) {
          return;
        }
        LockSupport.park(this);
        continue;
      }
      String error;
      try {
        error = writer.write(batch);
      } catch (Throwable t) {
        error = "ERR internal error: " + t;
      }
      for (Entry done : batch) {
        try {
          done.done().accept(error);
        } catch (Throwable ignored) {
          // A connection that cannot take its answer is closing; the others still get theirs.
        }
      }
      batch.clear();
    }
  }

  /** Writes what was handed over, then stops. */
  @Override
  public void close() {
    stopping = true;
    LockSupport.unpark(thread);
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
