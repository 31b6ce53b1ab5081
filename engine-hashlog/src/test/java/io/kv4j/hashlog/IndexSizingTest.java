package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The index's size at scale (issue #27): the slot arithmetic near Java's 2^31 array limit, a table
 * that reaches its largest size (injected small here: a real one is 8 GiB), and the open sizing the
 * table once from the hints instead of doubling through every size.
 */
class IndexSizingTest {
  @TempDir Path dir;

  /** Keys are 8-byte numbers; a key's "record location" is the number + 1, so no segment needed. */
  private static final KeyDir.KeySource SOURCE =
      (loc, key, span) -> ByteBuffer.wrap(key).getLong() == loc - 1;

  private static byte[] key(long i) {
    return ByteBuffer.allocate(8).putLong(i).array();
  }

  private static long hash(byte[] k) {
    return KeyDir.fix(KeyHash.hash(k, 99));
  }

  private static long put(KeyDir d, long i) {
    byte[] k = key(i);
    return d.put(hash(k), k, i + 1, 100, SOURCE);
  }

  private static long find(KeyDir d, long i) {
    byte[] k = key(i);
    return d.find(hash(k), k, SOURCE, false);
  }

  @Test
  void capacityFor_boundariesUpToAndPastTheArrayLimit() {
    int max = KeyDir.MAX_CAPACITY;
    assertThat(max).isEqualTo(1 << 29);
    assertThat(KeyDir.capacityFor(0, max)).isEqualTo(16);
    assertThat(KeyDir.capacityFor(-5, max)).isEqualTo(16);
    assertThat(KeyDir.capacityFor(12, max)).isEqualTo(32); // 12 keys need 17 slots at 3/4
    // 100 million keys fit in 2^27 slots at a load of 0.745: a 2 GiB table, 21.5 B per key.
    assertThat(KeyDir.capacityFor(100_000_000, max)).isEqualTo(1 << 27);
    // The most 2^27 slots hold at 3/4, and one more.
    assertThat(KeyDir.capacityFor(100_663_295, max)).isEqualTo(1 << 27);
    assertThat(KeyDir.capacityFor(100_663_296, max)).isEqualTo(1 << 28);
    // Beyond what the largest table holds at 3/4: the largest table, never 2^30 (2^31 longs).
    assertThat(KeyDir.capacityFor(402_653_184, max)).isEqualTo(max);
    assertThat(KeyDir.capacityFor(Integer.MAX_VALUE, max)).isEqualTo(max);
    assertThat(KeyDir.capacityFor(Long.MAX_VALUE, max)).isEqualTo(max);
    assertThat(KeyDir.initialBytes(Integer.MAX_VALUE)).isEqualTo(8L << 30);
    assertThat(KeyDir.initialBytes(Long.MAX_VALUE)).isEqualTo(8L << 30);
    assertThat(KeyDir.initialBytes(100_000_000)).isEqualTo(2L << 30);
    // An injected maximum caps the same way.
    assertThat(KeyDir.capacityFor(1000, 64)).isEqualTo(64);
    assertThat(new KeyDir(1 << 20, 64).capacity()).isEqualTo(64);
  }

