package io.kv4j.hashlog;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.CallGate;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.StampedLock;
import java.util.zip.CRC32C;

/**
 * The hash-log store: append-only segments, an in-memory {@link KeyDir} from key hash to newest
 * record, and a {@link KeyOrder} for scans.
 *
 * <p>Reads take no lock: an optimistic {@link StampedLock} stamp around the index probe (retried if
 * a writer intervened; after a few failures a read lock), then the value is copied from the
 * segment's memory mapping and its CRC32C checked. No system call on the read path.
 *
 * <p>Writes are serialised by {@link #writeLock} (checksums are computed before it is taken): the
 * record is copied into the active segment's shared mapping (see {@link Segment}), then the index
 * is updated under the stamped write lock, so a reader sees either the old or the new record, and
 * never an index entry whose bytes are not yet in the file. In {@link Durability#SYNC} mode the
 * writer then waits for {@link GroupCommit}.
 */
final class HashLogStore extends AbstractStore implements KeyDir.KeySource {
  static final System.Logger LOG = System.getLogger("io.kv4j.hashlog");
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  /** Values above this size are where the mid-write test hook pauses. */
  private static final int HOOKED_VALUE = 64 << 10;

  /**
   * Active segments take ids that are multiples of this, leaving the ids between for compaction
   * outputs, which must order after their victims and before the active segment (see {@link
   * Compactor}): a run then rarely has to roll the active segment to make an id.
   */
  static final int ID_STRIDE = 16;

  /** The id of the next active segment after (at least two above) {@code id}. */
  static int nextWriteId(int id) {
    return ((id + 1) / ID_STRIDE + 1) * ID_STRIDE;
  }

  /** Segments the sealer may have queued before a roll seals inline again. */
  static final int SEAL_BACKLOG = 2;

  /** Largest mapping (and so segment) size. */
  static final int MAX_SEGMENT = Integer.MAX_VALUE - 4096;

  final Path dir;
  private final DirectoryLock dirLock;
  private final Durability durability;
  private final boolean readOnly;
  private final boolean verifyOnRead;
  final int segmentSize;
  final KeyDir.Hasher hasher;
  final KeyDir keyDir;
  final StampedLock seq = new StampedLock();
  final ReentrantLock writeLock = new ReentrantLock();
  final GroupCommit commit = new GroupCommit(this);
  final KeyOrder order = new KeyOrder(this);
  final Sealer sealer = new Sealer(this);
  // Readers in flight: compaction waits for those that entered before it retired a segment
  // before it unmaps the segment (see enter()).
  private final CallGate readers = new CallGate();
  final Compactor compactor;

  /** Bytes of records written by users (puts, deletes, batches), for write amplification. */
  final LongAdder userBytes = new LongAdder();

  /** The installed segments by id; replaced (never modified) under the writer lock. */
  private volatile SegmentTable table = SegmentTable.EMPTY;

  volatile Segment active;
  private volatile StoreIOException failure;

  /** Test hook: runs in the middle of writing a large value (crash tests block in it). */
  static volatile Runnable midWriteHook;

  /** Test hook: the next group-commit force fails. */
  volatile boolean injectForceFailure;

  long truncatedTailBytes;
  int hintsRebuilt;

  private HashLogStore(
      StoreInfo info,
      Path dir,
      DirectoryLock dirLock,
      boolean verifyOnRead,
      int segmentSize,
      int initialKeys,
      KeyDir.Hasher hasher,
      Compactor.Settings compaction) {
    super(info);
    this.dir = dir;
    this.dirLock = dirLock;
    this.durability = info.durability();
    this.readOnly = info.readOnly();
    this.verifyOnRead = verifyOnRead;
    this.segmentSize = segmentSize;
    this.hasher = hasher;
    this.keyDir = new KeyDir(initialKeys);
    this.compactor = new Compactor(this, compaction);
  }

