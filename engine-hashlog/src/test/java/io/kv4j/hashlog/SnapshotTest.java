package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.StoreClosedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read snapshots: {@link HashLogSnapshot} on the scan view, pinned against compaction. */
class SnapshotTest {
  @TempDir Path dir;

  /** Three hashes for every key: most look-ups walk collisions. */
  private static final KeyDir.Hasher FEW_HASHES = key -> key.length % 3;

  /** Keys that share their first 8 bytes, short keys, and keys that differ only by a zero byte. */
  private static byte[] key(int i) {
    switch (i % 4) {
      case 0:
        return bytes("prefix00" + i);
      case 1:
        return bytes("prefix00" + i + "-long-suffix");
      case 2:
        return Arrays.copyOf(bytes("k" + i), 3 + i % 5); // zero-padded short keys
      default:
        return bytes("" + (char) ('a' + i % 26));
    }
  }

  private static String show(byte[] k) {
    return Arrays.toString(k);
  }

  @Test
  void snapshot_getGetAllAndScan_matchTheModelAtItsPoint_acrossWritesRollsAndCompactions() {
    long seed = 20261202L;
    SplittableRandom rnd = new SplittableRandom(seed);
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            FEW_HASHES,
            "segment-size",
            "4096",
            "compaction-threads",
            "0")) {
      TreeMap<String, byte[]> model = new TreeMap<>();
      Map<String, byte[]> keyBytes = new TreeMap<>();
      for (int round = 0; round < 4; round++) {
        for (int op = 0; op < 400; op++) {
          byte[] k = key(rnd.nextInt(200));
          keyBytes.put(show(k), k);
          if (rnd.nextInt(5) == 0) {
            s.delete(k);
            model.remove(show(k));
          } else {
            byte[] v = bytes("v" + round + "-" + op + "-" + "x".repeat(rnd.nextInt(100)));
            s.put(k, v);
            model.put(show(k), v);
          }
        }
        TreeMap<String, byte[]> at = new TreeMap<>(model);
        try (Snapshot snap = s.snapshot()) {
          // Change everything after the snapshot, and compact three times.
          for (int c = 0; c < 3; c++) {
            for (byte[] k : keyBytes.values()) {
              if (rnd.nextBoolean()) {
                s.delete(k);
                model.remove(show(k));
              } else {
                byte[] v = bytes("after-" + c);
                s.put(k, v);
                model.put(show(k), v);
              }
            }
            s.compact();
          }
          assertThat(TestStores.figure(s, "retired-segments-pinned"))
              .as("seed %s: compacted segments stay mapped for the snapshot", seed)
              .isPositive();
          List<byte[]> all = new ArrayList<>(keyBytes.values());
          List<byte[]> got = snap.getAll(all);
          for (int i = 0; i < all.size(); i++) {
            byte[] k = all.get(i);
            assertThat(snap.get(k))
                .as("seed %s round %s key %s", seed, round, show(k))
                .isEqualTo(at.get(show(k)));
            assertThat(got.get(i))
                .as("seed %s getAll key %s", seed, show(k))
                .isEqualTo(at.get(show(k)));
          }
          assertThat(snap.get(bytes("never-written"))).isNull();
          List<Entry> scanned = new ArrayList<>();
          snap.scan(KeyRange.all()).forEachRemaining(scanned::add);
          assertThat(scanned).as("seed %s: one entry per live key", seed).hasSize(at.size());
          for (Entry e : scanned) {
            assertThat(e.value()).isEqualTo(at.get(show(e.key())));
          }
          List<Entry> reverse = new ArrayList<>();
          snap.scan(KeyRange.all().reverse()).forEachRemaining(reverse::add);
          assertThat(reverse).hasSize(at.size());
        }
        for (byte[] k : keyBytes.values()) {
          assertThat(s.get(k))
              .as("seed %s store after the snapshot", seed)
              .isEqualTo(model.get(show(k)));
        }
        s.compact(); // reaps what the closed snapshot pinned
        assertThat(TestStores.figure(s, "retired-segments-pinned")).isZero();
        assertThat(TestStores.figure(s, "open-snapshots")).isZero();
      }
    }
  }

  @Test
  void snapshotClose_releasesItsPinOnce_andDeletedSegmentsAreUnmapped() throws Exception {
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "4096", "compaction-threads", "0")) {
      for (int i = 0; i < 200; i++) {
        s.put(bytes("k" + i), bytes("old-" + i + "-" + "y".repeat(100)));
      }
      Snapshot snap = s.snapshot();
      var cursor = snap.scan(KeyRange.all());
      for (int i = 0; i < 200; i++) {
        s.put(bytes("k" + i), bytes("new-" + i));
      }
      s.compact();
      assertThat(TestStores.figure(s, "retired-segments-pinned")).isPositive();
      assertThat(snap.get(bytes("k7"))).isEqualTo(bytes("old-7-" + "y".repeat(100)));
      assertThat(cursor.next().value()).startsWith(bytes("old-"));
      snap.close();
      assertThatThrownBy(cursor::hasNext)
          .as("the snapshot's cursor was closed with it")
          .isInstanceOf(IllegalStateException.class);
      snap.close(); // idempotent: released once
      assertThatThrownBy(() -> snap.get(bytes("k1"))).isInstanceOf(IllegalStateException.class);
      s.guard.reap();
      assertThat(TestStores.figure(s, "retired-segments-pinned")).isZero();
      String real = dir.toRealPath().toString();
      assertThat(
              Files.readAllLines(Path.of("/proc/self/maps")).stream()
                  .filter(l -> l.contains(real) && l.contains("(deleted)")))
          .as("no mapping of a deleted segment remains")
          .isEmpty();
      assertThat(s.get(bytes("k7"))).isEqualTo(bytes("new-7"));
    }
  }

  @Test
  void storeClosedUnderASnapshotInUse_readsEndWithStoreClosedException() throws Exception {
    HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "4096", "compaction-threads", "0");
    for (int i = 0; i < 300; i++) {
      s.put(bytes("k" + i), bytes("v" + i + "-" + "z".repeat(200)));
    }
    Snapshot snap = s.snapshot();
    for (int i = 0; i < 300; i++) {
      s.put(bytes("k" + i), bytes("w" + i));
    }
    s.compact(); // the snapshot now reads from retired segments only
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong reads = new AtomicLong();
    AtomicReference<Throwable> ended = new AtomicReference<>();
    Thread reader =
        new Thread(
            () -> {
              try {
                for (int i = 0; !stop.get(); i++) {
                  byte[] v = snap.get(bytes("k" + (i % 300)));
                  assertThat(v).isEqualTo(bytes("v" + (i % 300) + "-" + "z".repeat(200)));
                  snap.scan(KeyRange.prefix(bytes("k1"))).forEachRemaining(e -> {});
                  reads.incrementAndGet();
                }
              } catch (Throwable t) {
                ended.set(t);
              }
            });
    reader.start();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (reads.get() < 100 && System.nanoTime() < deadline && reader.isAlive()) {
      Thread.onSpinWait();
    }
    assertThat(reads.get())
        .as("reads before the close (%s)", ended.get())
        .isGreaterThanOrEqualTo(100);
    s.close();
    reader.join(30_000);
    stop.set(true);
    assertThat(reader.isAlive()).isFalse();
    assertThat(ended.get())
        .as("a read after the close ends with a clear error, never a crash or wrong bytes")
        .isInstanceOfAny(StoreClosedException.class, IllegalStateException.class);
    assertThatThrownBy(() -> snap.get(bytes("k1"))).isInstanceOf(StoreClosedException.class);
    snap.close();
    try (HashLogStore again = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(again.get(bytes("k5"))).isEqualTo(bytes("w5"));
    }
  }

  @Test
  void snapshot_ofAReadOnlyStore_reads() {
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC)) {
      s.put(bytes("a"), bytes("1"));
      s.put(bytes("b"), bytes("2"));
    }
    HashLogStore ro =
        HashLogProvider.open(
            TestStores.config(dir, Durability.SYNC).readOnly(true).build(),
            HashLogProvider.seededHasher(42));
    try (ro;
        Snapshot snap = ro.snapshot()) {
      assertThat(snap.get(bytes("a"))).isEqualTo(bytes("1"));
      assertThat(snap.getAll(List.of(bytes("b"), bytes("c")))).containsExactly(bytes("2"), null);
    }
  }
}
