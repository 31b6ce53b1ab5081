package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FailureAndOptionsTest {
  @TempDir Path dir;

  @Test
  void fsyncFailure_failsWritesAndSyncUntilReopened_readsGoOn() {
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC)) {
      s.put(bytes("a"), bytes("1"));
      s.log.commit.injectForceFailure = true;
      assertThatThrownBy(() -> s.put(bytes("b"), bytes("2")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("fsync")
          .hasMessageContaining("hashlog");
      s.log.commit.injectForceFailure = false;
      assertThatThrownBy(() -> s.put(bytes("c"), bytes("3")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      assertThatThrownBy(() -> s.write(new WriteBatch().delete(bytes("a"))))
          .isInstanceOf(StoreIOException.class);
      assertThatThrownBy(() -> s.delete(bytes("a"))).isInstanceOf(StoreIOException.class);
      assertThatThrownBy(s::sync)
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      assertThat(s.get(bytes("a"))).isEqualTo(bytes("1"));
      assertThat(TestStores.figure(s, "failed")).isEqualTo(1);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC)) {
      assertThat(s.get(bytes("a"))).isEqualTo(bytes("1"));
      assertThat(s.get(bytes("c"))).isNull();
      s.put(bytes("c"), bytes("3"));
      assertThat(TestStores.figure(s, "failed")).isZero();
    }
  }

  @Test
  void syncMode_concurrentWriters_shareFsyncs() throws Exception {
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC)) {
      int threads = 4;
      int perThread = 100;
      Thread[] ts = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        int id = t;
        ts[t] =
            new Thread(
                () -> {
                  for (int i = 0; i < perThread; i++) {
                    s.put(bytes("t" + id + "-" + i), bytes("v"));
                  }
                });
        ts[t].start();
      }
      for (Thread t : ts) {
        t.join();
      }
      assertThat(s.stats().keyCount()).isEqualTo(threads * perThread);
      long forces = TestStores.figure(s, "fsyncs");
      assertThat(forces).isPositive().isLessThanOrEqualTo(threads * perThread);
      System.out.println("SYNC: " + threads * perThread + " writes, " + forces + " fsyncs");
    }
  }

  @Test
  void liveBytesPerSegment_followOverwritesAndDeletes_acrossReopen() {
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "4KiB", "compaction-threads", "0")) {
      s.put(bytes("a"), new byte[1000]); // record 12 + 1 + 1000
      s.put(bytes("b"), new byte[1000]);
      assertThat(s.liveBytes(1)).isEqualTo(2 * 1013);
      s.put(bytes("a"), new byte[3000]); // does not fit: the second segment
      assertThat(s.liveBytes(1)).isEqualTo(1013);
      assertThat(s.liveBytes(TestStores.writeSegment(2))).isEqualTo(3013);
      s.delete(bytes("b"));
      assertThat(s.liveBytes(1)).isZero();
      assertThat(TestStores.figure(s, "dead-bytes")).isEqualTo(2 * 1013);
      assertThat(TestStores.figure(s, "tombstone-bytes")).isEqualTo(13);
    }
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "4KiB", "compaction-threads", "0")) {
      assertThat(s.liveBytes(1)).isZero();
      assertThat(TestStores.figure(s, "live-bytes")).isEqualTo(3013);
      assertThat(TestStores.figure(s, "dead-bytes")).isEqualTo(2 * 1013);
    }
  }

  @Test
  void options_areValidatedWithNameAndRange() {
    assertThatThrownBy(
            () -> StoreConfig.builder("hashlog").path(dir).option("segment-size", "1KiB").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("segment-size");
    assertThatThrownBy(
            () ->
                StoreConfig.builder("hashlog")
                    .path(dir)
                    .option("verify-checksums-on-read", "maybe")
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("verify-checksums-on-read");
    assertThat(new HashLogProvider().options())
        .extracting(o -> o.name())
        .containsExactly(
            "segment-size",
            "verify-checksums-on-read",
            "initial-index-capacity",
            "compaction-garbage-threshold",
            "compaction-rate-limit",
            "compaction-threads",
            "preload",
            "backup-hard-links",
            "max-open-files");
    assertThat(HashLogProvider.BACKUP_HARD_LINKS.defaultValue()).isFalse();
    assertThat(HashLogProvider.MAX_OPEN_FILES.defaultValue()).isEqualTo(1000);
    assertThat(HashLogProvider.SEGMENT_SIZE.defaultValue()).isEqualTo(8L << 20);
    assertThat(HashLogProvider.SEGMENT_SIZE.unit()).isEqualTo("bytes");
  }

  @Test
  void openedThroughStores_declaresItsFeaturesAndLocksTheDirectory() {
    StoreConfig c =
        StoreConfig.parse(
            "hashlog:" + dir.resolve("s") + "?durability=buffered&segment-size=64KiB");
    try (var s = Stores.open(c)) {
      assertThat(s.info().features())
          .contains(
              Feature.ORDERED_SCAN,
              Feature.REVERSE_SCAN,
              Feature.SNAPSHOT_SCAN,
              Feature.ATOMIC_BATCH,
              Feature.PERSISTENT);
      assertThat(s.info().limits().maxKeySize()).isEqualTo(64 << 10);
      assertThatThrownBy(() -> Stores.open(c)).isInstanceOf(StoreLockedException.class);
      s.put(bytes("k"), bytes("v"));
      assertThat(s.stats().figures())
          .containsKeys("segments", "index-bytes-per-key", "truncated-tail-bytes", "live-bytes");
    }
  }

  @Test
  void readOnlyOpen_neverModifiesFiles_andMissingDirectoryIsAnError() throws Exception {
    assertThatThrownBy(
            () ->
                Stores.open(
                    StoreConfig.builder("hashlog")
                        .path(dir.resolve("missing"))
                        .createIfMissing(false)
                        .build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("missing");
    Path d = dir.resolve("ro");
    try (HashLogStore s = TestStores.open(d, Durability.BUFFERED)) {
      s.put(bytes("a"), bytes("1"));
    }
    Path seg = d.resolve(Segment.fileName(1));
    TestStores.markCrashed(d);
    Files.write(seg, new byte[] {9, 9, 9}, java.nio.file.StandardOpenOption.APPEND);
    byte[] before = Files.readAllBytes(seg);
    try (var s = Stores.open(StoreConfig.builder("hashlog").path(d).readOnly(true).build())) {
      assertThat(s.get(bytes("a"))).isEqualTo(bytes("1"));
      assertThat(s.stats().figures().get("truncated-tail-bytes").longValue()).isEqualTo(3);
      assertThatThrownBy(() -> s.put(bytes("b"), bytes("2")))
          .isInstanceOf(UnsupportedOperationException.class);
    }
    assertThat(Files.readAllBytes(seg)).isEqualTo(before);
  }

  @Test
  void sync_buffered_forcesEverySegmentSealedBeforeIt() {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4KiB")) {
      for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 30; i++) {
          s.put(bytes("k" + round + "-" + i), new byte[300]); // rolls every ~13 puts
        }
        s.sync();
        // Whatever the sealer thread has or has not done yet, sync() covered the sealed segments.
        for (Segment seg : s.segments()) {
          if (seg != null && seg != s.activeSegment()) {
            assertThat(seg.forced).as("round %d: segment %s forced by sync()", round, seg).isTrue();
          }
        }
      }
      assertThat(TestStores.figure(s, "segments")).isGreaterThan(20);
    }
  }
}
