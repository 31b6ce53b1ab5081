package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Background compaction: copies the live records of mostly-dead sealed segments into a new segment
 * and deletes the old ones.
 *
 * <p><b>Victims</b> are chosen from the per-segment byte accounting (no data is read to choose):
 * garbage ratio = dead bytes / data bytes (tombstones count as garbage in the oldest segment, where
 * they can be dropped), highest first, then oldest first; a run takes victims until their live and
 * tombstone bytes fill one segment.
 *
 * <p><b>Ordering</b>: a run writes the survivors into a segment whose id is above every victim's
 * and below the active segment's. So the copies order after every victim and before every write
 * made after the run began, and recovery, which applies segments in id order, sees each key's
 * newest record last. (A sealed segment between the victims and the output holds no record of a
 * copied key: such a record would be newer than the victim's, which would then not have been live.)
 * The writer leaves room for such ids: active segments take ids that are multiples of {@link
 * HashLogStore#ID_STRIDE}, and a run takes the lowest unused id above its victims and every output
 * before it. Only when none is left below the active segment does a run roll it to make one (sealed
 * A, output A+1, new active above) — which cuts the active segment short and puts a seal, with its
 * force, under the writer lock.
 *
 * <p><b>Steps</b> (each is a crash point, see {@link Step}): write {@code seg-X.log.tmp} → fsync →
 * rename to {@code seg-X.log} + directory fsync → hint → switch the index (only entries still
 * pointing at the copied record move) → force the active segment (so any newer write that made a
 * copy unnecessary is durable) → write the {@link Manifest} listing the output and retiring the
 * victims (the commit point) → delete the victims in ascending id order → directory fsync. At every
 * point the files on disk describe the same contents: before the rename the temporary file is
 * ignored (deleted on open); after it and before the commit the output is unlisted, marked as a
 * compaction output in its header, and deleted at open (its victims are still listed and hold the
 * same values); after the commit the victims are retired, deleted at open if still present. So a
 * deleted segment is never taken for a compacted one.
 *
 * <p><b>Tombstones</b> are dropped only when no older segment can hold their key: every live
 * segment (or reserved output) with a lower id is a victim of the same run, whose files are deleted
 * oldest first — so after a crash an older put of the key is never left without the tombstone. A
 * tombstone whose key was written again later is superseded and also dropped.
 *
 * <p><b>Readers</b> are never blocked: retired victims stay mapped and installed until every reader
 * that entered before the index switch has left ({@link HashLogStore#awaitReaders}) and every
 * cursor opened before it is closed; only then are they unmapped.
 *
 * <p><b>Throttling</b>: when the garbage in sealed segments exceeds what the threshold allows for
 * the live data (plus one segment of slack), writers wait until compaction catches up.
 */
final class Compactor {
  /** Compaction options. */
  record Settings(double garbageThreshold, long bytesPerSecond, int threads) {
    static final Settings DEFAULT = new Settings(0.4, 0, 1);
  }

  /** The crash points of a compaction run, in order. */
  enum Step {
    /** Output written to its temporary file, not yet forced. */
    OUTPUT_WRITTEN,
    /** Temporary output forced to disk. */
    OUTPUT_SYNCED,
    /** Output renamed to its segment name and the directory forced. */
    OUTPUT_RENAMED,
    /** Hint file of the output written. */
    HINT_WRITTEN,
    /** Index switched to the copies (memory only). */
    INDEX_SWITCHED,
    /** Active segment forced. */
    WRITES_DURABLE,
    /** Manifest written: the output listed, the victims retired (the run's commit point). */
    MANIFEST_WRITTEN,
    /** The oldest victim's segment file deleted. */
    FIRST_VICTIM_DELETED,
    /** Every victim file deleted, directory not yet forced. */
    VICTIMS_DELETED,
    /** Directory forced: the run is complete on disk. */
    DIRECTORY_SYNCED
  }

  /** Test hook: called at each {@link Step}; a {@link SimulatedCrash} stops the run right there. */
  interface StepHook {
    void at(Step step);
  }

  /** Thrown by a test hook to stop a run as a crash would: no clean-up, the store fails. */
  static final class SimulatedCrash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SimulatedCrash(Step step) {
      super("simulated crash at " + step);
    }
  }

  private enum Mode {
    BACKGROUND,
    ALL,
    ONLY
  }

  /** Garbage beyond what the threshold allows, in segments, before writers wait. */
  static final double THROTTLE_SLACK_SEGMENTS = 1.0;

  private static final int COPY_BUFFER = 256 << 10;

  // Direct, so that writing the output does not copy each chunk once more into a temporary direct
  // buffer; one per concurrent run, reused.
  private final java.util.concurrent.ConcurrentLinkedQueue<ByteBuffer> copyBuffers =
      new java.util.concurrent.ConcurrentLinkedQueue<>();
  private static final int SWITCH_CHUNK = 256;

  private final HashLogStore store;
  private final Settings settings;
  private final double factor;
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stopping;
  private final Object signal = new Object();
  private boolean pending; // guarded by signal
  private volatile boolean throttled;
  // The last background run failed: writers are not held back by a compaction that cannot run.
  private volatile boolean failing;
  private final Object throttleMonitor = new Object();
  private final Set<Integer> reserved = new TreeSet<>(); // output ids; guarded by the write lock
  private int highestOutput; // highest output id handed out since open; guarded by the write lock
  private final Set<HashLogCursor> cursors = ConcurrentHashMap.newKeySet();
  private final List<Grave> graves = new ArrayList<>(); // guarded by itself
  private long paceNext; // guarded by this

  private final AtomicLong runs = new AtomicLong();
  private final AtomicLong bytesWritten = new AtomicLong();
  private final AtomicLong bytesReclaimed = new AtomicLong();
  private final AtomicLong throttleNanos = new AtomicLong();

  /** Test hook, see {@link StepHook}. */
  volatile StepHook hook;

  /** Retired segments waiting for the cursors that may still read them. */
  private record Grave(List<Segment> segments, Set<HashLogCursor> pins) {}

  Compactor(HashLogStore store, Settings settings) {
    this.store = store;
    this.settings = settings;
    double t = settings.garbageThreshold();
    this.factor = t / (1 - t);
  }

  // ---------------------------------------------------------------- lifecycle

  void start() {
    // Ids below the active segment at open may have been used by segments deleted since.
    highestOutput = store.active.id;
    for (int i = 0; i < settings.threads(); i++) {
      Thread t = new Thread(this::loop, "kv4j-hashlog-compactor-" + i + " " + store.dir);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
  }

  /** Stops the background threads and waits for them (a run in progress ends or aborts). */
  void stop() {
    stopping = true;
    synchronized (signal) {
      signal.notifyAll();
    }
    synchronized (throttleMonitor) {
      throttled = false;
      throttleMonitor.notifyAll();
    }
    for (Thread t : threads) {
      if (t == Thread.currentThread()) {
        continue;
      }
      boolean interrupted = false;
      while (t.isAlive()) {
        LockSupport.unpark(t);
        try {
          t.join(100);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void wake() {
    synchronized (signal) {
      pending = true;
      signal.notifyAll();
    }
  }

  /** A segment was sealed: there may be a new victim. Caller holds the write lock. */
  void segmentSealed() {
    updateThrottle();
    if (!threads.isEmpty()) {
      wake();
    }
  }

  private void loop() {
    while (!stopping) {
      boolean worked = false;
      try {
        worked = runOnce(Mode.BACKGROUND, null);
        failing = false;
        reap();
      } catch (SimulatedCrash e) {
        worked = false;
      } catch (RuntimeException | Error e) {
        failing = true;
        setThrottled(false);
        if (!stopping) {
          HashLogStore.LOG.log(Level.WARNING, "hashlog: background compaction failed", e);
        }
      }
      if (!worked) {
        store.writeLock.lock();
        try {
          updateThrottle();
        } finally {
          store.writeLock.unlock();
        }
        synchronized (signal) {
          if (!pending && !stopping) {
            try {
              signal.wait(1000);
            } catch (InterruptedException e) {
              // Engine-owned thread: nobody interrupts it but close, which sets stopping.
            }
          }
          pending = false;
        }
      }
    }
  }

  // ---------------------------------------------------------------- cursors and throttle

  void pin(HashLogCursor c) {
    cursors.add(c);
  }

  void unpin(HashLogCursor c) {
    if (cursors.remove(c)) {
      boolean any;
      synchronized (graves) {
        any = !graves.isEmpty();
      }
      if (any && !threads.isEmpty()) {
        wake();
      }
    }
  }

  /** Called by writers before they take the write lock: waits while compaction is behind. */
  void throttle() {
    if (!throttled) {
      return;
    }
    long t0 = System.nanoTime();
    synchronized (throttleMonitor) {
      while (throttled && !stopping && !store.closed() && !store.isFailed()) {
        try {
          throttleMonitor.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    throttleNanos.addAndGet(System.nanoTime() - t0);
  }

  /** Recomputes whether writers must wait. Caller holds the write lock. */
  void updateThrottle() {
    if (threads.isEmpty() || stopping || failing) {
      setThrottled(false);
      return;
    }
    long garbage = 0;
    long kept = 0;
    Segment act = store.active;
    for (Segment s : store.segments()) {
      if (s.retired || s == act || s.unreadable) {
        continue;
      }
      garbage += s.deadBytes();
      kept += s.liveBytes + s.tombstoneBytes;
    }
    setThrottled(garbage > factor * kept + THROTTLE_SLACK_SEGMENTS * store.segmentSize);
  }

  private void setThrottled(boolean t) {
    if (t == throttled) {
      return;
    }
    synchronized (throttleMonitor) {
      throttled = t;
      if (!t) {
        throttleMonitor.notifyAll();
      }
    }
  }

  boolean isThrottled() {
    return throttled;
  }

  // ---------------------------------------------------------------- entry points

  /**
   * Compacts everything reclaimable now: the active segment's garbage too (it is sealed first).
   *
   * @return bytes reclaimed
   */
  long compactAll() {
    long before = bytesReclaimed.get();
    int limit = 4 + 2 * store.segments().length;
    for (int i = 0; i < limit && runOnce(Mode.ALL, null); i++) {
      // Each run takes at most one segment's worth of survivors.
    }
    reap();
    return bytesReclaimed.get() - before;
  }

  /** Compacts exactly the given sealed segments in one run (tests). */
  boolean compactSegments(Set<Integer> ids) {
    store.sealer.drain();
    boolean r = runOnce(Mode.ONLY, ids);
    reap();
    return r;
  }

  /** Waits until background compaction has nothing left above the threshold (tests). */
  void awaitIdle() {
    while (true) {
      boolean any;
      store.writeLock.lock();
      try {
        any =
            !pick(Mode.BACKGROUND, null, new DropMap()).isEmpty()
                || anyCompacting()
                || store.sealer.pending().length > 0;
      } finally {
        store.writeLock.unlock();
      }
      if (!any || store.closed() || store.isFailed() || threads.isEmpty()) {
        return;
      }
      wake();
      LockSupport.parkNanos(1_000_000);
    }
  }

  private boolean anyCompacting() {
    for (Segment s : store.segments()) {
      if (s.compacting) {
        return true;
      }
    }
    return false;
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

  // ---------------------------------------------------------------- victim choice

  /** Map from victim to whether its tombstones may be dropped. */
  private static final class DropMap extends java.util.HashMap<Segment, Boolean> {
    private static final long serialVersionUID = 1L;
  }

  /** Chooses victims (ascending id). Caller holds the write lock. */
  private List<Segment> pick(Mode mode, Set<Integer> only, DropMap dropTombs) {
    Segment act = store.active;
    Segment[] all = store.segments();
    int oldest = Integer.MAX_VALUE;
    List<Segment> candidates = new ArrayList<>();
    for (Segment s : all) {
      if (s.retired) {
        continue;
      }
      oldest = Math.min(oldest, s.id);
      if (s != act && s.sealed && !s.sealing && !s.compacting && !s.unreadable) {
        candidates.add(s);
      }
    }
    for (int r : reserved) {
      oldest = Math.min(oldest, r);
    }
    Map<Segment, Double> ratio = new java.util.HashMap<>();
    for (Segment s : candidates) {
      long data = s.end - RecordCodec.FILE_HEADER;
      long garbage = s.deadBytes() + (s.id == oldest ? s.tombstoneBytes : 0);
      ratio.put(s, data <= 0 ? 1.0 : (double) garbage / data);
    }
    List<Segment> chosen = new ArrayList<>();
    if (mode == Mode.ONLY) {
      for (Segment s : candidates) {
        if (only.contains(s.id)) {
          chosen.add(s);
        }
      }
    } else {
      double min = mode == Mode.ALL ? Double.MIN_VALUE : settings.garbageThreshold();
      List<Segment> order = new ArrayList<>();
      List<Segment> empty = new ArrayList<>();
      for (Segment s : candidates) {
        if (s.end <= RecordCodec.FILE_HEADER) {
          empty.add(s);
        } else if (ratio.get(s) >= min) {
          order.add(s);
        }
      }
      order.sort(
          Comparator.comparingDouble((Segment s) -> -ratio.get(s))
              .thenComparingInt((Segment s) -> s.id));
      long budget = store.segmentSize;
      long used = 0;
      for (Segment s : order) {
        long keep = s.liveBytes + s.tombstoneBytes;
        if (!chosen.isEmpty() && used + keep > budget) {
          continue;
        }
        chosen.add(s);
        used += keep;
      }
      if (!chosen.isEmpty() || mode == Mode.ALL) {
        chosen.addAll(empty); // free to delete alongside a real run
      }
    }
    chosen.sort(Comparator.comparingInt((Segment s) -> s.id));
    Set<Integer> victimIds = new HashSet<>();
    for (Segment s : chosen) {
      victimIds.add(s.id);
    }
    for (Segment v : chosen) {
      boolean drop = true;
      for (Segment s : all) {
        if (!s.retired && s.id < v.id && !victimIds.contains(s.id)) {
          drop = false;
          break;
        }
      }
      for (int r : reserved) {
        if (r < v.id) {
          drop = false;
        }
      }
      dropTombs.put(v, drop);
    }
    return chosen;
  }

  // ---------------------------------------------------------------- one run

  /** Growable parallel arrays of relocated put records. */
  private static final class Moves {
    long[] hash = new long[256];
    long[] from = new long[256];
    long[] to = new long[256];
    int[] size = new int[256];
    int n;

    void add(long h, long f, long t, int bytes) {
      if (n == hash.length) {
        hash = Arrays.copyOf(hash, n * 2);
        from = Arrays.copyOf(from, n * 2);
        to = Arrays.copyOf(to, n * 2);
        size = Arrays.copyOf(size, n * 2);
      }
      hash[n] = h;
      from[n] = f;
      to[n] = t;
      size[n] = bytes;
      n++;
    }
  }

  private boolean runOnce(Mode mode, Set<Integer> only) {
    List<Segment> victims;
    DropMap dropTombs = new DropMap();
    int outId;
    store.writeLock.lock();
    try {
      if (store.closed() || store.isFailed() || (stopping && mode == Mode.BACKGROUND)) {
        return false;
      }
      victims = pick(mode, only, dropTombs);
      if (victims.isEmpty()) {
        if (mode == Mode.ALL && hasGarbage(store.active)) {
          // Seal the active segment so that its garbage becomes compactable.
          reserved.remove(rollForOutput(mode));
          return true;
        }
        setThrottled(false);
        return false;
      }
      for (Segment v : victims) {
        v.compacting = true;
      }
      try {
        outId = reserveOutputId(mode, victims);
      } catch (IOException e) {
        for (Segment v : victims) {
          v.compacting = false;
        }
        throw store.fail("compaction could not roll the active segment", e);
      }
    } catch (IOException e) {
      throw store.fail("compaction could not roll the active segment", e);
    } finally {
      store.writeLock.unlock();
    }
    try {
      run(victims, dropTombs, outId);
      runs.incrementAndGet();
      return true;
    } finally {
      store.writeLock.lock();
      try {
        reserved.remove(outId);
        for (Segment v : victims) {
          v.compacting = false;
        }
        updateThrottle();
      } finally {
        store.writeLock.unlock();
      }
    }
  }

  private static boolean hasGarbage(Segment s) {
    return s != null && s.deadBytes() > 0;
  }

  /**
   * An unused id above every victim and every earlier output, below the active segment; else (none
   * left) one made by {@link #rollForOutput}. Never an id used before (output ids only grow, and
   * skip the active segments' ids), so no file or hint of an earlier segment can be mistaken for
   * the output's. Caller holds the write lock.
   */
  private int reserveOutputId(Mode mode, List<Segment> victims) throws IOException {
    int from = highestOutput;
    for (Segment v : victims) {
      from = Math.max(from, v.id);
    }
    for (int id = from + 1; id > 0 && id < store.active.id; id++) {
      // Multiples of the stride are active segments' ids: skipped even once deleted.
      if (id % HashLogStore.ID_STRIDE != 0
          && store.segment(HashLogStore.location(id, 0)) == null
          && !reserved.contains(id)) {
        reserved.add(id);
        highestOutput = id;
        return id;
      }
    }
    return rollForOutput(mode);
  }

  /**
   * Rolls the active segment leaving a gap id for the output. Caller holds the write lock.
   *
   * @return the output id
   */
  private int rollForOutput(Mode mode) throws IOException {
    Segment a = store.active;
    // Sealed even when empty (it then goes with the next run): reusing its id for the output
    // would delete a file the manifest may list as the active segment.
    // A background run need not wait for the force of the segment it seals: it does not take
    // that segment as a victim before the sealer is done with it.
    boolean deferred = store.sealActive(mode == Mode.BACKGROUND);
    int out = a.id + 1;
    store.createActive(HashLogStore.nextWriteId(out), store.segmentSize, deferred);
    reserved.add(out);
    highestOutput = Math.max(highestOutput, out);
    return out;
  }

  private void step(Step s) {
    StepHook h = hook;
    if (h != null) {
      h.at(s);
    }
  }

  private void run(List<Segment> victims, Map<Segment, Boolean> dropTombs, int outId) {
    Path dir = store.dir;
    Path tmp = dir.resolve(Segment.fileName(outId) + ".tmp");
    Path target = dir.resolve(Segment.fileName(outId));
    Moves moves = new Moves();
    Moves copies = new Moves(); // every copied record, puts and tombstones: for the scan view
    long[] tombBytes = new long[1];
    long outEnd;
    boolean renamed = false;
    Segment out = null;
    HintFile.Entries outHints = null;
    ByteBuffer copyBuffer = null;
    try {
      try (FileChannel ch =
          FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer polled = copyBuffers.poll();
        ByteBuffer buf = polled != null ? polled.clear() : ByteBuffer.allocateDirect(COPY_BUFFER);
        copyBuffer = buf;
        buf.put(RecordCodec.segmentHeader(outId, 0, true));
        long[] pos = {RecordCodec.FILE_HEADER};
        HintFile.Entries hints = new HintFile.Entries();
        outHints = hints;
        for (Segment v : victims) {
          boolean drop = dropTombs.get(v);
          ByteBuffer m = v.map;
          HintFile.Visitor visitor =
              (type, off, k, vl, hintKey) -> {
                if (stopping) {
                  throw new Abort();
                }
                byte[] key = hintKey;
                if (key == null) {
                  key = new byte[k];
                  m.get(off + RecordCodec.RECORD_HEADER, key, 0, k);
                }
                long h = KeyDir.fix(store.hasher.hash(key));
                long loc = HashLogStore.location(v.id, off);
                boolean copy;
                if (type == RecordCodec.PUT) {
                  copy = store.isCurrent(h, loc);
                } else {
                  copy = !drop && store.locate(h, key) == 0;
                }
                if (!copy) {
                  return;
                }
                int size = (int) RecordCodec.recordSize(k, vl);
                if (!RecordCodec.crcMatches(m, off, size)) {
                  markUnreadable(v);
                  throw new StoreCorruptedException(
                      "hashlog: compaction found a record with a bad checksum in "
                          + v.path
                          + " at offset "
                          + off,
                      v.path,
                      off);
                }
                try {
                  long at = pos[0];
                  if (size > buf.remaining()) {
                    buf.flip();
                    writeFully(ch, buf);
                    buf.clear();
                  }
                  if (size > buf.capacity()) {
                    writeFully(ch, m.slice(off, size));
                  } else {
                    buf.put(m.slice(off, size));
                  }
                  pos[0] = at + size;
                  hints.add(type, (int) at, key, 0, k, vl);
                  if (pos[0] > HashLogStore.MAX_SEGMENT) {
                    throw new IOException("compaction output exceeds 2 GiB");
                  }
                  long to = HashLogStore.location(outId, (int) at);
                  copies.add(h, loc, to, size);
                  if (type == RecordCodec.PUT) {
                    moves.add(h, loc, to, size);
                  } else {
                    tombBytes[0] += size;
                  }
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
                pace(size);
              };
          // The hint lists every record's key and place in a few bytes each: walking it instead of
          // the segment skips a cold cache miss per dead record. Without a usable hint, walk the
          // record headers.
          int end =
              HintFile.read(store.dir, v, visitor) == null
                  ? v.end
                  : Recovery.walk(
                      m,
                      RecordCodec.FILE_HEADER,
                      v.end,
                      (type, off, k, vl) -> visitor.entry(type, off, k, vl, null));
          if (end != v.end) {
            markUnreadable(v);
            throw new StoreCorruptedException(
                "hashlog: compaction found an invalid record in " + v.path + " at offset " + end,
                v.path,
                end);
          }
        }
        buf.flip();
        writeFully(ch, buf);
        outEnd = pos[0];
        step(Step.OUTPUT_WRITTEN);
        ch.force(true);
        step(Step.OUTPUT_SYNCED);
      }
      if (outEnd > RecordCodec.FILE_HEADER) {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        renamed = true;
        store.syncDirectory();
        step(Step.OUTPUT_RENAMED);
        out = Segment.openSealed(outId, target); // forced above, before the rename
        out.forced = true;
        out.hintEntries = outHints;
        try {
          HintFile.write(dir, out);
        } catch (IOException e) {
          HashLogStore.LOG.log(Level.WARNING, "hashlog: could not write the hint of " + target, e);
        }
        step(Step.HINT_WRITTEN);
      } else {
        Files.delete(tmp); // nothing survived: no output file at all
        step(Step.OUTPUT_RENAMED);
        step(Step.HINT_WRITTEN);
      }
      renamed = true;
      switchIndex(victims, out, moves, copies, tombBytes[0]);
      step(Step.INDEX_SWITCHED);
      // A newer write that made a copy (or a tombstone) unnecessary must be durable before the
      // victim holding the older record disappears.
      store.commit.await(HashLogStore.location(store.active.id, store.active.end));
      step(Step.WRITES_DURABLE);
      store.commitCompaction(victims);
      step(Step.MANIFEST_WRITTEN);
      long freed = 0;
      for (int i = 0; i < victims.size(); i++) {
        Segment v = victims.get(i);
        Files.deleteIfExists(v.path);
        Files.deleteIfExists(HintFile.path(dir, v.id));
        freed += v.end;
        if (i == 0) {
          step(Step.FIRST_VICTIM_DELETED);
        }
      }
      step(Step.VICTIMS_DELETED);
      store.syncDirectory();
      store.deletionsDurable(victims);
      step(Step.DIRECTORY_SYNCED);
      long written = out == null ? 0 : out.end;
      bytesWritten.addAndGet(written);
      bytesReclaimed.addAndGet(freed - written);
      bury(victims);
    } catch (SimulatedCrash e) {
      store.fail("compaction stopped by a simulated crash", e);
      throw e;
    } catch (Abort e) {
      deleteQuietly(tmp);
    } catch (IOException | java.io.UncheckedIOException e) {
      if (!renamed) {
        deleteQuietly(tmp);
        if (out != null) {
          Mappings.unmap(out.map);
        }
        throw new StoreIOException(
            store.info().describe() + ": compaction failed (nothing changed): " + e, e);
      }
      throw store.fail("compaction failed after its output was in place", e);
    } catch (RuntimeException e) {
      if (!renamed) {
        deleteQuietly(tmp);
      } else {
        store.fail("compaction failed after its output was in place", e);
      }
      throw e;
    } finally {
      if (copyBuffer != null) {
        copyBuffers.add(copyBuffer);
      }
    }
  }

  private static final class Abort extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Abort() {
      super("compaction stopped", null, false, false);
    }
  }

  private void markUnreadable(Segment v) {
    store.writeLock.lock();
    try {
      v.unreadable = true;
    } finally {
      store.writeLock.unlock();
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      HashLogStore.LOG.log(Level.WARNING, "hashlog: could not delete " + p, e);
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  private void switchIndex(
      List<Segment> victims, Segment out, Moves moves, Moves copies, long tombBytes) {
    store.writeLock.lock();
    try {
      if (out != null) {
        // Claimed until its live bytes are all accounted: half-switched it would look like garbage
        // and another compaction thread could take it as a victim under the entries still moving.
        out.compacting = true;
        store.install(out);
        out.tombstoneBytes = tombBytes;
      }
    } finally {
      store.writeLock.unlock();
    }
    // In chunks, each under the writer lock and the sequence lock: writers wait for one chunk at
    // most, and optimistic readers retry briefly rather than fall back to the read lock. Between
    // chunks a writer may supersede a record not yet moved; replace() then leaves its entry alone,
    // and the byte accounting (also under the writer lock) follows whichever record is current.
    for (int from = 0; from < moves.n; from += SWITCH_CHUNK) {
      int to = Math.min(moves.n, from + SWITCH_CHUNK);
      store.writeLock.lock();
      try {
        long stamp = store.seq.writeLock();
        try {
          for (int i = from; i < to; i++) {
            if (store.keyDir.replace(moves.hash[i], moves.from[i], moves.to[i])) {
              out.liveBytes += moves.size[i];
              store.segment(moves.from[i]).liveBytes -= moves.size[i];
            }
          }
        } finally {
          store.seq.unlockWrite(stamp);
        }
      } finally {
        store.writeLock.unlock();
      }
    }
    store.writeLock.lock();
    try {
      for (Segment v : victims) {
        v.retired = true;
      }
      if (out != null) {
        out.compacting = false;
      }
      // The ordered scan view holds locations in the victims: it follows the copies.
      int[] ids = new int[victims.size()];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = victims.get(i).id;
      }
      store.order.relocated(ids, copies.from, copies.to, copies.n);
    } finally {
      store.writeLock.unlock();
    }
  }

  /** Victims are retired: wait for in-flight readers, then note the cursors that may use them. */
  private void bury(List<Segment> victims) {
    store.awaitReaders();
    Set<HashLogCursor> pins = new HashSet<>(cursors);
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
    store.writeLock.lock();
    try {
      if (store.closed()) {
        return; // close unmaps everything installed
      }
      for (Segment s : free) {
        store.uninstall(s);
      }
    } finally {
      store.writeLock.unlock();
    }
    for (Segment s : free) {
      Mappings.unmap(s.map);
    }
  }

  /** Sleeps as needed to keep copying under the rate limit. */
  private void pace(long bytes) {
    long rate = settings.bytesPerSecond();
    if (rate <= 0) {
      return;
    }
    long wait;
    synchronized (this) {
      long now = System.nanoTime();
      if (paceNext < now) {
        paceNext = now;
      }
      paceNext += (long) (bytes * 1e9 / rate);
      wait = paceNext - now;
    }
    long until = System.nanoTime() + wait;
    while (!stopping && (wait = until - System.nanoTime()) > 0) {
      LockSupport.parkNanos(this, wait);
    }
  }

  // ---------------------------------------------------------------- figures

  void figures(Map<String, Number> f, long diskBytes, long liveBytes) {
    long user = store.userBytes.sum();
    long comp = bytesWritten.get();
    f.put("compaction-runs", runs.get());
    f.put("compaction-bytes-written", comp);
    f.put("compaction-bytes-reclaimed", bytesReclaimed.get());
    f.put("user-bytes-written", user);
    f.put("write-amplification", user == 0 ? 1.0 : (double) (user + comp) / user);
    f.put("space-amplification", liveBytes == 0 ? 0.0 : (double) diskBytes / liveBytes);
    f.put("compaction-throttled-ms", throttleNanos.get() / 1_000_000);
    f.put("retired-segments-pinned", pinnedSegments());
  }
}
