package io.kv4j.hashlog;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Holds writers back while compaction is behind: when the garbage in sealed segments (and in the
 * victims of a compaction run still on disk) exceeds what the garbage threshold allows for the data
 * kept (plus {@link #SLACK_SEGMENTS} segments of slack), a writer waits, before it takes the writer
 * lock, until compaction has caught up. Never while compaction cannot run (no threads, stopping, or
 * its last run failed).
 */
final class Throttle {
  /** Garbage beyond what the threshold allows, in segments, before writers wait. */
  static final double SLACK_SEGMENTS = 1.0;

  private final Segments segments;
  private final StoreState state;
  private final double factor; // garbage allowed per byte kept: t / (1 - t)
  private final long segmentSize;
  private volatile boolean on;
  private volatile boolean released;
  private final Object monitor = new Object();
  private final AtomicLong waitedNanos = new AtomicLong();

  Throttle(Segments segments, StoreState state, double garbageThreshold, int segmentSize) {
    this.segments = segments;
    this.state = state;
    this.factor = garbageThreshold / (1 - garbageThreshold);
    this.segmentSize = segmentSize;
  }

  /** Called by writers before they take the writer lock: waits while compaction is behind. */
  void await() {
    if (!on) {
      return;
    }
    long t0 = System.nanoTime();
    synchronized (monitor) {
      while (on && !released && !state.closed() && !state.failed()) {
        try {
          monitor.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    waitedNanos.addAndGet(System.nanoTime() - t0);
  }

  /**
   * Recomputes whether writers must wait. Caller holds the writer lock.
   *
   * @param compacting whether background compaction can run now
   */
  void update(boolean compacting) {
    if (!compacting) {
      set(false);
      return;
    }
    long garbage = 0;
    long kept = 0;
    Segment act = segments.active;
    for (Segment s : segments.all()) {
      if (s.isRetired()) {
        // Retired by a run that has not deleted its file yet (it forces the active segment and
        // writes the manifest first): still on disk, and all of it garbage. Not counting it let
        // writers add a threshold's worth of new garbage while every victim was still there.
        if (!s.isDeleted()) {
          garbage += s.end;
        }
        continue;
      }
      if (s == act || s.phase() == SegmentPhase.UNREADABLE) {
        continue;
      }
      garbage += s.deadBytes();
      kept += s.liveBytes + s.tombstoneBytes;
    }
    set(garbage > factor * kept + SLACK_SEGMENTS * segmentSize);
  }

  void set(boolean t) {
    if (t == on) {
      return;
    }
    synchronized (monitor) {
      on = t;
      if (!t) {
        monitor.notifyAll();
      }
    }
  }

  /** Compaction stops: no writer waits from now on. */
  void release() {
    released = true;
    synchronized (monitor) {
      on = false;
      monitor.notifyAll();
    }
  }

  /** Time writers spent waiting, in milliseconds. */
  long waitedMillis() {
    return waitedNanos.get() / 1_000_000;
  }
}
