package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.DamagedRegion;
import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads at open, in {@code verify()} and in salvage go through the store's {@link Storage}: a read
 * the disk fails ({@link FaultyStorage#failReads}, an {@code EIO} that names no file) refuses the
 * open, or fails the check, with a {@link StoreIOException} naming the file that could not be read;
 * an unreadable hint only costs its rebuild; salvage reports the unreadable segment as a damaged
 * region and hands over the other segments' entries. Nothing is left locked: the store opens again
 * once the file reads.
 */
final class ReadFaultTest {
  private static final int KEYS = 300;

  @TempDir Path tmp;

  /** A closed store of several sealed segments, each with its hint. */
  private Path store() {
    Path dir = tmp.resolve("store");
    try (HashLogStore s =
        TestStores.open(dir, Durability.SYNC, "segment-size", "4KiB", "compaction-threads", "0")) {
      for (int i = 0; i < KEYS; i++) {
        s.put(key(i), value(i));
      }
      assertThat(s.segments().length).isGreaterThan(3);
    }
    return dir;
  }

  private static HashLogStore open(Path dir, FaultyStorage storage) {
    return TestStores.open(dir, Durability.SYNC, storage, "segment-size", "4KiB");
  }

  @Test
  void open_sealedSegmentUnreadable_refusedNamingTheSegment() {
    Path dir = store();
    Path seg = dir.resolve(Segment.fileName(1));
    FaultyStorage storage = new FaultyStorage();
    storage.failReads(Segment.fileName(1));
    assertThatThrownBy(() -> open(dir, storage).close())
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("cannot read " + seg)
        .hasMessageContaining("Input/output error");
    assertReopensWhole(dir);
  }

  @Test
  void open_manifestUnreadable_refusedNamingTheManifest() {
    Path dir = store();
    FaultyStorage storage = new FaultyStorage();
    storage.failReads(Manifest.FILE_NAME);
    assertThatThrownBy(() -> open(dir, storage).close())
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("cannot read " + Manifest.path(dir))
        .hasMessageContaining("Input/output error");
    assertReopensWhole(dir);
  }

  @Test
  void open_hintUnreadable_opensAndRebuildsIt() {
    Path dir = store();
    FaultyStorage storage = new FaultyStorage();
    storage.failReads(Segment.hintName(1));
    try (HashLogStore s = open(dir, storage)) {
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isEqualTo(1);
      assertContents(s);
    }
  }

  @Test
  void verify_segmentUnreadable_failsNamingTheSegment() {
    Path dir = store();
    FaultyStorage storage = new FaultyStorage();
    try (HashLogStore s = open(dir, storage)) {
      s.verify();
      Path seg = dir.resolve(Segment.fileName(1));
      storage.failReads(Segment.fileName(1));
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("cannot read " + seg)
          .hasMessageContaining("Input/output error");
      storage.failReads(null);
      s.verify();
      assertContents(s);
    }
  }

  @Test
  void salvage_segmentUnreadable_reportsItNamedAndSalvagesTheOtherSegments() {
    Path dir = store();
    FaultyStorage storage = new FaultyStorage();
    Map<String, byte[]> all = salvage(dir, storage);
    assertThat(all).hasSize(KEYS);
    storage.failReads(Segment.fileName(1));
    Map<String, byte[]> got = new TreeMap<>();
    List<DamagedRegion> damage =
        Salvage.run(
            StoreConfig.builder("hashlog").path(dir).readOnly(true).build(),
            (ks, k, v) -> got.put(new String(k, StandardCharsets.UTF_8), v),
            storage);
    assertThat(damage)
        .as("regions found")
        .anySatisfy(
            d -> {
              assertThat(d.file().getFileName()).hasToString(Segment.fileName(1));
              assertThat(d.problem()).contains("cannot be read", "Input/output error");
            });
    assertThat(got.size()).as("entries of the other segments").isBetween(1, KEYS - 1);
    got.forEach((k, v) -> assertThat(v).as(k).isEqualTo(all.get(k)));
  }

  private static Map<String, byte[]> salvage(Path dir, Storage storage) {
    Map<String, byte[]> got = new TreeMap<>();
    Salvage.run(
        StoreConfig.builder("hashlog").path(dir).readOnly(true).build(),
        (ks, k, v) -> got.put(new String(k, StandardCharsets.UTF_8), v),
        storage);
    return got;
  }

  private static void assertReopensWhole(Path dir) {
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "4KiB")) {
      s.verify();
      assertContents(s);
    }
  }

  private static void assertContents(HashLogStore s) {
    for (int i = 0; i < KEYS; i++) {
      assertThat(s.get(key(i))).as("key %d", i).isEqualTo(value(i));
    }
  }

  private static byte[] key(int i) {
    return TestStores.bytes("key-" + i);
  }

  private static byte[] value(int i) {
    return TestStores.bytes("value-" + i + "-".repeat(i % 50));
  }
}
