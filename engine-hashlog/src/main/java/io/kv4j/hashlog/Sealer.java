package io.kv4j.hashlog;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayDeque;

/**
 * Background work around segments, off the writer's path, as a job of the store's one sealer thread
 * ({@link Workers}, shared by the store and its keyspaces; each keyspace's sealer is queued there
 * in turn, one segment or one allocation at a time):
 *
 * <ul>
 *   <li><b>Hints</b>: a sealed segment's hint file (and a directory sync covering the newer active
 *       segment's entry) is written here, not by the writer that rolled the segment. A queued
 *       segment is not a compaction victim until its hint is written ({@link Segment#sealing}), so
 *       no hint can appear for a segment compaction deleted. If {@link SegmentLog#SEAL_BACKLOG}
 *       segments are queued, the writer writes the hint itself.
 *   <li><b>Allocation ahead</b> (BUFFERED): the active segment's file is allocated a megabyte ahead
 *       of the writer's stores through the mapping, and each new page touched, so that the writer
 *       meets neither the {@code write(2)} of the allocation nor a page fault.
 *   <li><b>The next segment</b> (BUFFERED): once the active segment is half full, the file of the
 *       one that will follow it is made ({@link Segment#prepare}), so that the roll renames a file
 *       instead of writing a chunk of zeros on the writer's path. A prepared file made for another
 *       id or predecessor than the roll's (compaction rolled in between) is deleted, not used; one
 *       left at close is deleted, and one left by a crash is deleted by the next open.
 * </ul>
 *
 * <p>{@link #drain} waits for the queue to empty (close, explicit compaction). A step that throws
 * ends this sealer (not the shared thread) and fails its store, naming the thread, as the death of
 * a thread of its own did.
 */
final class Sealer implements Workers.Job {
  private final SegmentLog log;
  private final Segments segments;
  private final StoreState state;
  private final ArrayDeque<Segment> queue = new ArrayDeque<>(); // guarded by this
  private Segment current; // being processed; guarded by this
  private boolean dead; // a step threw: nothing is served any more; guarded by this
  private Segment ahead; // active segment to allocate ahead of the writer; guarded by this
  private Next wanted; // the next segment to prepare; guarded by this
  private Next prepared; // the next segment's file, made and not yet taken; guarded by this

  /** Which segment a prepared file is for: the roll takes it only if all three match. */
  record Next(int id, int previous, int capacity) {}

  private volatile Workers workers; // the store's sealer thread, once started

  Sealer(SegmentLog log, Segments segments, StoreState state) {
    this.log = log;
    this.segments = segments;
    this.state = state;
  }

  /** Starts serving this store's segments on {@code w}. */
  void start(Workers w) {
    w.add(this);
    workers = w;
    wake(); // segments the open queued
  }

  /** Queues a finished segment. Caller holds the writer lock. */
  void submit(Segment s) {
    synchronized (this) {
      s.move(SegmentPhase.SEALING);
      queue.addLast(s);
    }
    wake();
  }

  /**
   * Asks the thread to allocate the active segment's file ahead of the writer's stores through the
   * mapping (BUFFERED), see {@link Segment#allocateAhead}.
   */
  void allocateAhead(Segment active) {
    synchronized (this) {
      if (ahead == active) {
        return;
      }
      ahead = active;
    }
    wake();
  }

  /**
   * Asks the thread to make the file of the segment that will follow the active one ({@link
   * Segment#prepare}). Caller holds the writer lock.
   */
  void prepareNext(Next next) {
    synchronized (this) {
      if (next.equals(prepared)) {
        return;
      }
      wanted = next;
    }
    wake();
  }

  /** The segment whose file is prepared and not yet taken, or null; for tests. */
  synchronized Next prepared() {
    return prepared;
  }

