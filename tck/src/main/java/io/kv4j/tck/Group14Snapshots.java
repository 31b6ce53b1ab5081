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
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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

  /**
   * 14.2: while writers rewrite one batch of {@link #WIDTH} keys without pause, each batch setting
   * every key to one number, readers check through snapshots that every key holds the same number:
   * two gets with a yield between, getAll and (with ORDERED_SCAN) a scan. A wide batch applied
   * while a snapshot is being taken (a snapshot not ordered with the writes) shows as keys of two
   * batches. Runs for {@code stressOps / 2} ms ({@link #contentionWindow}) and until {@link
   * #CONTENDED_SNAPSHOTS} snapshots were contended (their {@code snapshot()} call overlapped a
   * batch write), at most ten times that window, or until a reader failed: a busy machine runs
   * readers and writers at once more rarely, so the rule counts contention rather than time, and
   * fails if no snapshot at all was contended (it would have proved nothing).
   */
  void required_r14_2_snapshotNeverSeesHalfABatch() throws Exception {
    require("14.2", Feature.SNAPSHOT_READ);
    require("14.2", Feature.ATOMIC_BATCH);
    Store s = open();
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < WIDTH; i++) {
      keys.add(key(i));
    }
    s.write(batchOf(keys, 0));
    int threads = Math.max(2, env().stressThreads());
    int writers = Math.max(1, threads / 2);
    long window = contentionWindow(env(), 0.5).toNanos();
    long deadline = System.nanoTime() + window;
    long backstop = deadline + 9 * window;
    AtomicInteger writersDone = new AtomicInteger();
    AtomicBoolean failed = new AtomicBoolean();
    AtomicLong batches = new AtomicLong();
    AtomicLong snapshots = new AtomicLong();
    // A snapshot is contended when its snapshot() call overlapped a write() call: a write was in
    // flight when the call began, or one started before it returned.
    AtomicInteger writing = new AtomicInteger();
    AtomicLong writesStarted = new AtomicLong();
    AtomicLong contended = new AtomicLong();
    List<Throwable> errors =
        runThreads(
            "14.2",
            threads,
            t -> {
              if (t < writers) {
                try {
                  // At least MIN_BATCHES however late the writers start on a busy machine, and
                  // past the window until CONTENDED_SNAPSHOTS (or the backstop passed).
                  for (long n = 1; !failed.get(); n++) {
                    long now = System.nanoTime();
                    if (n > MIN_BATCHES
                        && now - deadline > 0
                        && (contended.get() >= CONTENDED_SNAPSHOTS || now - backstop > 0)) {
                      break;
                    }
                    writing.incrementAndGet();
                    writesStarted.incrementAndGet();
                    try {
                      s.write(batchOf(keys, n * writers + t)); // a number no other writer writes
                    } finally {
                      writing.decrementAndGet();
                    }
                    batches.incrementAndGet();
                  }
                } finally {
                  writersDone.incrementAndGet();
                }
                return;
              }
              for (int reads = 0; writersDone.get() < writers || reads < 20; reads++) {
                String which = "reader " + t + " snapshot #" + reads;
                long started = writesStarted.get();
                boolean inFlight = writing.get() > 0;
                try (Snapshot snap =
                    snapshotCounted(s, inFlight, started, writesStarted, contended)) {
                  byte[] first = snap.get(keys.get(0));
                  Thread.yield(); // let the writers move on between the two reads
                  byte[] last = snap.get(keys.get(WIDTH - 1));
                  sameBatch(which + ", two gets", List.of(first, last), count(first));
                  sameBatch(which + ", getAll", snap.getAll(keys), count(first));
                  if (has(Feature.ORDERED_SCAN)) {
                    List<byte[]> scanned = new ArrayList<>();
                    for (Entry e :
                        scanAll(snap, KeyRange.all().gte(keys.get(0)).lte(keys.get(WIDTH - 1)))) {
                      scanned.add(e.value());
                    }
                    assertThat(scanned)
                        .as(rule("14.2", which + ", a scan of the batch's keys"))
                        .hasSize(WIDTH);
                    sameBatch(which + ", scan", scanned, count(first));
                  }
                } catch (Throwable e) {
                  failed.set(true); // the writers stop
                  throw e;
                }
                snapshots.incrementAndGet();
              }
            });
    noThreadFailed("14.2", errors);
    String what =
        snapshots
            + " snapshots, "
            + contended
            + " of them taken while a batch write was in flight, "
            + batches
            + " batches";
    System.out.printf("[14.2] %s (%d contended wanted)%n", what, CONTENDED_SNAPSHOTS);
    assertThat(contended.get())
        .as(
            rule(
                "14.2",
                "no contention, nothing proved: "
                    + what
                    + " in "
                    + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(10 * window)
                    + " ms; the readers and the writers hardly ran at once (a starved machine?)"))
        .isPositive();
  }

  /**
   * Snapshots of 14.2 that must be contended (their {@code snapshot()} call overlapped a batch
   * write) before the rule stops, unless its backstop passed first; the broken variants of the
   * reference engine show half a batch within their first few.
   */
  static final int CONTENDED_SNAPSHOTS = 200;

  /**
   * Takes a snapshot and counts it as contended when a write was in flight as the call began or one
   * started before it returned.
   */
  private static Snapshot snapshotCounted(
      Store s, boolean inFlight, long started, AtomicLong writesStarted, AtomicLong contended) {
    Snapshot snap = s.snapshot();
    if (inFlight || writesStarted.get() != started) {
      contended.incrementAndGet();
    }
    return snap;
  }

  /** Batches each writer of 14.2 writes however late it starts. */
  private static final int MIN_BATCHES = 20;

  /** Keys one batch of 14.2 sets: wide, so that applying it takes a while. */
  static final int WIDTH = 64;

  /** A batch setting every key to the counter {@code n}. */
  private static WriteBatch batchOf(List<byte[]> keys, long n) {
    WriteBatch b = new WriteBatch();
    for (byte[] k : keys) {
      b.put(k, counter(n));
    }
    return b;
  }

  /** 14.2: every value read through one snapshot is the counter {@code n} of one batch. */
  private static void sameBatch(String where, List<byte[]> values, long n) {
    for (int i = 0; i < values.size(); i++) {
      if (count(values.get(i)) != n) {
        throw new AssertionError(
            rule(
                "14.2",
                where
                    + ": the snapshot saw half a batch: value "
                    + i
                    + " of "
                    + values.size()
                    + " is from batch "
                    + count(values.get(i))
                    + ", the first from batch "
                    + n
                    + " (every batch sets all "
                    + WIDTH
                    + " keys to its number)"));
      }
    }
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
