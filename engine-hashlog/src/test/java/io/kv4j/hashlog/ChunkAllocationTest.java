package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * BUFFERED segments are allocated in whole, aligned {@link Segment#CHUNK}s (so the page cache can
 * give them large folios, see there), and compaction writes its outputs through a buffer of one
 * chunk, in which records now cross the buffer's end instead of being written around it.
 */
class ChunkAllocationTest {
  private static final int MIB = 1 << 20;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static void assertWholeChunks(Segment s, String when) {
    int a = s.allocatedEnd();
    assertThat(a % Segment.CHUNK == 0 || a == s.capacity)
        .as(
            "%s: %s allocated to %d bytes, neither a multiple of %d nor its capacity %d",
            when, s.path, a, Segment.CHUNK, s.capacity)
        .isTrue();
    assertThat(a)
        .as("%s: allocated end of %s below its data", when, s.path)
        .isGreaterThanOrEqualTo(s.end);
  }

  @Test
  void bufferedSegments_areAllocatedInWholeAlignedChunks_aheadOfTheData() throws Exception {
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "8MiB", "compaction-threads", "0")) {
      Segment first = s.segments.active;
      // Created with its first chunk; the sealer may already have allocated the next one ahead
      // (it is asked to as the segment starts), never more than one step past the data.
      assertWholeChunks(first, "a new segment");
      assertThat(first.allocatedEnd())
          .as("a new segment's first chunk, or that and the step the sealer allocates ahead")
          .isIn(Segment.CHUNK, Segment.CHUNK + Segment.ALLOCATION_STEP);
      byte[] value = new byte[1000];
      for (int i = 0; i < 20_000; i++) { // about 20 MiB: three segments
        s.put(key(i), value);
        if (i % 97 == 0) {
          assertWholeChunks(s.segments.active, "after put " + i);
        }
      }
      assertThat(s.segments()).as("segments written").hasSizeGreaterThanOrEqualTo(3);
      for (int i = 0; i < 20_000; i += 1234) {
        assertThat(s.get(key(i))).as("key %d", i).hasSize(1000);
      }
    }
  }

  @Test
  void createAllocated_allocatesExactlyTheFirstChunk_inTheFile() throws Exception {
    Path path = dir.resolve(Segment.fileName(7));
    Segment s = Segment.createAllocated(Storage.NIO, 7, path, 8 * MIB, 0);
    try {
      assertThat(s.allocatedEnd()).as("allocated end of a new segment").isEqualTo(Segment.CHUNK);
      assertThat(s.end).as("data end of a new segment").isEqualTo(RecordCodec.FILE_HEADER);
    } finally {
      s.closeFile();
    }
    assertThat(Files.size(path))
        .as("closed: cut back to its data")
        .isEqualTo(RecordCodec.FILE_HEADER);
  }

  @Test
  void capacityNotAMultipleOfTheChunk_isAllocatedUpToTheCapacity() {
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "3MiB", "compaction-threads", "0")) {
      byte[] value = new byte[4000];
      for (int i = 0; i < 700; i++) { // 2.8 MiB: past the first chunk, inside the capacity
        s.put(key(i), value);
        assertWholeChunks(s.segments.active, "after put " + i);
      }
      Segment active = s.segments.active;
      assertThat(active.capacity).isEqualTo(3 * MIB);
      assertThat(active.allocatedEnd()).isIn(2 * MIB, 3 * MIB);
    }
  }

  @Test
  void syncSegments_areNotAllocatedAhead() {
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "8MiB")) {
      s.put(key(1), new byte[100]);
      Segment active = s.segments.active;
      assertThat(active.allocatedEnd())
          .as("a SYNC segment is appended to with write(2), never filled with zeros ahead")
          .isEqualTo(RecordCodec.FILE_HEADER);
    }
  }

  @Test
  void compaction_copiesRecordsAcrossTheCopyBuffersEnd_andLargerThanIt() throws Exception {
    long seed = System.nanoTime();
    SplittableRandom r = new SplittableRandom(seed);
    List<byte[]> values = new ArrayList<>();
    String[] options = {"segment-size", "4MiB", "compaction-threads", "0"};
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, options)) {
      // Sizes that put records across the 2 MiB buffer's end, and one of 3 MiB that spans it.
      int[] sizes = {700_000, 3 * MIB, 1, 999_999, 0, 1_500_000, 65_536, 2 * MIB - 40};
      for (int i = 0; i < 40; i++) {
        byte[] v = new byte[sizes[i % sizes.length]];
        r.nextBytes(v);
        values.add(v);
        s.put(key(i), v);
      }
      for (int i = 0; i < 40; i += 3) { // garbage, so that compaction has victims
        s.put(key(i), values.get(i));
      }
      assertThat(s.reclaim()).as("bytes reclaimed (seed %d)", seed).isPositive();
      for (int i = 0; i < 40; i++) {
        assertThat(Arrays.equals(s.get(key(i)), values.get(i)))
            .as("value of key %d after compaction (seed %d)", i, seed)
            .isTrue();
      }
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, options)) {
      for (int i = 0; i < 40; i++) {
        assertThat(Arrays.equals(s.get(key(i)), values.get(i)))
            .as("value of key %d after reopen (seed %d)", i, seed)
            .isTrue();
      }
      s.verify(); // throws on a damaged record
    }
  }
}
