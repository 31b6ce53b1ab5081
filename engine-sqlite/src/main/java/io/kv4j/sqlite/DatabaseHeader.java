package io.kv4j.sqlite;

import io.kv4j.StoreCorruptedException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The fields of an SQLite database file's 100-byte header that kv4j checks before SQLite opens the
 * file, so that a file cut short is reported at open (naming the file and the size it should have)
 * instead of as "database disk image is malformed" on some later read, or not at all.
 *
 * <p>Fields read (SQLite file format, all integers big-endian):
 *
 * <table>
 *   <caption>header fields kv4j reads</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>16</td><td>magic: {@code "SQLite format 3\0"}</td></tr>
 *   <tr><td>16</td><td>2</td><td>page size in bytes, a power of two 512 … 32768; 1 means
 *       65536</td></tr>
 *   <tr><td>24</td><td>4</td><td>file change counter</td></tr>
 *   <tr><td>28</td><td>4</td><td>in-header database size, in pages</td></tr>
 *   <tr><td>92</td><td>4</td><td>version-valid-for: the change counter when the in-header size
 *       was last written</td></tr>
 * </table>
 *
 * <p>The in-header size is trusted only when it is non-zero and the counters at 24 and 92 are equal
 * (SQLite's own rule: files written by SQLite before 3.7.0 may leave it stale). SQLite extends and
 * truncates the file to that size whenever a checkpoint completes, so with no WAL and no rollback
 * journal holding pages, a file shorter than {@code size × page size} was cut short. With a
 * non-empty {@code -wal} or {@code -journal} the pages may still live there (a crash during a
 * checkpoint), so the size is not checked; SQLite's recovery and {@code integrity_check} judge that
 * case.
 */
final class DatabaseHeader {
  /** Bytes of the header. */
  static final int LENGTH = 100;

  private static final byte[] MAGIC = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);

  private DatabaseHeader() {}

  /**
   * Checks a database file's header and, when nothing else may hold its pages, its length.
   *
   * @param file the database file
   * @param pagesElsewhere whether a non-empty WAL or rollback journal exists beside it
   * @param where the store, for messages
   * @throws StoreCorruptedException if the file is empty, shorter than a header, not an SQLite
   *     file, has an invalid page size, or is shorter than its header says
   * @throws IOException if the file cannot be read
   */
  static void check(Path file, boolean pagesElsewhere, String where) throws IOException {
    long size = Files.size(file);
    byte[] h = new byte[LENGTH];
    int n;
    try (InputStream in = Files.newInputStream(file)) {
      n = in.readNBytes(h, 0, LENGTH);
    }
    if (n == 0) {
      throw new StoreCorruptedException(
          where
              + ": the database file "
              + file
              + " is empty (0 bytes); a store's file is never empty once created (restore it, or"
              + " delete the directory to start afresh)",
          file,
          0);
    }
    if (!Arrays.equals(h, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
      throw new StoreCorruptedException(
          where + ": " + file + " is not an SQLite database (no 'SQLite format 3' header)",
          file,
          0);
    }
    if (n < LENGTH) {
      throw new StoreCorruptedException(
          where
              + ": the database file "
              + file
              + " is cut short: "
              + size
              + " bytes, shorter than SQLite's 100-byte header",
          file,
          size);
    }
    ByteBuffer b = ByteBuffer.wrap(h);
    int rawPageSize = Short.toUnsignedInt(b.getShort(16));
    int pageSize = rawPageSize == 1 ? 65536 : rawPageSize;
    if (pageSize < 512 || Integer.bitCount(pageSize) != 1) {
      throw new StoreCorruptedException(
          where
              + ": the database file "
              + file
              + " has an invalid page size "
              + rawPageSize
              + " in its header (offset 16)",
          file,
          16);
    }
    long pages = Integer.toUnsignedLong(b.getInt(28));
    boolean sizeValid = pages != 0 && b.getInt(24) == b.getInt(92);
    long expected = pages * pageSize;
    if (sizeValid && !pagesElsewhere && size < expected) {
      throw new StoreCorruptedException(
          where
              + ": the database file "
              + file
              + " is cut short: "
              + size
              + " bytes, but its header (offset 28) records "
              + pages
              + " pages of "
              + pageSize
              + " bytes = "
              + expected
              + " bytes, and no WAL or journal holds the rest",
          file,
          size);
    }
  }
}