  @Test
  void newKeyDir_badMaximum_isRefused() {
    for (int bad : new int[] {8, 100, 1 << 30, -16}) {
      assertThatThrownBy(() -> new KeyDir(16, bad))
          .as("max %d", bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void put_atTheLargestTable_fillsToSevenEighthsThenRefusesNewKeysOnly() {
    KeyDir d = new KeyDir(16, 64);
    assertThat(d.maxKeys()).isEqualTo(56);
    for (long i = 0; i < 56; i++) {
      assertThat(put(d, i)).as("key %d", i).isZero();
    }
    assertThat(d.capacity()).isEqualTo(64);
    assertThat(d.size()).isEqualTo(56);
    assertThatThrownBy(() -> put(d, 56))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("index is full")
        .hasMessageContaining("56 keys");
    // The refusal changed nothing: every key still found, the refused one absent.
    assertThat(d.size()).isEqualTo(56);
    for (long i = 0; i < 56; i++) {
      assertThat(find(d, i)).as("key %d", i).isEqualTo(i + 1);
    }
    assertThat(find(d, 56)).isZero();
    // Overwriting a key needs no new slot: still allowed.
    byte[] k7 = key(7);
    assertThat(d.put(hash(k7), k7, 1000, 100, (loc, key, span) -> loc == 8 || loc == 1000))
        .isEqualTo(8);
    // After a delete there is room again.
    assertThat(d.remove(hash(k7), k7, (loc, key, span) -> loc == 1000)).isEqualTo(1000);
    assertThat(put(d, 56)).isZero();
    assertThat(find(d, 56)).isEqualTo(57);
  }

  @Test
  void put_recovering_takesTheRecordsARefusedPutLeftInTheLog() {
    // A put refused at 7/8 had appended its record already; the open must load it, or the store
    // could never be opened again. While recovering the table fills to all but one slot.
    KeyDir d = new KeyDir(16, 64);
    d.recovering = true;
    assertThat(d.maxKeys()).isEqualTo(63);
    for (long i = 0; i < 63; i++) {
      assertThat(put(d, i)).as("key %d", i).isZero();
    }
    assertThatThrownBy(() -> put(d, 63)).isInstanceOf(StoreException.class);
    for (long i = 0; i < 64; i++) {
      // A full probe run still ends: the one empty slot, or the probe bound.
      assertThat(find(d, i)).as("key %d", i).isEqualTo(i < 63 ? i + 1 : 0);
    }
    d.recovering = false;
    assertThat(d.maxKeys()).isEqualTo(56);
    assertThatThrownBy(() -> put(d, 100)).isInstanceOf(StoreException.class);
    assertThat(d.size()).isEqualTo(63);
  }

  @Test
  void put_seededRandomKeys_growsOnlyToTheInjectedMaximum() {
    long seed = new SplittableRandom().nextLong();
    SplittableRandom r = new SplittableRandom(seed);
    KeyDir d = new KeyDir(16, 1 << 12);
    long[] keys = r.longs(3584, 0, Long.MAX_VALUE).distinct().toArray();
    for (long k : keys) {
      put(d, k);
    }
    assertThat(d.capacity()).as("seed %d", seed).isEqualTo(1 << 12);
    for (long k : keys) {
      assertThat(find(d, k)).as("seed %d key %d", seed, k).isEqualTo(k + 1);
    }
  }

  @Test
  void reserve_sizesOnceSoTheLoadNeverDoubles() {
    KeyDir d = new KeyDir(16);
    for (long i = 0; i < 10; i++) {
      put(d, i);
    }
    assertThat(d.reserve(100_000)).isTrue();
    int cap = d.capacity();
    assertThat(cap).isEqualTo(KeyDir.capacityFor(100_000, KeyDir.MAX_CAPACITY)).isEqualTo(1 << 18);
    // The keys put before the reservation were rehashed into the larger table.
    for (long i = 0; i < 10; i++) {
      assertThat(find(d, i)).isEqualTo(i + 1);
    }
    for (long i = 10; i < 100_000; i++) {
      put(d, i);
    }
    assertThat(d.capacity()).isEqualTo(cap);
    // A smaller reservation never shrinks it; one beyond the maximum stops at the maximum.
    assertThat(d.reserve(10)).isFalse();
    assertThat(d.capacity()).isEqualTo(cap);
    KeyDir small = new KeyDir(16, 256);
    assertThat(small.reserve(Long.MAX_VALUE)).isTrue();
    assertThat(small.capacity()).isEqualTo(256);
  }

  // ---------------------------------------------------------------- at open

  private static final int KEYS = 6000;

  private static byte[] storeKey(int i) {
    return TestStores.bytes(String.format("key-%08d", i));
  }

  private static byte[] value(int i, int round) {
    return TestStores.bytes("value-" + i + "-" + round + "-".repeat(i % 50));
  }

  private HashLogStore open() {
    return TestStores.open(
        dir, Durability.BUFFERED, "segment-size", "64KiB", "compaction-garbage-threshold", "0.9");
  }

  @Test
  void reopen_fromHints_sizesTheIndexOnceForTheKeysItLoads() {
    try (HashLogStore s = open()) {
      for (int i = 0; i < KEYS; i++) {
        s.put(storeKey(i), value(i, 0));
      }
    }
    try (HashLogStore s = open()) {
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isZero();
      long presized = TestStores.figure(s, "index-presized-keys");
      // Every sealed segment's hint counts exactly; the newest is estimated from its length.
      assertThat(presized).isBetween((long) KEYS * 9 / 10, (long) KEYS * 11 / 10);
      assertThat(TestStores.figure(s, "index-capacity"))
          .isEqualTo(KeyDir.capacityFor(presized, KeyDir.MAX_CAPACITY));
      for (int i = 0; i < KEYS; i++) {
        assertThat(s.get(storeKey(i))).as("key %d", i).isEqualTo(value(i, 0));
      }
    }
  }

  @Test
  void reopen_afterOverwritesAndDeletes_presizesForAtLeastTheLiveKeys() {
    try (HashLogStore s = open()) {
      for (int round = 0; round < 3; round++) {
        for (int i = 0; i < KEYS; i++) {
          s.put(storeKey(i), value(i, round));
        }
      }
      for (int i = 0; i < KEYS; i += 2) {
        s.delete(storeKey(i));
      }
    }
    try (HashLogStore s = open()) {
      long presized = TestStores.figure(s, "index-presized-keys");
      assertThat(presized).isGreaterThanOrEqualTo(KEYS / 2);
      assertThat(s.stats().keyCount()).isEqualTo(KEYS / 2);
      for (int i = 0; i < KEYS; i++) {
        assertThat(s.get(storeKey(i))).as("key %d", i).isEqualTo(i % 2 == 0 ? null : value(i, 2));
      }
    }
  }

  @Test
  void reopen_damagedAndMissingHintHeaders_estimateFromTheRestAndLoadEveryKey() throws IOException {
    try (HashLogStore s = open()) {
      for (int i = 0; i < KEYS; i++) {
        s.put(storeKey(i), value(i, 0));
      }
    }
    List<Path> hints;
    try (Stream<Path> files = Files.list(dir)) {
      hints = files.filter(p -> p.toString().endsWith(".hint")).sorted().toList();
    }
    assertThat(hints).hasSizeGreaterThan(4);
    // A count of 2^31-1 in a header whose checksum no longer matches, and a missing hint.
    try (FileChannel ch = FileChannel.open(hints.get(0), StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(4).putInt(0, Integer.MAX_VALUE), 8);
      ch.write(ByteBuffer.allocate(4).putInt(0, Integer.MAX_VALUE), 12);
    }
    Files.delete(hints.get(1));
    try (HashLogStore s = open()) {
      long presized = TestStores.figure(s, "index-presized-keys");
      assertThat(presized).isBetween((long) KEYS * 8 / 10, (long) KEYS * 12 / 10);
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isEqualTo(2);
      for (int i = 0; i < KEYS; i++) {
        assertThat(s.get(storeKey(i))).as("key %d", i).isEqualTo(value(i, 0));
      }
    }
  }

  @Test
  void presize_estimateAndHeapRule() throws IOException {
    try (HashLogStore s = open()) {
      for (int i = 0; i < KEYS; i++) {
        s.put(storeKey(i), value(i, 0));
      }
    }
    List<Integer> ids = Recovery.list(Storage.NIO, dir).segments;
    long keys = HintFile.estimateEntries(Storage.NIO, dir, ids);
    assertThat(keys).isBetween((long) KEYS * 9 / 10, (long) KEYS * 11 / 10);
    // The newest segment alone, without any hint: nothing to estimate from.
    assertThat(HintFile.estimateEntries(Storage.NIO, dir, ids.subList(ids.size() - 1, ids.size())))
        .isZero();
    assertThat(HintFile.estimateEntries(Storage.NIO, dir, List.of())).isZero();
    // A table of more than half the maximum heap is left to grow as keys arrive.
    assertThat(Opening.worthReserving(keys, 1L << 30)).isTrue();
    assertThat(Opening.worthReserving(keys, 2 * KeyDir.initialBytes(keys))).isTrue();
    assertThat(Opening.worthReserving(keys, 2 * KeyDir.initialBytes(keys) - 2)).isFalse();
    assertThat(Opening.worthReserving(0, 1L << 30)).isFalse();
    // 100 million keys: a 2 GiB table, reserved with -Xmx4g, not with -Xmx3g.
    assertThat(Opening.worthReserving(100_000_000, 4L << 30)).isTrue();
    assertThat(Opening.worthReserving(100_000_000, 3L << 30)).isFalse();
  }
}
