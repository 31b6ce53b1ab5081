package io.kv4j.hashlog;

import io.kv4j.StoreClosedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Maps the sealed segments of an opened store into the process ahead of the reads (option {@code
 * preload}), on a background thread, so the first gets after an open do not each take a page fault.
 *
 * <p>Why: after an open nothing of the segments' mappings is in the process's page tables, so a get
 * meeting a page for the first time takes a fault even when the page is in the page cache (at 100 M
 * keys, 12.8 GB of segments, the read p99 of the first 5 s was 11x the 100,000-key figure). This
 * thread reads one byte of every 4 KiB page, oldest segment first; the kernel maps the neighbours
 * of each faulting page that are cached (fault-around), so the whole store costs a few hundred
 * thousand faults here instead of on the readers. It reads pages that are not cached from the disk:
 * for stores larger than the free memory, leave it off.
 *
 * <p>Safety: it touches a segment only inside the {@link ReaderGuard}, a megabyte at a time, and
 * only a segment not yet retired by compaction, so it never reads a mapping that is being unmapped
 * (a retired segment is unmapped only after the readers that entered before its retirement have
 * left, and those entering after see it retired). It stops at the store's close.
 */
final class Preloader {
  private static final int PAGE = 4096;
  private static final int CHUNK = 1 << 20;

  private final Segments segments;
  private final ReaderGuard guard;
  private final StoreState state;
  private volatile boolean stop;
  private volatile long bytes; // written by the preload thread only
  private volatile boolean finished;
  private Thread thread;

  // Read by no one: keeps the JIT from dropping the page loads.
  @SuppressWarnings("unused")
  private static volatile int sink;

  Preloader(Segments segments, ReaderGuard guard, StoreState state) {
    this.segments = segments;
    this.guard = guard;
    this.state = state;
  }

  /** Starts the preload thread (once, after recovery). */
  synchronized void start() {
    // Before any call on the store: the segments the open found sealed. The active one is left
    // out (what readers need of it was just written), also once a roll or compaction seals it.
    List<Segment> atOpen = new ArrayList<>();
    for (Segment s : segments.all()) {
      if (s.isSealed()) {
        atOpen.add(s);
      }
    }
    thread =
        state.startThread("kv4j-hashlog-preload " + segments.dir.getFileName(), () -> run(atOpen));
  }

  /** Stops the preload thread and waits for it (store close). */
  void stop() {
    stop = true;
    Thread t;
    synchronized (this) {
      t = thread;
    }
    Sealer.awaitEnd(t); // it stops within a chunk
  }

  /**
   * With option {@code preload} on: {@code preloaded-bytes}, the bytes of sealed segments touched
   * so far, and {@code preload-finished}, 1 once the thread is done with every segment sealed at
   * the open (touched, or skipped as retired meanwhile) or was stopped by a fault (logged; {@code
   * preloaded-bytes} then tells how far it got), else 0. Nothing with the option off.
   */
  synchronized void figures(Map<String, Number> f) {
    if (thread != null) {
      f.put("preloaded-bytes", bytes);
      f.put("preload-finished", finished ? 1 : 0);
    }
  }

  private void run(List<Segment> atOpen) {
    try {
      for (Segment s : atOpen) {
        for (int pos = 0; pos < s.end && !stop; pos += CHUNK) {
          if (!touch(s, pos, Math.min(s.end, pos + CHUNK))) {
            break;
          }
        }
        if (stop) {
          return; // the close: nobody waits for the figure any more
        }
      }
    } catch (InternalError e) {
      // A page the file no longer backs (a segment cut short behind the store's back): the JVM
      // turns the SIGBUS into this error. A reader meeting it gets the same; the preload just ends.
      HashLogStore.LOG.log(
          System.Logger.Level.WARNING, "hashlog: preload of " + segments.dir + " stopped", e);
    }
    finished = true; // also after a fault, so that whoever waits for the preload goes on
  }

  /** Loads one byte of each page of {@code [from, to)}; false if the segment was retired. */
  private boolean touch(Segment s, int from, int to) {
    int token;
    try {
      token = guard.enter();
    } catch (StoreClosedException e) {
      stop = true;
      return false;
    }
    try {
      if (s.isRetired()) {
        return false;
      }
      int x = 0;
      for (int p = from; p < to; p += PAGE) {
        x += s.map.get(p);
      }
      sink = x;
      bytes += to - from;
      return true;
    } finally {
      guard.exit(token);
    }
  }
}
