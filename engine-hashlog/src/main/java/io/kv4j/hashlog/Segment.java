package io.kv4j.hashlog;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One log file, {@code seg-<id>.log}, and its memory mapping. The active segment is mapped
 * read-write over its whole capacity and the writer copies records straight into the mapping: a
 * shared mapping is the page cache, so an acknowledged write survives kill -9 without a system call
 * per write, and readers see it through the same mapping. The mapping extends the file sparsely; a
 * store into a hole on a full disk would raise SIGBUS, so the writer first {@link #reserve
 * reserves} the bytes it is about to fill by writing zeros there with {@code write(2)} in 1 MiB
 * steps: a full disk then fails that write with an {@link IOException} instead. Zero-filling,
 * forces and sealing go through a {@link RandomAccessFile}, whose I/O, unlike a {@link
 * FileChannel}'s, is not aborted (and the descriptor not closed) when the calling thread is
 * interrupted; {@code fsync(2)} also writes back pages dirtied through the mapping. A sealed
 * segment holds no file descriptor; its mapping stays until the store closes, or until compaction
 * has retired it and no reader can use it.
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
  // Bytes below this are backed by written blocks. Raised by the writer or, ahead of it, by the
  // sealer thread (see reserveAhead); changed only under this segment's monitor.
  private volatile int reserved;
  private volatile boolean finishing; // finish() is waiting: background zero-filling stops
  private volatile int flushed; // data below this was forced by flushBehind (BUFFERED mode)
  private final Object mapLock = new Object(); // flushBehind vs closing before an unmap
  private static final int RESERVE_STEP = 1 << 20;
  private static final byte[] ZEROS = new byte[64 << 10];
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
   * Compacted away: its file is deleted (or about to be) and no index entry points here any more,
   * but the mapping stays installed until no reader or cursor can still hold one of its locations.
   */
  volatile boolean retired;

  private Segment(
      int id, Path path, MappedByteBuffer map, int capacity, RandomAccessFile file, int end) {
    this.id = id;
    this.path = path;
    this.map = map;
    this.capacity = capacity;
    this.file = file;
    this.end = end;
    this.reserved = end;
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
   * Opens a segment for appending at {@code end}. The mapping covers {@code capacity} bytes, which
   * extends the file (sparse) to that length until {@link #seal} truncates it.
   */
  static Segment openActive(int id, Path path, int capacity, int end, boolean create)
      throws IOException {
    if (create && path.toFile().exists()) {
      throw new IOException("segment file " + path + " already exists");
    }
    RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw");
    try {
      if (create) {
        raf.setLength(0);
        raf.write(RecordCodec.fileHeader(RecordCodec.SEGMENT_MAGIC, id, 0, 0).array());
        end = RecordCodec.FILE_HEADER;
      }
      MappedByteBuffer m = Mappings.map(raf.getChannel(), FileChannel.MapMode.READ_WRITE, capacity);
      return new Segment(id, path, m, capacity, raf, end);
    } catch (IOException | RuntimeException e) {
      raf.close();
      throw e;
    }
  }

  /**
   * Makes sure the file's blocks below {@code upTo} are allocated, by writing zeros beyond the last
   * reserved byte (in steps of 1 MiB, never past the capacity). Usually the {@link Sealer} has done
   * it already ({@link #reserveAhead}), and this is one volatile read.
   */
  void reserve(long upTo) throws IOException {
    if (upTo <= reserved) {
      return;
    }
    if (upTo > capacity) {
      throw new IllegalStateException("write past the capacity of " + path);
    }
    synchronized (this) {
      zeroFill(Math.min(capacity, (upTo + RESERVE_STEP - 1) / RESERVE_STEP * RESERVE_STEP));
    }
  }

  /** Whether fewer than {@code bytes} reserved bytes remain ahead of the end (writer's hint). */
  boolean reserveLow(int bytes) {
    return reserved - end < bytes && reserved < capacity;
  }

  /**
   * Reserves up to {@code bytes} beyond the current end, off the writer's path (the sealer thread
   * calls this). Nothing once the segment is finished: a sealed file must end at its data.
   */
  void reserveAhead(int bytes) throws IOException {
    long target = Math.min(capacity, (long) end + bytes);
    // One 64 KiB write per monitor hold: finish() (a roll, under the writer lock) then waits for
    // at most one write(2), not for the whole fill; it also raises finishing to stop the loop.
    while (!finishing) {
      synchronized (this) {
        if (sealed || file == null || reserved >= target) {
          return;
        }
        zeroFill(Math.min(target, (long) reserved + ZEROS.length));
      }
    }
  }

  private void zeroFill(long target) throws IOException {
    if (target <= reserved) {
      return;
    }
    RandomAccessFile f = file;
    long pos = reserved;
    if (filePointer != pos) { // reservations are sequential: usually no lseek(2) needed
      f.seek(pos);
    }
    filePointer = -1;
    while (pos < target) {
      int n = (int) Math.min(ZEROS.length, target - pos);
      f.write(ZEROS, 0, n);
      pos += n;
      reserved = (int) pos;
    }
    filePointer = pos;
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

  /** Copies {@code len} bytes of {@code src} into the mapping at {@code position} (writer only). */
  void put(int position, byte[] src, int off, int len) throws IOException {
    reserve((long) position + len);
    map.put(position, src, off, len);
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
   * Ends writing: truncates the file to its data (dropping the zero-filled reserve) and marks the
   * segment sealed. The descriptor stays open for {@link #forceAndClose}.
   */
  void finish() throws IOException {
    finishing = true;
    synchronized (this) {
      finishLocked();
    }
  }

  private void finishLocked() throws IOException {
    RandomAccessFile f = file;
    if (f == null || sealed) {
      return;
    }
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
    reserved = length; // the mapping beyond the file's end must not be touched before reserve()
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
