package io.kv4j.hashlog;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.util.ArrayDeque;

/**
 * Background work around segments, off the writer's path, in one daemon thread per writable store:
 *
 * <ul>
 *   <li><b>Hints</b>: a sealed segment's hint file (and a directory sync covering the newer active
 *       segment's entry) is written here, not by the writer that rolled the segment. A queued
 *       segment is not a compaction victim until its hint is written ({@link Segment#sealing}), so
 *       no hint can appear for a segment compaction deleted. If {@link HashLogStore#SEAL_BACKLOG}
 *       segments are queued, the writer writes the hint itself.
 *   <li><b>Zero-fill ahead</b>: the active segment's next megabytes are allocated with {@code
 *       write(2)} before the writer stores into them through the mapping (see {@link Segment}).
 *   <li><b>Flush behind</b> (BUFFERED): what the writer wrote is forced a megabyte at a time, so
 *       that the force a seal does before the next segment is created (which keeps a power loss
 *       from leaving a torn segment that is not the newest) has little left to write.
 * </ul>
 *
 * <p>{@link #drain} waits for the queue to empty (close, explicit compaction).
 */
final class Sealer {
  private final HashLogStore store;
  private final ArrayDeque<Segment> queue = new ArrayDeque<>(); // guarded by this
  private Segment current; // being processed; guarded by this
  private boolean stopping; // guarded by this
  private Segment reserveFor; // active segment to tend (flush behind, fill ahead); guarded by this

  /** How far ahead of the writer the sealer zero-fills the active segment. */
  static final int RESERVE_AHEAD = 4 << 20;

  /** The writer asks for more reserve when less than this is left. */
  static final int RESERVE_LOW = 2 << 20;

  /** BUFFERED: data written since the last flush-behind before the writer asks for another. */
  static final int FLUSH_STEP = 1 << 20;

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
   * Asks the thread to tend the active segment: force what was written since its last flush
   * (BUFFERED) and zero-fill ahead of the writer, so that neither the writer (and every writer
   * queued on its lock) nor the seal waits for those writes.
   */
  synchronized void tend(Segment active) {
    if (reserveFor != active) {
      reserveFor = active;
      notifyAll();
    }
  }

  /** The segments whose hint is still to be written, oldest first. */
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
        if (store.info().durability() == io.kv4j.Durability.BUFFERED) {
          try {
            r.flushBehind();
          } catch (RuntimeException e) {
            // The kernel reports a write-back error once: the seal's fsync would not see it again.
            store.fail("forcing " + r.path + " behind the writer failed", e);
          }
        }
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
      store.syncDirectory(); // also makes the newer active segment's directory entry durable
    } catch (IOException | RuntimeException e) {
      store.fail("syncing the directory after sealing " + s.path + " failed", e);
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
