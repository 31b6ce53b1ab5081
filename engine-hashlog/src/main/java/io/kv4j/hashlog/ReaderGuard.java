package io.kv4j.hashlog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps the mappings readers use mapped: a segment retired by compaction is unmapped only after
 * every reader that entered before its retirement has left and every cursor opened before it is
 * closed; the store's close unmaps everything only after every reader has left.
 *
 * <p>Readers ({@link #enter}/{@link #exit}) mark themselves in a {@link Reader} slot of their own
 * thread: entering is one volatile store to a line no other thread writes, leaving one plain
 * (release) store; no atomic read-modify-write, no shared counter. The slot holds a count that is
 * odd while its thread is inside, so a retirement ({@link #bury}) reads every slot once and waits
 * only for the slots it saw odd to change: a reader that entered before the retirement has then
 * left, and one entering after it, whose volatile store orders after the retirement, cannot reach
 * the victims. Open cursors, snapshots and backups in progress are {@link #pin pinned}: the victims
 * of a run wait in a grave until every pin present at their retirement is gone ({@link #reap}).
 *
 * <p>Why not a striped counter ({@code CallGate}, what this was before issue #27): threads share a
 * stripe when their ids collide, so the counter needs an atomic increment and an atomic decrement
 * per get; these two were about 8% of a get of a 1 KiB value (same-JVM A/B on the {@code floor}
 * read ceiling). A slot owned by one thread needs one store with a fence, the minimum for a reader
 * to be seen by a retirement that does not stop it.
 */
final class ReaderGuard {
  private final StoreState state;
  private final Segments segments;
  private final Set<Object> cursors = ConcurrentHashMap.newKeySet();
  private final List<Grave> graves = new ArrayList<>(); // guarded by itself
  private final ThreadLocal<Reader> mine = ThreadLocal.withInitial(this::register);
  private volatile Reader[] readers = new Reader[0]; // written under synchronized (this)
  private volatile boolean closed;

  /** Retired segments waiting for the cursors that may still read them. */
  private record Grave(List<Segment> segments, Set<Object> pins) {}

  /** 128 bytes of padding before a slot's count: no other thread's slot shares its lines. */
  @SuppressWarnings("unused") // padding only, never read
  abstract static class Front {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
  }

  /** The count and the owner's nesting depth. */
  abstract static class Count extends Front {
    static final VarHandle COUNT;

    static {
      try {
        COUNT = MethodHandles.lookup().findVarHandle(Count.class, "count", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** Odd while the owner is inside; written only by the owner. */
    volatile long count;

    /** Nested entries of the owner beyond the first; owner-only. */
    int depth;
  }

  /**
   * One thread's reader slot: the token {@link #enter} returns. Only its thread passes it to {@link
   * #exit}.
   */
  @SuppressWarnings("unused") // padding only, never read
  static final class Reader extends Count {
    long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;

    private final WeakReference<Thread> owner;

    Reader(Thread owner) {
      this.owner = new WeakReference<>(owner);
    }

    /** Whether the slot can be dropped: its thread is gone (it cannot be inside then). */
    boolean abandoned() {
      Thread t = owner.get();
      return (t == null || !t.isAlive()) && (count & 1) == 0;
    }
  }

  ReaderGuard(StoreState state, Segments segments) {
    this.state = state;
    this.segments = segments;
  }

  private synchronized Reader register() {
    Reader r = new Reader(Thread.currentThread());
    List<Reader> keep = new ArrayList<>();
    for (Reader o : readers) {
      if (!o.abandoned()) {
        keep.add(o);
      }
    }
    keep.add(r);
    readers = keep.toArray(new Reader[0]);
    return r;
  }

  /**
   * Marks the calling thread as a reader in flight; returns the token to pass to {@link #exit} on
   * the same thread. Nested entries are counted.
   *
   * @throws io.kv4j.StoreClosedException if the store is closed or closing
   */
  Reader enter() {
    Reader r = mine.get();
    if (r.depth > 0) {
      r.depth++;
      return r;
    }
    // The volatile store orders this thread's entry before everything it reads after: a
    // retirement or close that does not see it odd happened before, and this thread sees its
    // effects (the index no longer points into the victims; the closed flag set).
    Count.COUNT.setVolatile(r, r.count + 1);
    if (closed || state.closed()) {
      Count.COUNT.setRelease(r, r.count + 1);
      throw state.closedError();
    }
    r.depth = 1;
    return r;
  }

  /** Marks the reader of {@link #enter}'s token out; on the thread that entered. */
  void exit(Reader r) {
    if (--r.depth == 0) {
      Count.COUNT.setRelease(r, r.count + 1);
    }
  }

  /** Closes the gate and waits for every reader inside to leave (store close). */
  void close() {
    closed = true;
    awaitEarlier();
  }

  /** Reader slots registered: one per thread that read and is alive, or was at the last count. */
  int readerSlots() {
    return readers.length;
  }

  /** Waits until every reader that entered before this call has left. */
  private void awaitEarlier() {
    Reader[] all = readers;
    for (Reader r : all) {
      long c = r.count;
      if ((c & 1) == 0) {
        continue;
      }
      for (int round = 0; r.count == c; round++) {
        pause(round);
      }
    }
  }

  /**
   * Spins first (a get is over in a microsecond), then sleeps in steps of up to a millisecond (a
   * reader can be a long scan step or a verification).
   */
  private static void pause(int round) {
    if (round < 1_000) {
      Thread.onSpinWait();
    } else {
      LockSupport.parkNanos(Math.min(1_000_000L, 1_000L << Math.min(10, (round - 1_000) / 16)));
    }
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
    awaitEarlier();
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
