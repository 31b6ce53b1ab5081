package io.kv4j.hashlog;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit: a writer waiting for durability either forces the active segment itself (becoming
 * the leader) or waits for the leader's force, which covers every record written before it began.
 * So concurrent writers share one fsync. Positions are log sequence numbers: {@code segment id <<
 * 32 | offset}, increasing in write order. In SYNC a sealed segment was forced when it was sealed;
 * in BUFFERED it may have been sealed (or written by compaction) unforced, and is then queued here
 * ({@link #unforced}): a leader forces every queued segment before the active one, so a sync covers
 * everything written before it.
 *
 * <p>A failed force is never retried (the kernel may have dropped the dirty pages): the store goes
 * into its failed, read-only state and every waiter gets the error.
 */
final class GroupCommit {
  private final Segments segments;
  private final StoreState state;

  /** Test hook: the next force fails. */
  volatile boolean injectForceFailure;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition done = lock.newCondition();
  private long durable; // guarded by lock
  private boolean running; // guarded by lock
  private long forces; // guarded by lock
  private final ArrayDeque<Segment> unforced = new ArrayDeque<>(); // guarded by itself
  private final Object forcing = new Object(); // one forceUnforced at a time

  GroupCommit(Segments segments, StoreState state) {
    this.segments = segments;
    this.state = state;
  }

  /** Records that everything up to {@code lsn} is durable (a segment was sealed). */
  void durableUpTo(long lsn) {
    lock.lock();
    try {
      if (lsn > durable) {
        durable = lsn;
      }
      done.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Closes the active segment's descriptor ({@link Segment#park}) unless a leader is forcing: a
   * force must not use a descriptor closed under it, whose number may already name another file
   * (the force would then succeed without forcing this one). While this holds the lock no leader
   * starts; the next one forces the parked file by its path. Caller holds the writer lock.
   *
   * @return false if a force is in flight (nothing closed)
   */
  boolean parkUnlessForcing(Segment s) throws IOException {
    if (!lock.tryLock()) {
      return false;
    }
    try {
      if (running) {
        return false;
      }
      s.park();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** {@code s} was sealed (or written) without a force: the next sync must force it. */
  void unforced(Segment s) {
    synchronized (unforced) {
      unforced.addLast(s);
    }
  }

  /**
   * Forces every segment queued by {@link #unforced}, oldest first; returns once each is forced or
   * its file is gone (compacted away: its records that were still needed are in the output, which
   * was queued or forced itself).
   */
  void forceUnforced() throws IOException {
    synchronized (forcing) {
      while (true) {
        Segment s;
        synchronized (unforced) {
          s = unforced.peekFirst();
        }
        if (s == null) {
          return;
        }
        // Flagged before retired is read: a compaction run retiring s reads the flag after it
        // retired s, so either it sees the flag and forces its output itself, or this sees s
        // retired, and the output, queued before s was retired, is forced further down the queue.
        s.holdsDurable = true;
        if (!s.isRetired()) {
          s.forceSealed();
        }
        synchronized (unforced) {
          unforced.pollFirst();
        }
      }
    }
  }

  long forces() {
    lock.lock();
    try {
      return forces;
    } finally {
      lock.unlock();
    }
  }

  /** Returns once everything up to {@code target} is durable. */
  void await(long target) {
    lock.lock();
    try {
      while (durable < target) {
        state.checkNotFailed();
        if (running) {
          done.awaitUninterruptibly();
          continue;
        }
        running = true;
        Segment seg = segments.active;
        if (seg == null) { // closed underneath: close forced what it could
          running = false;
          state.checkNotFailed();
          throw state.closedError();
        }
        long goal = Segments.location(seg.id, seg.end);
        Throwable error = null;
        boolean forced = false;
        lock.unlock();
        try {
          if (injectForceFailure) {
            throw new IOException("injected fsync failure (test hook)");
          }
          forceUnforced();
          if (seg.directoryPending) { // a BUFFERED roll left the new entry to the next force
            segments.syncDirectory();
            seg.directoryPending = false;
          }
          forced = seg.force();
        } catch (IOException | RuntimeException e) {
          error = e;
        } finally {
          lock.lock();
          running = false;
          forces++;
        }
        if (error != null) {
          done.signalAll();
          throw state.fail("fsync of " + seg.path + " failed", error);
        }
        if (!forced) {
          // Sealed or closed meanwhile: whoever did it forced the file and advances durable.
          done.signalAll();
          lock.unlock();
          try {
            Thread.yield();
          } finally {
            lock.lock();
          }
          continue;
        }
        if (goal > durable) {
          durable = goal;
        }
        done.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }
}
