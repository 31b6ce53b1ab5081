package io.kv4j.hashlog;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;

/**
 * One log file, {@code seg-<id>.log}, and its memory mapping. Readers read records through the
 * mapping. The writer appends in one of two ways, chosen by the store's durability:
 *
 * <ul>
 *   <li><b>{@code SYNC}: {@code write(2)}</b>, one call per record (or per batch), never storing
 *       through the mapping. Every record is forced right after, and a page dirtied through a
 *       shared mapping must be write-protected and shot out of the TLB of every core running this
 *       process when it is written back (one inter-processor interrupt per 4 KiB page); with {@code
 *       write(2)} the pages only ever read through the mapping keep clean read-only entries, which
 *       write-back leaves alone.
 *   <li><b>{@code BUFFERED}: stores through the mapping</b> ({@link #storeMapped}), no system call
 *       per record: a system call (and the kernel's per-call work in {@code write(2)}) was the
 *       largest share of a put's time. The page cache holds what was stored as soon as the store
 *       instruction ran, so an acknowledged record survives kill -9 exactly as after {@code
 *       write(2)}. Nothing forces these pages on the write path (BUFFERED promises the page cache,
 *       see {@link SegmentLog}), so write-back, and with it the TLB shoot-downs, happens only for
 *       data that lives long enough for the kernel's own write-back, an explicit {@code sync()},
 *       the close, or a compaction of old data. <b>Never into a hole</b>: a store into a part of a
 *       sparse file the file system cannot allocate (disk full) would be a SIGBUS that kills the
 *       JVM, so the file is first allocated with {@code write(2)}s of zeros a step ahead of the
 *       stores ({@link #allocated}); a full disk then fails that {@code write(2)} with an {@link
 *       IOException} and the store is failed until reopened, and nothing is stored at or past the
 *       allocated end.
 * </ul>
 *
 * <p>Both reach the same page cache, so a record is visible to readers once {@link #end} passes it.
 * The active segment is mapped read-write over its whole capacity (which extends the file sparsely
 * to that length; readers never read past {@link #end}). Every file operation goes through the
 * store's {@link Storage}, whose files are not closed when the calling thread is interrupted. A
 * sealed segment holds no file descriptor; its mapping stays until the store closes, or until
 * compaction has retired it and no reader can use it. A keyspace's active segment may have its
 * descriptor closed too ({@link #park}, bounding a store's open files), and opened again when the
 * file is needed.
 *
 * <p>Byte accounting for compaction: {@link #liveBytes} are put records still current, {@link
 * #tombstoneBytes} delete records (needed until no older segment holds their key), and everything
 * else after the header ({@link #deadBytes()}: superseded records, batch headers) is garbage.
 */
final class Segment {
  final int id;
  final Path path;
  final MappedByteBuffer map;
  final int capacity;
  private final Storage storage;
  private volatile Storage.File file;

  /**
   * Active, with its descriptor closed to bound the store's open files ({@link #park}): the next
   * call that needs the file opens it again ({@link #openFile}). Changed under {@link #mapLock}.
   */
  private volatile boolean parked;

  // Set when openFile opened a parked file again; writer-owned (takeReopened).
  private boolean reopened;

  /** Bytes of valid data (header included); records are only read below it. */
  volatile int end;

  /**
   * Where the segment is in its life ({@link SegmentPhase}); moved only by {@link #move}, which
   * refuses an illegal transition. Volatile and moved by compare-and-set: readers look without a
   * lock, and the moves come under different locks (the writer lock, the manifest lock, the map
   * lock).
   */
  private volatile SegmentPhase phase;

  private static final VarHandle PHASE;

