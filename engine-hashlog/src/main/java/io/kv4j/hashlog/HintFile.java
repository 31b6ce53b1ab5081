package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The hint file of a sealed segment: the key, type, offset and value length of each of its put and
 * delete records, so that reopening rebuilds the index without reading values. Format in {@link
 * RecordCodec}. Written to a temporary file and renamed into place. A hint is never forced to disk:
 * it is only an accelerator, every hint is validated (header, described segment length, CRC) when
 * read, and one lost or damaged by a crash is rebuilt from its segment.
 */
final class HintFile {
  /** Receives hint entries in log order. */
  interface Visitor {
    void entry(int type, int offset, int keyLength, int valueLength, byte[] key);
  }

  private HintFile() {}

  static Path path(Path dir, int segmentId) {
    return dir.resolve(Segment.hintName(segmentId));
  }

  /** Bytes of a segment's hint file on disk, 0 if it has none (not written yet, or removed). */
  static long bytesOnDisk(Path dir, int segmentId) {
    try {
      return Files.size(path(dir, segmentId));
    } catch (IOException e) {
      return 0;
    }
  }

  /**
   * Hint entries gathered while a segment is written (by the writer, or by compaction for its
   * output), so that sealing writes the hint without reading every record header back from the
   * segment. Not thread-safe: one writer.
   */
  static final class Entries {
    // Filled in chunks that are never copied: growing one array by doubling copied up to a few
    // hundred KiB per segment, under the writer lock.
    private static final int CHUNK = 64 << 10;
    private byte[][] chunks = new byte[4][];
    private int[] used = new int[4];
    private int last = -1; // index of the chunk being filled
    private int count;

    /** Appends the entry of a put or delete record. */
    void add(int type, int offset, byte[] key, int keyOffset, int keyLength, int valueLength) {
      int at = append(type, offset, keyLength, valueLength);
      System.arraycopy(key, keyOffset, chunks[last], at, keyLength);
    }

    /** Appends the entry of the put or delete record at {@code offset} of a segment mapping. */
    void add(ByteBuffer segment, int offset) {
      int k = RecordCodec.keyLength(segment, offset);
      int at =
          append(
              RecordCodec.type(segment, offset),
              offset,
              k,
              RecordCodec.valueLength(segment, offset));
      segment.get(RecordCodec.keyOffset(offset), chunks[last], at, k);
    }

    /** Writes an entry's header; returns where its key goes in the current chunk. */
    private int append(int type, int offset, int keyLength, int valueLength) {
      int need = RecordCodec.HINT_ENTRY_HEADER + keyLength;
      if (last < 0 || used[last] + need > chunks[last].length) {
        if (++last == chunks.length) {
          chunks = java.util.Arrays.copyOf(chunks, last * 2);
          used = java.util.Arrays.copyOf(used, last * 2);
        }
        chunks[last] = new byte[Math.max(CHUNK, need)];
      }
      byte[] buf = chunks[last];
      int at = used[last];
      RecordCodec.putHintEntry(buf, at, type, offset, keyLength, valueLength);
      used[last] = at + need;
      count++;
      return at + RecordCodec.HINT_ENTRY_HEADER;
    }

    /** Bytes held, for memory figures. */
    long memoryBytes() {
      long n = 0;
      for (int i = 0; i <= last; i++) {
        n += chunks[i].length;
      }
      return n;
    }
  }

  /** Writes the hint of segment {@code seg} (ending at {@code end}) from gathered entries. */
  static void write(Storage storage, Path dir, int segmentId, int end, Entries e)
      throws IOException {
    CRC32C crc = new CRC32C();
    for (int i = 0; i <= e.last; i++) {
      crc.update(e.chunks[i], 0, e.used[i]);
    }
    Path tmp = dir.resolve(Segment.hintName(segmentId) + ".tmp");
    try (Storage.File ch = storage.open(tmp, Storage.Mode.CREATE_TRUNCATE)) {
      writeFully(ch, RecordCodec.fileHeader(RecordCodec.HINT_MAGIC, segmentId, e.count, end));
      for (int i = 0; i <= e.last; i++) {
        writeFully(ch, ByteBuffer.wrap(e.chunks[i], 0, e.used[i]));
      }
      writeFully(ch, ByteBuffer.allocate(4).putInt(0, (int) crc.getValue()));
    }
    storage.move(tmp, path(dir, segmentId));
  }

