package io.kv4j.hashlog;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a segment's records past damage, for {@link Salvage} and {@link Verifier}: where {@link
 * Recovery#scan} stops at the first invalid record, this one steps over it to the next offset where
 * a whole record parses and its CRC32C matches ({@link RecordCodec#findValidRecord}), and reports
 * the bytes in between as one {@link Stretch}. A length field damaged into a sane but wrong value
 * therefore costs only its own record: the next record is found at its real offset, never read at
 * the offset the damaged length points to, and garbage is never taken for a record (the CRC covers
 * every byte of a record after the CRC itself).
 *
 * <p><b>Batches.</b> A batch whose header and members are all valid is delivered whole, as recovery
 * delivers it. A batch with a valid header and a bad member is either a torn last write or damage,
 * judged as {@link Recovery#checkTail} judges it: in a segment that may have a torn tail (the
 * newest after a crash), if no valid record follows its first bad member, the batch was never
 * acknowledged and the whole rest of the segment is the torn tail, its valid members included;
 * otherwise the batch was written whole and later damaged, so its header is stepped over and its
 * members are read one by one like any record (the bad one is a stretch of its own).
 *
 * <p><b>Tails.</b> In a segment that may have a torn tail, the last stretch, after which nothing
 * valid follows, is the torn tail or the preallocated zeros ({@link Stretch#torn}), not damage. In
 * any other segment (sealed, or the newest after a clean close) every stretch is damage.
 */
final class SegmentScan {
  /**
   * Bytes {@code [from, to)} of a segment that hold no valid record.
   *
   * @param torn whether this is the newest segment's tail after a crash (not damage)
   */
  record Stretch(int from, int to, boolean torn) {
    int length() {
      return to - from;
    }
  }

  private SegmentScan() {}

  /**
   * Delivers every valid put and delete record of {@code m} in {@code [start, limit)} to {@code
   * visitor}, in log order, and returns the stretches stepped over (see the class comment).
   *
   * @param mayTear whether the segment may end in a torn last write (the newest after a crash)
   */
  static List<Stretch> scan(
      ByteBuffer m, int start, int limit, boolean mayTear, Recovery.Visitor visitor) {
    List<Stretch> out = new ArrayList<>();
    int p = start;
    while (p < limit) {
      long size = RecordCodec.validRecord(m, p, limit);
      if (size >= 0) {
        if (RecordCodec.type(m, p) != RecordCodec.BATCH) {
          visit(m, p, visitor);
          p += (int) size;
          continue;
        }
        int[] firstBad = new int[1];
        long membersEnd = wholeBatch(m, p, (int) size, limit, firstBad);
        if (membersEnd >= 0) {
          for (int r = p + (int) size; r < membersEnd; r += (int) RecordCodec.size(m, r)) {
            visit(m, r, visitor);
          }
          p = (int) membersEnd;
          continue;
        }
        int from = firstBad[0] >= 0 ? firstBad[0] : p;
        if (mayTear && RecordCodec.findValidRecord(m, from + 1, limit) < 0) {
          out.add(new Stretch(p, limit, true)); // a torn batch: none of it was acknowledged
          return out;
        }
        p += (int) size; // damage: the members follow, each judged on its own
        continue;
      }
      int next = RecordCodec.findValidRecord(m, p + 1, limit);
      if (next < 0) {
        out.add(new Stretch(p, limit, mayTear));
        return out;
      }
      out.add(new Stretch(p, next, false));
      p = next;
    }
    return out;
  }

  /**
   * Checks the members of the valid batch record at {@code p} of {@code size} bytes, as {@link
   * Recovery#scan} does.
   *
   * @param firstBad receives the offset of the first invalid member, or -1 when the members are
   *     valid but do not add up to what the batch announced
   * @return where the members end if the batch is whole, else -1
   */
  private static long wholeBatch(ByteBuffer m, int p, int size, int limit, int[] firstBad) {
    firstBad[0] = -1;
    int count = RecordCodec.batchCount(m, p);
    long bytes = RecordCodec.batchBytes(m, p);
    long membersStart = (long) p + size;
    long membersEnd = membersStart + bytes;
    if (count < 1 || bytes < 0) {
      return -1;
    }
    long bound = Math.min(membersEnd, limit);
    long q = membersStart;
    for (int i = 0; i < count; i++) {
      long s = q >= bound ? -1 : RecordCodec.validRecord(m, (int) q, bound);
      if (s < 0 || RecordCodec.type(m, (int) q) == RecordCodec.BATCH) {
        firstBad[0] = (int) Math.min(q, limit);
        return -1;
      }
      q += s;
    }
    return q == membersEnd && membersEnd <= limit ? membersEnd : -1;
  }

  /**
   * How many put and delete records a stretch held, where its headers tell: walking the record
   * headers from {@code from} by their lengths (checksums are not checked: the stretch failed them)
   * lands exactly on {@code to}. A damaged value or key leaves its header whole, so the usual
   * single bad record counts as 1.
   *
   * @return the count, or -1 if the headers do not add up to the stretch
   */
  static long countRecords(ByteBuffer m, int from, int to) {
    long n = 0;
    int p = from;
    while (p < to) {
      long size = RecordCodec.saneRecord(m, p, to);
      if (size < 0) {
        return -1;
      }
      if (RecordCodec.type(m, p) != RecordCodec.BATCH) {
        n++;
      }
      p += (int) size;
    }
    return n;
  }

  private static void visit(ByteBuffer m, int p, Recovery.Visitor v) {
    v.record(RecordCodec.type(m, p), p, RecordCodec.keyLength(m, p), RecordCodec.valueLength(m, p));
  }
}
