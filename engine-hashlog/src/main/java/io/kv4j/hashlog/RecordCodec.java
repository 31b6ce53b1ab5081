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
 */
final class RecordCodec {
  private static final VarHandle INT_BE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  static final int SEGMENT_MAGIC = 0x4B56484C;
  static final int HINT_MAGIC = 0x4B564849;

  /** Header version of hint files, and of segments in store format 1. */
  static final short VERSION = 1;

  /** Header version of segments written in store format 2. */
  static final short SEGMENT_VERSION = 2;

  /** Segment header flag: the segment is a compaction output. */
  static final int FLAG_OUTPUT = 1;

  static final int FILE_HEADER = 32;
  static final int RECORD_HEADER = 12;
  static final int HINT_ENTRY_HEADER = 12;
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
    b.putInt(0, magic);
    b.putShort(4, version);
    b.putShort(6, (short) flags);
    b.putInt(8, segmentId);
    b.putInt(12, count);
    b.putLong(16, length);
    b.putInt(24, 0);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, 28);
    b.putInt(28, (int) crc.getValue());
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
    if (b.getInt(0) != magic) {
      return String.format("bad magic number 0x%08X (expected 0x%08X)", b.getInt(0), magic);
    }
    CRC32C crc = new CRC32C();
    crc.update(b.duplicate().position(0).limit(28));
    if ((int) crc.getValue() != b.getInt(28)) {
      return "header checksum mismatch";
    }
    if (b.getShort(4) < 1 || b.getShort(4) > newest) {
      return "unsupported format version "
          + b.getShort(4)
          + " (this build reads 1.."
          + newest
          + ")";
    }
    if (b.getInt(8) != segmentId) {
      return "header names segment " + b.getInt(8) + ", file name says " + segmentId;
    }
    return null;
  }

  /** Writes a record header (with CRC) for the key and value into dst at its position. */
  static void putRecord(ByteBuffer dst, byte type, byte[] key, byte[] value) {
    int start = dst.position();
    int valueLen = value == null ? 0 : value.length;
    int keyLen = key == null ? 0 : key.length;
    dst.putInt(0);
    dst.putInt((type << 24) | keyLen);
    dst.putInt(valueLen);
    if (key != null) {
      dst.put(key);
    }
    if (value != null) {
      dst.put(value);
    }
    CRC32C crc = new CRC32C();
    crc.update(dst.duplicate().position(start + 4).limit(dst.position()));
    dst.putInt(start, (int) crc.getValue());
  }

  /**
   * The 12 header bytes of a record, CRC included, computed from the key and value arrays so that
   * the writer does the checksum before it takes the write lock.
   */
  static byte[] header(byte type, byte[] key, byte[] value) {
    int k = key == null ? 0 : key.length;
    int v = value == null ? 0 : value.length;
    byte[] h = new byte[RECORD_HEADER];
    INT_BE.set(h, 4, (type << 24) | k);
    INT_BE.set(h, 8, v);
    CRC32C crc = new CRC32C();
    crc.update(h, 4, RECORD_HEADER - 4);
    if (k > 0) {
      crc.update(key, 0, k);
    }
    if (v > 0) {
      crc.update(value, 0, v);
    }
    INT_BE.set(h, 0, (int) crc.getValue());
    return h;
  }

  /** The predecessor id of a checked segment header, or -1 for a version-1 header. */
  static int previousSegment(ByteBuffer seg) {
    return seg.getShort(4) >= SEGMENT_VERSION ? seg.getInt(12) : -1;
  }

  /** Whether a checked segment header marks a compaction output. */
  static boolean isOutput(ByteBuffer seg) {
    return seg.getShort(4) >= SEGMENT_VERSION && (seg.getShort(6) & FLAG_OUTPUT) != 0;
  }

  static int type(ByteBuffer seg, int offset) {
    return seg.get(offset + 4) & 0xFF;
  }

  static int keyLength(ByteBuffer seg, int offset) {
    return seg.getInt(offset + 4) & 0xFFFFFF;
  }

  static int valueLength(ByteBuffer seg, int offset) {
    return seg.getInt(offset + 8);
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
    if (offset + (long) RECORD_HEADER > end) {
      return -1;
    }
    int type = type(seg, offset);
    int k = keyLength(seg, offset);
    long v = valueLength(seg, offset) & 0xFFFFFFFFL;
    switch (type) {
      case PUT -> {
        if (k < 1 || k > MAX_KEY || v > MAX_VALUE) {
          return -1;
        }
      }
      case DELETE -> {
        if (k < 1 || k > MAX_KEY || v != 0) {
          return -1;
        }
      }
      case BATCH -> {
        if (k != 0 || v != BATCH_VALUE) {
          return -1;
        }
      }
      default -> {
        return -1;
      }
    }
    long size = RECORD_HEADER + k + v;
    if (offset + size > end) {
      return -1;
    }
    if (!crcMatches(seg, offset, (int) size)) {
      return -1;
    }
    return size;
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
      int q = p + 4; // the type byte
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
    crc.update(seg.slice(offset + 4, size - 4));
    return (int) crc.getValue() == seg.getInt(offset);
  }

  static int batchCount(ByteBuffer seg, int offset) {
    return seg.getInt(offset + RECORD_HEADER);
  }

  static long batchBytes(ByteBuffer seg, int offset) {
    return seg.getLong(offset + RECORD_HEADER + 4);
  }

  /** The value of a batch record: member count and member bytes. */
  static byte[] batchValue(int count, long bytes) {
    return ByteBuffer.allocate(BATCH_VALUE).putInt(count).putLong(bytes).array();
  }
}
