package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractStore;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Group 14: read snapshots — several reads at one point in time ({@link Feature#SNAPSHOT_READ}).
 */
final class Group14Snapshots extends RuleGroup {
  /**
   * Group 14's rules as JUnit tests, in rule order, each run in a new {@code Group14Snapshots};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r14_1_snapshotIgnoresLaterWrites() {
      new Group14Snapshots(this).required_r14_1_snapshotIgnoresLaterWrites();
    }

    @Test
    default void required_r14_2_snapshotNeverSeesHalfABatch() throws Exception {
      new Group14Snapshots(this).required_r14_2_snapshotNeverSeesHalfABatch();
    }

    @Test
    default void required_r14_3_closingASnapshotClosesItsCursors() {
      new Group14Snapshots(this).required_r14_3_closingASnapshotClosesItsCursors();
    }

    @Test
    default void required_r14_4_snapshotSurvivesCompaction() {
      new Group14Snapshots(this).required_r14_4_snapshotSurvivesCompaction();
    }

    @Test
    default void required_r14_5_snapshotWithoutFeatureIsRefused() {
      new Group14Snapshots(this).required_r14_5_snapshotWithoutFeatureIsRefused();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group14Snapshots(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group14Snapshots(TckBase kit) {
    super(kit);
  }

  void required_r14_1_snapshotIgnoresLaterWrites() {
    require("14.1", Feature.SNAPSHOT_READ);
    Store s = open();
    TreeMap<byte[], byte[]> before = newModel();
    for (int i = 0; i < 50; i++) {
      s.put(key(i), b("old" + i));
      before.put(key(i), b("old" + i));
    }
    try (Snapshot snap = s.snapshot()) {
      for (int i = 0; i < 50; i += 2) {
        s.put(key(i), b("new" + i));
      }
      for (int i = 1; i < 50; i += 4) {
        s.delete(key(i));
      }
      s.put(key(100), b("added"));
      if (has(Feature.ATOMIC_BATCH)) {
        s.write(new WriteBatch().put(key(3), b("batched")).delete(key(7)).put(key(101), b("x")));
      }
      for (int i = 0; i < 50; i++) {
        assertThat(snap.get(key(i)))
            .as(rule("14.1", "key " + i + " read through the snapshot holds its old value"))
            .isEqualTo(b("old" + i));
      }
      assertThat(snap.get(key(100)))
          .as(rule("14.1", "a key added after the snapshot is absent from it"))
          .isNull();
      List<byte[]> keys = List.of(key(0), key(1), key(100), key(3));
      assertThat(snap.getAll(keys))
          .as(rule("14.1", "getAll through the snapshot reads the old values, in order"))
          .containsExactly(b("old0"), b("old1"), null, b("old3"));
      if (has(Feature.ORDERED_SCAN)) {
        assertThat(scanAll(snap, KeyRange.all()))
            .as(rule("14.1", "a scan through the snapshot sees the old store"))
            .isEqualTo(expected(before, KeyRange.all()));
        if (has(Feature.REVERSE_SCAN)) {
          KeyRange r = KeyRange.all().reverse().limit(10);
          assertThat(scanAll(snap, r))
              .as(rule("14.1", "a reverse scan through the snapshot sees the old store"))
              .isEqualTo(expected(before, r));
        }
      }
      assertThat(s.get(key(0)))
          .as(rule("14.1", "the store itself sees the new value"))
          .isEqualTo(b("new0"));
      assertThat(s.get(key(100))).as(rule("14.1", "the store sees the added key")).isNotNull();
    }
  }

  void required_r14_2_snapshotNeverSeesHalfABatch() throws Exception {
    require("14.2", Feature.SNAPSHOT_READ);
    require("14.2", Feature.ATOMIC_BATCH);
    Store s = open();
    int pairs = 4;
    for (int p = 0; p < pairs; p++) {
      s.write(new WriteBatch().put(key(2 * p), counter(0)).put(key(2 * p + 1), counter(0)));
    }
    AtomicBoolean done = new AtomicBoolean();
    int rounds = Math.max(200, env().stressOps() / 2);
    List<Throwable> errors =
        runThreads(
            "14.2",
            Math.max(2, env().threads()),
            t -> {
              if (t == 0) {
                try {
                  for (long n = 1; n <= rounds; n++) {
                    for (int p = 0; p < pairs; p++) {
                      s.write(
                          new WriteBatch()
                              .put(key(2 * p), counter(n))
                              .put(key(2 * p + 1), counter(n)));
                    }
                  }
                } finally {
                  done.set(true);
                }
                return;
              }
              SplittableRandom rnd = new SplittableRandom(seed(13) + t);
              int checks = 0;
              while (!done.get() || checks < 20) {
                int p = rnd.nextInt(pairs);
                try (Snapshot snap = s.snapshot()) {
                  byte[] a = snap.get(key(2 * p));
                  Thread.yield(); // let the writer move on between the two reads
                  byte[] b = snap.get(key(2 * p + 1));
                  assertThat(count(b))
                      .as(rule("14.2", "pair " + p + " read with two gets of one snapshot"))
                      .isEqualTo(count(a));
                  List<byte[]> both = snap.getAll(List.of(key(2 * p), key(2 * p + 1)));
                  assertThat(count(both.get(1)))
                      .as(rule("14.2", "pair " + p + " read with getAll of one snapshot"))
                      .isEqualTo(count(both.get(0)))
                      .isEqualTo(count(a));
                  if (has(Feature.ORDERED_SCAN)) {
                    List<Entry> scanned =
                        scanAll(snap, KeyRange.all().gte(key(2 * p)).lte(key(2 * p + 1)));
                    assertThat(scanned)
                        .as(rule("14.2", "pair " + p + " scanned through the snapshot"))
                        .hasSize(2);
                    assertThat(count(scanned.get(1).value()))
                        .as(rule("14.2", "pair " + p + " scanned through the snapshot"))
                        .isEqualTo(count(scanned.get(0).value()))
                        .isEqualTo(count(a));
                  }
                }
                checks++;
              }
            });
    assertThat(errors).as(rule("14.2", "no thread failed")).isEmpty();
  }

  void required_r14_3_closingASnapshotClosesItsCursors() {
    require("14.3", Feature.SNAPSHOT_READ);
    Store s = open();
    s.put(b("a"), b("1"));
    Snapshot snap = s.snapshot();
    Cursor c = has(Feature.ORDERED_SCAN) ? snap.scan(KeyRange.all()) : null;
    snap.close();
    snap.close();
    assertThat(thrown(() -> snap.get(b("a"))))
        .as(rule("14.3", "a closed snapshot refuses reads with IllegalStateException"))
        .isInstanceOf(IllegalStateException.class);
    if (c != null) {
      assertThat(thrown(c::hasNext))
          .as(rule("14.3", "a cursor of a closed snapshot is closed with it"))
          .isInstanceOf(IllegalStateException.class);
    }
    Number open = s.stats().figures().get(AbstractStore.OPEN_SNAPSHOTS);
    if (open != null) {
      assertThat(open.longValue())
          .as(rule("14.3", "the open-snapshots figure counts no closed snapshot"))
          .isZero();
    }
    Snapshot left = s.snapshot();
    close(s);
    assertThat(thrown(() -> left.get(b("a"))))
        .as(rule("14.3", "closing the store closes its open snapshots"))
        .isInstanceOf(StoreClosedException.class);
    left.close();
  }

  void required_r14_4_snapshotSurvivesCompaction() {
    require("14.4", Feature.SNAPSHOT_READ);
    Store s = open();
    for (int i = 0; i < 500; i++) {
      s.put(key(i), b("old" + i));
    }
    try (Snapshot snap = s.snapshot()) {
      for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 500; i++) {
          if (i % 3 == 0) {
            s.delete(key(i));
          } else {
            s.put(key(i), b("r" + round + "-" + i));
          }
        }
        s.compact();
      }
      for (int i = 0; i < 500; i++) {
        assertThat(snap.get(key(i)))
            .as(
                rule(
                    "14.4", "key " + i + " read through a snapshot taken before three compactions"))
            .isEqualTo(b("old" + i));
      }
      if (has(Feature.ORDERED_SCAN)) {
        assertThat(scanAll(snap, KeyRange.all()))
            .as(rule("14.4", "a scan through a snapshot taken before compactions"))
            .hasSize(500);
      }
    }
  }

  void required_r14_5_snapshotWithoutFeatureIsRefused() {
    Store s = open();
    if (has(Feature.SNAPSHOT_READ)) {
      try (Snapshot snap = s.snapshot()) {
        assertThat(snap.get(b("a"))).as(rule("14.5", "a declared SNAPSHOT_READ works")).isNull();
      }
      return;
    }
    assertThat(thrown(s::snapshot))
        .as(rule("14.5", "an engine without SNAPSHOT_READ refuses snapshot(), naming the feature"))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("SNAPSHOT_READ");
  }
}
