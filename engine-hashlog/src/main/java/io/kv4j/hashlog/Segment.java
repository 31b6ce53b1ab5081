package io.kv4j.hashlog;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One log file, {@code seg-<id>.log}, and its memory mapping. Readers read records through the
 * mapping; the writer appends them with {@code write(2)}, one call per record (or per batch), and
 * never stores through the mapping. Both reach the same page cache, so an acknowledged write
 * survives kill -9 and is visible to readers once {@link #end} passes it.
 *
 * <p>Why not copy records into the mapping, which saves the system call: a page dirtied through a
 * shared mapping has a writable, dirty page-table entry, and writing the page back (a {@link
 * #flushBehind}, the seal's force, the kernel's own write-back) must write-protect that entry and
 * shoot it out of the TLB of every core running this process, one inter-processor interrupt per 4
 * KiB page. Under a sustained writer that was a third of the machine's CPU on a 2-core VM, and the
 * interrupts and lost TLB entries tripled the cost of every concurrent read (bench {@code
 * churn-reads}: readers kept 0.27 of their read-only throughput; with {@code write(2)} 0.5). Pages
 * only ever read through the mapping keep clean read-only entries, which write-back leaves alone. A
 * full disk now fails the {@code write(2)} with an {@link IOException}; a store into a sparse
 * mapping would have raised SIGBUS.
 *
 * <p>The active segment is still mapped read-write over its whole capacity: that extends the file
 * sparsely to the mapping's length (readers never read past {@link #end}), and lets {@link
 * #flushBehind} force a range with {@code msync(2)}. Forces and sealing go through a {@link
 * RandomAccessFile}, whose I/O, unlike a {@link FileChannel}'s, is not aborted (and the descriptor
 * not closed) when the calling thread is interrupted. A sealed segment holds no file descriptor;
 * its mapping stays until the store closes, or until compaction has retired it and no reader can
 * use it.
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
  private volatile RandomAccessFile file;

  /** Bytes of valid data (header included); records are only read below it. */
  volatile int end;

  volatile boolean sealed;
  private volatile boolean closed;
  private long filePointer = -1; // the writer's view of the file offset, -1 when unknown
  // Writer-owned: bytes staged for one write(2), a record or a batch, starting at stagePosition.
  private byte[] stage;
  private int stagePosition;
  private int staged;
  private static final int STAGE = 64 << 10;
  private volatile int flushed; // data below this was forced by flushBehind (BUFFERED mode)
  private final Object mapLock = new Object(); // flushBehind vs closing before an unmap
  // Guarded by the store's write lock.
  long liveBytes;
  long tombstoneBytes;

  /**
   * Sealed and forced, but its hint is still queued for the {@link Sealer} (guarded by the store's
   * write lock): not a compaction victim yet.
   */
  boolean sealing;

  /** Finished and forced to disk (set once the force of a finished segment returned). */
  volatile boolean forced;

  /** Its directory entry may not be durable yet (a new active segment in BUFFERED mode). */
  volatile boolean directoryPending;

  /**
   * Hint entries of every record written since the segment was created, or null when they are not
   * known (a segment recovered at open): sealing then reads them back from the records.
   */
  HintFile.Entries hintEntries;

  /** Claimed by a running compaction (guarded by the store's write lock). */
  boolean compacting;

  /** Compaction found a bad record here: never chosen again (guarded by the write lock). */
  boolean unreadable;

  /**
   * Committed as compacted away in the manifest (guarded by the store's manifest lock): no longer
   * listed as live; its file is deleted or about to be.
   */
  volatile boolean dropped;

  /**
   * Compacted away: its file is deleted (or about to be) and no index entry points here any more,
   * but the mapping stays installed until no reader or cursor can still hold one of its locations.
   */
  volatile boolean retired;

  /**
   * Retired and its file deleted by the compaction run that retired it. Until then the file is
   * still on disk, and the compaction throttle counts all of it as garbage.
   */
  volatile boolean deleted;

  private Segment(
      int id, Path path, MappedByteBuffer map, int capacity, RandomAccessFile file, int end) {
    this.id = id;
    this.path = path;
    this.map = map;
    this.capacity = capacity;
    this.file = file;
    this.end = end;
    this.sealed = file == null;
  }

  static String fileName(int id) {
    return String.format("seg-%08x.log", id);
  }

  static String hintName(int id) {
    return String.format("seg-%08x.hint", id);
  }

  /** Maps a sealed segment read-only at its file length; closes the descriptor at once. */
  static Segment openSealed(int id, Path path) throws IOException {
    return openSealed(id, path, false);
  }

  /**
   * Maps a sealed segment; with {@code force}, first forces the file: at open, a segment sealed in
   * BUFFERED mode may still sit unforced in the page cache after a process crash, and a later
   * {@code sync()} must cover it.
   */
  static Segment openSealed(int id, Path path, boolean force) throws IOException {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      long len = ch.size();
      if (len > Integer.MAX_VALUE) {
        throw new IOException("segment " + path + " is larger than 2 GiB");
      }
      if (force) {
        ch.force(false);
      }
      MappedByteBuffer m = Mappings.map(ch, FileChannel.MapMode.READ_ONLY, len);
      Segment s = new Segment(id, path, m, (int) len, null, (int) len);
      s.forced = force;
      return s;
    }
  }

  /**
   * Opens an existing segment for appending at {@code end}. The mapping covers {@code capacity}
   * bytes, which extends the file (sparse) to that length until {@link #seal} truncates it.
   */
  static Segment openActive(int id, Path path, int capacity, int end) throws IOException {
    return openActive(id, path, capacity, end, false, false, 0);
  }

  /**
   * Creates a segment file holding only its header, {@code previous} naming the segment active
   * before it (see {@link RecordCodec}), and opens it for appending. With {@code replace} an
   * existing file (a newest segment whose header never reached the disk) is rewritten in place, so
   * that the file never disappears; otherwise the file must not exist.
   */
  static Segment create(int id, Path path, int capacity, int previous, boolean replace)
      throws IOException {
    return openActive(id, path, capacity, RecordCodec.FILE_HEADER, true, replace, previous);
  }

  private static Segment openActive(
      int id, Path path, int capacity, int end, boolean create, boolean replace, int previous)
      throws IOException {
    if (create && !replace && path.toFile().exists()) {
      throw new IOException("segment file " + path + " already exists");
    }
    RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw");
    try {
      if (create) {
        raf.setLength(0);
        raf.write(RecordCodec.segmentHeader(id, previous, false).array());
        end = RecordCodec.FILE_HEADER;
      }
      MappedByteBuffer m = Mappings.map(raf.getChannel(), FileChannel.MapMode.READ_WRITE, capacity);
      return new Segment(id, path, m, capacity, raf, end);
    } catch (IOException | RuntimeException e) {
      raf.close();
      throw e;
    }
  }

  /** Whether at least {@code step} bytes were written since the last {@link #flushBehind}. */
  boolean flushDue(int step) {
    return end - flushed >= step && !sealed;
  }

  /**
   * Forces the whole pages written so far, off the writer's path (the sealer thread calls this in
   * BUFFERED mode), so that the force at seal, which the writer does, has at most the last step
   * left to write.
   */
  void flushBehind() {
    synchronized (mapLock) {
      // Whole pages only: the page the writer is filling would be under write-back, and the
      // writer's next store into it would wait for that I/O (stable pages) under its lock.
      int upTo = end & -4096;
      if (closed || sealed || upTo <= flushed) {
        return;
      }
      map.force(flushed, upTo - flushed);
      flushed = upTo;
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
    RandomAccessFile f = file;
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
   * Forces written data to the device.
   *
   * @return false if the segment was sealed meanwhile (sealing forced it)
   */
  boolean force() throws IOException {
    RandomAccessFile f = file;
    if (f == null) {
      return false;
    }
    try {
      f.getFD().sync();
      return true;
    } catch (IOException e) {
      if (sealed || closed) {
        return false;
      }
      throw e;
    }
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
    RandomAccessFile f = file;
    if (f == null || sealed) {
      return;
    }
    staged = 0; // the writer flushes before it raises end: anything staged is not data
    stage = null;
    f.setLength(end);
    filePointer = -1;
    sealed = true;
  }

  /** Forces a {@link #finish finished} segment and closes its descriptor. */
  synchronized void forceAndClose() throws IOException {
    RandomAccessFile f = file;
    if (f == null) {
      return;
    }
    f.getFD().sync();
    forced = true;
    file = null;
    f.close();
  }

  /** Cuts the file to {@code length} (after recovery found a torn tail there). */
  synchronized void truncateTo(int length) throws IOException {
    file.setLength(length);
    filePointer = -1;
    end = length;
  }

  /** Closes without forcing: truncates to the data so the file holds no preallocated tail. */
  synchronized void closeFile() throws IOException {
    RandomAccessFile f = file;
    if (f == null) {
      return;
    }
    synchronized (mapLock) {
      closed = true; // no flushBehind from now on: the caller may unmap
    }
    file = null;
    try {
      f.setLength(end);
    } finally {
      f.close();
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