  static {
    try {
      PHASE = MethodHandles.lookup().findVarHandle(Segment.class, "phase", SegmentPhase.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private long filePointer = -1; // the writer's view of the file offset, -1 when unknown
  // Writer-owned: bytes staged for one write(2), a record or a batch, starting at stagePosition.
  private byte[] stage;
  private int stagePosition;
  private int staged;
  private static final int STAGE = 64 << 10;
  // How put() reaches the file (see the class comment): write(2), or stores through the mapping
  // below allocated. Writer-owned, set by writeWith before the first put.
  private WritePolicy writes = WritePolicy.SYNC;
  // File bytes below this are allocated (zeros or records written); raised under mapLock.
  private volatile int allocated;

  /**
   * The unit of allocation (BUFFERED): every {@code write(2)} of zeros covers whole aligned chunks
   * of this size. Linux (6.x, ext4 and xfs with large folios) gives a buffered write page-cache
   * folios no larger than the write, and a 2 MiB folio at a 2 MiB-aligned address of a mapping is
   * mapped by one page-middle-directory entry: one TLB entry instead of 512, and one page fault
   * instead of 512. Written in smaller pieces, the segments are mapped in 4 KiB pages and a get
   * pays a TLB miss on the record. Elsewhere it is merely a larger write. A new segment's first
   * chunk is written before its header (a segment must have its header before records go in):
   * usually by the {@link Sealer}, which {@link #prepare prepares} the next segment's file before
   * the roll, else by the writer at the roll, under the writer lock.
   */
  static final int CHUNK = 2 << 20;

  /** How far ahead of the stores the {@link Sealer} allocates the file (at least). */
  static final int ALLOCATION_STEP = CHUNK;

  /**
   * The source of every write of zeros: one {@code writev(2)} of a chunk names this block again and
   * again, so the kernel copies from a few cache-resident pages. A write from a chunk-sized heap
   * array cost three passes over 2 MiB that no cache holds: the JDK copies a large array into a
   * malloc'd buffer first, then the kernel reads that buffer into the page cache.
   */
  private static final ByteBuffer ZERO_BLOCK =
      ByteBuffer.allocateDirect(64 << 10).asReadOnlyBuffer();

  // Taken by whatever writes the file or stores through the mapping outside the writer's own
  // appends (allocation ahead) and by whatever cuts or closes the file: a store into a
  // page a truncation removed would be a SIGBUS.
  private final Object mapLock = new Object();
  // Guarded by the store's write lock.
  long liveBytes;
  long tombstoneBytes;

  /**
   * Finished and forced to disk (set once the force of a finished segment returned). A BUFFERED
   * store seals without forcing: such a segment is forced by the next {@code sync()}, the close, or
   * a compaction that must not lose data older than it ({@link GroupCommit}).
   */
  volatile boolean forced;

  /**
   * Some of its records may have been promised durable: a force of this file began (a {@code
   * sync()}, a SYNC write's group commit, a seal that forced it, the close), or the segment comes
   * from an earlier session (whose syncs nobody remembers). Set <i>before</i> the force starts, so
   * that a compaction run that reads it after retiring its victims cannot miss a force racing with
   * it (see {@link CompactionRun}). A compaction may delete a segment without this flag before its
   * output reaches the disk: only a kill -9 can have been promised for its records, and the page
   * cache keeps them through that.
   */
  volatile boolean holdsDurable;

  /** Its directory entry may not be durable yet (a new active segment in BUFFERED mode). */
  volatile boolean directoryPending;

  /**
   * Hint entries of every record written since the segment was created, or null when they are not
   * known (a segment recovered at open): sealing then reads them back from the records.
   */
  HintFile.Entries hintEntries;

  private Segment(
      Storage storage,
      int id,
      Path path,
      MappedByteBuffer map,
      int capacity,
      Storage.File file,
      int end) {
    this.storage = storage;
    this.id = id;
    this.path = path;
    this.map = map;
    this.capacity = capacity;
    this.file = file;
    this.end = end;
    this.allocated = end;
    this.phase = file == null ? SegmentPhase.SEALED : SegmentPhase.ACTIVE;
  }

  /** The segment's phase now. */
  SegmentPhase phase() {
    return phase;
  }

  /**
   * Moves the segment to phase {@code to}.
   *
   * @throws IllegalStateException if the segment's phase may not move to {@code to}
   */
  void move(SegmentPhase to) {
    while (true) {
      SegmentPhase from = phase;
      if (!from.mayMoveTo(to)) {
        throw new IllegalStateException(
            "segment " + path + " cannot move from " + from + " to " + to);
      }
      if (PHASE.compareAndSet(this, from, to)) {
        return;
      }
    }
  }

  /**
   * Moves the segment from {@code from} to {@code to} if it is in {@code from}.
   *
   * @return whether it moved
   */
  boolean moveIf(SegmentPhase from, SegmentPhase to) {
    if (!from.mayMoveTo(to)) {
      throw new IllegalStateException("no transition from " + from + " to " + to);
    }
    return PHASE.compareAndSet(this, from, to);
  }

  /** Finished: no longer written, read-only (every phase after {@code ACTIVE} but CLOSED). */
  boolean isSealed() {
    SegmentPhase p = phase;
    return p != SegmentPhase.ACTIVE && p != SegmentPhase.CLOSED;
  }

  /** Compacted away: retired, dropped or deleted. */
  boolean isRetired() {
    return phase.compareTo(SegmentPhase.RETIRED) >= 0;
  }

  /** Committed as compacted away in the manifest: dropped or deleted. */
  boolean isDropped() {
    return phase.compareTo(SegmentPhase.DROPPED) >= 0;
  }

  /** Retired and its file deleted. */
  boolean isDeleted() {
    return phase == SegmentPhase.DELETED;
  }

  static String fileName(int id) {
    return String.format("seg-%08x.log", id);
  }

  static String hintName(int id) {
    return String.format("seg-%08x.hint", id);
  }

  /** Maps a sealed segment read-only at its file length; closes the descriptor at once. */
  static Segment openSealed(Storage storage, int id, Path path) throws IOException {
    return openSealed(storage, id, path, false);
  }

  /**
   * Maps a sealed segment; with {@code force}, first forces the file: at open, a segment sealed in
   * BUFFERED mode may still sit unforced in the page cache after a process crash, and a later
   * {@code sync()} must cover it.
   */
  static Segment openSealed(Storage storage, int id, Path path, boolean force) throws IOException {
    try (Storage.File ch = storage.open(path, Storage.Mode.READ)) {
      long len = ch.size();
      if (len > Integer.MAX_VALUE) {
        throw new IOException("segment " + path + " is larger than 2 GiB");
      }
      if (force) {
        ch.force();
      }
      MappedByteBuffer m = ch.map(false, len);
      Segment s = new Segment(storage, id, path, m, (int) len, null, (int) len);
      s.forced = force;
      s.holdsDurable = true; // an earlier session's, or an output its run decides about itself
      return s;
    }
  }

  /**
   * Opens an existing segment for appending at {@code end}. The mapping covers {@code capacity}
   * bytes, which extends the file (sparse) to that length until {@link #seal} truncates it.
   */
  static Segment openActive(Storage storage, int id, Path path, int capacity, int end)
      throws IOException {
    return openActive(storage, id, path, capacity, end, false, false, 0, false);
  }

  /**
   * Creates a segment file holding only its header, {@code previous} naming the segment active
   * before it (see {@link RecordCodec}), and opens it for appending. With {@code replace} an
   * existing file (a newest segment whose header never reached the disk) is rewritten in place, so
   * that the file never disappears; otherwise the file must not exist.
   */
  static Segment create(
      Storage storage, int id, Path path, int capacity, int previous, boolean replace)
      throws IOException {
    return openActive(
        storage, id, path, capacity, RecordCodec.FILE_HEADER, true, replace, previous, false);
  }

  /**
   * Like {@link #create}, for a segment whose records will be stored through the mapping: its file
   * is first allocated with zeros up to the first {@link #CHUNK} (or its capacity), in one {@code
   * writev(2)}.
   */
  static Segment createAllocated(Storage storage, int id, Path path, int capacity, int previous)
      throws IOException {
    return openActive(
        storage, id, path, capacity, RecordCodec.FILE_HEADER, true, false, previous, true);
  }

  /**
   * Writes a new segment file's start: with {@code allocateFirstChunk}, the first chunk in one
   * {@code write(2)} (the page cache gives it one folio only if one write covers it), then the
   * header over its start. A crash between leaves a newest segment with an all-zero header, which
   * recovery recreates (see Recovery).
   *
   * @return the bytes allocated: the first chunk (or the capacity), or 0
   */
  private static int writeStart(
      Storage.File raf, int id, int capacity, int previous, boolean allocateFirstChunk)
      throws IOException {
    int allocatedTo = 0;
    if (allocateFirstChunk) {
      allocatedTo = Math.min(capacity, CHUNK);
      writeZeros(raf, 0, allocatedTo);
      raf.seek(0);
    }
    byte[] header = RecordCodec.segmentHeader(id, previous, false).array();
    raf.write(header, 0, header.length);
    return allocatedTo;
  }

  /** The temporary name of segment {@code id}'s file while it is {@link #prepare prepared}. */
  static Path preparedPath(Path dir, int id) {
    return dir.resolve(fileName(id) + ".tmp");
  }

  /**
   * Makes the file of a future active segment ahead of its roll, as {@link #createAllocated} would
   * (its first {@link #CHUNK} of zeros in one {@code writev(2)}, then its header), under a
   * temporary name ({@link #preparedPath}) that an open deletes; the roll renames it and {@link
   * #openPrepared opens} it. The {@link Sealer} calls this, so that a roll does not write the chunk
   * on the writer's path under the writer lock. Nothing is left behind if it fails.
   */
  static void prepare(Storage storage, Path tmp, int id, int capacity, int previous)
      throws IOException {
    storage.deleteIfExists(tmp); // an earlier one that was never taken
    Storage.File raf = storage.open(tmp, Storage.Mode.CREATE_NEW);
    try {
      try {
        writeStart(raf, id, capacity, previous, true);
      } finally {
        raf.close();
      }
    } catch (IOException | RuntimeException e) {
      try {
        storage.deleteIfExists(tmp);
      } catch (IOException x) {
        e.addSuppressed(x);
      }
      throw e;
    }
  }

  /**
   * Opens a {@link #prepare prepared} file, renamed to its segment name, as the new active segment:
   * like {@link #createAllocated}, its header written and its first chunk allocated.
   */
  static Segment openPrepared(Storage storage, int id, Path path, int capacity) throws IOException {
    Storage.File raf = storage.open(path, Storage.Mode.READ_WRITE);
    try {
      MappedByteBuffer m = raf.map(true, capacity);
      Segment s = new Segment(storage, id, path, m, capacity, raf, RecordCodec.FILE_HEADER);
      s.allocated = Math.min(capacity, CHUNK);
      return s;
    } catch (IOException | RuntimeException e) {
      raf.close();
      throw e;
    }
  }

  private static Segment openActive(
      Storage storage,
      int id,
      Path path,
      int capacity,
      int end,
      boolean create,
      boolean replace,
      int previous,
      boolean allocateFirstChunk)
      throws IOException {
    if (create && !replace && storage.exists(path)) {
      throw new IOException("segment file " + path + " already exists");
    }
    Storage.File raf = storage.open(path, Storage.Mode.READ_WRITE);
    int allocatedTo = 0;
    try {
      if (create) {
        if (replace) {
          raf.truncate(0);
        }
        // A new file is empty already. Truncating it anyway (even from 0 to 0) makes ext4 start
        // write-back of all its dirty pages when the descriptor is closed (its auto_da_alloc
        // heuristic for files rewritten from scratch), i.e. at every seal: every segment went to
        // the disk at once, as if forced, and each page dirtied through the mapping had to be
        // write-protected and shot out of every core's TLB for it, even when compaction deleted
        // the segment a moment later.
        allocatedTo = writeStart(raf, id, capacity, previous, allocateFirstChunk);
        end = RecordCodec.FILE_HEADER;
      }
      MappedByteBuffer m = raf.map(true, capacity);
      Segment s = new Segment(storage, id, path, m, capacity, raf, end);
      s.allocated = Math.max(end, allocatedTo);
      s.holdsDurable = !create; // recovered at open: its records are an earlier session's
      return s;
    } catch (IOException | RuntimeException e) {
      raf.close();
      if (create && !replace) {
        // A new file that never got its header holds no record, but it may hold most of a chunk
        // of zeros: on a full disk (the usual cause) that is the room the user needs to recover.
        try {
          storage.deleteIfExists(path);
        } catch (IOException x) {
          e.addSuppressed(x);
        }
      }
      throw e;
    }
  }

  /**
   * Stages {@code len} bytes of {@code src} to be written at {@code position} (writer only). Bytes
   * staged since the last {@link #flush} must be contiguous; a write elsewhere flushes them first.
   * Nothing reaches the file before {@link #flush}: the writer flushes before it raises {@link
   * #end}.
   */
  void put(int position, byte[] src, int off, int len) throws IOException {
    if ((long) position + len > capacity) {
      throw new IllegalStateException("write past the capacity of " + path);
    }
    writes.put(this, position, src, off, len);
  }

  /** {@link #put} in BUFFERED: stores through the mapping, allocating the file first if needed. */
  void storeMapped(int position, byte[] src, int off, int len) throws IOException {
    if (position + len > allocated) {
      allocate(position + len);
    }
    map.put(position, src, off, len);
  }

  /** {@link #put} in SYNC: stages the bytes for one {@code write(2)} at the next {@link #flush}. */
  void stageWrite(int position, byte[] src, int off, int len) throws IOException {
    if (staged > 0 && (position != stagePosition + staged || staged + len > STAGE)) {
      flush();
    }
    if (len > STAGE) {
      write(position, src, off, len);
      return;
    }
    if (staged == 0) {
      stagePosition = position;
      if (stage == null) {
        stage = new byte[STAGE];
      }
    }
    System.arraycopy(src, off, stage, staged, len);
    staged += len;
  }

  /**
   * From now on {@link #put} writes as {@code policy} says (see the class comment). Writer only,
   * before its first put.
   */
  void writeWith(WritePolicy policy) {
    writes = policy;
  }

  /**
   * Allocates the file up to at least {@code limit} by writing zeros past the data (to the end of
   * its {@link #CHUNK}; the {@link Sealer} allocates further ahead, {@link #allocateAhead}), so
   * that stores through the mapping below it never meet a hole. Writer only, when the sealer fell
   * behind. A full disk fails here with an {@link IOException}, before anything is stored.
   */
  private void allocate(int limit) throws IOException {
    synchronized (mapLock) {
      if (limit > allocated) {
        extend(limit, chunkEnd(limit), false);
      }
    }
  }

  /** {@code offset} rounded up to a {@link #CHUNK} boundary, at most the capacity. */
  private int chunkEnd(long offset) {
    return (int) Math.min(capacity, (offset + CHUNK - 1) & -CHUNK);
  }

  /** File bytes allocated for stores through the mapping (BUFFERED); for tests and figures. */
  int allocatedEnd() {
    return allocated;
  }

  /**
   * Whether the {@link Sealer} should {@link #allocateAhead}: under half a step is left, and the
   * file is open (a parked one is allocated by the writer, which opens it, when it needs the room).
   */
  boolean allocationDue() {
    int a = allocated;
    return writes.allocatesAhead() && a - end < ALLOCATION_STEP / 2 && a < capacity && !parked;
  }

  /**
   * Allocates the file up to {@link #ALLOCATION_STEP} past the data and stores a zero into each new
   * page through the mapping (the sealer thread calls this): the writer's stores then meet neither
   * a system call nor a page fault. A failure (disk full) is left for the writer to meet when it
   * needs the space.
   */
  void allocateAhead() {
    synchronized (mapLock) {
      int target = chunkEnd((long) end + ALLOCATION_STEP);
      if (phase != SegmentPhase.ACTIVE
          || parked
          || target <= allocated) { // parked: the writer allocates
        return;
      }
      try {
        extend(target, target, true);
      } catch (IOException e) {
        // The writer allocates what it needs itself, and fails the store if it cannot.
      }
    }
  }

  /**
   * Writes zeros from {@link #allocated} to {@code want}, or only to {@code need} if that fails;
   * with {@code touch}, then stores a zero into each new page. Caller holds {@link #mapLock}.
   */
  private void extend(int need, int want, boolean touch) throws IOException {
    int from = allocated;
    int to = want;
    try {
      writeZeros(from, to);
    } catch (IOException e) {
      if (to == need) {
        throw e;
      }
      writeZeros(from, need);
      to = need;
    }
    if (touch) {
      // A write fault per page here instead of in the writer's store. Zeros over zeros: nothing
      // below the allocated end is read, and the writer stores only below it.
      for (int p = (from + 4095) & -4096; p < to; p += 4096) {
        map.put(p, (byte) 0);
      }
    }
    allocated = to;
  }

  /** Writes zeros over {@code [from, to)}, one {@code writev(2)} per {@link #CHUNK} it touches. */
  private void writeZeros(int from, int to) throws IOException {
    Storage.File f = openFile();
    if (f == null) {
      throw new IOException("segment " + path + " is sealed");
    }
    filePointer = -1; // unknown if the write fails part way
    for (int p = from; p < to; ) {
      int next = (int) Math.min(to, ((long) p & -CHUNK) + CHUNK);
      writeZeros(f, p, next - p);
      p = next;
    }
    filePointer = to;
  }

  /**
   * Writes {@code len} zeros at {@code position} in one {@code writev(2)} (repeated only if the
   * kernel writes less), leaving the file offset after them: a single call, so the page cache can
   * give the range one folio (see {@link #CHUNK}).
   */
  private static void writeZeros(Storage.File ch, long position, int len) throws IOException {
    int block = ZERO_BLOCK.capacity();
    ByteBuffer[] srcs = new ByteBuffer[(len + block - 1) / block];
    for (int i = 0; i < srcs.length; i++) {
      srcs[i] = ZERO_BLOCK.duplicate().limit(Math.min(block, len - i * block));
    }
    ch.seek(position);
    ch.write(srcs);
  }

  /** Writes the staged bytes to the file with one {@code write(2)} (writer only). */
  void flush() throws IOException {
    int n = staged;
    if (n == 0) {
      return;
    }
    staged = 0; // dropped if the write fails: the store fails and writes nothing more
    write(stagePosition, stage, 0, n);
  }

  private void write(long position, byte[] src, int off, int len) throws IOException {
    Storage.File f = file;
    if (f == null) {
      f = openFile();
    }
    if (f == null) {
      throw new IOException("segment " + path + " is sealed");
    }
    if (filePointer != position) { // appends are sequential: usually no lseek(2) needed
      f.seek(position);
    }
    filePointer = -1; // unknown if the write fails part way
    f.write(src, off, len);
    filePointer = position + len;
  }

  /**
   * Forces written data to the device; a {@link #park parked} segment's through a descriptor of its
   * own.
   *
   * @return false if the segment was sealed or opened again meanwhile (sealing forced it; after the
   *     reopen the next leader forces)
   */
  boolean force() throws IOException {
    Storage.File f = file;
    if (f == null) {
      return parked && forceByPath();
    }
    try {
      holdsDurable = true;
      f.force();
      return true;
    } catch (IOException e) {
      if (phase != SegmentPhase.ACTIVE) {
        return false;
      }
      throw e;
    }
  }

  /**
   * Forces the file through a descriptor of its own (a force covers the file, whichever descriptor
   * wrote it): for a parked active segment.
   */
  private boolean forceByPath() throws IOException {
    holdsDurable = true;
    try (Storage.File ch = storage.open(path, Storage.Mode.READ)) {
      ch.force();
    }
    return true;
  }

  /**
   * Closes the active segment's descriptor, to bound the descriptors of a store with many
   * keyspaces; the next call that needs the file (a write, an allocation, the seal, the close, a
   * force) opens it again through the {@link Storage}. Nothing is forced: whatever was written is
   * in the page cache, which a closed descriptor does not drop, and a later force of the file (a
   * SYNC write's group commit, a {@code sync()}) covers it through whichever descriptor it uses.
   * The mapping stays valid (see {@link Storage.File#map}): readers and BUFFERED stores below the
   * allocated end go on without the file. Caller holds the writer lock, so no write is half done,
   * and no force runs ({@link GroupCommit#parkUnlessForcing}): it would use the closed descriptor.
   *
   * @return whether the descriptor was closed (false: not active, or parked already)
   */
  synchronized boolean park() throws IOException {
    synchronized (mapLock) {
      Storage.File f = file;
      if (f == null || phase != SegmentPhase.ACTIVE || staged > 0) {
        return false;
      }
      file = null;
      parked = true;
      filePointer = -1;
      f.close();
      return true;
    }
  }

  /**
   * The file's descriptor: a parked segment's is opened again (read-write, through the {@link
   * Storage}); null once sealed or closed.
   */
  private Storage.File openFile() throws IOException {
    Storage.File f = file;
    if (f != null || !parked) {
      return f;
    }
    synchronized (mapLock) {
      f = file;
      if (f == null && parked) {
        f = storage.open(path, Storage.Mode.READ_WRITE);
        filePointer = -1;
        file = f;
        parked = false;
        reopened = true;
      }
      return f;
    }
  }

  /**
   * Whether the file was opened again since the last call. Writer only: every caller of {@link
   * #openFile} holds the writer lock (the sealer's allocation ahead skips a parked segment).
   */
  boolean takeReopened() {
    boolean r = reopened;
    reopened = false;
    return r;
  }

  /** Truncates the file to its data, forces it and closes the descriptor. */
  void seal() throws IOException {
    finish();
    forceAndClose();
  }

  /**
   * Ends writing: truncates the file to its data (dropping the sparse tail the mapping added) and
   * marks the segment sealed. The descriptor stays open for {@link #forceAndClose}.
   */
  synchronized void finish() throws IOException {
    Storage.File f = openFile();
    if (f == null || isSealed()) {
      return;
    }
    staged = 0; // the writer flushes before it raises end: anything staged is not data
    stage = null;
    synchronized (mapLock) {
      f.truncate(end);
      filePointer = -1;
      allocated = end;
      move(SegmentPhase.SEALED);
    }
  }

  /** Forces a {@link #finish finished} segment and closes its descriptor. */
  synchronized void forceAndClose() throws IOException {
    Storage.File f = file;
    if (f == null) {
      return;
    }
    holdsDurable = true;
    f.force();
    forced = true;
    file = null;
    f.close();
  }

  /**
   * Closes a {@link #finish finished} segment's descriptor without forcing it (BUFFERED): it is
   * forced later, by {@link #forceSealed}.
   */
  synchronized void closeUnforced() throws IOException {
    Storage.File f = file;
    if (f == null) {
      return;
    }
    file = null;
    f.close();
  }

  /**
   * Forces a sealed segment that was closed unforced, by its path.
   *
   * @return false if its file is gone (compacted away meanwhile)
   */
  boolean forceSealed() throws IOException {
    holdsDurable = true;
    try (Storage.File ch = storage.open(path, Storage.Mode.READ)) {
      ch.force();
    } catch (java.nio.file.NoSuchFileException e) {
      return false;
    }
    forced = true;
    return true;
  }

  /** Cuts the file to {@code length} (after recovery found a torn tail there). */
  synchronized void truncateTo(int length) throws IOException {
    synchronized (mapLock) {
      openFile().truncate(length);
      filePointer = -1;
      end = length;
      allocated = length;
    }
  }

  /** Closes without forcing: truncates to the data so the file holds no preallocated tail. */
  synchronized void closeFile() throws IOException {
    Storage.File f = openFile(); // a parked file too: its sparse tail is cut
    if (f == null) {
      return;
    }
    synchronized (mapLock) {
      moveIf(
          SegmentPhase.ACTIVE,
          SegmentPhase.CLOSED); // no allocation ahead from now on: the caller may unmap
      file = null;
      try {
        f.truncate(end);
      } finally {
        f.close();
      }
    }
  }

  /** Bytes of superseded records and batch headers. Caller holds the store's write lock. */
  long deadBytes() {
    return Math.max(0, end - RecordCodec.FILE_HEADER - liveBytes - tombstoneBytes);
  }

  @Override
  public String toString() {
    return path.toString();
  }
}
