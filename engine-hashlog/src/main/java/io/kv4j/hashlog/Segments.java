package io.kv4j.hashlog;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Which segments make up the store: in memory, the installed segments by id (a {@link SegmentTable}
 * replaced copy-on-write, so readers resolve a location without a lock) and the active one; on
 * disk, the {@link Manifest} that lists them. Also each segment's byte accounting (live, tombstone,
 * dead), which compaction chooses its victims by.
 *
 * <p>The {@link #writeLock writer lock} guards every change here (installs, the active segment, the
 * byte accounting), the index's mutations and the appends of the {@link SegmentLog}: writes are
 * serialised by it and hold it for well under a microsecond.
 */
final class Segments {
  /** Largest mapping (and so segment) size. */
  static final int MAX_SEGMENT = Integer.MAX_VALUE - 4096;

  final Path dir;

  /** Where every file operation goes. */
  final Storage storage;

  /** The writer lock (see the class comment). */
  final ReentrantLock writeLock = new ReentrantLock();

  /** The installed segments by id; replaced (never modified) under the writer lock. */
  private volatile SegmentTable table = SegmentTable.EMPTY;

  /** The segment writes append to; null before recovery and after close. */
  volatile Segment active;

  /**
   * Serialises manifest writes (open, compaction commits, close) and what must not run between them
   * (verify). Taken before the writer lock, never while holding it.
   */
  final Object manifestLock = new Object();

  /** Compacted segments whose deletion is not yet durable: the manifest lists them as retired. */
  private final TreeSet<Integer> pendingDeletes = new TreeSet<>(); // guarded by manifestLock

  private long manifestGeneration; // guarded by manifestLock

  Segments(Path dir, Storage storage) {
    this.dir = dir;
    this.storage = storage;
  }

  /** A record's location: segment id in the high word, offset in the low word; never 0. */
  static long location(int segmentId, int offset) {
    return ((long) segmentId << 32) | (offset & 0xFFFFFFFFL);
  }

  /** The segment holding {@code loc}, or null. Safe without locks. */
  Segment at(long loc) {
    return table.get((int) (loc >>> 32));
  }

  /** The segment with this id, or null. */
  Segment get(int id) {
    return table.get(id);
  }

  /** The installed segments, ascending id (retired ones included until unmapped). Do not modify. */
  Segment[] all() {
    return table.all();
  }

  /**
   * Installs {@code seg}, replacing any segment of its id. Caller holds the writer lock or opens.
   */
  void install(Segment seg) {
    table = table.with(seg);
  }

  void uninstall(Segment seg) {
    table = table.without(seg);
  }

  /** The end of the active segment as a log position (what a sync must cover). */
  long activeEnd() {
    Segment s = active;
    return location(s.id, s.end);
  }

  /** Forces the directory: segment files created, renamed or deleted are then durable. */
  void syncDirectory() throws IOException {
    storage.forceDirectory(dir);
  }

  // ---------------------------------------------------------------- byte accounting

  /**
   * Accounts a record just appended to {@code s} (or recovered from it): a put's bytes are live, a
   * delete's are tombstone; the record it superseded, {@code old} (0 for none), turns dead. Caller
   * holds the writer lock.
   */
  void account(Segment s, int type, long size, long old) {
    if (type == RecordCodec.PUT) {
      s.liveBytes += size;
    } else {
      s.tombstoneBytes += size;
    }
    if (old != 0) {
      retire(old);
    }
  }

  /** Moves a superseded put record's bytes from live to dead. Caller holds the writer lock. */
  void retire(long loc) {
    Segment s = at(loc);
    int off = (int) loc;
    // A damaged header (the entry came from a hint) must not wreck the accounting: stay in bounds.
    s.liveBytes -= Math.min(RecordCodec.size(s.map, off), Math.max(0, s.end - off));
  }

  // ---------------------------------------------------------------- manifest

  /** Continues the manifest generations of a store written before (0 for a new store). */
  void manifestGeneration(long generation) {
    synchronized (manifestLock) {
      manifestGeneration = generation;
    }
  }

  /**
   * Writes the manifest from the installed segments: every sealed one not committed as compacted
   * ({@link Segment#dropped}) with its length, the active one, the retired ids whose deletion is
   * not yet durable. With {@code clean} (close, after the active segment was truncated to its data
   * and forced) the active segment's length too.
   */
  void writeManifest(boolean clean) throws IOException {
    synchronized (manifestLock) {
      writeManifestLocked(clean);
    }
  }

  private void writeManifestLocked(boolean clean) throws IOException {
    Manifest m;
    writeLock.lock();
    try {
      Segment act = active;
      Segment[] all = all();
      int[] ids = new int[all.length];
      int[] lengths = new int[all.length];
      int n = 0;
      for (Segment g : all) {
        if (g != act && !g.isDropped() && g.isSealed() && g.end >= RecordCodec.FILE_HEADER) {
          ids[n] = g.id;
          lengths[n++] = g.end;
        }
      }
      int[] retired = new int[pendingDeletes.size()];
      int r = 0;
      for (int id : pendingDeletes) {
        retired[r++] = id;
      }
      m =
          new Manifest(
              clean,
              ++manifestGeneration,
              act.id,
              act.end,
              Arrays.copyOf(ids, n),
              Arrays.copyOf(lengths, n),
              retired);
    } finally {
      writeLock.unlock();
    }
    m.write(storage, dir);
  }

  /**
   * Commits a compaction run: its victims are no longer listed, but retired until their deletion is
   * durable. After this the run's output is the live copy, whatever a crash interrupts.
   */
  void commitCompaction(List<Segment> victims) throws IOException {
    synchronized (manifestLock) {
      for (Segment v : victims) {
        v.move(SegmentPhase.DROPPED);
        pendingDeletes.add(v.id);
      }
      writeManifestLocked(false);
    }
  }

  /** The victims' files are deleted and the directory forced: no manifest need name them. */
  void deletionsDurable(List<Segment> victims) {
    synchronized (manifestLock) {
      for (Segment v : victims) {
        pendingDeletes.remove(v.id);
      }
    }
  }

  // ---------------------------------------------------------------- close

  private volatile boolean keepMappings;

  /**
   * Makes {@link #closeAll} leave the mappings to the garbage collector instead of unmapping them:
   * for a close that could not be sure every reader has left.
   */
  void keepMappings() {
    keepMappings = true;
  }

  /** Whether {@link #keepMappings} was called. */
  boolean mappingsKept() {
    return keepMappings;
  }

  /**
   * Closes every segment's file and unmaps it (unless {@link #keepMappings} was called); nothing is
   * installed afterwards. Caller made sure no reader is inside and no background thread runs.
   */
  void closeAll() {
    writeLock.lock();
    try {
      for (Segment s : all()) {
        try {
          s.closeFile();
        } catch (IOException e) {
          HashLogStore.LOG.log(Level.WARNING, "hashlog: closing " + s.path + " failed", e);
        }
        if (!keepMappings) {
          Mappings.unmap(s.map);
        }
      }
      table = SegmentTable.EMPTY;
      active = null;
    } finally {
      writeLock.unlock();
    }
  }
}