  /**
   * Writes the hint of a sealed segment whose records are all valid: from the entries gathered
   * while it was written if it has them, else by reading its record headers.
   */
  static void write(Storage storage, Path dir, Segment seg) throws IOException {
    Entries gathered = seg.hintEntries;
    if (gathered != null) {
      write(storage, dir, seg.id, seg.end, gathered);
      seg.hintEntries = null;
      return;
    }
    // Not gathered (a segment recovered at open): read the record headers back.
    ByteBuffer m = seg.map;
    Entries e = new Entries();
    for (int p = RecordCodec.FILE_HEADER; p < seg.end; p += (int) RecordCodec.size(m, p)) {
      if (RecordCodec.type(m, p) != RecordCodec.BATCH) {
        e.add(m, p);
      }
    }
    write(storage, dir, seg.id, seg.end, e);
  }

  private static void writeFully(Storage.File ch, ByteBuffer b) throws IOException {
    ch.write(b);
  }

  /**
   * Reads a hint and feeds its entries to {@code visitor}, but only if the whole hint is valid for
   * the segment: entries are checked before any is delivered.
   *
   * @return null on success, else why the hint was not used
   */
  static String read(Storage storage, Path dir, Segment seg, Visitor visitor) {
    Path p = path(dir, seg.id);
    ByteBuffer b;
    try (Storage.File ch = storage.open(p, Storage.Mode.READ)) {
      long size = ch.size();
      if (size > Integer.MAX_VALUE - 64) {
        return "hint file too large";
      }
      b = ByteBuffer.allocate((int) size);
      while (b.hasRemaining() && ch.read(b, b.position()) >= 0) {
        // keep reading
      }
      b.flip();
    } catch (NoSuchFileException e) {
      return "no hint file";
    } catch (IOException e) {
      return "cannot read hint file: " + e;
    }
    String bad = check(p, b, seg);
    if (bad != null) {
      return bad;
    }
    int count = RecordCodec.hintCount(b);
    int q = RecordCodec.FILE_HEADER;
    for (int i = 0; i < count; i++) {
      int k = RecordCodec.hintKeyLength(b, q);
      byte[] key = new byte[k];
      b.get(q + RecordCodec.HINT_ENTRY_HEADER, key);
      visitor.entry(
          RecordCodec.hintType(b, q),
          RecordCodec.hintOffset(b, q),
          k,
          RecordCodec.hintValueLength(b, q),
          key);
      q += RecordCodec.HINT_ENTRY_HEADER + k;
    }
    return null;
  }

  /**
   * Checks a hint read into {@code b} against its segment: header, described length, CRC, every
   * entry within the segment.
   *
   * @return null if the hint is usable, else why not
   * @throws StoreCorruptedException if a valid hint describes a longer segment than the file
   */
  private static String check(Path p, ByteBuffer b, Segment seg) {
    String bad = RecordCodec.checkFileHeader(b, RecordCodec.HINT_MAGIC, seg.id);
    if (bad != null) {
      return bad;
    }
    long described = RecordCodec.hintSegmentLength(b);
    boolean whole = b.limit() >= RecordCodec.FILE_HEADER + RecordCodec.HINT_TRAILER;
    if (described > seg.end && whole && RecordCodec.hintCrcMatches(b)) {
      // A hint is written only after its segment was sealed (truncated to its data and forced), and
      // its header is checksummed: a valid one describing more bytes proves the segment was cut.
      throw new StoreCorruptedException(
          "hashlog: segment "
              + seg.path
              + " is "
              + seg.end
              + " bytes, but its hint file "
              + p
              + " describes it sealed at "
              + described
              + " bytes: the segment was cut short after it was sealed",
          seg.path,
          seg.end);
    }
    if (described != seg.end) {
      return "hint describes " + described + " bytes, segment has " + seg.end;
    }
    if (!whole) {
      return "hint file truncated";
    }
    if (!RecordCodec.hintCrcMatches(b)) {
      return "hint checksum mismatch";
    }
    return checkEntries(b, seg.end);
  }

