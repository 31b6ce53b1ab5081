package io.kv4j.hashlog;

import io.kv4j.spi.CallGate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps the mappings readers use mapped: a segment retired by compaction is unmapped only after
 * every reader that entered before its retirement has left and every cursor opened before it is
 * closed; the store's close unmaps everything only after every reader has left.
 *
 * <p>Readers ({@link #enter}/{@link #exit}) are counted by a {@link CallGate}: one atomic increment
 * and decrement per call, no lock. A retirement ({@link #bury}) flips the gate's epoch and waits
 * for the old epoch's count to drain; a reader that counted itself in an epoch re-checks it, so
 * none slips into an epoch already drained. Open cursors, snapshots and backups in progress are
 * {@link #pin pinned}: the victims of a run wait in a grave until every pin present at their
 * retirement is gone ({@link #reap}).
 */
final class ReaderGuard {
  private final CallGate readers = new CallGate();
  private final StoreState state;
  private final Segments segments;
  private final Set<Object> cursors = ConcurrentHashMap.newKeySet();
  private final List<Grave> graves = new ArrayList<>(); // guarded by itself

  /** Retired segments waiting for the cursors that may still read them. */
  private record Grave(List<Segment> segments, Set<Object> pins) {}

  ReaderGuard(StoreState state, Segments segments) {
    this.state = state;
    this.segments = segments;
  }

  /**
   * Marks a reader in flight; returns the token to pass to {@link #exit}.
   *
   * @throws io.kv4j.StoreClosedException if the store is closed or closing
   */
  int enter() {
    int token = readers.enter();
    if (token < 0 || state.closed()) {
      if (token >= 0) {
        readers.exit(token);
      }
      throw state.closedError();
    }
    return token;
  }

  void exit(int token) {
    readers.exit(token);
  }

  /**
   * How long {@link #close} waits for the readers inside. Readers are short calls, and every
   * background thread is stopped before the close waits, so they leave in microseconds; a count
   * that stays up is a reader that can no longer leave: a fault on a mapped page (a segment cut
   * short behind the store's back) that the JVM delivers asynchronously can land between a reader's
   * entry and its exit and skip the exit.
   */
  long closeWaitNanos = TimeUnit.SECONDS.toNanos(10);

  /**
   * Waits for every reader inside to leave (store close; the store is marked closed, so no reader
   * enters any more). If one is still counted after {@link #closeWaitNanos}, the mappings are left
   * to the garbage collector instead of being unmapped ({@link Segments#keepMappings}), so the
   * close ends and a reader still inside (if there is one) never meets an unmapped page.
   *
   * @return whether every reader left in time
   */
  boolean close() {
    long deadline = System.nanoTime() + closeWaitNanos;
    for (int round = 0; readers.inside() != 0; round++) {
      if (System.nanoTime() - deadline > 0) {
        segments.keepMappings();
        HashLogStore.LOG.log(
            System.Logger.Level.WARNING,
            "hashlog: "
                + readers.inside()
                + " reader(s) of "
                + segments.dir
                + " still counted after "
                + TimeUnit.NANOSECONDS.toMillis(closeWaitNanos)
                + " ms at close (a fault on a mapped page can skip a reader's exit); its"
                + " mappings are left to the garbage collector");
        return false;
      }
      if (round < 1_000) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- cursors and graves

  /**
   * Registers an open cursor, or anything else holding locations or segments (a snapshot, a
   * backup), as a pin; call before the reader that opened it exits.
   */
  void pin(Object c) {
    cursors.add(c);
  }

  /**
   * Forgets a closed cursor (or other pin).
   *
   * @return whether retired segments wait in a grave (the cursor may have been their last pin)
   */
  boolean unpin(Object c) {
    if (!cursors.remove(c)) {
      return false;
    }
    synchronized (graves) {
      return !graves.isEmpty();
    }
  }

  /**
   * Victims are retired (no index entry points into them): waits for the readers in flight, then
   * notes the cursors that may still use them. Not under the writer lock.
   */
  void bury(List<Segment> victims) {
    readers.awaitEarlier();
    Set<Object> pins = new HashSet<>(cursors);
    synchronized (graves) {
      graves.add(new Grave(new ArrayList<>(victims), pins));
    }
  }

  /** Unmaps retired segments no reader or cursor can use any more. */
  void reap() {
    List<Segment> free = new ArrayList<>();
    synchronized (graves) {
      for (var it = graves.iterator(); it.hasNext(); ) {
        Grave g = it.next();
        g.pins().retainAll(cursors);
        if (g.pins().isEmpty()) {
          free.addAll(g.segments());
          it.remove();
        }
      }
    }
    if (free.isEmpty()) {
      return;
    }
    segments.writeLock.lock();
    try {
      if (state.closed()) {
        return; // close unmaps everything installed
      }
      for (Segment s : free) {
        segments.uninstall(s);
      }
    } finally {
      segments.writeLock.unlock();
    }
    for (Segment s : free) {
      Mappings.unmap(s.map);
    }
  }

  /** Retired segments still mapped because a reader or cursor might use them. */
  int pinnedSegments() {
    synchronized (graves) {
      int n = 0;
      for (Grave g : graves) {
        n += g.segments().size();
      }
      return n;
    }
  }
}
