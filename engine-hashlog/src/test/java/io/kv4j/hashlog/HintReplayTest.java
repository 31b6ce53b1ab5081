package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hints' entries are replayed into the index at open in batches sorted by table slot ({@link
 * HintReplay}): whatever the batch size, an open must give the same keys, values and byte
 * accounting as applying every entry in log order (a batch of one entry).
 */
class HintReplayTest {
  @TempDir Path dir;

  /** Every key in one slot: the sort must keep log order among all of them. */
  private static final KeyDir.Hasher SAME = key -> 777L;

  private static final int[] BATCHES = {1, 2, 3, 7, 64, 0};

  /** Opens read-only with the given hint replay sizes. */
  private HashLogStore openReadOnly(KeyDir.Hasher hasher, int batch, int pool) {
    return HashLogProvider.open(
        TestStores.config(dir, Durability.BUFFERED).readOnly(true).build(),
        hasher,
        Storage.NIO,
        new HintReplay.Sizes(batch, pool));
  }

  @Test
  void reopen_anyBatchSize_sameContentAndAccountingAsLogOrder() {
    long seed = new SplittableRandom().nextLong();
    check(seed, HashLogProvider.seededHasher(42));
  }

  @Test
  void reopen_everyKeyInOneSlot_keepsLogOrderOfEachKey() {
    long seed = new SplittableRandom().nextLong();
    check(seed, SAME);
  }

  private void check(long seed, KeyDir.Hasher hasher) {
    TreeMap<String, String> model = fill(seed, hasher);
    String ctx = "seed " + seed;
    Snapshot logOrder = null;
    for (int batch : BATCHES) {
      try (HashLogStore s = openReadOnly(hasher, batch, 0)) {
        Snapshot now = Snapshot.of(s);
        assertThat(now.content).as(ctx + ", batch " + batch).isEqualTo(model);
        assertThat(TestStores.figure(s, "hint-entries-replayed"))
            .as(ctx + ": the sealed segments came from their hints")
            .isGreaterThan(0);
        if (logOrder == null) {
          logOrder = now;
        } else {
          assertThat(now.accounting)
              .as(ctx + ", batch " + batch + ": live and tombstone bytes per segment")
              .isEqualTo(logOrder.accounting);
        }
        s.verify();
      }
    }
  }

  /**
   * Random puts, overwrites, deletes and batches over few keys, so that most keys have entries in
   * several segments and in one batch; small segments, no compaction (the files stay as written).
   */
  private TreeMap<String, String> fill(long seed, KeyDir.Hasher hasher) {
    SplittableRandom r = new SplittableRandom(seed);
    TreeMap<String, String> model = new TreeMap<>();
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, hasher, "segment-size", "4KiB", "compaction-threads", "0")) {
      for (int op = 0; op < 3000; op++) {
        String k = "k" + r.nextInt(hasher == SAME ? 40 : 150);
        int what = r.nextInt(10);
        if (what < 6) {
          String v = "v" + op + "-" + "x".repeat(r.nextInt(40));
          s.put(TestStores.bytes(k), TestStores.bytes(v));
          model.put(k, v);
        } else if (what < 9) {
          s.delete(TestStores.bytes(k));
          model.remove(k);
        } else {
          String k2 = "k" + r.nextInt(40);
          String v = "b" + op;
          s.write(
              new WriteBatch()
                  .put(TestStores.bytes(k), TestStores.bytes(v))
                  .delete(TestStores.bytes(k2)));
          model.put(k, v);
          model.remove(k2);
        }
      }
      assertThat(s.segments().length).as("seed " + seed).isGreaterThan(10);
    }
    return model;
  }

  /** What an open loaded: the content, and each segment's live and tombstone bytes. */
  private static final class Snapshot {
    final Map<String, String> content = new TreeMap<>();
    final List<String> accounting = new ArrayList<>();

    static Snapshot of(HashLogStore s) {
      Snapshot out = new Snapshot();
      for (Entry e : TestStores.scan(s, KeyRange.all())) {
        out.content.put(
            new String(e.key(), java.nio.charset.StandardCharsets.UTF_8),
            new String(e.value(), java.nio.charset.StandardCharsets.UTF_8));
      }
      for (Segment g : s.segments()) {
        out.accounting.add(g.id + ":" + g.liveBytes + "/" + g.tombstoneBytes);
      }
      return out;
    }
  }

  @Test
  void reopen_keyPoolFull_endsBatchesEarlyAndKeepsLogOrder() {
    long seed = new SplittableRandom().nextLong();
    SplittableRandom r = new SplittableRandom(seed);
    String prefix = "p".repeat(20 << 10); // 20 KiB keys: the pool at its floor holds three
    TreeMap<String, String> model = new TreeMap<>();
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "256KiB", "compaction-threads", "0")) {
      for (int op = 0; op < 400; op++) {
        String k = prefix + r.nextInt(12);
        if (r.nextInt(4) == 0) {
          s.delete(TestStores.bytes(k));
          model.remove(k);
        } else {
          s.put(TestStores.bytes(k), TestStores.bytes("v" + op));
          model.put(k, "v" + op);
        }
      }
      assertThat(s.segments().length).as("seed " + seed).isGreaterThan(5);
    }
    try (HashLogStore s = openReadOnly(HashLogProvider.seededHasher(42), 0, 1)) {
      assertThat(Snapshot.of(s).content).as("seed " + seed).isEqualTo(model);
      assertThat(TestStores.figure(s, "hint-entries-replayed")).isGreaterThan(100);
    }
  }

  @Test
  void batchFor_boundsTheBatchByHeap() {
    assertThat(HintReplay.batchFor(1L << 20)).isEqualTo(HintReplay.MIN_BATCH);
    assertThat(HintReplay.batchFor(6L << 30)).isEqualTo(HintReplay.MAX_BATCH);
    long mid = 512L << 20;
    assertThat(HintReplay.batchFor(mid))
        .isBetween(HintReplay.MIN_BATCH, HintReplay.MAX_BATCH)
        .satisfies(b -> assertThat(b * 68L).isLessThanOrEqualTo(mid / 16));
  }

  @Test
  void reopen_writable_afterReplay_writesAndReopensAgain() {
    long seed = new SplittableRandom().nextLong();
    TreeMap<String, String> model = fill(seed, HashLogProvider.seededHasher(42));
    try (HashLogStore s =
        HashLogProvider.open(
            TestStores.config(dir, Durability.BUFFERED).option("segment-size", "4KiB").build(),
            HashLogProvider.seededHasher(42),
            Storage.NIO,
            new HintReplay.Sizes(5, 0))) {
      s.put(TestStores.bytes("after"), TestStores.bytes("reopen"));
      model.put("after", "reopen");
      s.compact();
    }
    try (HashLogStore s =
        HashLogProvider.open(
            StoreConfig.builder("hashlog").path(dir).readOnly(true).build(),
            HashLogProvider.seededHasher(42))) {
      assertThat(Snapshot.of(s).content).as("seed " + seed).isEqualTo(model);
      s.verify();
    }
  }
}
