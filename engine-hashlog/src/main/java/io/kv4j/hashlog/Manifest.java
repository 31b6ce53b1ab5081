package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The store's list of live segments, {@value #FILE_NAME}: which segment files must exist, how long
 * each sealed one is, which segment was active, whether the store was closed cleanly, and which
 * compacted segments are dead. Written atomically (temporary file, {@code fsync}, rename, {@code
 * fsync} of the directory) when a read-write open finishes recovery ("not clean"), when a
 * compaction run commits (before it deletes its victims), and at a clean close ("clean", with the
 * active segment's final length). Rolls do not write it: each new segment's header names its
 * predecessor (see {@link RecordCodec}), which chains the segments written since.
 *
 * <p>What recovery concludes from it (see {@link Recovery#plan}): a listed segment that is missing,
 * or a sealed one whose length differs, is corruption; after a clean close the newest segment must
 * hold exactly its recorded length of valid records, so any bad record there is corruption rather
 * than a torn tail; segments not listed must be compaction outputs whose run never committed
 * (deleted: their victims are still listed) or newer segments whose predecessor chain reaches the
 * listed active segment; retired segments still present are deleted.
 *
 * <table>
 *   <caption>Manifest file (all integers big-endian)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic {@code 0x4B56484D} ("KVHM")</td></tr>
 *   <tr><td>4</td><td>2</td><td>version, 2 (the store format that introduced it)</td></tr>
 *   <tr><td>6</td><td>2</td><td>flags: bit 0 set when written by a clean close</td></tr>
 *   <tr><td>8</td><td>8</td><td>generation: one more than the manifest it replaced</td></tr>
 *   <tr><td>16</td><td>4</td><td>id of the active segment</td></tr>
 *   <tr><td>20</td><td>4</td><td>length of the active segment (clean close only; else 0)</td></tr>
 *   <tr><td>24</td><td>4</td><td>n, the number of sealed live segments</td></tr>
 *   <tr><td>28</td><td>4</td><td>r, the number of retired segment ids</td></tr>
 *   <tr><td>32</td><td>8n</td><td>per sealed live segment, ascending id: id (4), length (4)</td></tr>
 *   <tr><td>32+8n</td><td>4r</td><td>retired ids: compacted away, to be deleted if present</td></tr>
 *   <tr><td>32+8n+4r</td><td>4</td><td>CRC32C of every byte before it</td></tr>
 * </table>
 */
final class Manifest {
  static final String FILE_NAME = "hashlog.manifest";
  static final String TEMP_NAME = FILE_NAME + ".tmp";
  static final int MAGIC = 0x4B56484D;
  static final short VERSION = 2;
  private static final int HEADER = 32;
  private static final int FLAG_CLEAN = 1;

  /** The most segments a manifest may list, against absurd counts in a damaged file. */
  private static final int MAX_ENTRIES = 1 << 26;

  final boolean clean;
  final long generation;
  final int active;
  final int activeLength;
  final int[] liveIds;
  final int[] liveLengths;
  final int[] retired;

  Manifest(
      boolean clean,
      long generation,
      int active,
      int activeLength,
      int[] liveIds,
      int[] liveLengths,
      int[] retired) {
    this.clean = clean;
    this.generation = generation;
    this.active = active;
    this.activeLength = activeLength;
    this.liveIds = liveIds;
    this.liveLengths = liveLengths;
    this.retired = retired;
  }

  static Path path(Path dir) {
    return dir.resolve(FILE_NAME);
  }

  /**
   * Reads the manifest.
   *
   * @return the manifest, or null if there is none
   * @throws StoreCorruptedException if it is damaged
   */
  static Manifest read(Path dir) throws IOException {
    return read(Storage.NIO, dir);
  }

  /** Like {@link #read(Path)}, through {@code storage}. */
  static Manifest read(Storage storage, Path dir) throws IOException {
    Path p = path(dir);
    byte[] raw;
    try {
      raw = storage.readAll(p);
    } catch (NoSuchFileException e) {
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(raw);
    if (raw.length < HEADER + 4) {
      throw damaged(p, 0, "it is " + raw.length + " bytes, shorter than its header");
    }
    if (b.getInt(0) != MAGIC) {
      throw damaged(p, 0, String.format("bad magic number 0x%08X", b.getInt(0)));
    }
    CRC32C crc = new CRC32C();
    crc.update(raw, 0, raw.length - 4);
    if ((int) crc.getValue() != b.getInt(raw.length - 4)) {
      throw damaged(p, raw.length - 4, "checksum mismatch");
    }
    if (b.getShort(4) != VERSION) {
      throw damaged(p, 4, "unsupported manifest version " + b.getShort(4));
    }
    int n = b.getInt(24);
    int r = b.getInt(28);
    if (n < 0 || r < 0 || n > MAX_ENTRIES || r > MAX_ENTRIES) {
      throw damaged(p, 24, "entry counts " + n + " and " + r + " out of range");
    }
    if (raw.length != HEADER + 8L * n + 4L * r + 4) {
      throw damaged(p, 24, "length " + raw.length + " does not match its entry counts");
    }
    int[] ids = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = b.getInt(HEADER + 8 * i);
      lengths[i] = b.getInt(HEADER + 8 * i + 4);
      if (ids[i] <= 0 || lengths[i] < RecordCodec.FILE_HEADER || (i > 0 && ids[i] <= ids[i - 1])) {
        throw damaged(p, HEADER + 8L * i, "entry " + i + " is invalid");
      }
    }
    int[] ret = new int[r];
    for (int i = 0; i < r; i++) {
      ret[i] = b.getInt(HEADER + 8 * n + 4 * i);
    }
    int active = b.getInt(16);
    if (active <= 0) {
      throw damaged(p, 16, "active segment id " + active + " is invalid");
    }
    return new Manifest(
        (b.getShort(6) & FLAG_CLEAN) != 0, b.getLong(8), active, b.getInt(20), ids, lengths, ret);
  }

  private static StoreCorruptedException damaged(Path p, long offset, String why) {
    return new StoreCorruptedException(
        "hashlog: the segment manifest "
            + p
            + " is damaged ("
            + why
            + "); it lists the store's segments, so the store cannot be checked without it",
        p,
        offset);
  }

  /** Writes this manifest atomically: temporary file, fsync, rename, fsync of the directory. */
  void write(Path dir) throws IOException {
    write(Storage.NIO, dir);
  }

  /** Like {@link #write(Path)}, through {@code storage}. */
  void write(Storage storage, Path dir) throws IOException {
    int n = liveIds.length;
    int r = retired.length;
    ByteBuffer b = ByteBuffer.allocate(HEADER + 8 * n + 4 * r + 4);
    b.putInt(0, MAGIC);
    b.putShort(4, VERSION);
    b.putShort(6, (short) (clean ? FLAG_CLEAN : 0));
    b.putLong(8, generation);
    b.putInt(16, active);
    b.putInt(20, clean ? activeLength : 0);
    b.putInt(24, n);
    b.putInt(28, r);
    for (int i = 0; i < n; i++) {
      b.putInt(HEADER + 8 * i, liveIds[i]);
      b.putInt(HEADER + 8 * i + 4, liveLengths[i]);
    }
    for (int i = 0; i < r; i++) {
      b.putInt(HEADER + 8 * n + 4 * i, retired[i]);
    }
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, b.capacity() - 4);
    b.putInt(b.capacity() - 4, (int) crc.getValue());
    storage.writeAtomically(path(dir), b.array());
  }

  /** The recorded length of sealed segment {@code id}, or -1 if it is not listed as sealed. */
  int sealedLength(int id) {
    int i = java.util.Arrays.binarySearch(liveIds, id);
    return i < 0 ? -1 : liveLengths[i];
  }

  boolean isRetired(int id) {
    for (int r : retired) {
      if (r == id) {
        return true;
      }
    }
    return false;
  }
}
