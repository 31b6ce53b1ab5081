package io.kv4j.hashlog;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

/**
 * The bound on the descriptors a writable store's keyspaces hold (option {@code max-open-files}):
 * each keyspace's active segment keeps its file open only while it is among the {@code max} most
 * recently written; the file of another is closed ({@link Segment#park}) and opened again by its
 * next write. The store's own active segment is not counted (it is always open), nor are the
 * descriptors a seal, a hint, a compaction run or a force hold for the moment of their work.
 *
 * <p>Which one is closed is chosen as a clock does (second chance, an approximation of least
 * recently written that costs a write no more than one flag): a keyspace written since the clock
 * hand last passed it is passed over once. A keyspace with a write in flight (its writer lock held)
 * or a force (its group commit's leader forcing, which must not find its descriptor closed under
 * it) is passed over too, so up to that many more than {@code max} can be open for a moment; the
 * next file opened closes them.
 *
 * <p>Thread-safe: its own lock, taken by a writer that holds its keyspace's writer lock; under it
 * another keyspace's writer lock is only tried, never waited for, so no two writers wait on each
 * other.
 */
final class OpenFiles {
  private final int max;
  // The keyspaces whose active segment may hold a descriptor, in clock order; guarded by this.
  private final ArrayDeque<SegmentLog> clock = new ArrayDeque<>();
  private final Set<SegmentLog> members = new HashSet<>();
  private long closes; // guarded by this

  OpenFiles(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max-open-files must be at least 1, got " + max);
    }
    this.max = max;
  }

  /**
   * {@code log}'s active segment holds a descriptor now (created, recovered, or opened again by a
   * write); closes others' while more than {@code max} are open. Caller holds {@code log}'s writer
   * lock, or is opening it.
   */
  synchronized void opened(SegmentLog log) {
    if (members.add(log)) {
      clock.addLast(log);
    }
    // Each member is passed over at most twice (once for its flag, once when busy) per call.
    for (int turns = 2 * clock.size(); clock.size() > max && turns > 0; turns--) {
      SegmentLog c = clock.pollFirst();
      if (c == log || c.takeWritten()) {
        clock.addLast(c);
        continue;
      }
      if (c.parkIfIdle()) {
        members.remove(c);
        closes++;
      } else {
        clock.addLast(c);
      }
    }
  }

  /** {@code log}'s store closed: it holds no descriptor any more. */
  synchronized void closed(SegmentLog log) {
    if (members.remove(log)) {
      clock.remove(log);
    }
  }

  /** Keyspaces whose active segment may hold a descriptor (tests, figures). */
  synchronized int open() {
    return members.size();
  }

  /** Descriptors closed to keep the bound since the store opened (tests, figures). */
  synchronized long closes() {
    return closes;
  }
}
