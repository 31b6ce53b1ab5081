package io.kv4j.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Memory-engine specifics; the full contract is checked by the TCK module's MemoryTckTest. */
class MemoryStoreTest {
  private final Store store = Stores.open("memory:");

  @Test
  void info_declaresFeaturesWithoutPersistence() {
    assertThat(store.info().features())
        .contains(Feature.ORDERED_SCAN, Feature.SNAPSHOT_SCAN, Feature.ATOMIC_BATCH)
        .doesNotContain(Feature.PERSISTENT);
    assertThat(store.info().location()).isEqualTo("memory:");
  }

  @Test
  void scan_isSnapshotWhileWriting() {
    store.put(new byte[] {1}, new byte[] {1});
    store.put(new byte[] {2}, new byte[] {2});
    List<Entry> seen = new ArrayList<>();
    try (Cursor c = store.scan(KeyRange.all())) {
      store.put(new byte[] {3}, new byte[] {3});
      store.delete(new byte[] {1});
      c.forEachRemaining(seen::add);
    }
    assertThat(seen).extracting(e -> e.key()[0]).containsExactly((byte) 1, (byte) 2);
    assertThat(store.get(new byte[] {1})).isNull();
  }

  @Test
  void stats_countKeysAndPayload() {
    store.write(
        new WriteBatch().put(new byte[] {1}, new byte[10]).put(new byte[] {2}, new byte[5]));
    store.put(new byte[] {1}, new byte[3]);
    assertThat(store.stats().keyCount()).isEqualTo(2);
    assertThat(store.stats().keyCountExact()).isTrue();
    assertThat(store.stats().figures().get("memory-payload-bytes")).isEqualTo(1L + 3 + 1 + 5);
    assertThat(store.stats().figures().get("memory-arena-bytes"))
        .as("one page, the smallest")
        .isEqualTo((long) Arena.MIN_PAGE);
  }

