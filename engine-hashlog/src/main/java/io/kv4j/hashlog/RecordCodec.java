package io.kv4j.hashlog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The on-disk format of segment and hint files. All integers are big-endian; lengths are unsigned.
 * Every file starts with a magic number and a format version so that a later version can read or
 * refuse it. The store-wide list of segments, {@code hashlog.manifest}, is described in {@link
 * Manifest}.
 *
 * <p><b>Format history.</b> Store format 1: segment headers of version 1, no manifest. Store format
 * 2 (the identity file's {@code format=2}): segment headers of version 2, which add the predecessor
 * id and the compaction-output flag, and a manifest. Both are read; format-1 stores get a manifest
 * at their first read-write open and version-2 headers in every segment written from then on. Hint
 * files are version 1 in both.
 *
 * <p><b>Segment file</b> {@code seg-<id as 8 hex digits>.log}: a 32-byte header, then records back
 * to back.
 *
 * <table>
 *   <caption>Segment header (32 bytes)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic {@code 0x4B56484C} ("KVHL")</td></tr>
 *   <tr><td>4</td><td>2</td><td>header version: 1 (store format 1) or 2</td></tr>
 *   <tr><td>6</td><td>2</td><td>flags: bit 0 set in a compaction output (version 2), else 0</td></tr>
 *   <tr><td>8</td><td>4</td><td>segment id (equal to the id in the file name)</td></tr>
 *   <tr><td>12</td><td>4</td><td>version 2: the predecessor, i.e. the id of the segment that was
 *       active when this one was created (0 for the first segment and for compaction outputs);
 *       version 1: 0</td></tr>
 *   <tr><td>16</td><td>12</td><td>reserved, 0</td></tr>
 *   <tr><td>28</td><td>4</td><td>CRC32C of bytes 0..27</td></tr>
 * </table>
 *
 * <p>The predecessor ids chain the segments written since the manifest was last written: recovery
 * after a crash checks that each one names the one before it, so a deleted segment in the middle is
 * found (see {@link Manifest}).
 *
 * <table>
 *   <caption>Record (12-byte header, then key, then value)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>CRC32C of every following byte of the record (header bytes 4..11,
 *       key, value)</td></tr>
 *   <tr><td>4</td><td>1</td><td>type: 1 put, 2 delete (tombstone), 3 batch</td></tr>
 *   <tr><td>5</td><td>3</td><td>key length k: 1..65536 for put and delete, 0 for batch</td></tr>
 *   <tr><td>8</td><td>4</td><td>value length v: 0..2^28 for put (0 is a legal, empty value), 0
 *       for delete, 12 for batch</td></tr>
 *   <tr><td>12</td><td>k</td><td>key</td></tr>
 *   <tr><td>12+k</td><td>v</td><td>value</td></tr>
 * </table>
 *
 * <p>A <b>batch</b> record carries a 12-byte value: the number of member records (4 bytes) and
 * their total length in bytes (8 bytes). The members, ordinary put and delete records, follow it
 * immediately. Recovery applies a batch only if every member is present and valid and the members
 * span exactly the announced length; otherwise the batch record is where the valid log ends. A
 * batch is never split across segments.
 *
 * <p><b>Hint file</b> {@code seg-<id>.hint}, written when a segment is sealed: the keys and record
 * locations of the segment, so reopening reads no values.
 *
 * <table>
 *   <caption>Hint header (32 bytes)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic {@code 0x4B564849} ("KVHI")</td></tr>
 *   <tr><td>4</td><td>2</td><td>format version, 1</td></tr>
 *   <tr><td>6</td><td>2</td><td>flags, 0</td></tr>
 *   <tr><td>8</td><td>4</td><td>segment id</td></tr>
 *   <tr><td>12</td><td>4</td><td>entry count</td></tr>
 *   <tr><td>16</td><td>8</td><td>segment file length the hint describes</td></tr>
 *   <tr><td>24</td><td>4</td><td>reserved, 0</td></tr>
 *   <tr><td>28</td><td>4</td><td>CRC32C of bytes 0..27</td></tr>
 * </table>
 *
 * <table>
 *   <caption>Hint entry (12 bytes, then the key), one per put or delete record, in log order;
 *   the file ends with a 4-byte CRC32C of all entry bytes</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>1</td><td>type: 1 put, 2 delete</td></tr>
 *   <tr><td>1</td><td>3</td><td>key length k</td></tr>
 *   <tr><td>4</td><td>4</td><td>record offset in the segment</td></tr>
 *   <tr><td>8</td><td>4</td><td>value length</td></tr>
 *   <tr><td>12</td><td>k</td><td>key</td></tr>
 * </table>
 *
 * <p>A hint whose header, entries or CRC is damaged, or that describes a shorter segment, is
 * ignored and rebuilt from the segment. A valid hint that describes a <i>longer</i> segment than
 * the file is proof that the segment was cut short after it was sealed: that is corruption.
 *
 * <p><b>Where the offsets live.</b> Every byte offset of these three layouts is a constant or an
 * accessor of this class; other classes read and write segment, record and hint bytes only through
 * them, so a change of the format starts (and mostly ends) here. The manifest, a separate file with
 * its own version, keeps its layout in {@link Manifest}.
 */
final class RecordCodec {
  private static final VarHandle INT_BE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  static final int SEGMENT_MAGIC = 0x4B56484C;
  static final int HINT_MAGIC = 0x4B564849;

  /** Header version of hint files, and of segments in store format 1. */
  static final short VERSION = 1;

  /** Header version of segments written in store format 2. */
  static final short SEGMENT_VERSION = 2;

  /** Segment header flag: the segment is a compaction output. */
  static final int FLAG_OUTPUT = 1;

  /** Bytes of a segment or hint file header; a segment's first record starts here. */
  static final int FILE_HEADER = 32;

  /** Bytes of a record header; the key starts this far into the record. */
  static final int RECORD_HEADER = 12;

  /** Bytes of a hint entry before its key. */
  static final int HINT_ENTRY_HEADER = 12;

  /** Bytes of the CRC32C that ends a hint file. */
  static final int HINT_TRAILER = 4;

  // File header fields (segment and hint).
  private static final int MAGIC_AT = 0;
  private static final int VERSION_AT = 4;
  private static final int FLAGS_AT = 6;
  private static final int ID_AT = 8;

  /** Segment header: the predecessor id; hint header: the entry count. */
  static final int PREVIOUS_AT = 12;

  private static final int COUNT_AT = 12;
  private static final int LENGTH_AT = 16;
  private static final int RESERVED_AT = 24;
  private static final int HEADER_CRC_AT = 28;

  // Record header fields.
  private static final int CRC_AT = 0;
  private static final int TYPE_AT = 4; // the type byte, then the 3-byte key length: one int
  private static final int VALUE_LENGTH_AT = 8;
  private static final int KEY_LENGTH_MASK = 0xFFFFFF;
  private static final int TYPE_SHIFT = 24;

  // Hint entry fields (type and key length share the first int, as in a record).
  private static final int HINT_TYPE_AT = 0;
  private static final int HINT_OFFSET_AT = 4;
  private static final int HINT_VALUE_LENGTH_AT = 8;

  // Batch record value fields, after the record header.
  private static final int BATCH_COUNT_AT = RECORD_HEADER;
  private static final int BATCH_BYTES_AT = RECORD_HEADER + 4;
  static final byte PUT = 1;
  static final byte DELETE = 2;
  static final byte BATCH = 3;
  static final int BATCH_VALUE = 12;
  static final int MAX_KEY = 64 << 10;
  static final int MAX_VALUE = 256 << 20;

  private RecordCodec() {}

  /** Bytes a record of this key and value length takes. */
  static long recordSize(int keyLen, int valueLen) {
    return (long) RECORD_HEADER + keyLen + valueLen;
  }

  /** A hint file header. */
  static ByteBuffer fileHeader(int magic, int segmentId, int count, long length) {
    return fileHeader(magic, VERSION, 0, segmentId, count, length);
  }

  /**
   * A version-2 segment header.
   *
   * @param previous the id of the segment active when this one is created; 0 for none
   * @param output whether the segment is a compaction output
   */
  static ByteBuffer segmentHeader(int segmentId, int previous, boolean output) {
    return fileHeader(
        SEGMENT_MAGIC, SEGMENT_VERSION, output ? FLAG_OUTPUT : 0, segmentId, previous, 0);
  }

  private static ByteBuffer fileHeader(
      int magic, short version, int flags, int segmentId, int count, long length) {
    ByteBuffer b = ByteBuffer.allocate(FILE_HEADER).order(ByteOrder.BIG_ENDIAN);
    b.putInt(MAGIC_AT, magic);
    b.putShort(VERSION_AT, version);
    b.putShort(FLAGS_AT, (short) flags);
    b.putInt(ID_AT, segmentId);
    b.putInt(COUNT_AT, count);
    b.putLong(LENGTH_AT, length);
    b.putInt(RESERVED_AT, 0);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, HEADER_CRC_AT);
    b.putInt(HEADER_CRC_AT, (int) crc.getValue());
    return b;
  }

  /**
   * Checks a file header read from {@code b} (absolute positions 0..31).
   *
   * @return null if valid, else what is wrong
   */
  static String checkFileHeader(ByteBuffer b, int magic, int segmentId) {
    return checkFileHeader(b, magic, segmentId, magic == SEGMENT_MAGIC ? SEGMENT_VERSION : VERSION);
  }

  /** Like {@link #checkFileHeader(ByteBuffer, int, int)}, accepting versions 1..{@code newest}. */
  static String checkFileHeader(ByteBuffer b, int magic, int segmentId, int newest) {
    if (b.limit() < FILE_HEADER) {
      return "file is shorter than its 32-byte header";
    }
    if (b.getInt(MAGIC_AT) != magic) {
      return String.format("bad magic number 0x%08X (expected 0x%08X)", b.getInt(MAGIC_AT), magic);
    }
    CRC32C crc = new CRC32C();
    crc.update(b.duplicate().position(0).limit(HEADER_CRC_AT));
    if ((int) crc.getValue() != b.getInt(HEADER_CRC_AT)) {
      return "header checksum mismatch";
    }
    if (b.getShort(VERSION_AT) < 1 || b.getShort(VERSION_AT) > newest) {
      return "unsupported format version "
          + b.getShort(VERSION_AT)
          + " (this build reads 1.."
          + newest
          + ")";
    }
    if (b.getInt(ID_AT) != segmentId) {
      return "header names segment " + b.getInt(ID_AT) + ", file name says " + segmentId;
    }
    return null;
  }

  /** Writes a record header (with CRC) for the key and value into dst at its position. */
  static void putRecord(ByteBuffer dst, byte type, byte[] key, byte[] value) {
    int start = dst.position();
    int valueLen = value == null ? 0 : value.length;
    int keyLen = key == null ? 0 : key.length;
    dst.putInt(0); // CRC_AT, filled in below
    dst.putInt((type << TYPE_SHIFT) | keyLen);
    dst.putInt(valueLen);
    if (key != null) {
      dst.put(key);
    }
    if (value != null) {
      dst.put(value);
    }
    CRC32C crc = new CRC32C();
    crc.update(dst.duplicate().position(start + TYPE_AT).limit(dst.position()));
    dst.putInt(start + CRC_AT, (int) crc.getValue());
  }

  /**
   * The 12 header bytes of a record, CRC included, computed from the key and value arrays so that
   * the writer does the checksum before it takes the write lock.
   */
  static byte[] header(byte type, byte[] key, byte[] value) {
    int k = key == null ? 0 : key.length;
    int v = value == null ? 0 : value.length;
    byte[] h = new byte[RECORD_HEADER];
    INT_BE.set(h, TYPE_AT, (type << TYPE_SHIFT) | k);
    INT_BE.set(h, VALUE_LENGTH_AT, v);
    CRC32C crc = new CRC32C();
    crc.update(h, TYPE_AT, RECORD_HEADER - TYPE_AT);
    if (k > 0) {
      crc.update(key, 0, k);
    }
    if (v > 0) {
      crc.update(value, 0, v);
    }
    INT_BE.set(h, CRC_AT, (int) crc.getValue());
    return h;
  }

  /** The predecessor id of a checked segment header, or -1 for a version-1 header. */
  static int previousSegment(ByteBuffer seg) {
    return seg.getShort(VERSION_AT) >= SEGMENT_VERSION ? seg.getInt(PREVIOUS_AT) : -1;
  }

  /** Whether a checked segment header marks a compaction output. */
  static boolean isOutput(ByteBuffer seg) {
    return seg.getShort(VERSION_AT) >= SEGMENT_VERSION
        && (seg.getShort(FLAGS_AT) & FLAG_OUTPUT) != 0;
  }

  static int type(ByteBuffer seg, int offset) {
    return seg.get(offset + TYPE_AT) & 0xFF;
  }

  static int keyLength(ByteBuffer seg, int offset) {
    return seg.getInt(offset + TYPE_AT) & KEY_LENGTH_MASK;
  }

  static int valueLength(ByteBuffer seg, int offset) {
    return seg.getInt(offset + VALUE_LENGTH_AT);
  }

  /** The CRC32C stored in the record at {@code offset}. */
  static int checksum(ByteBuffer seg, int offset) {
    return seg.getInt(offset + CRC_AT);
  }

  /** Where the key of the record at {@code record} starts. */
  static int keyOffset(int record) {
    return record + RECORD_HEADER;
  }

  /** Where the value of the record at {@code record}, with a key of {@code keyLength}, starts. */
  static int valueOffset(int record, int keyLength) {
    return record + RECORD_HEADER + keyLength;
  }

  /**
   * The record's type, key length and value length as one word, read with one load: {@link
   * #keyLength(long)} and {@link #valueLength(long)} take it apart, and it is the start of what the
   * record's CRC covers.
   */
  static long lengths(ByteBuffer seg, int offset) {
    return seg.getLong(offset + TYPE_AT);
  }

  /** The key length in a {@link #lengths(ByteBuffer, int) lengths} word. */
  static int keyLength(long lengths) {
    return (int) (lengths >>> 32) & KEY_LENGTH_MASK;
  }

  /** The value length in a {@link #lengths(ByteBuffer, int) lengths} word. */
  static int valueLength(long lengths) {
    return (int) lengths;
  }

  /**
   * Whether the CRC of the put record at {@code offset} matches, given its {@code lengths} word and
   * its value already copied out. {@code key}, if not null, is the record's key as the caller
   * already confirmed it: the checksum then reads the key from that array instead of the segment.
   */
  static boolean valueCrcMatches(
      ByteBuffer seg, int offset, long lengths, byte[] key, byte[] value) {
    CRC32C crc = new CRC32C();
    if (key != null) {
      byte[] h = new byte[Long.BYTES];
      LONG_BE.set(h, 0, lengths);
      crc.update(h, 0, Long.BYTES);
      crc.update(key, 0, key.length);
    } else {
      crc.update(seg.slice(offset + TYPE_AT, RECORD_HEADER - TYPE_AT + keyLength(lengths)));
    }
    crc.update(value, 0, value.length);
    return (int) crc.getValue() == seg.getInt(offset + CRC_AT);
  }

  static long size(ByteBuffer seg, int offset) {
    return recordSize(keyLength(seg, offset), valueLength(seg, offset));
  }

  /**
   * Validates the record at {@code offset} of a segment whose valid bytes end at {@code end}.
   *
   * @return the record's size, or -1 if no valid record starts there
   */
  static long validRecord(ByteBuffer seg, int offset, long end) {
    long size = saneRecord(seg, offset, end);
    if (size < 0 || !crcMatches(seg, offset, (int) size)) {
      return -1;
    }
    return size;
  }

  /**
   * Checks the header of the record at {@code offset} (type, lengths in range for the type, the
   * record within {@code end}) but not its checksum.
   *
   * @return the record's size, or -1 if its header is not sane
   */
  static long saneRecord(ByteBuffer seg, int offset, long end) {
    if (offset + (long) RECORD_HEADER > end) {
      return -1;
    }
    int type = type(seg, offset);
    int k = keyLength(seg, offset);
    long v = valueLength(seg, offset) & 0xFFFFFFFFL;
    boolean sane =
        switch (type) {
          case PUT -> k >= 1 && k <= MAX_KEY && v <= MAX_VALUE;
          case DELETE -> k >= 1 && k <= MAX_KEY && v == 0;
          case BATCH -> k == 0 && v == BATCH_VALUE;
          default -> false;
        };
    long size = RECORD_HEADER + k + v;
    return sane && offset + size <= end ? size : -1;
  }

  /**
   * The first offset in {@code [from, limit)} where a whole, valid record (lengths in range, CRC
   * matching) starts, or -1. Used after an invalid record in the newest segment: a valid record
   * after it means the invalid one was damaged, not torn by a crash (a crash can only tear the last
   * write; nothing valid is ever written after it). Runs of zero words are skipped 8 bytes at a
   * time (the sparse tail of an active segment).
   */
  static int findValidRecord(ByteBuffer seg, int from, int limit) {
    int p = Math.max(from, 0);
    while (p + RECORD_HEADER <= limit) {
      int q = p + TYPE_AT;
      if (q + 8 <= limit && seg.getLong(q) == 0) {
        p += 8;
        continue;
      }
      int t = seg.get(q) & 0xFF;
      if (t >= PUT && t <= BATCH && validRecord(seg, p, limit) > 0) {
        return p;
      }
      p++;
    }
    return -1;
  }

  static boolean crcMatches(ByteBuffer seg, int offset, int size) {
    CRC32C crc = new CRC32C();
    crc.update(seg.slice(offset + TYPE_AT, size - TYPE_AT));
    return (int) crc.getValue() == seg.getInt(offset + CRC_AT);
  }

  static int batchCount(ByteBuffer seg, int offset) {
    return seg.getInt(offset + BATCH_COUNT_AT);
  }

  static long batchBytes(ByteBuffer seg, int offset) {
    return seg.getLong(offset + BATCH_BYTES_AT);
  }

  /** The value of a batch record: member count and member bytes. */
  static byte[] batchValue(int count, long bytes) {
    return ByteBuffer.allocate(BATCH_VALUE)
        .putInt(BATCH_COUNT_AT - RECORD_HEADER, count)
        .putLong(BATCH_BYTES_AT - RECORD_HEADER, bytes)
        .array();
  }

  // ---------------------------------------------------------------- hint files

  /** Writes a hint entry's header at {@code at} of {@code buf}; its key follows. */
  static void putHintEntry(
      byte[] buf, int at, int type, int offset, int keyLength, int valueLength) {
    INT_BE.set(buf, at + HINT_TYPE_AT, (type << TYPE_SHIFT) | keyLength);
    INT_BE.set(buf, at + HINT_OFFSET_AT, offset);
    INT_BE.set(buf, at + HINT_VALUE_LENGTH_AT, valueLength);
  }

  static int hintType(ByteBuffer hint, int entry) {
    return hint.get(entry + HINT_TYPE_AT) & 0xFF;
  }

  static int hintKeyLength(ByteBuffer hint, int entry) {
    return hint.getInt(entry + HINT_TYPE_AT) & KEY_LENGTH_MASK;
  }

  /** The segment offset of the record a hint entry describes. */
  static int hintOffset(ByteBuffer hint, int entry) {
    return hint.getInt(entry + HINT_OFFSET_AT);
  }

  static int hintValueLength(ByteBuffer hint, int entry) {
    return hint.getInt(entry + HINT_VALUE_LENGTH_AT);
  }

  /** The entry count in a checked hint header. */
  static int hintCount(ByteBuffer hint) {
    return hint.getInt(COUNT_AT);
  }

  /** The segment length a checked hint header describes. */
  static long hintSegmentLength(ByteBuffer hint) {
    return hint.getLong(LENGTH_AT);
  }

  /** The CRC32C stored at the end of a hint file of {@code hint.limit()} bytes. */
  static int hintChecksum(ByteBuffer hint) {
    return hint.getInt(hint.limit() - HINT_TRAILER);
  }

  /** Whether the CRC at the end of a hint file matches its entries. */
  static boolean hintCrcMatches(ByteBuffer hint) {
    CRC32C crc = new CRC32C();
    crc.update(hint.slice(FILE_HEADER, hint.limit() - HINT_TRAILER - FILE_HEADER));
    return (int) crc.getValue() == hintChecksum(hint);
  }
}