  /** Opens or creates a store in {@code dir}. */
  static HashLogStore open(
      Path dir,
      Set<Feature> features,
      io.kv4j.Limits limits,
      Durability durability,
      boolean createIfMissing,
      boolean readOnly,
      boolean verifyOnRead,
      int segmentSize,
      int initialKeys,
      KeyDir.Hasher hasher,
      Compactor.Settings compaction) {
    if (!Files.isDirectory(dir)) {
      if (!createIfMissing || readOnly || Files.exists(dir)) {
        throw new StoreIOException(
            "engine 'hashlog': store directory "
                + dir
                + (Files.exists(dir) ? " is not a directory" : " does not exist"),
            new java.io.FileNotFoundException(dir.toString()));
      }
      try {
        Files.createDirectories(dir);
      } catch (IOException e) {
        throw new StoreIOException("engine 'hashlog': cannot create store directory " + dir, e);
      }
    }
    DirectoryLock lock = DirectoryLock.acquire(dir, "hashlog");
    Path real = lock.directory();
    StoreInfo info =
        new StoreInfo("hashlog", features, limits, durability, real.toString(), readOnly);
    HashLogStore s =
        new HashLogStore(
            info, real, lock, verifyOnRead, segmentSize, initialKeys, hasher, compaction);
    boolean ok = false;
    try {
      s.recover();
      if (!readOnly) {
        s.sealer.start();
        s.compactor.start();
      }
      ok = true;
      return s;
    } catch (IOException e) {
      throw new StoreIOException("engine 'hashlog': cannot open store at " + real + ": " + e, e);
    } finally {
      if (!ok) {
        s.releaseAll();
      }
    }
  }

  // ---------------------------------------------------------------- recovery

  private void recover() throws IOException {
    List<Integer> ids = Recovery.segmentIds(dir, readOnly);
    for (int i = 0; i < ids.size(); i++) {
      int id = ids.get(i);
      Path path = dir.resolve(Segment.fileName(id));
      boolean newest = i == ids.size() - 1;
      if (!newest) {
        Segment seg = Segment.openSealed(id, path, !readOnly);
        install(seg);
        Recovery.loadSealed(this, seg, readOnly);
      } else {
        recoverNewest(id, path);
      }
    }
    if (!readOnly && active == null) {
      int id = ids.isEmpty() ? 1 : ids.get(ids.size() - 1) + 1;
      createActive(id, segmentSize);
    }
  }

  private void recoverNewest(int id, Path path) throws IOException {
    long fileLen = Files.size(path);
    if (fileLen > MAX_SEGMENT) {
      throw new StoreCorruptedException(
          "hashlog: segment " + path + " is larger than 2 GiB", path, MAX_SEGMENT);
    }
    Segment seg =
        readOnly
            ? Segment.openSealed(id, path)
            : Segment.openActive(
                id, path, (int) Math.max(segmentSize, fileLen), (int) fileLen, false);
    install(seg);
    if (fileLen < RecordCodec.FILE_HEADER
        || Recovery.garbageBytes(seg.map, 0, RecordCodec.FILE_HEADER) == 0) {
      // Crashed while creating the segment: nothing was ever written to it.
      long garbage = Recovery.garbageBytes(seg.map, 0, (int) fileLen);
      if (garbage > 0) {
        noteTruncation(seg, 0, garbage);
      }
      if (readOnly) {
        seg.end = 0;
        return;
      }
      uninstall(seg);
      seg.closeFile();
      Mappings.unmap(seg.map);
      Files.delete(path);
      HashLogStore.LOG.log(Level.INFO, "hashlog: removed empty segment {0}", path);
      createActive(id, segmentSize);
      return;
    }
    int validEnd = Recovery.loadNewest(this, seg);
    long garbage = Recovery.garbageBytes(seg.map, validEnd, (int) fileLen);
    if (garbage > 0) {
      noteTruncation(seg, validEnd, garbage);
    }
    seg.end = validEnd;
    if (!readOnly) {
      Files.deleteIfExists(HintFile.path(dir, id)); // the newest segment is active again
      seg.truncateTo(validEnd);
      syncDirectory();
      active = seg;
    }
  }

  private void noteTruncation(Segment seg, int at, long garbage) {
    truncatedTailBytes += garbage;
    LOG.log(
        Level.WARNING,
        "hashlog: torn or garbage tail in newest segment {0}: discarding {1} bytes after offset {2}"
            + " (the end of the last valid record){3}",
        seg.path,
        Long.toString(garbage),
        Integer.toString(at),
        readOnly ? "; read-only, file left unchanged" : "");
  }

  /** Applies one recovered record. {@code key} is null when it must be read from the segment. */
  void recover(Segment seg, int type, int offset, int keyLen, int valueLen, byte[] key) {
    if (type != RecordCodec.PUT && type != RecordCodec.DELETE) {
      throw new StoreCorruptedException(
          "hashlog: unexpected record type " + type + " in " + seg.path + " at offset " + offset,
          seg.path,
          offset);
    }
    byte[] k = key != null ? key : keyAt(seg, offset, keyLen);
    long h = KeyDir.fix(hasher.hash(k));
    long loc = location(seg.id, offset);
    long size = RecordCodec.recordSize(keyLen, valueLen);
    long old;
    if (type == RecordCodec.PUT) {
      old = keyDir.put(h, k, loc, size, this);
      seg.liveBytes += size;
    } else {
      old = keyDir.remove(h, k, this);
      seg.tombstoneBytes += size;
    }
    if (old != 0) {
      retire(old);
    }
  }

