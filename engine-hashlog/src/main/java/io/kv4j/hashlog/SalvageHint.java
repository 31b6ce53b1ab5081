package io.kv4j.hashlog;

import io.kv4j.KeyRange;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * An intact hint's entries as a {@link Salvage} uses them: the offset and key of each put and
 * delete record of its segment, to tell how many records a damaged region held and which keys they
 * were.
 *
 * @param described the segment length the hint describes
 * @param offsets each record's offset in the segment
 * @param keyBytes each record's key
 */
record SalvageHint(long described, int[] offsets, byte[][] keyBytes) {
  /** How many records start in {@code [from, to)}. */
  long count(long from, long to) {
    long n = 0;
    for (int o : offsets) {
      n += o >= from && o < to ? 1 : 0;
    }
    return n;
  }

  /** The smallest and largest key of the records starting in {@code [from, to)}, or null. */
  KeyRange keys(long from, long to) {
    byte[] lo = null;
    byte[] hi = null;
    for (int i = 0; i < offsets.length; i++) {
      if (offsets[i] >= from && offsets[i] < to) {
        byte[] k = keyBytes[i];
        lo = lo == null || Arrays.compareUnsigned(k, lo) < 0 ? k : lo;
        hi = hi == null || Arrays.compareUnsigned(k, hi) > 0 ? k : hi;
      }
    }
    return lo == null ? null : KeyRange.all().gte(lo).lte(hi);
  }

  /**
   * The intact hint of sealed segment {@code id} in {@code dir}, or null if it has none or it is
   * damaged (a region that lost nothing: the segment is read in full anyway).
   */
  static SalvageHint read(Storage storage, Path dir, int id, DamageReport report) {
    Path hp = HintFile.path(dir, id);
    byte[] raw;
    try {
      raw = storage.readAll(hp);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      report.lost(
          hp, -1, -1, 0, "the hint file cannot be read (" + e + "); the segment was read instead");
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(raw);
    String bad = HintFile.checkAlone(b, id);
    if (bad != null) {
      report.lost(
          hp,
          0,
          raw.length,
          0,
          "the hint file is damaged ("
              + bad
              + "); it is only an index: the segment was read record by record instead");
      return null;
    }
    int count = RecordCodec.hintCount(b);
    int[] offsets = new int[count];
    byte[][] keys = new byte[count][];
    int q = RecordCodec.FILE_HEADER;
    for (int i = 0; i < count; i++) {
      int k = RecordCodec.hintKeyLength(b, q);
      offsets[i] = RecordCodec.hintOffset(b, q);
      keys[i] =
          Arrays.copyOfRange(
              raw, q + RecordCodec.HINT_ENTRY_HEADER, q + RecordCodec.HINT_ENTRY_HEADER + k);
      q += RecordCodec.HINT_ENTRY_HEADER + k;
    }
    return new SalvageHint(RecordCodec.hintSegmentLength(b), offsets, keys);
  }
}