  /**
   * Checks a hint read into {@code b} on its own, against no segment file: its header (for segment
   * {@code segmentId}), its CRC, and every entry within the segment length it describes. For {@link
   * Salvage}, which reads every segment record by record whatever its hint says, and uses an intact
   * hint only to tell which records a damaged region of the segment held.
   *
   * @return null if the hint is intact, else what is wrong
   */
  static String checkAlone(ByteBuffer b, int segmentId) {
    String bad = RecordCodec.checkFileHeader(b, RecordCodec.HINT_MAGIC, segmentId);
    if (bad != null) {
      return bad;
    }
    if (b.limit() < RecordCodec.FILE_HEADER + RecordCodec.HINT_TRAILER) {
      return "hint file truncated";
    }
    if (!RecordCodec.hintCrcMatches(b)) {
      return "hint checksum mismatch";
    }
    return checkEntries(b, RecordCodec.hintSegmentLength(b));
  }

  /**
   * Structural check of every entry against a segment of {@code segmentEnd} bytes, before anything
   * is delivered.
   */
  private static String checkEntries(ByteBuffer b, long segmentEnd) {
    int count = RecordCodec.hintCount(b);
    int entriesEnd = b.limit() - RecordCodec.HINT_TRAILER;
    int q = RecordCodec.FILE_HEADER;
    for (int i = 0; i < count; i++) {
      if (q + RecordCodec.HINT_ENTRY_HEADER > entriesEnd) {
        return "hint entry " + i + " truncated";
      }
      int type = RecordCodec.hintType(b, q);
      int k = RecordCodec.hintKeyLength(b, q);
      int off = RecordCodec.hintOffset(b, q);
      long v = RecordCodec.hintValueLength(b, q) & 0xFFFFFFFFL;
      q += RecordCodec.HINT_ENTRY_HEADER + k;
      if (q > entriesEnd
          || off < RecordCodec.FILE_HEADER
          || off + RecordCodec.recordSize(k, 0) + v > segmentEnd
          || k < 1
          || k > RecordCodec.MAX_KEY
          || v > RecordCodec.MAX_VALUE
          || (type != RecordCodec.PUT && type != RecordCodec.DELETE)
          || (type == RecordCodec.DELETE && v != 0)) {
        return "hint entry " + i + " out of bounds";
      }
    }
    return q != entriesEnd ? "hint has trailing bytes" : null;
  }

  /**
   * The records the segments {@code load} of {@code dir} hold (the newest last), from their hints'
   * headers and the lengths of the segments (see {@link Opening#presize}); 0 if no hint header is
   * usable.
   */
  static long estimateEntries(Storage storage, Path dir, List<Integer> load) throws IOException {
    long entries = 0;
    long hintedBytes = 0;
    long unhintedBytes = 0;
    for (int i = 0; i < load.size(); i++) {
      int id = load.get(i);
      Path p = dir.resolve(Segment.fileName(id));
      long length;
      try {
        length = storage.size(p);
      } catch (IOException e) {
        throw Recovery.reading(p, e);
      }
      int count = i < load.size() - 1 ? hintedEntries(storage, dir, id, length) : -1;
      if (count >= 0) {
        entries += count;
        hintedBytes += length;
      } else {
        unhintedBytes += length;
      }
    }
    if (entries > 0 && unhintedBytes > 0) {
      entries += (long) (unhintedBytes * ((double) entries / hintedBytes));
    }
    return entries;
  }

  /**
   * The entry count of segment {@code id}'s hint if its header is valid and describes a segment of
   * {@code length} bytes with a plausible count, else -1.
   */
  private static int hintedEntries(Storage storage, Path dir, int id, long length) {
    ByteBuffer h;
    try {
      h = Recovery.readHeader(storage, path(dir, id));
    } catch (IOException e) {
      return -1; // missing or unreadable: only an estimate; the hint is checked when loaded
    }
    if (RecordCodec.checkFileHeader(h, RecordCodec.HINT_MAGIC, id) != null
        || RecordCodec.hintSegmentLength(h) != length) {
      return -1;
    }
    int count = RecordCodec.hintCount(h);
    long smallest = RecordCodec.recordSize(1, 0);
    return count >= 0 && count <= length / smallest ? count : -1;
  }
}
