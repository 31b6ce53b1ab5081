package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A get loads the lines a record's span covers before it reads the header (see {@code
 * RecordReader#keyEquals}). The span is rounded up to 128 bytes, so for the last record of a
 * segment it reaches past the file's end; these tests put such records exactly at a page boundary,
 * where a load past the end would be a SIGBUS (sealed segment, mapped past its truncated file) or
 * an out-of-bounds access (reopened segment, mapped to its length).
 */
class ReadAheadTest {
  private static final int SEGMENT = 8192;
  private static final int KEY = 8;

  private static byte[] key(long i) {
    return ByteBuffer.allocate(KEY).putLong(i).array();
  }

  private static byte[] value(long i, int len) {
    byte[] v = new byte[len];
    new SplittableRandom(i).nextBytes(v);
    return v;
  }

  @Test
  void recordEndingAtAPageBoundary_readsWholeFromSealedAndReopenedSegments(@TempDir Path dir) {
    // Segment 1: records of 1,000-byte values, then one that fills it to exactly 8 KiB.
    int header = RecordCodec.RECORD_HEADER + KEY;
    int used = RecordCodec.FILE_HEADER;
    int n = 0;
    int[] lengths = new int[16];
    while (SEGMENT - used - (header + 1000) >= header + 1000) {
      lengths[n++] = 1000;
      used += header + 1000;
    }
    lengths[n++] = SEGMENT - used - header;
    assertThat(KeyDir.span(header + lengths[n - 1]))
        .as("the last record's span must reach past the segment's end for this test")
        .isGreaterThan(0);
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "8KiB", "compaction-threads", "0")) {
      for (int i = 0; i < n; i++) {
        s.put(key(i), value(i, lengths[i]));
      }
      assertThat(s.activeSegment().end).as("segment 1 is exactly full").isEqualTo(SEGMENT);
      s.put(key(100), value(100, 10)); // rolls: segment 1 is sealed and truncated to 8 KiB
      assertThat(s.activeSegment().id).isNotEqualTo(TestStores.writeSegment(1));
      for (int i = 0; i < n; i++) {
        assertThat(s.get(key(i))).as("key %d, sealed", i).isEqualTo(value(i, lengths[i]));
      }
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "8KiB")) {
      for (int i = 0; i < n; i++) {
        assertThat(s.get(key(i))).as("key %d, reopened", i).isEqualTo(value(i, lengths[i]));
      }
      assertThat(s.get(key(100))).isEqualTo(value(100, 10));
    }
  }

  @Test
  void activeSegment_neverLoadsPastItsEnd_whileTheWriterAppends(@TempDir Path dir) {
    // Reads of the newest record right after each put: its span reaches past the data written
    // so far, into the sparse tail of the active segment, which the loads must not touch.
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
      for (int i = 0; i < 500; i++) {
        byte[] v = value(i, 1 + (i * 37) % 3000);
        s.put(key(i), v);
        assertThat(s.get(key(i))).as("key %d", i).isEqualTo(v);
        assertThat(s.activeSegment().end).isLessThanOrEqualTo(s.activeSegment().capacity);
      }
    }
  }
}
