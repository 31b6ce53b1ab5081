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
import io.kv4j.spi.StoreDirectory;
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

  /** The store format: 2 for stores this version creates, 1 for older ones (see RecordCodec). */
  private final StoreDirectory directory;

  /**
   * Serialises manifest writes (open, compaction commits, close). Taken before the writer lock,
   * never while holding it.
   */
  private final Object manifestLock = new Object();

  /** Compacted segments whose deletion is not yet durable: the manifest lists them as retired. */
  private final java.util.TreeSet<Integer> pendingDeletes = new java.util.TreeSet<>();

  private long manifestGeneration; // guarded by manifestLock

  /** Test hook: runs right after the directory is opened (a test throws an Error from it). */
  static volatile Runnable openHook;

  /** Test hook: runs in the middle of writing a large value (crash tests block in it). */
  static volatile Runnable midWriteHook;

  /** Test hook: the next group-commit force fails. */
  volatile boolean injectForceFailure;

  long truncatedTailBytes;
  int hintsRebuilt;
  int leftoversRemoved;

  /** The layout every hashlog directory has, for {@link StoreDirectory}. */
  static final StoreDirectory.Layout LAYOUT =
      new StoreDirectory.Layout("hashlog", 2, Recovery::ownsFile, Set.of());

  private HashLogStore(
      StoreInfo info,
      StoreDirectory directory,
      boolean verifyOnRead,
      int segmentSize,
      int initialKeys,
      KeyDir.Hasher hasher,
      Compactor.Settings compaction) {
    super(info);
    this.dir = directory.path();
    this.directory = directory;
    this.durability = info.durability();
    this.readOnly = info.readOnly();
    this.verifyOnRead = verifyOnRead;
    this.segmentSize = segmentSize;
    this.hasher = hasher;
    this.keyDir = new KeyDir(initialKeys);
    this.compactor = new Compactor(this, compaction);
  }

  /**
   * Heap bytes the index of {@code initialKeys} takes at once; an open asking for more than the
   * JVM's maximum heap fails with {@link IllegalArgumentException} before allocating anything.
   */
  static void checkIndexCapacity(int initialKeys, long maxHeap) {
    long bytes = KeyDir.initialBytes(initialKeys);
    if (bytes > maxHeap) {
      throw new IllegalArgumentException(
          "hashlog: initial-index-capacity="
              + initialKeys
              + " keys needs "
              + bytes
              + " bytes of heap for the index at once, more than this JVM's maximum heap of "
              + maxHeap
              + " bytes (-Xmx); choose a smaller capacity (the index grows by itself)");
    }
  }

  /** Opens or creates a store in the config's directory (see {@link StoreDirectory}). */
  static HashLogStore open(
      io.kv4j.StoreConfig config,
      Set<Feature> features,
      io.kv4j.Limits limits,
      boolean verifyOnRead,
      int segmentSize,
      int initialKeys,
      KeyDir.Hasher hasher,
      Compactor.Settings compaction) {
    checkIndexCapacity(initialKeys, Runtime.getRuntime().maxMemory());
    StoreDirectory directory = StoreDirectory.open(config, LAYOUT);
    HashLogStore s = null;
    boolean ok = false;
    try {
      Path real = directory.path();
      if (config.readOnly()) {
        refuseLiveWriter(real);
      }
      Runnable hook = openHook;
      if (hook != null) {
        hook.run();
      }
      Set<Feature> f = java.util.EnumSet.copyOf(features);
      if (!verifyOnRead) {
        f.remove(Feature.CHECKSUMS); // reads do not verify: the store promises no detection
      }
      StoreInfo info =
          new StoreInfo(
              "hashlog", f, limits, config.durability(), real.toString(), config.readOnly());
      s =
          new HashLogStore(
              info, directory, verifyOnRead, segmentSize, initialKeys, hasher, compaction);
      s.recover();
      if (!config.readOnly()) {
        s.sealer.start();
        s.compactor.start();
      }
      ok = true;
      return s;
    } catch (IOException e) {
      throw new StoreIOException(
          "engine 'hashlog': cannot open store at " + directory.path() + ": " + e, e);
    } finally {
      // Also for an Error (OutOfMemoryError, a test hook's): the directory lock must not leak.
      if (!ok) {
        if (s != null) {
          s.releaseAll();
        } else {
          directory.close();
        }
      }
    }
  }

  /** Read-only opens check for a live writer one at a time in this JVM (see refuseLiveWriter). */
  private static final Object READ_ONLY_CHECK = new Object();

  /**
   * A read-only open of a store that a writer holds is refused: the writer appends to the newest
   * segment, and its compaction deletes segments and rewrites the manifest, so what this open would
   * read is not a consistent state of the store. Detected with a shared lock on the lock file,
   * opened for reading only (nothing is created or changed): it fails while a writer, in this JVM
   * or another process, holds its exclusive lock. Nothing keeps a writer from opening the store
   * afterwards; the read-only store then keeps reading the files it mapped at open.
   */
  private static void refuseLiveWriter(Path dir) {
    Path lockFile = dir.resolve(DirectoryLock.FILE_NAME);
    if (!Files.exists(lockFile)) {
      return;
    }
    synchronized (READ_ONLY_CHECK) {
      try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.READ)) {
        java.nio.channels.FileLock l;
        try {
          l = ch.tryLock(0, Long.MAX_VALUE, true);
        } catch (java.nio.channels.OverlappingFileLockException e) {
          l = null;
        }
        if (l == null) {
          throw new io.kv4j.StoreLockedException(
              "engine 'hashlog': directory "
                  + dir
                  + " is open for writing (in this or another process); a read-only open needs"
                  + " the writer to close first, since the writer changes the files under it",
              dir);
        }
        l.release();
      } catch (java.nio.file.NoSuchFileException e) {
        // Gone meanwhile: no writer.
      } catch (IOException e) {
        // A file system without locks: nothing to detect a writer with.
        LOG.log(Level.DEBUG, "hashlog: cannot test the lock of " + dir + ": " + e);
      }
    }
  }

  // ---------------------------------------------------------------- recovery

  private void recover() throws IOException {
    Recovery.Listing files = Recovery.list(dir);
    List<Integer> ids = files.segments;
    Manifest manifest = Manifest.read(dir);
    Path mp = Manifest.path(dir);
    if (manifest == null && directory.format() >= 2 && !directory.isNew()) {
      throw new StoreCorruptedException(
          "hashlog: the segment manifest "
              + mp
              + " is missing, but the store's identity (format "
              + directory.format()
              + ") says it has one: without it deleted segments cannot be detected; restore it",
          mp,
          -1);
    }
    if (ids.isEmpty() && !directory.isNew()) {
      throw new StoreCorruptedException(
          "hashlog: no segment files in "
              + dir
              + ", but a store was created here (identity or manifest present): every record is"
              + " gone; refusing to start an empty store in its place",
          dir,
          -1);
    }
    Recovery.Plan plan = Recovery.plan(dir, ids, manifest);
    List<Integer> load = plan.load;
    for (int i = 0; i < load.size(); i++) {
      int id = load.get(i);
      Path path = dir.resolve(Segment.fileName(id));
      boolean newest = i == load.size() - 1;
      if (!newest) {
        Segment seg = Segment.openSealed(id, path, !readOnly);
        install(seg);
        Recovery.loadSealed(this, seg, readOnly);
      } else {
        recoverNewest(id, path, plan);
      }
    }
    if (readOnly) {
      return;
    }
    // Everything checked: now (and only now) tidy up, so that a failed open changes nothing.
    for (int id : plan.leftovers) {
      Files.deleteIfExists(dir.resolve(Segment.fileName(id)));
      Files.deleteIfExists(HintFile.path(dir, id));
      leftoversRemoved++;
      LOG.log(
          Level.INFO,
          "hashlog: removed {0}, compacted away before the last close",
          dir.resolve(Segment.fileName(id)));
    }
    for (Path t : files.temps) {
      Files.deleteIfExists(t);
    }
    java.util.Set<Integer> loaded = new java.util.HashSet<>(load);
    for (int h : files.hints) {
      if (!loaded.contains(h)) {
        Files.deleteIfExists(HintFile.path(dir, h));
      }
    }
    if (active == null) {
      int id = ids.isEmpty() ? 1 : nextWriteId(ids.get(ids.size() - 1));
      createActive(id, segmentSize);
    }
    manifestGeneration = manifest == null ? 0 : manifest.generation;
    writeManifest(false); // from now on the newest segment may have a torn tail
    // A new store's identity, or an adopted (pre-identity, format 1) store's once its files
    // passed recovery; a no-op when the identity is already recorded.
    directory.created();
  }

  private void recoverNewest(int id, Path path, Recovery.Plan plan) throws IOException {
    long fileLen = Files.size(path);
    if (fileLen > MAX_SEGMENT) {
      throw new StoreCorruptedException(
          "hashlog: segment " + path + " is larger than 2 GiB", path, MAX_SEGMENT);
    }
    Segment seg =
        readOnly
            ? Segment.openSealed(id, path)
            : Segment.openActive(id, path, (int) Math.max(segmentSize, fileLen), (int) fileLen);
    install(seg);
    if (!plan.clean
        && (fileLen < RecordCodec.FILE_HEADER
            || Recovery.garbageBytes(seg.map, 0, RecordCodec.FILE_HEADER) == 0)) {
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
      // Rewritten in place rather than deleted and created: the manifest may list it.
      Segment fresh = Segment.create(id, path, segmentSize, plan.newestPrevious, true);
      install(fresh);
      fresh.hintEntries = new HintFile.Entries();
      active = fresh;
      HashLogStore.LOG.log(Level.INFO, "hashlog: rewrote the header of empty segment {0}", path);
      return;
    }
    int limit = plan.clean ? plan.newestLength : (int) fileLen;
    int[] tornAt = new int[1];
    int validEnd = Recovery.loadNewest(this, seg, limit, tornAt);
    if (plan.clean) {
      long beyond = Recovery.garbageBytes(seg.map, limit, (int) fileLen);
      if (validEnd != limit || beyond > 0) {
        // A bad member of a batch is named itself, not the batch's header.
        int at = validEnd != limit ? (tornAt[0] >= 0 ? tornAt[0] : validEnd) : limit;
        throw new StoreCorruptedException(
            "hashlog: invalid record (bad checksum or header) in segment "
                + path
                + " at offset "
                + at
                + (validEnd != limit
                    ? ""
                    : " (" + beyond + " bytes after the end recorded at the clean close)")
                + ": the store was closed cleanly, so this is damage, not a torn write; nothing"
                + " was truncated",
            path,
            at);
      }
    } else {
      int from = tornAt[0] >= 0 ? tornAt[0] : validEnd;
      int later = RecordCodec.findValidRecord(seg.map, from + 1, (int) fileLen);
      if (later >= 0) {
        throw new StoreCorruptedException(
            "hashlog: invalid record (bad checksum or header) in segment "
                + path
                + " at offset "
                + from
                + ", followed by a valid record at offset "
                + later
                + ": a crash tears only the last write, so this is damage, not a torn tail;"
                + " nothing was truncated",
            path,
            from);
      }
    }
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

  // ---------------------------------------------------------------- manifest

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
      Segment[] all = segments();
      int[] ids = new int[all.length];
      int[] lengths = new int[all.length];
      int n = 0;
      for (Segment g : all) {
        if (g != act && !g.dropped && g.sealed && g.end >= RecordCodec.FILE_HEADER) {
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
              java.util.Arrays.copyOf(ids, n),
              java.util.Arrays.copyOf(lengths, n),
              retired);
    } finally {
      writeLock.unlock();
    }
    m.write(dir);
  }

  /**
   * Commits a compaction run: its victims are no longer listed, but retired until their deletion is
   * durable. After this the run's output is the live copy, whatever a crash interrupts.
   */
  void commitCompaction(List<Segment> victims) throws IOException {
    synchronized (manifestLock) {
      for (Segment v : victims) {
        v.dropped = true;
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
    Segment prev = active;
    Segment seg = Segment.create(id, path, capacity, prev == null ? 0 : prev.id, false);
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
    int ka = keyLengthWithin(sa, oa);
    int kb = keyLengthWithin(sb, ob);
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
    int k = keyLengthWithin(s, off);
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
    int k = keyLengthWithin(s, off);
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

  /**
   * A record's key length, cut to what the mapping holds: orderings (scan views, cursor bounds)
   * never fail on a damaged length; the record itself is checked when a cursor reaches it.
   */
  private static int keyLengthWithin(Segment s, int off) {
    int k = RecordCodec.keyLength(s.map, off);
    int room = s.capacity - off - RecordCodec.RECORD_HEADER;
    return k <= room ? k : Math.max(0, room);
  }

  /** The key of the record at {@code loc}; a record whose lengths are damaged is corruption. */
  byte[] keyAt(long loc) {
    Segment s = segment(loc);
    int off = (int) loc;
    String bad = recordProblem(s, off);
    if (bad != null) {
      throw corrupt(s, off, bad);
    }
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
    // Lengths read from disk: a damaged one must be an error, never a huge array or an
    // IndexOutOfBoundsException. Two compares against final fields; the CRC then checks the rest.
    if (v < 0
        || v > RecordCodec.MAX_VALUE
        || off + RecordCodec.RECORD_HEADER + k + v > s.capacity) {
      throw corrupt(
          s, off, "key length " + k + " or value length " + (v & 0xFFFFFFFFL) + " out of range");
    }
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
        throw corrupt(s, off, "checksum mismatch");
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
      long h = KeyDir.fix(hasher.hash(key));
      long loc = lookup(h, key, true);
      if (loc > 0) {
        return readValue(loc, key);
      }
      if (loc < 0) {
        checkSuspect(loc & ~KeyDir.SUSPECT, h);
      }
      return null;
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
    return Math.max(0, lookup(hash, key, false));
  }

  /**
   * A get did not find its key, but an index entry with the key's hash points at a record holding
   * other key bytes (a {@link KeyDir#SUSPECT}). Two keys sharing a 60-bit hash are fine; anything
   * else means the record no longer holds the key the index (built from a hint, or from the record
   * itself when it was intact) says it does: its key was damaged, and "absent" would be silent
   * loss. The location came from a validated read of the index, so it names a real record.
   *
   * @throws StoreCorruptedException naming the file and the record's offset
   */
  private void checkSuspect(long loc, long hash) {
    Segment s = segment(loc);
    if (s == null) {
      return;
    }
    int off = (int) loc;
    String bad = recordProblem(s, off);
    if (bad == null) {
      byte[] k = keyAt(s, off, RecordCodec.keyLength(s.map, off));
      if (KeyDir.fix(hasher.hash(k)) == hash) {
        return; // another key with the same hash: the key asked for is absent
      }
      bad =
          RecordCodec.crcMatches(s.map, off, (int) RecordCodec.size(s.map, off))
              ? "its key does not match the index entry built from it"
              : "checksum mismatch";
    }
    throw corrupt(s, off, bad + "; the index points a key at it, which now cannot be read");
  }

  /**
   * What is wrong with the lengths or type of the record at {@code off}, or null if it is a put or
   * delete record that fits in the segment (its checksum is not checked).
   */
  static String recordProblem(Segment s, int off) {
    int end = s.end;
    if (off < RecordCodec.FILE_HEADER || off > end - RecordCodec.RECORD_HEADER) {
      return "record offset outside the segment's " + end + " bytes";
    }
    int type = RecordCodec.type(s.map, off);
    int k = RecordCodec.keyLength(s.map, off);
    long v = RecordCodec.valueLength(s.map, off) & 0xFFFFFFFFL;
    if (type != RecordCodec.PUT && type != RecordCodec.DELETE) {
      return "record type " + type + " is not a put or delete";
    }
    if (k < 1 || k > RecordCodec.MAX_KEY || v > RecordCodec.MAX_VALUE) {
      return "key length " + k + " or value length " + v + " out of range";
    }
    if (off + RecordCodec.RECORD_HEADER + k + v > end) {
      return "record of "
          + (RecordCodec.RECORD_HEADER + k + v)
          + " bytes runs past the segment's end";
    }
    return null;
  }

  StoreCorruptedException corrupt(Segment s, long off, String what) {
    return new StoreCorruptedException(
        "hashlog: corrupt record in " + s.path + " at offset " + off + ": " + what, s.path, off);
  }

  // ---------------------------------------------------------------- writes

  boolean isFailed() {
    return writeFailure() != null;
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
    StoreIOException f = writeFailure();
    if (f != null) {
      throw new StoreIOException(f.getMessage(), f);
    }
  }

  /**
   * Puts the store into its failed state ({@link AbstractStore#failWrites}: writes and sync
   * refused, "failed until reopened", reads go on). Never retried.
   */
  StoreIOException fail(String what, Throwable cause) {
    boolean first = writeFailure() == null;
    StoreIOException e = failWrites(what, cause);
    if (first) {
      LOG.log(Level.ERROR, "hashlog: " + e.getMessage(), cause);
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
    if (writeFailure() != null) {
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
      if (keyDir.find(h, key, this, false) <= 0) {
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
    int off = (int) loc;
    // A damaged header (the entry came from a hint) must not wreck the accounting: stay in bounds.
    s.liveBytes -= Math.min(RecordCodec.size(s.map, off), Math.max(0, s.end - off));
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

  // ---------------------------------------------------------------- verify

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: the segment files against the manifest (every listed segment present at its sealed
   * length, the chain of segments rolled since, nothing unexpected), then every segment in full:
   * its header, every record's CRC (batches whole), the records ending exactly at the segment's
   * end, and a valid hint file entry by entry against the records it describes. A damaged or
   * missing hint is not an error: it is only an accelerator, rebuilt at the next read-write open.
   */
  @Override
  protected void doVerify() {
    Segment[] segs;
    try {
      synchronized (manifestLock) { // no compaction commits meanwhile
        writeLock.lock(); // no rolls meanwhile
        try {
          segs = segments().clone();
          Manifest m = Manifest.read(dir);
          if (m != null) {
            Recovery.plan(dir, Recovery.list(dir).segments, m);
          } else if (!readOnly || directory.format() >= 2) {
            throw new StoreCorruptedException(
                "hashlog: the segment manifest " + Manifest.path(dir) + " is missing",
                Manifest.path(dir),
                -1);
          }
          for (Segment g : segs) {
            if (g.retired || g.dropped) {
              continue;
            }
            long size;
            try {
              size = Files.size(g.path);
            } catch (java.nio.file.NoSuchFileException e) {
              throw new StoreCorruptedException(
                  "hashlog: segment file " + g.path + " is missing", g.path, -1);
            }
            if (g.sealed ? size != g.end : size < g.end) {
              throw new StoreCorruptedException(
                  "hashlog: segment "
                      + g.path
                      + " is "
                      + size
                      + " bytes on disk, but holds "
                      + g.end
                      + " bytes of records",
                  g.path,
                  Math.min(size, g.end));
            }
          }
        } finally {
          writeLock.unlock();
        }
      }
    } catch (IOException e) {
      throw new StoreIOException(
          info().describe() + ": verify could not read " + dir + ": " + e, e);
    }
    for (Segment g : segs) {
      if (g.retired || g.dropped || g.end < RecordCodec.FILE_HEADER) {
        continue;
      }
      int token = enter();
      try {
        verifySegment(g);
      } catch (StoreCorruptedException e) {
        if (!g.retired) { // compacted away meanwhile: its copies were checked on the way
          throw e;
        }
      } finally {
        exit(token);
      }
    }
  }

  private void verifySegment(Segment g) {
    Recovery.checkHeader(g);
    int end = g.end;
    List<long[]> records = new java.util.ArrayList<>();
    int stop =
        Recovery.scan(
            g.map,
            RecordCodec.FILE_HEADER,
            end,
            (type, off, k, v) -> records.add(new long[] {type, off, k, v}),
            null);
    if (stop != end) {
      throw corrupt(g, stop, "invalid record (bad checksum or header)");
    }
    if (!g.sealed) {
      return;
    }
    // The hint, if usable, must describe exactly these records.
    int[] i = {0};
    Path hint = HintFile.path(dir, g.id);
    String unused =
        HintFile.read(
            dir,
            g,
            (type, off, k, v, key) -> {
              int at = i[0]++;
              long[] r = at < records.size() ? records.get(at) : null;
              if (r == null
                  || r[0] != type
                  || r[1] != off
                  || r[2] != k
                  || r[3] != v
                  || !keyEquals(location(g.id, off), key, 0)) {
                throw new StoreCorruptedException(
                    "hashlog: hint file "
                        + hint
                        + " entry "
                        + at
                        + " does not match the record "
                        + (r == null ? "count" : "at offset " + r[1])
                        + " of "
                        + g.path,
                    hint,
                    -1);
              }
            });
    if (unused == null && i[0] != records.size()) {
      throw new StoreCorruptedException(
          "hashlog: hint file "
              + hint
              + " lists "
              + i[0]
              + " records, "
              + g.path
              + " holds "
              + records.size(),
          hint,
          -1);
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
    f.put("failed", writeFailure() == null ? 0 : 1);
    f.put("leftover-segments-removed", leftoversRemoved);
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
    boolean whole = false;
    writeLock.lock();
    try {
      Segment s = active;
      if (s != null && !readOnly && writeFailure() == null) {
        try {
          if (s.directoryPending) {
            syncDirectory();
            s.directoryPending = false;
          }
          // Cut the sparse preallocation first, so that the length the clean manifest records is
          // the file's length on disk too.
          s.truncateTo(s.end);
          s.force();
          commit.durableUpTo(location(s.id, s.end));
          whole = true;
        } catch (IOException e) {
          fail("fsync of " + s.path + " at close failed", e);
        }
      }
    } finally {
      writeLock.unlock();
    }
    if (whole) {
      try {
        // The clean-close marker: the next open treats any bad record as damage, not a torn tail.
        writeManifest(true);
      } catch (IOException e) {
        // The manifest still says "not clean": the next open merely tolerates a torn tail.
        LOG.log(Level.WARNING, "hashlog: could not record the clean close of " + dir, e);
      }
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
      directory.close();
    }
  }
}
