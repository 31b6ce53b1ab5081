package io.kv4j.hashlog;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * Every file operation a store makes on its own directory: creating, opening, mapping, writing,
 * forcing, truncating, renaming and deleting files, and forcing the directory. The store is given
 * one at open ({@link HashLogStore.Options#storage}); production passes {@link #NIO}, and tests
 * pass an implementation that records what was forced and can fail chosen calls or cut the power
 * (drop every byte written but not forced).
 *
 * <p>Reads of records go through the mappings this creates and do not pass through here: a get
 * makes no call. The reads of an open, of {@code verify()} and of salvage (listing the directory,
 * the manifest, segment headers and lengths, hints, mapping the segments) do. Implementations must
 * not allocate on the write path ({@link File#write} and {@link File#force}), which every put
 * takes.
 */
interface Storage {
  /** The file system itself, through {@code java.nio} and {@link java.io.RandomAccessFile}. */
  Storage NIO = new NioStorage();

  /** How {@link #open} opens a file. */
  enum Mode {
    /** An existing file, read only. */
    READ,
    /** Read and write; created if missing. */
    READ_WRITE,
    /** Write a new file; fails if it exists. */
    CREATE_NEW,
    /** Write; created if missing, emptied if not. */
    CREATE_TRUNCATE
  }

  /**
   * An open file. Writes go at the file offset (set by {@link #seek}, advanced by each write), as
   * with {@code write(2)}. Its I/O is not aborted when the calling thread is interrupted.
   */
  interface File extends Closeable {
    /** Sets the offset the next write starts at. */
    void seek(long position) throws IOException;

    /** Writes all of {@code src[off, off + len)} at the offset. */
    void write(byte[] src, int off, int len) throws IOException;

    /** Writes every remaining byte of {@code srcs} at the offset, in one call if it can. */
    void write(ByteBuffer... srcs) throws IOException;

    /** Reads into {@code dst} from {@code position}; -1 at the end of the file. */
    int read(ByteBuffer dst, long position) throws IOException;

    /** The file's length. */
    long size() throws IOException;

    /** Cuts or extends the file to {@code length}. */
    void truncate(long length) throws IOException;

    /** Forces the file's data (and its length) to the device. */
    void force() throws IOException;

    /**
     * Maps {@code size} bytes from offset 0 (read-write extends the file sparsely to that size).
     * The mapping stays valid after {@link #close}.
     */
    MappedByteBuffer map(boolean writable, long size) throws IOException;

    /** Forces {@code [from, from + len)} of a mapping of this file to the device. */
    void force(MappedByteBuffer map, int from, int len) throws IOException;
  }

  /** Opens {@code file}. */
  File open(Path file, Mode mode) throws IOException;

  /** Renames {@code from} over {@code to} atomically (durable once the directory is forced). */
  void move(Path from, Path to) throws IOException;

  /**
   * Deletes {@code file} (durable once the directory is forced).
   *
   * @return false if it did not exist
   */
  boolean deleteIfExists(Path file) throws IOException;

  /** Makes the directory's entries (files created, renamed or deleted in it) durable. */
  void forceDirectory(Path dir) throws IOException;

  /**
   * Replaces a small file atomically and durably: a temporary file beside it, forced, renamed over
   * it, then the directory forced.
   */
  void writeAtomically(Path file, byte[] content) throws IOException;

  /** The whole content of a file. */
  byte[] readAll(Path file) throws IOException;

  /** The length of a file. */
  long size(Path file) throws IOException;

  /** Whether the file or directory exists. */
  boolean exists(Path p);

  /** The entries of a directory (files and directories), in no particular order. */
  List<Path> list(Path dir) throws IOException;

  /** Creates a directory and any missing parents. */
  void createDirectories(Path dir) throws IOException;

  /** Makes {@code link} a hard link to {@code existing}. */
  void createLink(Path link, Path existing) throws IOException;

  /** Copies {@code from} to a new file {@code to}, without forcing it. */
  void copy(Path from, Path to) throws IOException;
}
