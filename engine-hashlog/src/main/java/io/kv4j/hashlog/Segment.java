package io.kv4j.hashlog;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One log file, {@code seg-<id>.log}, and its read-only memory mapping. The active segment is also
 * open for writing: appends go through {@link FileChannel#write} (so an acknowledged write is in
 * the page cache and survives kill -9) while readers read the shared mapping, which covers the
 * segment's whole capacity. Appends and forces go through a {@link RandomAccessFile}, whose I/O,
 * unlike a {@link FileChannel}'s, is not aborted (and the descriptor not closed) when the calling
 * thread is interrupted. A sealed segment is read-only and holds no file descriptor; its mapping
 * stays until the store closes, or until compaction has retired it and no reader can use it.
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
  // Guarded by the store's write lock.
  long liveBytes;
  long tombstoneBytes;

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
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      long len = ch.size();
      if (len > Integer.MAX_VALUE) {
        throw new IOException("segment " + path + " is larger than 2 GiB");
      }
      MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY, 0, len);
      return new Segment(id, path, m, (int) len, null, (int) len);
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
      MappedByteBuffer m = raf.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, capacity);
      return new Segment(id, path, m, capacity, raf, end);
    } catch (IOException | RuntimeException e) {
      raf.close();
      throw e;
    }
  }

  /** Appends {@code len} bytes of {@code src} at {@code position}. Only the writer calls this. */
  void write(byte[] src, int off, int len, long position) throws IOException {
    RandomAccessFile f = file;
    if (filePointer != position) { // appends are sequential: usually no lseek(2) needed
      f.seek(position);
    }
    filePointer = -1;
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
    RandomAccessFile f = file;
    if (f == null) {
      return;
    }
    f.setLength(end);
    f.getFD().sync();
    sealed = true;
    file = null;
    f.close();
  }

  /** Cuts the file to {@code length} (after recovery found a torn tail there). */
  void truncateTo(int length) throws IOException {
    file.setLength(length);
    end = length;
  }

  /** Closes without forcing: truncates to the data so the file holds no preallocated tail. */
  void closeFile() throws IOException {
    RandomAccessFile f = file;
    if (f == null) {
      return;
    }
    closed = true;
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
