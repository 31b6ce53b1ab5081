package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentTableTest {
  @TempDir Path tmp;

  private Segment segment(int id) throws IOException {
    Path p = tmp.resolve("s-" + id);
    Files.write(p, new byte[] {1});
    return Segment.openSealed(Storage.NIO, id, p);
  }

  @Test
  void randomInstallsAndRemovals_matchATreeMap() throws IOException {
    long seed = System.nanoTime();
    Random rnd = new Random(seed);
    // Ids from a wide range (as a long-written store has) and a narrow one (collisions, reuse).
    int[] pool = new int[64];
    for (int i = 0; i < pool.length; i++) {
      pool[i] = i < 32 ? i : rnd.nextInt(Integer.MAX_VALUE);
    }
    Segment[] byPool = new Segment[pool.length];
    for (int i = 0; i < pool.length; i++) {
      byPool[i] = segment(pool[i]);
    }
    TreeMap<Integer, Segment> ref = new TreeMap<>();
    SegmentTable t = SegmentTable.EMPTY;
    try {
      for (int op = 0; op < 5_000; op++) {
        int i = rnd.nextInt(pool.length);
        if (rnd.nextInt(3) == 0) {
          t = t.without(byPool[i]);
          ref.remove(pool[i]);
        } else {
          t = t.with(byPool[i]);
          ref.put(pool[i], byPool[i]);
        }
        String why = "seed " + seed + ", op " + op;
        assertThat(t.size()).as(why).isEqualTo(ref.size());
        assertThat(Arrays.stream(t.all()).mapToInt(s -> s.id).toArray())
            .as(why)
            .isEqualTo(ref.keySet().stream().mapToInt(Integer::intValue).toArray());
        for (int id : pool) {
          assertThat(t.get(id)).as(why + ", id " + id).isSameAs(ref.get(id));
        }
        assertThat(t.get(-1)).as(why).isNull();
      }
    } finally {
      for (Segment s : byPool) {
        Mappings.unmap(s.map);
      }
    }
  }

  @Test
  void storeWithSegmentIdsFarApart_opensAndWrites() throws IOException {
    // A store written for a long time has ids in the hundreds of millions next to an old segment
    // of cold data; the table must not grow with the highest id.
    Path dir = tmp.resolve("store");
    Files.createDirectories(dir);
    int[] ids = {3, 0x3FFF_FFF0};
    for (int id : ids) {
      ByteBuffer b = ByteBuffer.allocate(4096);
      b.put(RecordCodec.fileHeader(RecordCodec.SEGMENT_MAGIC, id, 0, 0));
      RecordCodec.putRecord(b, RecordCodec.PUT, bytes("k" + id), bytes("v" + id));
      b.flip();
      byte[] out = new byte[b.remaining()];
      b.get(out);
      Files.write(dir.resolve(Segment.fileName(id)), out);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      assertThat(s.get(bytes("k3"))).isEqualTo(bytes("v3"));
      assertThat(s.get(bytes("k" + ids[1]))).isEqualTo(bytes("v" + ids[1]));
      for (int i = 0; i < 200; i++) { // several rolls past the highest id
        s.put(bytes("n" + i), new byte[100]);
      }
      assertThat(s.segments().length).isLessThan(200);
      assertThat(s.segments()[s.segments().length - 1].id).isGreaterThan(ids[1]);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(s.get(bytes("k3"))).isEqualTo(bytes("v3"));
      assertThat(s.get(bytes("n199"))).hasSize(100);
    }
  }
}
