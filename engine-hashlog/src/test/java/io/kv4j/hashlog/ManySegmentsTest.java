package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManySegmentsTest {
  @TempDir Path tmp;

  private static final int SEGMENTS = 3000;

  /** Writes segment files directly in the documented format: fast, and independent of rolls. */
  private static void writeSegments(Path dir) throws IOException {
    Files.createDirectories(dir);
    for (int id = 1; id <= SEGMENTS; id++) {
      ByteBuffer b = ByteBuffer.allocate(4096);
      b.put(RecordCodec.fileHeader(RecordCodec.SEGMENT_MAGIC, id, 0, 0));
      RecordCodec.putRecord(b, RecordCodec.PUT, bytes("seg" + id), bytes("value" + id));
      RecordCodec.putRecord(b, RecordCodec.PUT, bytes("shared"), bytes("from" + id));
      if (id > 1) {
        RecordCodec.putRecord(b, RecordCodec.DELETE, bytes("seg" + (id - 1)), null);
      }
      b.flip();
      byte[] out = new byte[b.remaining()];
      b.get(out);
      Files.write(dir.resolve(Segment.fileName(id)), out);
    }
  }

  /**
   * The JVM's descriptors on files under {@code dir}: only the store's, so a descriptor another
   * test left to the garbage collector, or one a JVM thread opens meanwhile, does not count.
   */
  private static long openDescriptors(Path dir) throws IOException {
    String d = dir.toRealPath().toString();
    long n = 0;
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) s::iterator) {
        try {
          if (Files.readSymbolicLink(fd).toString().startsWith(d)) {
            n++;
          }
        } catch (IOException gone) {
          // closed between the listing and the read (the listing's own descriptor, for one)
        }
      }
    }
    return n;
  }

  private static long mappingsOf(Path dir) throws IOException {
    String d = dir.toRealPath().toString();
    List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
    return maps.stream().filter(l -> l.contains(d)).count();
  }

  @Test
  void reopenWithThousandsOfSegments_leaksNoDescriptorOrMapping() throws IOException {
    Path dir = tmp.resolve("store");
    writeSegments(dir);
    long fdsBefore = openDescriptors(dir);
    for (int round = 0; round < 2; round++) {
      try (HashLogStore s =
          TestStores.open(
              dir, Durability.BUFFERED, "segment-size", "4KiB", "compaction-threads", "0")) {
        assertThat(TestStores.figure(s, "hint-files-rebuilt"))
            .as("round " + round)
            .isEqualTo(round == 0 ? SEGMENTS - 1 : 0);
        assertThat(TestStores.figure(s, "segments")).isEqualTo(SEGMENTS);
        assertThat(s.stats().keyCount()).isEqualTo(2);
        assertThat(s.get(bytes("shared"))).isEqualTo(bytes("from" + SEGMENTS));
        assertThat(s.get(bytes("seg" + SEGMENTS))).isEqualTo(bytes("value" + SEGMENTS));
        assertThat(s.get(bytes("seg1"))).isNull();
        // Sealed segments hold no descriptor: the lock file and the active segment remain.
        assertThat(openDescriptors(dir) - fdsBefore).isLessThanOrEqualTo(4);
        assertThat(mappingsOf(dir)).isGreaterThanOrEqualTo(SEGMENTS);
      }
      assertThat(openDescriptors(dir)).as("descriptors after close").isEqualTo(fdsBefore);
      assertThat(mappingsOf(dir)).as("mappings after close").isZero();
    }
  }
}
