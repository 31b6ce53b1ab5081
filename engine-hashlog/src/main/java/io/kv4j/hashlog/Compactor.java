package io.kv4j.hashlog;

import io.kv4j.hashlog.Victims.DropMap;
import io.kv4j.hashlog.Victims.Mode;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Background compaction: copies the live records of mostly-dead sealed segments into a new segment
 * and deletes the old ones.
 *
 * <p><b>Victims</b> are chosen by {@link Victims} from the per-segment byte accounting (no data is
 * read to choose): garbage ratio = dead bytes / data bytes (tombstones count as garbage in the
 * oldest segment, where they can be dropped), highest first, then oldest first; a run takes victims
 * until their live and tombstone bytes fill one segment.
 *
 * <p><b>Ordering</b>: a run writes the survivors into a segment whose id is above every victim's
 * and below the active segment's. So the copies order after every victim and before every write
 * made after the run began, and recovery, which applies segments in id order, sees each key's
 * newest record last. (A sealed segment between the victims and the output holds no record of a
 * copied key: such a record would be newer than the victim's, which would then not have been live.)
 * The writer leaves room for such ids: active segments take ids that are multiples of {@link
 * SegmentLog#ID_STRIDE}, and a run takes the lowest unused id above its victims and every output
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
 * that entered before the index switch has left ({@link ReaderGuard#bury}) and every cursor,
 * snapshot or backup opened before it is closed; only then are they unmapped.
 *
 * <p><b>Throttling</b>: when the garbage in sealed segments exceeds what the threshold allows for
 * the live data (plus one segment of slack), writers wait until compaction catches up.
 */
final class Compactor implements Workers.Job {
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

  // A chunk, written whole at chunk-aligned offsets: outputs get the page cache's large folios.
  private static final int COPY_BUFFER = Segment.CHUNK;

  // Direct, so that writing the output does not copy each chunk once more into a temporary direct
  // buffer; one per concurrent run, reused.
  private final java.util.concurrent.ConcurrentLinkedQueue<ByteBuffer> copyBuffers =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private final Segments segments;
  private final Index index;
  private final SegmentLog log;
  private final ReaderGuard guard;
  private final StoreState state;
  private final Settings settings;
  private final Throttle throttle;
  private final Victims choice;
  // The store's compaction threads, shared with its keyspaces; null: no background compaction.
  private volatile Workers workers;
  private volatile boolean stopping;
  // The last background run failed: writers are not held back by a compaction that cannot run.
  private volatile boolean failing;

  /** The task's name in the store's health (see {@link StoreState#taskFailing}). */
  static final String TASK = "background compaction";

  private final Set<Integer> reserved = new TreeSet<>(); // output ids; guarded by the write lock

  /** Runs between claiming their victims and releasing them; guarded by the write lock. */
  private int runsInFlight;

  private int highestOutput; // highest output id handed out since open; guarded by the write lock
  private long paceNext; // guarded by this

  private final AtomicLong runs = new AtomicLong();
  private final AtomicLong passes = new AtomicLong(); // background passes, worked or not
  private final AtomicLong bytesWritten = new AtomicLong();
  private final AtomicLong bytesReclaimed = new AtomicLong();

  /** Test hook, see {@link StepHook}. */
  volatile StepHook hook;

  Compactor(
      Segments segments,
      Index index,
      SegmentLog log,
      ReaderGuard guard,
      StoreState state,
      Settings settings) {
    this.segments = segments;
    this.index = index;
    this.log = log;
    this.guard = guard;
    this.state = state;
    this.settings = settings;
    this.throttle = new Throttle(segments, state, settings.garbageThreshold(), log.segmentSize);
    this.choice = new Victims(segments, settings.garbageThreshold(), log.segmentSize);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Starts background compaction as a job of {@code w}, the store's compaction threads (null: none,
   * {@code compaction-threads} 0).
   */
  void start(Workers w) {
    // Ids below the active segment at open may have been used by segments deleted since.
    highestOutput = segments.active.id;
    if (w != null) {
      w.add(this);
      workers = w;
      wake(); // a first pass at once, as a thread of its own started with one
    }
  }

  /**
   * Stops background compaction and waits until no thread runs a pass of this store's (a run in
   * progress ends or aborts).
   */
  void stop() {
    stopping = true;
    throttle.release();
    Workers w = workers;
    if (w != null) {
      w.remove(this);
    }
  }

  private boolean background() {
    return workers != null;
  }

  private void wake() {
    Workers w = workers;
    if (w != null) {
      w.wake(this);
    }
  }

  /** A segment was sealed: there may be a new victim. Caller holds the write lock. */
  void segmentSealed() {
    updateThrottle();
    wake();
  }

  /**
   * One background pass, on a thread of the pool. Failures (an {@code Error} too) leave the store
   * degraded and are retried on the next pass; anything else thrown ends this store's compaction
   * and fails the store ({@link #died}).
   *
   * @return whether it compacted (then the next pass is queued at once, behind other stores')
   */
  @Override
  public boolean work() {
    if (stopping) {
      return false;
    }
    boolean worked = false;
    try {
      worked = runOnce(Mode.BACKGROUND, null);
      if (worked) {
        // Only a pass that compacted shows compaction works: one that found nothing to do (the
        // failing segments never chosen again, say) says nothing about it.
        worksAgain();
      }
      guard.reap();
    } catch (SimulatedCrash e) {
      worked = false;
    } catch (RuntimeException | Error e) {
      failing = true;
      throttle.set(false);
      if (!stopping) {
        state.taskFailing(TASK, e);
        HashLogStore.LOG.log(Level.WARNING, "hashlog: background compaction failed", e);
      }
    }
    if (!worked) {
      // Nothing queues it again but a sealed segment, a closed cursor or the pool's periodic pass.
      segments.writeLock.lock();
      try {
        updateThrottle();
      } finally {
        segments.writeLock.unlock();
      }
    }
    passes.incrementAndGet();
    return worked && !stopping;
  }

  @Override
  public void died(String thread, Throwable e) {
    failing = true;
    throttle.set(false);
    state.died(thread, e);
  }

  /** Background passes ended so far, whether they compacted anything or not (tests). */
  long passes() {
    return passes.get();
  }

  // ---------------------------------------------------------------- cursors and throttle

  /**
   * A cursor (or another {@link ReaderGuard#pin pin}: a snapshot, a backup) closed: the retired
   * segments it pinned may be unmapped now.
   */
  void cursorClosed(Object c) {
    if (guard.unpin(c)) {
      wake();
    }
  }

  /** Called by writers before they take the writer lock: waits while compaction is behind. */
  void throttle() {
    throttle.await();
  }

  /** Recomputes whether writers must wait. Caller holds the writer lock. */
  private void updateThrottle() {
    throttle.update(background() && !stopping && !failing);
  }

  // ---------------------------------------------------------------- entry points

  /**
   * Compacts everything reclaimable now: the active segment's garbage too (it is sealed first).
   *
   * @return bytes reclaimed
   */
  long compactAll() {
    long before = bytesReclaimed.get();
    // A segment a background run holds is not a victim here. Without the wait, compact() could
    // return while that run still had the segment's garbage on disk; after it, a second pass takes
    // whatever such a run left (one that failed or was stopped).
    for (int pass = 0; pass < 2; pass++) {
      int limit = 4 + 2 * segments.all().length;
      for (int i = 0; i < limit && runOnce(Mode.ALL, null); i++) {
        // Each run takes at most one segment's worth of survivors.
      }
      if (!awaitRunsInFlight()) {
        break;
      }
    }
    guard.reap();
    worksAgain(); // a full foreground pass worked: so does compaction
    return bytesReclaimed.get() - before;
  }

  /** A run worked: compaction is no longer failing, and the store's health says so. */
  private void worksAgain() {
    if (failing) {
      failing = false;
      state.taskRecovered(TASK);
    }
  }

  /** Waits until no background run holds a segment; whether one did. */
  private boolean awaitRunsInFlight() {
    boolean waited = false;
    while (true) {
      boolean any;
      segments.writeLock.lock();
      try {
        any = anyCompacting();
      } finally {
        segments.writeLock.unlock();
      }
      if (!any || state.closed() || state.failed()) {
        return waited;
      }
      waited = true;
      LockSupport.parkNanos(1_000_000);
    }
  }

  /** Compacts exactly the given sealed segments in one run (tests). */
  boolean compactSegments(Set<Integer> ids) {
    log.sealer.drain();
    boolean r = runOnce(Mode.ONLY, ids);
    guard.reap();
    return r;
  }

  /** Waits until background compaction has nothing left above the threshold (tests). */
  void awaitIdle() {
    while (true) {
      boolean any;
      segments.writeLock.lock();
      try {
        any =
            !choice.pick(Mode.BACKGROUND, null, reserved, new DropMap()).isEmpty()
                || anyCompacting()
                || log.sealer.pending().length > 0;
      } finally {
        segments.writeLock.unlock();
      }
      if (!any || state.closed() || state.failed() || !workers()) {
        return;
      }
      wake();
      LockSupport.parkNanos(1_000_000);
    }
  }

  private boolean workers() {
    Workers w = workers;
    return w != null && w.serves(this);
  }

  private boolean anyCompacting() {
    return runsInFlight > 0;
  }

  // ---------------------------------------------------------------- one run

  private boolean runOnce(Mode mode, Set<Integer> only) {
    List<Segment> victims;
    DropMap dropTombs = new DropMap();
    int outId;
    segments.writeLock.lock();
    try {
      if (state.closed() || state.failed() || (stopping && mode == Mode.BACKGROUND)) {
        return false;
      }
      victims = choice.pick(mode, only, reserved, dropTombs);
      if (victims.isEmpty()) {
        if (mode == Mode.ALL && hasGarbage(segments.active)) {
          // Seal the active segment so that its garbage becomes compactable.
          reserved.remove(rollForOutput(mode));
          return true;
        }
        throttle.set(false);
        return false;
      }
      for (Segment v : victims) {
        v.move(SegmentPhase.COMPACTING);
      }
      try {
        outId = reserveOutputId(mode, victims);
      } catch (IOException e) {
        for (Segment v : victims) {
          v.move(SegmentPhase.SEALED);
        }
        throw state.fail("compaction could not roll the active segment", e);
      }
      runsInFlight++;
    } catch (IOException e) {
      throw state.fail("compaction could not roll the active segment", e);
    } finally {
      segments.writeLock.unlock();
    }
    try {
      new CompactionRun(this, segments, index, log, guard, state, victims, dropTombs, outId).run();
      runs.incrementAndGet();
      return true;
    } finally {
      segments.writeLock.lock();
      try {
        reserved.remove(outId);
        runsInFlight--;
        for (Segment v : victims) {
          // A run that stopped before retiring a victim gives it back; a retired or unreadable
          // one stays as the run left it.
          v.moveIf(SegmentPhase.COMPACTING, SegmentPhase.SEALED);
        }
        updateThrottle();
      } finally {
        segments.writeLock.unlock();
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
    for (int id = from + 1; id > 0 && id < segments.active.id; id++) {
      // Multiples of the stride are active segments' ids: skipped even once deleted.
      if (id % SegmentLog.ID_STRIDE != 0 && segments.get(id) == null && !reserved.contains(id)) {
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
    Segment a = segments.active;
    // Sealed even when empty (it then goes with the next run): reusing its id for the output
    // would delete a file the manifest may list as the active segment.
    // A background run need not wait for the force of the segment it seals: it does not take
    // that segment as a victim before the sealer is done with it.
    boolean deferred = log.sealActive(mode == Mode.BACKGROUND);
    int out = a.id + 1;
    log.createActive(SegmentLog.nextWriteId(out), log.segmentSize, deferred);
    reserved.add(out);
    highestOutput = Math.max(highestOutput, out);
    return out;
  }

  /** Calls the test hook at {@code s}. */
  void step(Step s) {
    StepHook h = hook;
    if (h != null) {
      h.at(s);
    }
  }

  boolean stopping() {
    return stopping;
  }

  /** A reusable direct buffer for a run's output, cleared. */
  ByteBuffer takeBuffer() {
    ByteBuffer polled = copyBuffers.poll();
    return polled != null ? polled.clear() : ByteBuffer.allocateDirect(COPY_BUFFER);
  }

  void giveBuffer(ByteBuffer b) {
    copyBuffers.add(b);
  }

  /** A run completed: it wrote {@code written} bytes and deleted victims of {@code freed}. */
  void ran(long written, long freed) {
    bytesWritten.addAndGet(written);
    bytesReclaimed.addAndGet(freed - written);
  }

  /** Compaction found a bad record in {@code v}: it is never chosen again. */
  void markUnreadable(Segment v) {
    segments.writeLock.lock();
    try {
      v.move(SegmentPhase.UNREADABLE);
    } finally {
      segments.writeLock.unlock();
    }
  }

  /** Sleeps as needed to keep copying under the rate limit. */
  void pace(long bytes) {
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
    long user = log.userBytes.sum();
    long comp = bytesWritten.get();
    f.put("compaction-runs", runs.get());
    f.put("compaction-bytes-written", comp);
    f.put("compaction-bytes-reclaimed", bytesReclaimed.get());
    f.put("user-bytes-written", user);
    f.put("write-amplification", user == 0 ? 1.0 : (double) (user + comp) / user);
    f.put("space-amplification", liveBytes == 0 ? 0.0 : (double) diskBytes / liveBytes);
    f.put("compaction-throttled-ms", throttle.waitedMillis());
    f.put("retired-segments-pinned", guard.pinnedSegments());
  }
}
