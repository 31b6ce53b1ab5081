package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreCorruptedException;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecoveryTest {
  @TempDir Path dir;

  private Path seg(int id) {
    return dir.resolve(Segment.fileName(id));
  }

  private Path hint(int id) {
    return dir.resolve(Segment.hintName(id));
  }

  private static byte[] value(int i, int len) {
    byte[] v = new byte[len];
    Arrays.fill(v, (byte) (i * 7 + 1));
    return v;
  }

  @Test
  void garbageTail_isTruncatedAtLastValidRecord_andReported() throws IOException {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      for (int i = 0; i < 10; i++) {
        s.put(bytes("k" + i), value(i, 50));
      }
    }
    long size = Files.size(seg(1));
    TestStores.markCrashed(dir);
    byte[] garbage = new byte[100];
    Arrays.fill(garbage, (byte) 0x5A);
    Files.write(seg(1), garbage, java.nio.file.StandardOpenOption.APPEND);

    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isEqualTo(100);
      for (int i = 0; i < 10; i++) {
        assertThat(s.get(bytes("k" + i))).isEqualTo(value(i, 50));
      }
      s.put(bytes("after"), bytes("x"));
    }
    assertThat(Files.size(seg(1))).isEqualTo(size + 12 + 5 + 1);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isZero();
      assertThat(s.get(bytes("after"))).isEqualTo(bytes("x"));
      assertThat(s.stats().keyCount()).isEqualTo(11);
    }
  }

  @Test
  void tornLastRecord_isDroppedAndOthersKept() throws IOException {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      for (int i = 0; i < 5; i++) {
        s.put(bytes("k" + i), value(i, 100));
      }
    }
    long size = Files.size(seg(1));
    TestStores.markCrashed(dir);
    try (RandomAccessFile f = new RandomAccessFile(seg(1).toFile(), "rw")) {
      f.setLength(size - 30); // the last record (12 + 2 + 100 bytes) loses its end
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isEqualTo(114 - 30);
      assertThat(s.get(bytes("k4"))).isNull();
      for (int i = 0; i < 4; i++) {
        assertThat(s.get(bytes("k" + i))).isEqualTo(value(i, 100));
      }
    }
    assertThat(Files.size(seg(1))).isEqualTo(size - 114);
  }

  @Test
  void zeroTail_isRemovedWithoutCountingAsGarbage() throws IOException {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      s.put(bytes("a"), bytes("1"));
    }
    long size = Files.size(seg(1));
    Files.write(seg(1), new byte[4096], java.nio.file.StandardOpenOption.APPEND);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isZero();
      assertThat(s.get(bytes("a"))).isEqualTo(bytes("1"));
    }
    assertThat(Files.size(seg(1))).isEqualTo(size);
  }

  private void fillSegments(int keys) {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      for (int i = 0; i < keys; i++) {
        s.put(bytes("key" + i), value(i, 500));
        if (i % 5 == 4) {
          s.delete(bytes("key" + (i - 2)));
        }
      }
      WriteBatch b = new WriteBatch();
      b.put(bytes("batch-a"), new byte[0]).delete(bytes("key0")).put(bytes("batch-b"), bytes("b"));
      s.write(b);
    }
  }

  @Test
  void flippedBitInSealedSegment_failsTheReadWithFileAndOffset_orTheOpenWithoutHint()
      throws IOException {
    fillSegments(30);
    assertThat(Files.exists(hint(1))).isTrue();
    // First record of segment 1 is key0's put at offset 32: flip a bit inside its value.
    int recordOffset = RecordCodec.FILE_HEADER;
    try (RandomAccessFile f = new RandomAccessFile(seg(1).toFile(), "rw")) {
      f.seek(RecordCodec.FILE_HEADER);
      assertThat(f.read() & 0xFF).isNotNegative();
    }
    // key1 is the second record of segment 1.
    int key1Offset = RecordCodec.FILE_HEADER + 12 + 4 + 500;
    flipBit(seg(1), key1Offset + 12 + 4 + 100);

    Path seg1 = seg(1).toRealPath();
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      assertThatThrownBy(() -> s.get(bytes("key1")))
          .isInstanceOfSatisfying(
              StoreCorruptedException.class,
              e -> {
                assertThat(e.file()).isEqualTo(seg1);
                assertThat(e.offset()).isEqualTo(key1Offset);
                assertThat(e.getMessage()).contains(seg(1).getFileName().toString());
              });
      assertThat(s.get(bytes("key3"))).isEqualTo(value(3, 500));
    }
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            "segment-size",
            "4KiB",
            "verify-checksums-on-read",
            "false")) {
      assertThat(s.get(bytes("key1"))).isNotEqualTo(value(1, 500)).hasSize(500);
    }
    Files.delete(hint(1));
    assertThatThrownBy(
            () -> TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB").close())
        .isInstanceOfSatisfying(
            StoreCorruptedException.class,
            e -> {
              assertThat(e.file()).isEqualTo(seg1);
              assertThat(e.offset()).isEqualTo(key1Offset);
            });
    assertThat(recordOffset).isEqualTo(32);
  }

  private static void flipBit(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0x10);
    }
  }

  @Test
  void hintOfAFullSegment_gatheredInManyChunks_isUsedAtReopen() throws IOException {
    int n = 20_000; // 52-byte hint entries: about 1 MiB of entries, gathered 64 KiB at a time
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "1MiB")) {
      for (int i = 0; i < n; i++) {
        s.put(bytes(String.format("key-%036d", i)), bytes(String.format("%08d", i)));
      }
      assertThat(s.segments().length).isGreaterThan(1);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "1MiB")) {
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isZero();
      for (int i = 0; i < n; i++) {
        assertThat(s.get(bytes(String.format("key-%036d", i))))
            .as("key %d", i)
            .isEqualTo(bytes(String.format("%08d", i)));
      }
    }
  }

  @Test
  void damagedOrMissingHint_isRebuiltToTheSameBytesAndState() throws IOException {
    fillSegments(40);
    List<Entry> before;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      before = TestStores.scan(s, KeyRange.all());
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isZero();
    }
    byte[] hint2 = Files.readAllBytes(hint(TestStores.writeSegment(2)));
    byte[] hint3 = Files.readAllBytes(hint(TestStores.writeSegment(3)));
    byte[] damaged = hint2.clone();
    damaged[damaged.length / 2] ^= 0x01;
    Files.write(hint(TestStores.writeSegment(2)), damaged);
    Files.delete(hint(TestStores.writeSegment(3)));

    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isEqualTo(2);
      assertThat(TestStores.scan(s, KeyRange.all())).isEqualTo(before);
      assertThat(s.get(bytes("batch-a"))).isEmpty();
    }
    assertThat(Files.readAllBytes(hint(TestStores.writeSegment(2)))).isEqualTo(hint2);
    assertThat(Files.readAllBytes(hint(TestStores.writeSegment(3)))).isEqualTo(hint3);
  }

  @Test
  void batchSpanningSegmentRoll_isWhollyInTheNewSegment_andSurvivesReopen() throws IOException {
    WriteBatch b = new WriteBatch();
    for (int i = 0; i < 10; i++) {
      b.put(bytes("b" + i), value(i, 300));
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "4KiB")) {
      s.put(bytes("filler"), value(0, 3000)); // segment 1 now has ~1 KiB left
      assertThat(TestStores.figure(s, "segments")).isEqualTo(1);
      s.write(b);
      assertThat(TestStores.figure(s, "segments")).isEqualTo(2);
      for (int i = 0; i < 10; i++) {
        assertThat(s.get(bytes("b" + i))).isEqualTo(value(i, 300));
      }
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "4KiB")) {
      for (int i = 0; i < 10; i++) {
        assertThat(s.get(bytes("b" + i))).isEqualTo(value(i, 300));
      }
      assertThat(s.get(bytes("filler"))).hasSize(3000);
    }
    // Tear the batch: cut the second segment inside its last member. Recovery must drop the whole
    // batch.
    long size = Files.size(seg(TestStores.writeSegment(2)));
    TestStores.markCrashed(dir);
    try (RandomAccessFile f =
        new RandomAccessFile(seg(TestStores.writeSegment(2)).toFile(), "rw")) {
      f.setLength(size - 10);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "4KiB")) {
      for (int i = 0; i < 10; i++) {
        assertThat(s.get(bytes("b" + i))).as("b" + i).isNull();
      }
      assertThat(s.get(bytes("filler"))).hasSize(3000);
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isEqualTo(size - 10 - 32);
    }
  }

  @Test
  void emptyValuesAndMaximumLengthKeys_surviveReopen_fromHintsAndFromTheLog() {
    byte[] big = new byte[HashLogProvider.LIMITS.maxKeySize()];
    Arrays.fill(big, (byte) 0xFF);
    byte[] big2 = big.clone();
    big2[big2.length - 1] = 0x00;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
      s.put(bytes("e1"), new byte[0]);
      s.put(big, new byte[0]); // rolls: sealed segment, loaded from its hint
      s.put(bytes("e2"), new byte[0]);
      s.put(big2, bytes("v"));
      s.put(bytes("e3"), new byte[0]); // in the newest segment, recovered from the log
      assertThat(TestStores.figure(s, "segments")).isGreaterThan(1);
    }
    for (int round = 0; round < 2; round++) {
      try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
        assertThat(s.get(bytes("e1"))).isEmpty();
        assertThat(s.get(bytes("e2"))).isEmpty();
        assertThat(s.get(bytes("e3"))).isEmpty();
        assertThat(s.get(big)).isEmpty();
        assertThat(s.get(big2)).isEqualTo(bytes("v"));
        List<Entry> all = TestStores.scan(s, KeyRange.all().reverse());
        assertThat(all)
            .extracting(e -> e.key().length)
            .containsExactly(big.length, big.length, 2, 2, 2);
      }
    }
  }

  @Test
  void newestSegmentWithoutHeader_isRecreated_andOlderDataKept() throws IOException {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      s.put(bytes("a"), value(1, 3000));
      s.put(bytes("b"), value(2, 3000)); // rolls to the second segment
    }
    // A crash right after creating the third segment: the file exists, its header never reached the
    // disk.
    TestStores.markCrashed(dir);
    Files.write(seg(TestStores.writeSegment(3)), new byte[4096]);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      assertThat(s.get(bytes("a"))).isEqualTo(value(1, 3000));
      assertThat(s.get(bytes("b"))).isEqualTo(value(2, 3000));
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isZero();
      s.put(bytes("c"), bytes("3"));
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      assertThat(s.get(bytes("c"))).isEqualTo(bytes("3"));
      assertThat(s.stats().keyCount()).isEqualTo(3);
    }
  }

  @Test
  void foreignFile_isRefusedAsCorrupt() throws IOException {
    Files.createDirectories(dir);
    byte[] foreign = new byte[100];
    Arrays.fill(foreign, (byte) 'x');
    Files.write(seg(1), foreign);
    assertThatThrownBy(() -> TestStores.open(dir, Durability.BUFFERED).close())
        .isInstanceOfSatisfying(
            StoreCorruptedException.class,
            e -> {
              assertThat(e.getMessage()).contains("bad magic number");
              assertThat(e.offset()).isZero();
            });
    assertThat(Files.readAllBytes(seg(1))).isEqualTo(foreign);
  }
}