  @Test
  void close_closesCursorsAndRefusesUse() {
    store.put(new byte[] {1}, new byte[] {1});
    Cursor c = store.scan(KeyRange.all());
    store.close();
    assertThatThrownBy(c::hasNext).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> store.get(new byte[] {1}))
        .isInstanceOf(StoreClosedException.class)
        .hasMessageContaining("engine 'memory'");
  }

  @Test
  void readOnly_refusesWrites() {
    try (Store ro = Stores.open(StoreConfig.builder("memory").readOnly(true).build())) {
      assertThatThrownBy(() -> ro.put(new byte[] {1}, new byte[0]))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("read-only");
    }
  }

  @Test
  void compact_isANoOpThatKeepsDataAndCursors() {
    store.put(new byte[] {2}, new byte[] {2});
    store.put(new byte[] {1}, new byte[0]);
    List<Entry> seen = new ArrayList<>();
    try (Cursor c = store.scan(KeyRange.all())) {
      store.compact();
      c.forEachRemaining(seen::add);
    }
    assertThat(seen).extracting(e -> e.key()[0]).containsExactly((byte) 1, (byte) 2);
    assertThat(store.get(new byte[] {1})).isEmpty();
    assertThat(store.stats().keyCount()).isEqualTo(2);
  }

  @Test
  void compact_checksClosedThenReadOnly() {
    Store ro = Stores.open(StoreConfig.builder("memory").readOnly(true).build());
    assertThatThrownBy(ro::compact)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("read-only")
        .hasMessageContaining("engine 'memory'");
    ro.close();
    assertThatThrownBy(ro::compact).isInstanceOf(StoreClosedException.class);
  }

  @Test
  void overLimitKey_messageGivesLengthLimitAndEngine() {
    assertThatThrownBy(() -> store.put(new byte[(64 << 10) + 1], new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65537 bytes")
        .hasMessageContaining("limit of 65536")
        .hasMessageContaining("engine 'memory'");
  }

  @Test
  void get_racingClose_neverAnswersAbsentForAPresentKey() throws Exception {
    // Seeded-free: the race is scheduled by the threads; each round either reads the value or
    // throws StoreClosedException. Before the fix ~1 in 10,000 gets answered null.
    for (int round = 0; round < 2_000; round++) {
      Store s = Stores.open("memory:");
      byte[] k = {7};
      s.put(k, new byte[] {1});
      java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
      Thread closer =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                s.close();
              });
      closer.start();
      go.countDown();
      for (int i = 0; i < 50; i++) {
        byte[] v;
        try {
          v = s.get(k);
        } catch (StoreClosedException e) {
          break;
        }
        assertThat(v).as("round %d get %d: a present key read as absent", round, i).isNotNull();
      }
      closer.join();
    }
  }

  /**
   * Random puts, deletes and batches over a small key space, with scans, reverse scans and
   * snapshots taken between them and read after more writes: every read matches a model {@code
   * TreeMap} as it was when the scan or snapshot began (the hash map and the lazily ordered tree
   * must agree).
   */
  @Test
  void randomWritesBetweenScansAndSnapshots_matchAModel() {
    long seed = 20261206L;
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    java.util.TreeMap<byte[], byte[]> model =
        new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
    for (int step = 0; step < 20_000; step++) {
      byte[] k = {(byte) r.nextInt(64), (byte) r.nextInt(4)};
      int op = r.nextInt(100);
      if (op < 45) {
        byte[] v = {(byte) step, (byte) (step >> 8)};
        store.put(k, v);
        model.put(k, v);
      } else if (op < 75) {
        store.delete(k);
        model.remove(k);
      } else if (op < 85) {
        WriteBatch b = new WriteBatch();
        byte[] k2 = {(byte) r.nextInt(64), (byte) r.nextInt(4)};
        b.put(k, new byte[] {7}).delete(k2);
        store.write(b);
        model.put(k, new byte[] {7});
        model.remove(k2);
      } else if (op < 95) {
        List<Entry> expected = entries(model, false);
        try (io.kv4j.Snapshot snap = store.snapshot();
            Cursor c = store.scan(KeyRange.all())) {
          for (int w = 0; w < 5; w++) { // writes after the scan began
            byte[] kw = {(byte) r.nextInt(64), (byte) r.nextInt(4)};
            store.put(kw, new byte[] {9});
            model.put(kw, new byte[] {9});
          }
          List<Entry> now = new ArrayList<>(); // a scan now brings the tree up to date
          store.forEach(KeyRange.all(), now::add);
          assertThat(now)
              .as("scan after writes at step %d (seed %d)", step, seed)
              .isEqualTo(entries(model, false));
          List<Entry> seen = new ArrayList<>();
          c.forEachRemaining(seen::add);
          assertThat(seen).as("scan at step %d (seed %d)", step, seed).isEqualTo(expected);
          for (Entry e : expected) {
            assertThat(snap.get(e.key()))
                .as("snapshot get at step %d (seed %d)", step, seed)
                .isEqualTo(e.value());
          }
        }
      } else {
        List<Entry> seen = new ArrayList<>();
        try (Cursor c = store.scan(KeyRange.all().reverse())) {
          c.forEachRemaining(seen::add);
        }
        assertThat(seen)
            .as("reverse scan at step %d (seed %d)", step, seed)
            .isEqualTo(entries(model, true));
      }
      assertThat(store.get(k)).as("get at step %d (seed %d)", step, seed).isEqualTo(model.get(k));
    }
    assertThat(store.stats().keyCount()).isEqualTo(model.size());
  }

  private static List<Entry> entries(java.util.TreeMap<byte[], byte[]> m, boolean reverse) {
    List<Entry> out = new ArrayList<>();
    (reverse ? m.descendingMap() : m).forEach((k, v) -> out.add(new Entry(k, v)));
    return out;
  }

  /** Keys put and deleted without a scan between do not pile up as dirty keys. */
  @Test
  void churnWithoutScans_keepsDirtyKeysBounded() {
    MemoryStore m = (MemoryStore) Stores.open("memory:");
    for (int i = 0; i < 200_000; i++) {
      byte[] k = java.nio.ByteBuffer.allocate(4).putInt(i).array();
      m.put(k, k);
      m.delete(k);
    }
    assertThat(m.dirtyKeys()).isLessThanOrEqualTo(1025);
    assertThat(m.stats().keyCount()).isZero();
    m.close();
  }

  /**
   * The tree is built at the first scan, dropped when half the keys changed since, and built again
   * at the next scan: scans, reverse scans and a snapshot taken before the drop all see exactly
   * what they must.
   */
  @Test
  void treeDroppedAfterHeavyChurn_scansAndEarlierSnapshotStayExact() {
    long seed = 7_319L;
    java.util.Random random = new java.util.Random(seed);
    MemoryStore m = (MemoryStore) Stores.open("memory:");
    java.util.TreeMap<byte[], byte[]> model =
        new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
    for (int i = 0; i < 5_000; i++) {
      byte[] k = java.nio.ByteBuffer.allocate(4).putInt(random.nextInt(8_000)).array();
      m.put(k, k);
      model.put(k, k);
    }
    assertThat(m.dirtyKeys()).as("no tree yet: nothing noted (seed %d)", seed).isZero();
    assertThat(scan(m, false)).as("first scan (seed %d)", seed).isEqualTo(entries(model, false));
    java.util.TreeMap<byte[], byte[]> before = new java.util.TreeMap<>(model);
    try (io.kv4j.Snapshot snap = m.snapshot()) {
      for (int i = 0; i < 6_000; i++) {
        byte[] k = java.nio.ByteBuffer.allocate(4).putInt(random.nextInt(8_000)).array();
        if (random.nextInt(3) == 0) {
          m.delete(k);
          model.remove(k);
        } else {
          byte[] v = java.nio.ByteBuffer.allocate(8).putLong(random.nextLong()).array();
          m.put(k, v);
          model.put(k, v);
        }
      }
      assertThat((long) m.dirtyKeys())
          .as("the tree was dropped rather than fed every key (seed %d)", seed)
          .isLessThanOrEqualTo(m.stats().keyCount() / 2 + 1024);
      List<Entry> seen = new ArrayList<>();
      try (io.kv4j.Cursor c = snap.scan(io.kv4j.KeyRange.all())) {
        while (c.hasNext()) {
          seen.add(c.next());
        }
      }
      assertThat(seen).as("snapshot from before (seed %d)", seed).isEqualTo(entries(before, false));
    }
    assertThat(scan(m, false)).as("scan after (seed %d)", seed).isEqualTo(entries(model, false));
    assertThat(scan(m, true)).as("reverse after (seed %d)", seed).isEqualTo(entries(model, true));
    m.close();
  }

  /**
   * A scan closed before the next writes leaves the tree to be updated in place (a scan-and-delete
   * loop, as FLUSHALL runs, copies nothing); an open cursor or snapshot keeps its tree as it was,
   * and once closed no longer costs a copy.
   */
  @Test
  void closedReaders_costNoCopy_openOnesKeepTheirTree() {
    MemoryStore m = (MemoryStore) Stores.open("memory:");
    java.util.TreeMap<byte[], byte[]> model =
        new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
    for (int i = 0; i < 3_000; i++) {
      byte[] k = java.nio.ByteBuffer.allocate(4).putInt(i * 7).array();
      m.put(k, k);
      model.put(k, k);
    }
    for (int round = 0; round < 20; round++) {
      List<Entry> seen = scan(m, false);
      assertThat(seen).as("scan of round %d", round).isEqualTo(entries(model, false));
      for (Entry e : seen.subList(0, 100)) {
        m.delete(e.key());
        model.remove(e.key());
      }
    }
    assertThat(m.treeCopies()).as("closed scans hold no tree").isZero();

    java.util.TreeMap<byte[], byte[]> before = new java.util.TreeMap<>(model);
    List<Entry> fromOpen = new ArrayList<>();
    try (Cursor open = m.scan(KeyRange.all())) {
      fromOpen.add(open.next());
      byte[] first = model.firstKey();
      m.delete(first);
      model.remove(first);
      byte[] added = {(byte) 0xff, 1};
      m.put(added, added);
      model.put(added, added);
      assertThat(scan(m, false)).as("scan beside an open cursor").isEqualTo(entries(model, false));
      assertThat(m.treeCopies()).as("the open cursor's tree was copied, not changed").isEqualTo(1);
      open.forEachRemaining(fromOpen::add);
    }
    assertThat(fromOpen).as("the open cursor's view").isEqualTo(entries(before, false));

    java.util.TreeMap<byte[], byte[]> atSnapshot = new java.util.TreeMap<>(model);
    try (io.kv4j.Snapshot snap = m.snapshot()) {
      byte[] first = model.firstKey();
      m.delete(first);
      model.remove(first);
      assertThat(scan(m, false)).as("scan beside a snapshot").isEqualTo(entries(model, false));
      assertThat(m.treeCopies()).as("the snapshot's tree was copied").isEqualTo(2);
      List<Entry> fromSnap = new ArrayList<>();
      try (Cursor c = snap.scan(KeyRange.all())) {
        c.forEachRemaining(fromSnap::add);
      }
      assertThat(fromSnap).as("the snapshot's view").isEqualTo(entries(atSnapshot, false));
    }
    try (io.kv4j.Snapshot unchanged = m.snapshot()) {
      assertThat(unchanged.get(model.firstKey())).isEqualTo(model.firstEntry().getValue());
    }
    byte[] first = model.firstKey();
    m.delete(first);
    model.remove(first);
    assertThat(scan(m, false))
        .as("scan after every reader closed")
        .isEqualTo(entries(model, false));
    assertThat(m.treeCopies()).as("closed snapshot and cursors hold no tree").isEqualTo(2);
    m.close();
  }

  /**
   * Cursors and snapshots on one thread, writes and the scans that bring the tree up to date on
   * another: each reader stops half-way until a whole batch was written and applied to the tree by
   * a scan, then reads on; it must see one version of every key, never a tree changed under it.
   */
  @Test
  void readersOnOtherThreads_keepTheirTreeWhileScansApplyWrites() throws Exception {
    MemoryStore m = (MemoryStore) Stores.open("memory:");
    int keys = 300;
    java.util.concurrent.atomic.AtomicLong applied = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    m.write(batchOf(keys, 0));
    Thread writer =
        new Thread(
            () -> {
              for (long v = 1; !stop.get(); v++) {
                m.write(batchOf(keys, v));
                try (Cursor c = m.scan(KeyRange.all())) { // applies the batch to the tree
                  c.hasNext();
                }
                applied.set(v);
              }
            },
            "writer");
    writer.start();
    try {
      for (int round = 0; round < 40; round++) {
        boolean viaSnapshot = round % 2 == 1;
        io.kv4j.Snapshot snap = viaSnapshot ? m.snapshot() : null;
        try (Cursor c = viaSnapshot ? snap.scan(KeyRange.all()) : m.scan(KeyRange.all())) {
          List<Entry> seen = new ArrayList<>();
          for (int i = 0; i < keys / 2; i++) {
            seen.add(c.next());
          }
          long target = applied.get() + 2;
          long deadline = System.nanoTime() + 10_000_000_000L;
          while (applied.get() < target) {
            assertThat(System.nanoTime())
                .as("writer progress in round %d", round)
                .isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
          }
          c.forEachRemaining(seen::add);
          assertThat(seen).as("entries in round %d", round).hasSize(keys);
          assertThat(seen.stream().map(e -> java.util.Arrays.toString(e.value())).distinct())
              .as("one version of every key in round %d (snapshot: %s)", round, viaSnapshot)
              .hasSize(1);
        } finally {
          if (snap != null) {
            snap.close();
          }
        }
      }
    } finally {
      stop.set(true);
      writer.join();
    }
    m.close();
  }

  private static WriteBatch batchOf(int keys, long version) {
    WriteBatch b = new WriteBatch();
    byte[] v = java.nio.ByteBuffer.allocate(8).putLong(version).array();
    for (int i = 0; i < keys; i++) {
      b.put(java.nio.ByteBuffer.allocate(4).putInt(i).array(), v);
    }
    return b;
  }

  private static List<Entry> scan(MemoryStore m, boolean reverse) {
    List<Entry> out = new ArrayList<>();
    io.kv4j.KeyRange all = io.kv4j.KeyRange.all();
    try (io.kv4j.Cursor c = reverse ? m.scan(all.reverse()) : m.scan(all)) {
      while (c.hasNext()) {
        out.add(c.next());
      }
    }
    return out;
  }
}
