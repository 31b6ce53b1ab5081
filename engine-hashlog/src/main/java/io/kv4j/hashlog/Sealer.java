package io.kv4j.hashlog;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.util.ArrayDeque;

/**
 * Finishes the sealing of segments off the writer's path, in {@link io.kv4j.Durability#BUFFERED}
 * mode: forcing a full segment to disk, syncing the directory and writing the segment's hint take
 * tens to hundreds of milliseconds, which the writer that rolled the segment (and every writer
 * queued behind its lock) would otherwise wait out. BUFFERED writes promise survival of a process
 * crash, not of a power loss, and a finished segment's bytes are already in the page cache.
 *
 * <p>Durability stays exact: {@link GroupCommit} forces every segment still queued here before it
 * forces the active one (so {@code sync()} covers them), and only this thread advances the durable
 * position past a queued segment. A queued segment is not a compaction victim until its hint is
 * written ({@link Segment#sealing}), so no hint can appear for a segment compaction deleted.
 *
 * <p>One daemon thread per writable store; {@link #drain} waits for the queue to empty (close,
 * explicit compaction).
 */
final class Sealer {
  private final HashLogStore store;
  private final ArrayDeque<Segment> queue = new ArrayDeque<>(); // guarded by this
  private Segment current; // being processed; guarded by this
  private boolean stopping; // guarded by this
  private Segment reserveFor; // active segment to zero-fill ahead of its writer; guarded by this

  /** How far ahead of the writer the sealer zero-fills the active segment. */
  static final int RESERVE_AHEAD = 8 << 20;

  /** The writer asks for more reserve when less than this is left. */
  static final int RESERVE_LOW = 4 << 20;

  private Thread thread;

  Sealer(HashLogStore store) {
    this.store = store;
  }

  synchronized void start() {
    thread = new Thread(this::loop, "kv4j-hashlog-sealer " + store.dir.getFileName());
    thread.setDaemon(true);
    thread.start();
  }

  /** Queues a finished segment. Caller holds the store's write lock. */
  synchronized void submit(Segment s) {
    s.sealing = true;
    queue.addLast(s);
    notifyAll();
  }

  /**
   * Asks the thread to zero-fill the active segment ahead of its writer, so that the writer (and
   * every writer queued on its lock) does not wait for those {@code write(2)} calls.
   */
  synchronized void reserveAhead(Segment active) {
    if (reserveFor != active) {
      reserveFor = active;
      notifyAll();
    }
  }

  /** The segments whose force is still pending, oldest first. */
  synchronized Segment[] pending() {
    int n = queue.size() + (current == null ? 0 : 1);
    Segment[] out = new Segment[n];
    int i = 0;
    if (current != null) {
      out[i++] = current;
    }
    for (Segment s : queue) {
      out[i++] = s;
    }
    return out;
  }

  /** Waits until every queued segment has been finished. */
  synchronized void drain() {
    boolean interrupted = false;
    while (!queue.isEmpty() || current != null) {
      if (thread == null || !thread.isAlive()) {
        break;
      }
      try {
        wait(50);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Finishes what is queued, then stops the thread. */
  void stop() {
    Thread t;
    synchronized (this) {
      stopping = true;
      notifyAll();
      t = thread;
    }
    if (t == null || t == Thread.currentThread()) {
      return;
    }
    boolean interrupted = false;
    while (t.isAlive()) {
      try {
        t.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void loop() {
    while (true) {
      Segment s;
      Segment r;
      synchronized (this) {
        while (queue.isEmpty() && reserveFor == null && !stopping) {
          try {
            wait();
          } catch (InterruptedException e) {
            // Only stop() ends this thread, after the queue is empty.
          }
        }
        r = reserveFor;
        reserveFor = null;
        s = r != null ? null : queue.pollFirst();
        if (r == null && s == null) {
          notifyAll();
          return;
        }
        current = s;
      }
      if (r != null) {
        try {
          r.reserveAhead(RESERVE_AHEAD);
        } catch (IOException | RuntimeException e) {
          // Left to the writer: its own reserve() meets the same error and fails the store.
          HashLogStore.LOG.log(Level.DEBUG, "hashlog: zero-filling ahead in " + r.path + ": " + e);
        }
        continue;
      }
      try {
        finish(s);
      } finally {
        synchronized (this) {
          current = null;
          notifyAll();
        }
      }
    }
  }

  private void finish(Segment s) {
    try {
      s.forceAndClose();
      store.syncDirectory(); // also makes the newer active segment's directory entry durable
      store.commit.durableUpTo(HashLogStore.location(s.id, s.end));
    } catch (IOException | RuntimeException e) {
      store.fail("fsync of sealed segment " + s.path + " failed", e);
      release(s);
      return;
    }
    try {
      HintFile.write(store.dir, s);
    } catch (IOException | RuntimeException e) {
      // A hint only speeds up the next open, which rebuilds a missing one: not a store failure.
      HashLogStore.LOG.log(Level.WARNING, "hashlog: could not write the hint file of " + s.path, e);
      try {
        Files.deleteIfExists(store.dir.resolve(Segment.hintName(s.id) + ".tmp"));
      } catch (IOException ignored) {
        // Left for the next open, which ignores *.tmp files.
      }
    }
    release(s);
  }

  private void release(Segment s) {
    store.writeLock.lock();
    try {
      s.sealing = false;
      store.compactor.segmentSealed();
    } finally {
      store.writeLock.unlock();
    }
  }
}