  /**
   * The new active segment, from the file prepared for it, renamed to {@code path}; null if no file
   * was prepared for exactly this segment (then the caller creates it). Caller holds the writer
   * lock.
   */
  Segment takePrepared(Next next, Path path) throws IOException {
    Next p;
    synchronized (this) {
      p = prepared;
      prepared = null;
    }
    if (p == null) {
      return null;
    }
    if (!p.equals(next) || segments.storage.exists(path)) {
      discard(p);
      return null;
    }
    try {
      segments.storage.move(Segment.preparedPath(segments.dir, p.id()), path);
    } catch (IOException e) {
      discard(p);
      return null; // the caller creates the segment, and meets the failure itself
    }
    return Segment.openPrepared(segments.storage, next.id(), path, next.capacity());
  }

  /** Deletes the file prepared for {@code n}, if any. */
  private void discard(Next n) {
    try {
      segments.storage.deleteIfExists(Segment.preparedPath(segments.dir, n.id()));
    } catch (IOException e) {
      // Left for the next open, which deletes *.tmp files.
    }
  }

  private void wake() {
    Workers w = workers;
    if (w != null) {
      w.wake(this);
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
  void drain() {
    boolean interrupted = false;
    Workers w = workers;
    synchronized (this) {
      while (!queue.isEmpty() || current != null) {
        if (w == null || dead || !w.serves(this)) {
          break;
        }
        try {
          wait(50);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Finishes what is queued, then leaves the shared thread; waits for that (once is enough). */
  void stop() {
    drain();
    Workers w = workers;
    if (w != null) {
      w.remove(this);
    }
    Next p;
    synchronized (this) {
      p = prepared;
      prepared = null;
      wanted = null;
    }
    if (p != null) {
      discard(p);
    }
  }

  /**
   * Waits for a background thread to end, through interrupts (the caller's interrupt status is
   * kept); returns at once for null or the calling thread itself.
   */
  static void awaitEnd(Thread t) {
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

  @Override
  public boolean work() {
    Segment s;
    Segment a;
    Next n = null;
    synchronized (this) {
      a = ahead;
      ahead = null;
      s = a != null ? null : queue.pollFirst();
      if (a == null && s == null) {
        n = wanted;
        wanted = null;
        if (n == null) {
          notifyAll();
          return false;
        }
      }
      current = s;
    }
    if (a != null) {
      a.allocateAhead();
    } else if (n != null) {
      prepare(n);
    } else {
      try {
        finish(s);
      } finally {
        synchronized (this) {
          current = null;
          notifyAll();
        }
      }
    }
    synchronized (this) {
      notifyAll();
      return !queue.isEmpty() || ahead != null || wanted != null;
    }
  }

  private void prepare(Next n) {
    Path tmp = Segment.preparedPath(segments.dir, n.id());
    try {
      Segment.prepare(segments.storage, tmp, n.id(), n.capacity(), n.previous());
    } catch (IOException e) {
      return; // the roll creates the segment itself, and meets the failure (a full disk) there
    }
    Next old;
    synchronized (this) {
      old = prepared;
      prepared = n;
    }
    if (old != null && old.id() != n.id()) {
      discard(old);
    }
  }

  @Override
  public void died(String thread, Throwable e) {
    synchronized (this) {
      dead = true;
      notifyAll();
    }
    state.died(thread, e);
  }

  private void finish(Segment s) {
    try {
      segments.syncDirectory(); // also makes the newer active segment's directory entry durable
    } catch (IOException | RuntimeException e) {
      state.fail("syncing the directory after sealing " + s.path + " failed", e);
      release(s);
      return;
    }
    try {
      HintFile.write(segments.storage, segments.dir, s);
    } catch (IOException | RuntimeException e) {
      // A hint only speeds up the next open, which rebuilds a missing one: not a store failure.
      HashLogStore.LOG.log(Level.WARNING, "hashlog: could not write the hint file of " + s.path, e);
      try {
        segments.storage.deleteIfExists(segments.dir.resolve(Segment.hintName(s.id) + ".tmp"));
      } catch (IOException ignored) {
        // Left for the next open, which ignores *.tmp files.
      }
    }
    release(s);
  }

  private void release(Segment s) {
    segments.writeLock.lock();
    try {
      s.move(SegmentPhase.SEALED);
      log.segmentSealed();
    } finally {
      segments.writeLock.unlock();
    }
  }
}
