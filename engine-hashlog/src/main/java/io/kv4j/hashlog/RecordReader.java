package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Reads records at their locations ({@code segment id << 32 | offset}) through the segments' memory
 * mappings: keys for the index and the ordered view (compared in place, 8 bytes at a time), values
 * for gets and cursors (copied out, their CRC32C checked unless disabled). No lock and no system
 * call: the caller holds a {@link ReaderGuard} token, which keeps every mapping it can reach
 * mapped.
 *
 * <p>Every length read from disk is checked before it is used: damage is a {@link
 * StoreCorruptedException} naming file and offset, never a huge array or an
 * IndexOutOfBoundsException. Byte offsets within a record come from {@link RecordCodec}.
 */
final class RecordReader implements KeyDir.KeySource {
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  /** An arbitrary value: the sums of loads made only for the cache are compared with it. */
  private static final long TOUCH_SENTINEL = 0x6b76346a2d706631L;

  @SuppressWarnings("unused") // written only when a sum of loaded words hits the sentinel
  private static long touchSink;

  private final Segments segments;
  private final boolean verifyOnRead;
  private final KeyDir.Hasher hasher;

  /**
   * @param verifyOnRead whether values read are checked against their CRC32C
   * @param hasher the index's hash, for telling a hash collision from a damaged key
   */
  RecordReader(Segments segments, boolean verifyOnRead, KeyDir.Hasher hasher) {
    this.segments = segments;
    this.verifyOnRead = verifyOnRead;
    this.hasher = hasher;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Before it reads the header, this loads one word of every further 128 bytes the record's
   * {@code span} says it covers. The loads depend only on the location, so the CPU fetches the
   * whole record at once, in parallel with the header; without them the value's lines were only
   * requested once the header had arrived and told the copy how long the value is, a second memory
   * round trip per get (about 7% of a get of 1 KiB values from a 100 MB store, same-run A/B on 2
   * cores). The loads stop at the segment's end, never past the file.
   */
  @Override
  public boolean keyEquals(long loc, byte[] key, int span) {
    Segment s = segments.at(loc);
    if (s == null) {
      return false;
    }
    int off = (int) loc;
    ByteBuffer m = s.map;
    if (off < 0 || off > s.capacity - RecordCodec.RECORD_HEADER) {
      return false;
    }
    if (span > 0) {
      int last = Math.min(s.end, off + 64 + (span << 7)) - Long.BYTES;
      long touched = 0;
      // One load per 128 bytes: the CPU's adjacent-line prefetch brings each load's pair line
      // (Intel's spatial prefetcher, AMD's up/down one). Same-JVM A/B against a load per 64
      // bytes, six runs, 100,000 x 1 KiB: hashlog/Chronicle Map higher in all six, median +3%.
      for (int p = off + 64; p <= last; p += 128) {
        touched += m.getLong(p);
      }
      keep(touched);
    }
    int k = RecordCodec.keyLength(m, off);
    int p = RecordCodec.keyOffset(off);
    if (k != key.length || p + k > s.capacity) {
      return false;
    }
    int i = 0;
    for (; i + 8 <= k; i += 8) {
      if (m.getLong(p + i) != (long) LONG_BE.get(key, i)) {
        return false;
      }
    }
    for (; i < k; i++) {
      if (m.get(p + i) != key[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Keeps loads made only to bring memory into the cache (here, and {@link Index#warm}): their sum
   * is compared with an arbitrary value, so the JIT cannot drop them as unused.
   */
  static void keep(long sum) {
    if (sum == TOUCH_SENTINEL) {
      touchSink = sum; // practically never
    }
  }

  /** Compares the keys of two records, unsigned; equal keys order by location. */
  int compareRecords(long a, long b) {
    int c = compareKeys(a, b);
    return c != 0 ? c : Long.compare(a, b);
  }

  /** Compares the keys of two records, unsigned. */
  int compareKeys(long a, long b) {
    Segment sa = segments.at(a);
    Segment sb = segments.at(b);
    ByteBuffer ma = sa.map;
    ByteBuffer mb = sb.map;
    int oa = (int) a;
    int ob = (int) b;
    int ka = keyLengthWithin(sa, oa);
    int kb = keyLengthWithin(sb, ob);
    oa = RecordCodec.keyOffset(oa);
    ob = RecordCodec.keyOffset(ob);
    int n = Math.min(ka, kb);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long x = ma.getLong(oa + i);
      long y = mb.getLong(ob + i);
      if (x != y) {
        return Long.compareUnsigned(x, y);
      }
    }
    for (; i < n; i++) {
      int c = (ma.get(oa + i) & 0xFF) - (mb.get(ob + i) & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return ka - kb;
  }

  /** The first 8 bytes of a record's key, big-endian, zero-padded: orders like the key. */
  long keyPrefix(long loc) {
    Segment s = segments.at(loc);
    ByteBuffer m = s.map;
    int off = (int) loc;
    int k = keyLengthWithin(s, off);
    off = RecordCodec.keyOffset(off);
    if (k >= 8) {
      return m.getLong(off);
    }
    long p = 0;
    for (int i = 0; i < 8; i++) {
      p = (p << 8) | (i < k ? m.get(off + i) & 0xFF : 0);
    }
    return p;
  }

  /** The first 8 bytes of {@code key}, big-endian, zero-padded, as {@link #keyPrefix(long)}. */
  static long keyPrefix(byte[] key) {
    if (key.length >= 8) {
      return (long) LONG_BE.get(key, 0);
    }
    long p = 0;
    for (int i = 0; i < 8; i++) {
      p = (p << 8) | (i < key.length ? key[i] & 0xFF : 0);
    }
    return p;
  }

  /** Compares a record's key with {@code key}, unsigned. */
  int compareKey(long loc, byte[] key) {
    Segment s = segments.at(loc);
    ByteBuffer m = s.map;
    int off = (int) loc;
    int k = keyLengthWithin(s, off);
    off = RecordCodec.keyOffset(off);
    int n = Math.min(k, key.length);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long x = m.getLong(off + i);
      long y = (long) LONG_BE.get(key, i);
      if (x != y) {
        return Long.compareUnsigned(x, y);
      }
    }
    for (; i < n; i++) {
      int c = (m.get(off + i) & 0xFF) - (key[i] & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return k - key.length;
  }

  static byte[] keyAt(Segment s, int offset, int keyLen) {
    byte[] k = new byte[keyLen];
    s.map.get(RecordCodec.keyOffset(offset), k, 0, keyLen);
    return k;
  }

  /**
   * A record's key length, cut to what the mapping holds: orderings (scan views, cursor bounds)
   * never fail on a damaged length; the record itself is checked when a cursor reaches it.
   */
  private static int keyLengthWithin(Segment s, int off) {
    int k = RecordCodec.keyLength(s.map, off);
    int room = s.capacity - RecordCodec.keyOffset(off);
    return k <= room ? k : Math.max(0, room);
  }

  /** The key of the record at {@code loc}; a record whose lengths are damaged is corruption. */
  byte[] keyAt(long loc) {
    Segment s = segments.at(loc);
    int off = (int) loc;
    String bad = recordProblem(s, off);
    if (bad != null) {
      throw corrupt(s, off, bad);
    }
    return keyAt(s, off, RecordCodec.keyLength(s.map, off));
  }

  boolean isTombstone(long loc) {
    Segment s = segments.at(loc);
    return RecordCodec.type(s.map, (int) loc) == RecordCodec.DELETE;
  }

  /** Copies the value of the put record at {@code loc}, checking its CRC if configured. */
  byte[] readValue(long loc) {
    return readValue(loc, null);
  }

  /**
   * Copies the value of the put record at {@code loc}, checking its CRC if configured. {@code key},
   * if not null, is the record's key as the caller already confirmed it (a get compared it): the
   * checksum then reads the key from that array instead of the mapping.
   */
  byte[] readValue(long loc, byte[] key) {
    Segment s = segments.at(loc);
    ByteBuffer m = s.map;
    int off = (int) loc;
    long lengths = RecordCodec.lengths(m, off); // type and key length, value length: one load
    int k = RecordCodec.keyLength(lengths);
    int v = RecordCodec.valueLength(lengths);
    // Lengths read from disk: a damaged one must be an error, never a huge array or an
    // IndexOutOfBoundsException. Two compares against final fields; the CRC then checks the rest.
    if (v < 0 || v > RecordCodec.MAX_VALUE || RecordCodec.valueOffset(off, k) + v > s.capacity) {
      throw corrupt(
          s, off, "key length " + k + " or value length " + (v & 0xFFFFFFFFL) + " out of range");
    }
    byte[] out = new byte[v];
    m.get(RecordCodec.valueOffset(off, k), out, 0, v);
    if (verifyOnRead && !RecordCodec.valueCrcMatches(m, off, lengths, key, out)) {
      throw corrupt(s, off, "checksum mismatch");
    }
    return out;
  }

  /**
   * Copies the value of the put record at {@code loc} and checks its CRC32C whatever {@code
   * verify-checksums-on-read} says: a conditional write compares against it, and must never write
   * on the strength of damaged bytes. {@code key} as in {@link #readValue(long, byte[])}.
   */
  byte[] readValueChecked(long loc, byte[] key) {
    byte[] v = readValue(loc, key);
    if (!verifyOnRead) {
      Segment s = segments.at(loc);
      int off = (int) loc;
      if (!RecordCodec.crcMatches(s.map, off, (int) RecordCodec.size(s.map, off))) {
        throw corrupt(s, off, "checksum mismatch");
      }
    }
    return v;
  }

  /**
   * Whether the key's current record, at {@code loc} (its index entry, looked up under the writer
   * lock), holds {@code expected} (null: the key is absent). Reads the value with its checksum
   * checked whatever the store's setting: a conditional write never writes on damaged bytes.
   */
  boolean holds(long loc, long h, byte[] key, byte[] expected) {
    if (loc < 0) {
      checkSuspect(loc & ~KeyDir.SUSPECT, h); // throws unless another key's hash
      return expected == null;
    }
    if (loc == 0) {
      return expected == null;
    }
    return expected != null && Arrays.equals(readValueChecked(loc, key), expected);
  }

  /**
   * A get did not find its key, but an index entry with the key's hash points at a record holding
   * other key bytes (a {@link KeyDir#SUSPECT}). Two keys sharing a 60-bit hash are fine; anything
   * else means the record no longer holds the key the index (built from a hint, or from the record
   * itself when it was intact) says it does: its key was damaged, and "absent" would be silent
   * loss. The location came from a validated read of the index, so it names a real record.
   *
   * @throws StoreCorruptedException naming the file and the record's offset
   */
  void checkSuspect(long loc, long hash) {
    Segment s = segments.at(loc);
    if (s == null) {
      return;
    }
    int off = (int) loc;
    String bad = recordProblem(s, off);
    if (bad == null) {
      byte[] k = keyAt(s, off, RecordCodec.keyLength(s.map, off));
      if (KeyDir.fix(hasher.hash(k)) == hash) {
        return; // another key with the same hash: the key asked for is absent
      }
      bad =
          RecordCodec.crcMatches(s.map, off, (int) RecordCodec.size(s.map, off))
              ? "its key does not match the index entry built from it"
              : "checksum mismatch";
    }
    throw corrupt(s, off, bad + "; the index points a key at it, which now cannot be read");
  }

  /**
   * What is wrong with the lengths or type of the record at {@code off}, or null if it is a put or
   * delete record that fits in the segment (its checksum is not checked).
   */
  static String recordProblem(Segment s, int off) {
    int end = s.end;
    if (off < RecordCodec.FILE_HEADER || off > end - RecordCodec.RECORD_HEADER) {
      return "record offset outside the segment's " + end + " bytes";
    }
    int type = RecordCodec.type(s.map, off);
    int k = RecordCodec.keyLength(s.map, off);
    long v = RecordCodec.valueLength(s.map, off) & 0xFFFFFFFFL;
    if (type != RecordCodec.PUT && type != RecordCodec.DELETE) {
      return "record type " + type + " is not a put or delete";
    }
    if (k < 1 || k > RecordCodec.MAX_KEY || v > RecordCodec.MAX_VALUE) {
      return "key length " + k + " or value length " + v + " out of range";
    }
    if (off + RecordCodec.recordSize(k, 0) + v > end) {
      return "record of "
          + (RecordCodec.recordSize(k, 0) + v)
          + " bytes runs past the segment's end";
    }
    return null;
  }

  static StoreCorruptedException corrupt(Segment s, long off, String what) {
    return new StoreCorruptedException(
        "hashlog: corrupt record in " + s.path + " at offset " + off + ": " + what, s.path, off);
  }
}
