package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * The log writes go to: appends records to the active segment, rolls it when full (sealing the old
 * one), and makes writes durable as the store's {@link Durability} says.
 *
 * <p><b>One append path</b> ({@link #append}, the conditional writes through the same frame): a put
 * or delete is one record, a batch is a batch record followed by its members. The bytes go to the
 * segment ({@code SYNC}: one {@code write(2)} when they fit the segment's stage; {@code BUFFERED}:
 * stored through the mapping, see {@link Segment}), then the segment's end is raised past them,
 * then the index is updated under one sequence-lock stamp, so a reader sees all of an append or
 * none of it. Checksums are computed by the caller, before the writer lock is taken.
 *
 * <p><b>Durability is decided once</b>, at open, as a {@link WritePolicy}: in {@link
 * Durability#SYNC} a write returns after {@link GroupCommit} forced it, and a segment is forced
 * when it is sealed, before the next one is created. In {@link Durability#BUFFERED} a write returns
 * once in the page cache (which survives kill -9) and nothing on the write path forces anything: a
 * sealed segment is closed unforced and forced by the next {@code sync()} (which forces every
 * unforced segment, then the active one), by the close, or by a compaction run that would otherwise
 * delete a segment holding records a sync promised ({@link Segment#holdsDurable}, {@link
 * CompactionRun}); the directory entry of a rolled segment is forced by the sealer thread. Forcing
 * every byte written, as BUFFERED once did a megabyte at a time behind the writer, made the disk's
 * write bandwidth the ceiling of an update-heavy load (and with stores through the mapping each
 * page written back would cost a TLB shoot-down).
 */
final class SegmentLog {
  /**
   * Active segments take ids that are multiples of this, leaving the ids between for compaction
   * outputs, which must order after their victims and before the active segment (see {@link
   * Compactor}): a run then rarely has to roll the active segment to make an id.
   */
  static final int ID_STRIDE = 16;

  /** Segments the sealer may have queued before a roll seals inline again. */
  static final int SEAL_BACKLOG = 2;

  /** Values above this size are where the mid-write test hook pauses. */
  private static final int HOOKED_VALUE = 64 << 10;

  /**
   * Test point of this store (null in production): runs in the middle of writing a value above 64
   * KiB, half of it in the file, so that a crash test kills the process there. A field of the store
   * rather than a fault of the {@link Storage}: in BUFFERED the value is stored through the
   * mapping, which makes no call through the storage.
   */
  volatile Runnable midWrite;

  private final Segments segments;
  private final Index index;
  private final StoreState state;

  /** Size of a new active segment. */
  final int segmentSize;

  /** How writes are made durable: the store's durability, chosen at open (class comment). */
  final WritePolicy policy;

  final GroupCommit commit;
  final Sealer sealer;

  /** Bytes of records written by users (puts, deletes, batches), for write amplification. */
  final LongAdder userBytes = new LongAdder();

  private Compactor compactor; // set once by compactWith, before the first write

  /**
   * The bound on open files this log's active segment counts in: a keyspace's, given the store's
   * before the open recovers anything; null for the store's own log and read-only stores.
   */
  OpenFiles files;

  // Written since the clock of files last passed this log (see OpenFiles).
  private volatile boolean written;

  // The active segment for which the sealer was last asked to prepare the next one; writer-owned.
  private int nextAskedAfter = -1;

  SegmentLog(
      Segments segments, Index index, StoreState state, Durability durability, int segmentSize) {
    this.segments = segments;
    this.index = index;
    this.state = state;
    this.segmentSize = segmentSize;
    this.policy = WritePolicy.of(durability);
    this.commit = new GroupCommit(segments, state);
    this.sealer = new Sealer(this, segments, state);
  }

  /** The compaction the log tells of sealed segments, and whose throttle writers wait for. */
  void compactWith(Compactor c) {
    this.compactor = c;
  }

  /** The id of the next active segment after (at least two above) {@code id}. */
  static int nextWriteId(int id) {
    return ((id + 1) / ID_STRIDE + 1) * ID_STRIDE;
  }

  // ---------------------------------------------------------------- appends

  /** Appends {@code w} through the one append path ({@link #appendIf}, no condition). */
  void append(LogWrite w) {
    appendIf(w, ALWAYS);
  }

  private static final BooleanSupplier ALWAYS = () -> true;

  /**
   * The one frame of every append: the writer lock, {@code conditions} tested under it, and only if
   * they hold the write: {@code w}'s record ({@code header}, {@code key}, {@code value}) and, for a
   * batch, its members after it; the segment's end raised; the index and the byte accounting
   * updated. No other write can come between the test and the write. A delete of a key that is
   * absent writes nothing, nor does a conditional batch without operations (an atomic check). The
   * store is failed if the write fails. Then in SYNC it waits for durability, also when nothing was
   * written: an answer, or a delete of an absent key, may rest on writes not yet forced, which must
   * not be lost after it was reported.
   *
   * @param conditions tested under the writer lock (a compare-and-set looks the key's current
   *     record up with {@link Index#findLocked}); may throw (a damaged record)
   * @return whether the conditions held and the write was made
   */
  boolean appendIf(LogWrite w, BooleanSupplier conditions) {
    long lsn;
    boolean holds;
    lock();
    try {
      holds = conditions.getAsBoolean();
      PreparedBatch batch = w.batch();
      // A conditional batch without operations is an atomic check: nothing to write.
      if (holds && (batch == null || batch.size() > 0 || conditions == ALWAYS)) {
        lsn = write(w);
      } else {
        lsn = segments.activeEnd();
      }
    } catch (IOException e) {
      throw state.fail("write to " + segments.active.path + " failed", e);
    } finally {
      segments.writeLock.unlock();
    }
    policy.awaitDurable(commit, lsn);
    return holds;
  }

  /**
   * Writes under the writer lock: the record ({@code header}, {@code key}, {@code value}) and, for
   * a batch, its members after it; raises the segment's end; updates the index and the byte
   * accounting. A delete of a key that is absent writes nothing.
   *
   * @return the log position the write (or the writes before it) must be durable up to
   */
  private long write(LogWrite w) throws IOException {
    long size = w.size();
    PreparedBatch batch = w.batch();
    Segment s = segments.active;
    if (w.type() == RecordCodec.DELETE && index.findLocked(w.hash(), w.key()) <= 0) {
      return Segments.location(s.id, s.end); // nothing to write; still wait for earlier writes
    }
    s = room(size);
    int off = s.end;
    int p = stage(s, off, w.type(), w.header(), w.key(), w.value());
    if (batch != null) {
      stageMembers(s, p, batch);
    }
    s.flush(); // the record, or the whole batch, in one write(2) when it fits the stage
    s.end = off + (int) size;
    if (files != null) {
      wrote(s);
    }
    keepFlushed(s);
    userBytes.add(size);
    if (batch == null) {
      applyRecord(s, w.type(), w.hash(), w.key(), off, size);
    } else {
      applyMembers(s, batch);
    }
    return Segments.location(s.id, s.end);
  }

  /**
   * Stages one record for the segment at {@code pos} and notes its hint entry; the caller {@link
   * Segment#flush flushes} before it raises the end.
   *
   * @return where the next record goes
   */
  private int stage(Segment s, int pos, byte type, byte[] header, byte[] key, byte[] value)
      throws IOException {
    s.put(pos, header, 0, RecordCodec.RECORD_HEADER);
    int p = RecordCodec.keyOffset(pos);
    if (key != null) {
      s.put(p, key, 0, key.length);
      p += key.length;
    }
    int v = value == null ? 0 : value.length;
    if (v > 0) {
      Runnable hook = midWrite;
      if (hook != null && v > HOOKED_VALUE) {
        // Test hook: leave half a record in the file, then let the test kill the process.
        s.put(p, value, 0, v / 2);
        s.flush();
        hook.run();
      }
      s.put(p, value, 0, v);
    }
    HintFile.Entries e = s.hintEntries;
    if (e != null && type != RecordCodec.BATCH) {
      e.add(type, pos, key, 0, key.length, v);
    }
    return p + v;
  }

  private void stageMembers(Segment s, int p, PreparedBatch b) throws IOException {
    for (int i = 0; i < b.size(); i++) {
      b.locations[i] = Segments.location(s.id, p);
      p = stage(s, p, b.type(i), b.headers[i], b.key(i), b.value(i));
    }
  }

  /** Updates the index and the accounting for one record. Caller holds the writer lock. */
  private void applyRecord(Segment s, byte type, long hash, byte[] key, int off, long size) {
    long loc = Segments.location(s.id, off);
    long stamp = index.beginUpdate();
    long old;
    try {
      old = index.apply(type, hash, key, loc, size);
    } finally {
      index.endUpdate(stamp);
    }
    segments.account(s, type, size, old);
    index.order.added(loc);
  }

  /** Updates the index (under one stamp) and the accounting for a batch's members. */
  private void applyMembers(Segment s, PreparedBatch b) {
    int n = b.size();
    long[] olds = b.superseded;
    long stamp = index.beginUpdate();
    try {
      for (int i = 0; i < n; i++) {
        olds[i] = index.apply(b.type(i), b.hashes[i], b.key(i), b.locations[i], b.recordSize(i));
      }
    } finally {
      index.endUpdate(stamp);
    }
    for (int i = 0; i < n; i++) {
      segments.account(s, b.type(i), b.recordSize(i), olds[i]);
      index.order.added(b.locations[i]);
    }
  }

  /**
   * Takes the writer lock for a write, after the compaction throttle, spinning briefly first:
   * writes hold it for well under a microsecond. Refuses a closed or failed store.
   */
  private void lock() {
    compactor.throttle();
    if (!segments.writeLock.tryLock()) {
      spinLock();
    }
    if (state.closed()) {
      segments.writeLock.unlock();
      throw state.closedError();
    }
    if (state.failed()) {
      segments.writeLock.unlock();
      state.checkNotFailed();
    }
  }

  private void spinLock() {
    for (int i = 0; i < 64; i++) {
      Thread.onSpinWait();
      if (segments.writeLock.tryLock()) {
        return;
      }
    }
    segments.writeLock.lock();
  }

  /** Notes a write for {@link OpenFiles}, and a descriptor the write opened again. */
  private void wrote(Segment s) {
    if (!written) {
      written = true;
    }
    if (s.takeReopened()) {
      files.opened(this);
    }
  }

  /** Whether this log was written since the last call (for the clock of {@link OpenFiles}). */
  boolean takeWritten() {
    if (!written) {
      return false;
    }
    written = false;
    return true;
  }

  /**
   * Closes the active segment's descriptor ({@link Segment#park}) unless a write holds the writer
   * lock or a force runs ({@link GroupCommit#parkUnlessForcing}); both locks are only tried: the
   * caller may hold another log's.
   *
   * @return whether the active segment holds no descriptor now (false: a write or force in flight)
   */
  boolean parkIfIdle() {
    if (!segments.writeLock.tryLock()) {
      return false;
    }
    try {
      Segment s = segments.active;
      if (s == null) {
        return true; // closed with the store
      }
      // Not parked when already parked, or closed with the store: no descriptor either.
      return commit.parkUnlessForcing(s);
    } catch (IOException e) {
      HashLogStore.LOG.log(
          Level.WARNING, "hashlog: closing a file of " + segments.dir + " failed", e);
      return true; // closed all the same
    } finally {
      segments.writeLock.unlock();
    }
  }

  /**
   * BUFFERED: asks the sealer to allocate the active segment ahead of the writer, and once it is
   * half full to prepare the file of the next one.
   */
  private void keepFlushed(Segment s) {
    if (s.allocationDue()) {
      sealer.allocateAhead(s);
    }
    if (s.id != nextAskedAfter && policy.allocatesAhead() && s.end > s.capacity / 2) {
      nextAskedAfter = s.id;
      sealer.prepareNext(new Sealer.Next(nextWriteId(s.id), s.id, segmentSize));
    }
  }

  /** Returns once everything written so far is durable. */
  void sync() {
    commit.await(segments.activeEnd());
  }

  // ---------------------------------------------------------------- rolls

  /** The active segment, rolled first if {@code size} more bytes do not fit. */
  private Segment room(long size) throws IOException {
    Segment s = segments.active;
    if (s.end + size <= s.capacity) {
      return s;
    }
    long need = RecordCodec.FILE_HEADER + size;
    if (need > Segments.MAX_SEGMENT) {
      throw new IllegalArgumentException(
          "hashlog: a write of "
              + size
              + " bytes does not fit in one segment (at most "
              + Segments.MAX_SEGMENT
              + " bytes); split the batch ("
              + state.describe()
              + ")");
    }
    Segment old = segments.active;
    boolean deferDirectory = sealActive(true);
    createActive(nextWriteId(old.id), (int) Math.max(segmentSize, need), deferDirectory);
    segmentSealed();
    return segments.active;
  }

  /** A segment was sealed or its hint written: tells compaction. Caller holds the writer lock. */
  void segmentSealed() {
    compactor.segmentSealed();
  }

  /**
   * Seals the active segment; the caller then creates the next one. The segment is truncated and
   * forced here (SYNC), before any newer segment exists, so that a power loss never finds a newer
   * segment next to an unforced older one (recovery cuts a torn tail only in the newest); in
   * BUFFERED it is closed unforced, for the next sync. The hint, the slow part, goes to the {@link
   * Sealer} when {@code mayDefer} and it is not behind; else it is written here too, which also
   * holds writers back. Caller holds the writer lock.
   *
   * @return true if the next segment's directory entry may be synced later (BUFFERED)
   */
  boolean sealActive(boolean mayDefer) throws IOException {
    Segment old = segments.active;
    if (mayDefer && sealer.pending().length < SEAL_BACKLOG) {
      boolean deferDirectory = policy.seal(old, commit);
      sealer.submit(old);
      return deferDirectory;
    }
    sealActive();
    return false;
  }

  /** Seals the active segment and writes its hint. Caller holds the writer lock. */
  void sealActive() throws IOException {
    Segment old = segments.active;
    policy.seal(old, commit);
    try {
      HintFile.write(segments.storage, segments.dir, old);
    } catch (IOException e) {
      // A hint only speeds up the next open, which rebuilds a missing one: not a store failure.
      HashLogStore.LOG.log(
          Level.WARNING, "hashlog: could not write the hint file of " + old.path, e);
      segments.storage.deleteIfExists(segments.dir.resolve(Segment.hintName(old.id) + ".tmp"));
    }
  }

  void createActive(int id, int capacity) throws IOException {
    createActive(id, capacity, false);
  }

  /**
   * Creates the new active segment. With {@code deferDirectorySync} its directory entry is made
   * durable later, by the next group-commit leader or close (BUFFERED rolls: a process crash does
   * not lose directory entries, so only an explicit sync needs it).
   */
  void createActive(int id, int capacity, boolean deferDirectorySync) throws IOException {
    if (id <= 0) {
      // 2^31 segments: at 8 MiB each, 16 PiB written; a store that gets there is copied anew.
      throw new IOException(
          "segment ids exhausted in " + segments.dir + "; copy the data to a new store");
    }
    Path path = segments.dir.resolve(Segment.fileName(id));
    Segment prev = segments.active;
    int previous = prev == null ? 0 : prev.id;
    Segment seg =
        policy.allocatesAhead()
            ? sealer.takePrepared(new Sealer.Next(id, previous, capacity), path)
            : null;
    if (seg == null) {
      seg = policy.create(segments.storage, id, path, capacity, previous);
    }
    seg.hintEntries = new HintFile.Entries();
    policy.started(seg, sealer);
    if (deferDirectorySync) {
      seg.directoryPending = true;
    } else {
      try {
        // The directory entry must be durable before records in the file are acknowledged. The
        // header needs no force of its own: the first forced write or the seal covers it, and a
        // newest segment whose header never reached the disk is recognised and recreated.
        segments.syncDirectory();
      } catch (IOException e) {
        seg.closeFile();
        throw e;
      }
    }
    segments.install(seg);
    segments.active = seg;
    if (files != null) {
      files.opened(this);
    }
  }

  /** Makes {@code s}, recovered at open, the active segment. */
  void resume(Segment s) {
    s.writeWith(policy);
    segments.active = s;
    if (files != null) {
      files.opened(this);
    }
  }

  // ---------------------------------------------------------------- close

  /**
   * Makes the active segment whole for a clean close: its directory entry durable, its sparse tail
   * cut (so the length the clean manifest records is the file's length on disk too), its data
   * forced. Takes the writer lock.
   *
   * @return whether the close may be recorded as clean
   */
  boolean finishForClose() {
    segments.writeLock.lock();
    try {
      Segment s = segments.active;
      if (s == null || state.failed()) {
        return false;
      }
      try {
        commit.forceUnforced();
        if (s.directoryPending) {
          segments.syncDirectory();
          s.directoryPending = false;
        }
        s.truncateTo(s.end);
        s.force();
        commit.durableUpTo(Segments.location(s.id, s.end));
        return true;
      } catch (IOException e) {
        state.fail("fsync of " + s.path + " at close failed", e);
        return false;
      }
    } finally {
      segments.writeLock.unlock();
    }
  }
}