  void install(Segment seg) {
    table = table.with(seg);
  }

  void uninstall(Segment seg) {
    table = table.without(seg);
  }

  /** The installed segments, ascending id (retired ones included until unmapped). Do not modify. */
  Segment[] segments() {
    return table.all();
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
      throw new IOException("segment ids exhausted in " + dir + "; copy the data to a new store");
    }
    Path path = dir.resolve(Segment.fileName(id));
    Segment seg = Segment.openActive(id, path, capacity, 0, true);
    seg.hintEntries = new HintFile.Entries();
    if (deferDirectorySync) {
      seg.directoryPending = true;
    } else {
      try {
        // The directory entry must be durable before records in the file are acknowledged. The
        // header needs no force of its own: the first forced write or the seal covers it, and a
        // newest segment whose header never reached the disk is recognised and recreated.
        syncDirectory();
      } catch (IOException e) {
        seg.closeFile();
        throw e;
      }
    }
    install(seg);
    active = seg;
  }

  void syncDirectory() throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  // ---------------------------------------------------------------- locations and keys

  /** An arbitrary value: the record loads in {@link #keyEquals} are compared with it. */
  private static final long TOUCH_SENTINEL = 0x6b76346a2d706631L;

  @SuppressWarnings("unused") // written only when a sum of loaded words hits the sentinel
  private static long touchSink;

  static long location(int segmentId, int offset) {
    return ((long) segmentId << 32) | (offset & 0xFFFFFFFFL);
  }

  Segment segment(long loc) {
    return table.get((int) (loc >>> 32));
  }

  Segment activeSegment() {
    return active;
  }

  int keyCount() {
    return keyDir.size();
  }

  long[] allLocations() {
    return keyDir.locations();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Before it reads the header, this loads one word of every further 128 bytes the record's
   * {@code span} says it covers. The loads depend only on the location, so the CPU fetches the
   * whole record at once, in parallel with the header; without them the value's lines were only
   * requested once the header had arrived and told the copy how long the value is, a second memory
   * round trip per get (about 7% of a get of 1 KiB values from a 100 MB store, same-run A/B on 2
   * cores). The loads stop at the segment's end, never past the file.
   */
  @Override
  public boolean keyEquals(long loc, byte[] key, int span) {
    Segment s = segment(loc);
    if (s == null) {
      return false;
    }
    int off = (int) loc;
    ByteBuffer m = s.map;
    if (off < 0 || off > s.capacity - RecordCodec.RECORD_HEADER) {
      return false;
    }
    if (span > 0) {
      int last = Math.min(s.end, off + 64 + (span << 7)) - Long.BYTES;
      long touched = 0;
      // One load per 128 bytes: the CPU's adjacent-line prefetch brings each load's pair line
      // (Intel's spatial prefetcher, AMD's up/down one). Same-JVM A/B against a load per 64
      // bytes, six runs, 100,000 x 1 KiB: hashlog/Chronicle Map higher in all six, median +3%.
      for (int p = off + 64; p <= last; p += 128) {
        touched += m.getLong(p);
      }
      if (touched == TOUCH_SENTINEL) {
        touchSink = touched; // practically never; only so the JIT cannot drop the loads
      }
    }
    int k = RecordCodec.keyLength(m, off);
    if (k != key.length || off + RecordCodec.RECORD_HEADER + k > s.capacity) {
      return false;
    }
    int p = off + RecordCodec.RECORD_HEADER;
    int i = 0;
    for (; i + 8 <= k; i += 8) {
      if (m.getLong(p + i) != (long) LONG_BE.get(key, i)) {
        return false;
      }
    }
    for (; i < k; i++) {
      if (m.get(p + i) != key[i]) {
        return false;
      }
    }
    return true;
  }

  /** Compares the keys of two records, unsigned; equal keys order by location. */
  int compareRecords(long a, long b) {
    int c = compareKeys(a, b);
    return c != 0 ? c : Long.compare(a, b);
  }

  /** Compares the keys of two records, unsigned. */
  int compareKeys(long a, long b) {
    Segment sa = segment(a);
    Segment sb = segment(b);
    ByteBuffer ma = sa.map;
    ByteBuffer mb = sb.map;
    int oa = (int) a;
    int ob = (int) b;
    int ka = RecordCodec.keyLength(ma, oa);
    int kb = RecordCodec.keyLength(mb, ob);
    oa += RecordCodec.RECORD_HEADER;
    ob += RecordCodec.RECORD_HEADER;
    int n = Math.min(ka, kb);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long x = ma.getLong(oa + i);
      long y = mb.getLong(ob + i);
      if (x != y) {
        return Long.compareUnsigned(x, y);
      }
    }
    for (; i < n; i++) {
      int c = (ma.get(oa + i) & 0xFF) - (mb.get(ob + i) & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return ka - kb;
  }

  /** The first 8 bytes of a record's key, big-endian, zero-padded: orders like the key. */
  long keyPrefix(long loc) {
    Segment s = segment(loc);
    ByteBuffer m = s.map;
    int off = (int) loc;
    int k = RecordCodec.keyLength(m, off);
    off += RecordCodec.RECORD_HEADER;
    if (k >= 8) {
      return m.getLong(off);
    }
    long p = 0;
    for (int i = 0; i < 8; i++) {
      p = (p << 8) | (i < k ? m.get(off + i) & 0xFF : 0);
    }
    return p;
  }

  /** Compares a record's key with {@code key}, unsigned. */
  int compareKey(long loc, byte[] key) {
    Segment s = segment(loc);
    ByteBuffer m = s.map;
    int off = (int) loc;
    int k = RecordCodec.keyLength(m, off);
    off += RecordCodec.RECORD_HEADER;
    int n = Math.min(k, key.length);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long x = m.getLong(off + i);
      long y = (long) LONG_BE.get(key, i);
      if (x != y) {
        return Long.compareUnsigned(x, y);
      }
    }
    for (; i < n; i++) {
      int c = (m.get(off + i) & 0xFF) - (key[i] & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return k - key.length;
  }

  private static byte[] keyAt(Segment s, int offset, int keyLen) {
    byte[] k = new byte[keyLen];
    s.map.get(offset + RecordCodec.RECORD_HEADER, k, 0, keyLen);
    return k;
  }

  byte[] keyAt(long loc) {
    Segment s = segment(loc);
    int off = (int) loc;
    return keyAt(s, off, RecordCodec.keyLength(s.map, off));
  }

  boolean isTombstone(long loc) {
    Segment s = segment(loc);
    return RecordCodec.type(s.map, (int) loc) == RecordCodec.DELETE;
  }

  /** Copies the value of the put record at {@code loc}, checking its CRC if configured. */
  byte[] readValue(long loc) {
    return readValue(loc, null);
  }

  /**
   * Copies the value of the put record at {@code loc}, checking its CRC if configured. {@code key},
   * if not null, is the record's key as the caller already confirmed it (a get compared it): the
   * checksum then reads the key from that array instead of the mapping.
   */
  byte[] readValue(long loc, byte[] key) {
    Segment s = segment(loc);
    ByteBuffer m = s.map;
    int off = (int) loc;
    long lengths = m.getLong(off + 4); // type and key length, value length
    int k = (int) (lengths >>> 32) & 0xFFFFFF;
    int v = (int) lengths;
    byte[] out = new byte[v];
    m.get(off + RecordCodec.RECORD_HEADER + k, out, 0, v);
    if (verifyOnRead) {
      CRC32C crc = new CRC32C();
      if (key != null) {
        byte[] h = new byte[8];
        LONG_BE.set(h, 0, lengths);
        crc.update(h, 0, 8);
        crc.update(key, 0, key.length);
      } else {
        crc.update(m.slice(off + 4, RecordCodec.RECORD_HEADER - 4 + k));
      }
      crc.update(out, 0, v);
      if ((int) crc.getValue() != m.getInt(off)) {
        throw new StoreCorruptedException(
            "hashlog: checksum mismatch in record at offset " + off + " of " + s.path, s.path, off);
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- reader guard

  /**
   * Marks a reader in flight; returns the token to pass to {@link #exit}. A segment retired by
   * compaction is unmapped only after every reader that entered before its retirement has left: the
   * retirer flips the epoch and waits for the old epoch's count to drain. A reader that counted
   * itself in an epoch re-checks it, so none slips into an epoch the retirer has already drained.
   */
  int enter() {
    int token = readers.enter();
    if (token < 0 || isClosed()) {
      if (token >= 0) {
        readers.exit(token);
      }
      checkOpen();
      throw closedError();
    }
    return token;
  }

  void exit(int token) {
    readers.exit(token);
  }

  /** Waits until every reader that entered before this call has left. Not under the write lock. */
  void awaitReaders() {
    readers.awaitEarlier();
  }

  /**
   * The location of a key's current put record, or 0. {@code readAhead}: the caller will copy the
   * record's value, so its lines are loaded at once (see {@link #keyEquals}); writers and
   * compaction only need the key.
   */
  private long lookup(long h, byte[] key, boolean readAhead) {
    for (int tries = 0; tries < 16; tries++) {
      long stamp = seq.tryOptimisticRead();
      if (stamp != 0) {
        long loc = keyDir.find(h, key, this, readAhead);
        if (seq.validate(stamp)) {
          return loc;
        }
      }
      Thread.onSpinWait();
    }
    long stamp = seq.readLock();
    try {
      return keyDir.find(h, key, this, readAhead);
    } finally {
      seq.unlockRead(stamp);
    }
  }

  @Override
  protected byte[] doGet(byte[] key) {
    int token = enter();
    try {
      long loc = lookup(KeyDir.fix(hasher.hash(key)), key, true);
      return loc == 0 ? null : readValue(loc, key);
    } finally {
      exit(token);
    }
  }

  /** Whether {@code loc} is the current record of the key with this hash. Safe without locks. */
  boolean isCurrent(long hash, long loc) {
    for (int tries = 0; tries < 16; tries++) {
      long stamp = seq.tryOptimisticRead();
      if (stamp != 0) {
        boolean r = keyDir.holds(hash, loc);
        if (seq.validate(stamp)) {
          return r;
        }
      }
      Thread.onSpinWait();
    }
    long stamp = seq.readLock();
    try {
      return keyDir.holds(hash, loc);
    } finally {
      seq.unlockRead(stamp);
    }
  }

  /** The location of a key's current put record, or 0. Safe without locks. */
  long locate(long hash, byte[] key) {
    return lookup(hash, key, false);
  }

  // ---------------------------------------------------------------- writes

  boolean isFailed() {
    return failure != null;
  }

  boolean closed() {
    return isClosed();
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: seals the active segment and rewrites every segment holding garbage (superseded
   * records, tombstones no older segment needs), then deletes the old files.
   */
  @Override
  protected void doCompact() {
    reclaim();
  }

  /** Compacts everything reclaimable now (see {@link Compactor#compactAll}); bytes reclaimed. */
  long reclaim() {
    // Open and writable: checked by AbstractStore.compact(), the only caller besides tests.
    sealer.drain(); // segments still being sealed are not victims yet
    return compactor.compactAll();
  }

  void checkNotFailed() {
    StoreIOException f = failure;
    if (f != null) {
      throw new StoreIOException(
          info().describe() + " has failed and is read-only until reopened: " + f.getMessage(), f);
    }
  }

  /** Puts the store into its failed, read-only state. Never retried. */
  StoreIOException fail(String what, Throwable cause) {
    StoreIOException e =
        new StoreIOException(info().describe() + ": " + what + ": " + cause, cause);
    synchronized (this) {
      if (failure == null) {
        failure = e;
        LOG.log(Level.ERROR, "hashlog: store failed, now read-only: " + e.getMessage(), cause);
      }
    }
    return e;
  }

  private void beginWrite() {
    compactor.throttle();
    lockWriter();
    if (isClosed()) {
      writeLock.unlock();
      checkOpen();
      throw new StoreClosedException(info().describe() + " is closed");
    }
    StoreIOException f = failure;
    if (f != null) {
      writeLock.unlock();
      checkNotFailed();
    }
  }

  /** The active segment, rolled first if {@code size} more bytes do not fit. */
  private Segment room(long size) throws IOException {
    Segment s = active;
    if (s.end + size <= s.capacity) {
      return s;
    }
    long need = RecordCodec.FILE_HEADER + size;
    if (need > MAX_SEGMENT) {
      throw new IllegalArgumentException(
          "hashlog: a write of "
              + size
              + " bytes does not fit in one segment (at most "
              + MAX_SEGMENT
              + " bytes); split the batch ("
              + info().describe()
              + ")");
    }
    roll((int) Math.max(segmentSize, need));
    return active;
  }

  private void roll(int capacity) throws IOException {
    Segment old = active;
    boolean deferDirectory = sealActive(true);
    createActive(nextWriteId(old.id), capacity, deferDirectory);
    compactor.segmentSealed();
  }

  /**
   * Seals the active segment; the caller then creates the next one. The segment is truncated and
   * forced here, before any newer segment exists, so that a power loss never finds a newer segment
   * next to an unforced older one (recovery cuts a torn tail only in the newest). In BUFFERED mode
   * the sealer has forced all but the last megabyte behind the writer ({@link
   * Segment#flushBehind}), so this force is short. The hint, the slow part, goes to the {@link
   * Sealer} when {@code mayDefer} and it is not behind; else it is written here too, which also
   * holds writers back. Caller holds the write lock.
   *
   * @return true if the next segment's directory entry may be synced later (BUFFERED)
   */
  boolean sealActive(boolean mayDefer) throws IOException {
    Segment old = active;
    if (mayDefer && sealer.pending().length < SEAL_BACKLOG) {
      old.seal();
      commit.durableUpTo(location(old.id, old.end));
      sealer.submit(old);
      return durability == Durability.BUFFERED;
    }
    sealActive();
    return false;
  }

  /** Seals the active segment and writes its hint. Caller holds the write lock. */
  void sealActive() throws IOException {
    Segment old = active;
    old.seal();
    commit.durableUpTo(location(old.id, old.end));
    try {
      HintFile.write(dir, old);
    } catch (IOException e) {
      // A hint only speeds up the next open, which rebuilds a missing one: not a store failure.
      LOG.log(Level.WARNING, "hashlog: could not write the hint file of " + old.path, e);
      Files.deleteIfExists(dir.resolve(Segment.hintName(old.id) + ".tmp"));
    }
  }

  /**
   * Stages one record (its precomputed {@link RecordCodec#header header}, key and value) for the
   * segment at {@code pos}; the caller {@link Segment#flush flushes} before it raises the end.
   */
  private static void putRecord(Segment s, int pos, byte[] header, byte[] key, byte[] value)
      throws IOException {
    s.put(pos, header, 0, RecordCodec.RECORD_HEADER);
    int p = pos + RecordCodec.RECORD_HEADER;
    if (key != null) {
      s.put(p, key, 0, key.length);
      p += key.length;
    }
    if (value == null || value.length == 0) {
      return;
    }
    Runnable hook = midWriteHook;
    if (hook != null && value.length > HOOKED_VALUE) {
      // Test hook: leave half a record in the file, then let the test kill the process.
      s.put(p, value, 0, value.length / 2);
      s.flush();
      hook.run();
    }
    s.put(p, value, 0, value.length);
  }

  /** BUFFERED: asks the sealer to force the active segment behind the writer every megabyte. */
  private void keepFlushed(Segment s) {
    if (durability == Durability.BUFFERED && s.flushDue(Sealer.FLUSH_STEP)) {
      sealer.flushBehind(s);
    }
  }

  private static void noteHint(Segment s, int type, int offset, byte[] key, int valueLength) {
    HintFile.Entries e = s.hintEntries;
    if (e != null) {
      e.add(type, offset, key, 0, key.length, valueLength);
    }
  }

  /**
   * Looks the key up before the write lock is taken: the index slot and the old record's header,
   * which the index update under the lock compares and {@link #retire} reads, are then in the CPU
   * cache, and the cache misses (often TLB misses into a large mapping) fall outside both locks.
   */
  private void warm(long h, byte[] key) {
    int token = enter();
    try {
      lookup(h, key, false);
    } finally {
      exit(token);
    }
  }

  /** Takes the write lock, spinning briefly first: writes hold it for well under a microsecond. */
  private void lockWriter() {
    if (writeLock.tryLock()) {
      return;
    }
    for (int i = 0; i < 64; i++) {
      Thread.onSpinWait();
      if (writeLock.tryLock()) {
        return;
      }
    }
    writeLock.lock();
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    long h = KeyDir.fix(hasher.hash(key));
    long size = RecordCodec.recordSize(key.length, value.length);
    byte[] header = RecordCodec.header(RecordCodec.PUT, key, value);
    warm(h, key);
    long lsn;
    beginWrite();
    try {
      Segment s = room(size);
      int off = s.end;
      putRecord(s, off, header, key, value);
      s.flush();
      s.end = off + (int) size;
      noteHint(s, RecordCodec.PUT, off, key, value.length);
      keepFlushed(s);
      userBytes.add(size);
      long loc = location(s.id, off);
      long stamp = seq.writeLock();
      long old;
      try {
        old = keyDir.put(h, key, loc, size, this);
      } finally {
        seq.unlockWrite(stamp);
      }
      s.liveBytes += size;
      if (old != 0) {
        retire(old);
      }
      order.added(loc);
      lsn = location(s.id, s.end);
    } catch (IOException e) {
      throw fail("write to " + active.path + " failed", e);
    } finally {
      writeLock.unlock();
    }
    if (durability == Durability.SYNC) {
      commit.await(lsn);
    }
  }

  @Override
  protected void doDelete(byte[] key) {
    long h = KeyDir.fix(hasher.hash(key));
    long size = RecordCodec.recordSize(key.length, 0);
    byte[] header = RecordCodec.header(RecordCodec.DELETE, key, null);
    long lsn;
    beginWrite();
    try {
      if (keyDir.find(h, key, this, false) == 0) {
        Segment s = active;
        lsn = location(s.id, s.end); // nothing to write; still wait for earlier writes
      } else {
        Segment s = room(size);
        int off = s.end;
        putRecord(s, off, header, key, null);
        s.flush();
        s.end = off + (int) size;
        noteHint(s, RecordCodec.DELETE, off, key, 0);
        keepFlushed(s);
        userBytes.add(size);
        long stamp = seq.writeLock();
        long old;
        try {
          old = keyDir.remove(h, key, this);
        } finally {
          seq.unlockWrite(stamp);
        }
        s.tombstoneBytes += size;
        retire(old);
        order.added(location(s.id, off));
        lsn = location(s.id, s.end);
      }
    } catch (IOException e) {
      throw fail("write to " + active.path + " failed", e);
    } finally {
      writeLock.unlock();
    }
    if (durability == Durability.SYNC) {
      commit.await(lsn);
    }
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    int n = batch.size();
    long[] hashes = new long[n];
    byte[][] headers = new byte[n][];
    long members = 0;
    for (int i = 0; i < n; i++) {
      hashes[i] = KeyDir.fix(hasher.hash(batch.key(i)));
      byte[] v = batch.value(i);
      headers[i] =
          RecordCodec.header(
              batch.isDelete(i) ? RecordCodec.DELETE : RecordCodec.PUT, batch.key(i), v);
      members += RecordCodec.recordSize(batch.key(i).length, v == null ? 0 : v.length);
    }
    long headerSize = RecordCodec.recordSize(0, RecordCodec.BATCH_VALUE);
    long total = headerSize + members;
    if (total + RecordCodec.FILE_HEADER > MAX_SEGMENT) {
      throw new IllegalArgumentException(
          "hashlog: batch of "
              + total
              + " bytes does not fit in one segment (at most "
              + MAX_SEGMENT
              + " bytes); split it ("
              + info().describe()
              + ")");
    }
    byte[] batchValue = RecordCodec.batchValue(n, members);
    byte[] batchHeader = RecordCodec.header(RecordCodec.BATCH, null, batchValue);
    long lsn;
    beginWrite();
    try {
      Segment s = room(total);
      int off = s.end;
      putRecord(s, off, batchHeader, null, batchValue);
      long[] olds = new long[n];
      long[] locs = new long[n];
      int p = off + (int) headerSize;
      for (int i = 0; i < n; i++) {
        locs[i] = location(s.id, p);
        byte[] v = batch.value(i);
        putRecord(s, p, headers[i], batch.key(i), v);
        noteHint(
            s,
            batch.isDelete(i) ? RecordCodec.DELETE : RecordCodec.PUT,
            p,
            batch.key(i),
            v == null ? 0 : v.length);
        p += (int) RecordCodec.recordSize(batch.key(i).length, v == null ? 0 : v.length);
      }
      s.flush(); // the whole batch in one write(2) when it fits the stage
      s.end = off + (int) total;
      keepFlushed(s);
      userBytes.add(total);
      long stamp = seq.writeLock();
      try {
        for (int i = 0; i < n; i++) {
          olds[i] =
              batch.isDelete(i)
                  ? keyDir.remove(hashes[i], batch.key(i), this)
                  : keyDir.put(
                      hashes[i],
                      batch.key(i),
                      locs[i],
                      RecordCodec.recordSize(batch.key(i).length, batch.value(i).length),
                      this);
        }
      } finally {
        seq.unlockWrite(stamp);
      }
      for (int i = 0; i < n; i++) {
        byte[] v = batch.value(i);
        long size = RecordCodec.recordSize(batch.key(i).length, v == null ? 0 : v.length);
        if (batch.isDelete(i)) {
          s.tombstoneBytes += size;
        } else {
          s.liveBytes += size;
        }
        if (olds[i] != 0) {
          retire(olds[i]);
        }
        order.added(locs[i]);
      }
      lsn = location(s.id, s.end);
    } catch (IOException e) {
      throw fail("write to " + active.path + " failed", e);
    } finally {
      writeLock.unlock();
    }
    if (durability == Durability.SYNC) {
      commit.await(lsn);
    }
  }

  /** Moves a superseded put record's bytes from live to dead. Caller holds the write lock. */
  void retire(long loc) {
    Segment s = segment(loc);
    s.liveBytes -= RecordCodec.size(s.map, (int) loc);
  }

  @Override
  protected void doSync() {
    if (readOnly) {
      return;
    }
    Segment s = active;
    commit.await(location(s.id, s.end));
  }

  // ---------------------------------------------------------------- scans

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    int token = enter();
    try {
      KeyOrder.View view = range.isEmpty() ? KeyOrder.View.EMPTY_VIEW : order.snapshot();
      // Registered before exit(): a compaction that retires segments this view points into waits
      // for this reader to leave, and by then sees the cursor pinned.
      HashLogCursor c = new HashLogCursor(this, range, view);
      compactor.pin(c);
      return c;
    } finally {
      exit(token);
    }
  }

  // ---------------------------------------------------------------- stats and close

  @Override
  protected StoreStats doStats() {
    long disk = 0;
    long live = 0;
    long dead = 0;
    long tomb = 0;
    int count;
    long keys;
    long indexBytes;
    writeLock.lock();
    try {
      count = 0;
      for (Segment s : segments()) {
        if (!s.retired) {
          count++;
          disk += s.end;
          live += s.liveBytes;
          dead += s.deadBytes();
          tomb += s.tombstoneBytes;
          try {
            Path hint = HintFile.path(dir, s.id);
            if (s.sealed && Files.exists(hint)) {
              disk += Files.size(hint);
            }
          } catch (IOException e) {
            // A hint that vanished counts nothing.
          }
        }
      }
      keys = keyDir.size();
      indexBytes = keyDir.memoryBytes() + order.memoryBytes();
    } finally {
      writeLock.unlock();
    }
    Map<String, Number> f = new LinkedHashMap<>();
    f.put("segments", count);
    f.put("index-bytes", indexBytes);
    f.put("index-bytes-per-key", keys == 0 ? 0.0 : (double) indexBytes / keys);
    f.put("index-capacity", keyDir.capacity());
    f.put("live-bytes", live);
    f.put("dead-bytes", dead);
    f.put("tombstone-bytes", tomb);
    f.put("truncated-tail-bytes", truncatedTailBytes);
    f.put("hint-files-rebuilt", hintsRebuilt);
    f.put("scan-view-builds", order.rebuilds());
    f.put("fsyncs", commit.forces());
    f.put("failed", failure == null ? 0 : 1);
    compactor.figures(f, disk, live);
    return new StoreStats(keys, true, disk, f);
  }

  /** Live bytes of one segment, for tests and (later) compaction. */
  long liveBytes(int segmentId) {
    writeLock.lock();
    try {
      Segment s = table.get(segmentId);
      return s == null ? -1 : s.liveBytes;
    } finally {
      writeLock.unlock();
    }
  }

  @Override
  protected void doClose() {
    compactor.stop();
    sealer.stop();
    writeLock.lock();
    try {
      Segment s = active;
      if (s != null && !readOnly && failure == null) {
        try {
          if (s.directoryPending) {
            syncDirectory();
            s.directoryPending = false;
          }
          s.force();
          commit.durableUpTo(location(s.id, s.end));
        } catch (IOException e) {
          fail("fsync of " + s.path + " at close failed", e);
        }
      }
    } finally {
      writeLock.unlock();
    }
    releaseAll();
  }

  StoreClosedException closedError() {
    return new StoreClosedException(info().describe() + " is closed");
  }

  private void releaseAll() {
    // The store is marked closed, so no reader enters any more; wait for those inside (they may
    // need the write lock, e.g. a scan building its view), then for the writer, then unmap.
    readers.close();
    compactor.stop();
    sealer.stop();
    writeLock.lock();
    try {
      for (Segment s : segments()) {
        try {
          s.closeFile();
        } catch (IOException e) {
          LOG.log(Level.WARNING, "hashlog: closing " + s.path + " failed", e);
        }
        Mappings.unmap(s.map);
      }
      table = SegmentTable.EMPTY;
      active = null;
    } finally {
      writeLock.unlock();
      dirLock.close();
    }
  }
}
