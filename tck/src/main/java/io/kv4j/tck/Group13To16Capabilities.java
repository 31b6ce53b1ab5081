package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractStore;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Groups 13 to 16: conditional writes, read snapshots, multi-get and online backup — the
 * capabilities beyond get/put/delete/scan/batch, each behind its own {@link Feature} except
 * multi-get, which every engine has.
 */
final class Group13To16Capabilities extends RuleGroup {
  Group13To16Capabilities(TckBase kit) {
    super(kit);
  }

  // ------------------------------------------------------------------ 13: conditional writes

  void required_r13_1_conditionalWritesMatchAModel() {
    require("13.1", Feature.CONDITIONAL_WRITE);
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    SplittableRandom rnd = new SplittableRandom(seed(13));
    byte[][] values = {b(""), b("a"), b("b"), b("ab"), b("abc")};
    for (int op = 0; op < env().ops(); op++) {
      byte[] k = key(rnd.nextInt(8));
      byte[] current = model.get(k);
      byte[] guess = rnd.nextInt(3) == 0 && current != null ? current.clone() : pick(rnd, values);
      byte[] v = pick(rnd, values);
      String where = "seed=" + seed(13) + " op #" + op + " key=" + hex(k);
      switch (rnd.nextInt(5)) {
        case 0 -> {
          boolean want = current == null;
          assertThat(s.putIfAbsent(k, v))
              .as(rule("13.1", where + ": putIfAbsent answers whether the key was absent"))
              .isEqualTo(want);
          if (want) {
            model.put(k, v);
          }
        }
        case 1 -> {
          boolean want = current != null && Arrays.equals(current, guess);
          assertThat(s.replace(k, guess, v))
              .as(rule("13.1", where + ": replace answers whether the value matched"))
              .isEqualTo(want);
          if (want) {
            model.put(k, v);
          }
        }
        case 2 -> {
          boolean want = current != null && Arrays.equals(current, guess);
          assertThat(s.delete(k, guess))
              .as(rule("13.1", where + ": delete(key, expected) answers whether the value matched"))
              .isEqualTo(want);
          if (want) {
            model.remove(k);
          }
        }
        case 3 -> {
          s.put(k, v);
          model.put(k, v);
        }
        default -> {
          s.delete(k);
          model.remove(k);
        }
      }
      assertThat(s.get(k))
          .as(rule("13.1", where + ": the key holds what the conditional writes decided"))
          .isEqualTo(model.get(k));
    }
    if (has(Feature.PERSISTENT)) {
      s = reopen(s);
      for (int i = 0; i < 8; i++) {
        assertThat(s.get(key(i)))
            .as(rule("13.1", "seed=" + seed(13) + ": key " + i + " after reopen"))
            .isEqualTo(model.get(key(i)));
      }
    }
  }

  void required_r13_2_replaceLoopsLoseNoIncrement() throws Exception {
    require("13.2", Feature.CONDITIONAL_WRITE);
    Store s = open();
    int counters = 4;
    int perThread = Math.max(50, env().stressOps() / 4);
    AtomicLong retries = new AtomicLong();
    List<Throwable> errors =
        runThreads(
            "13.2",
            env().stressThreads(),
            t -> {
              for (int i = 0; i < perThread; i++) {
                byte[] k = key((t + i) % counters);
                while (true) {
                  byte[] cur = s.get(k);
                  if (cur == null) {
                    if (s.putIfAbsent(k, counter(1))) {
                      break;
                    }
                  } else if (s.replace(k, cur, counter(count(cur) + 1))) {
                    break;
                  }
                  retries.incrementAndGet();
                }
              }
            });
    assertThat(errors).as(rule("13.2", "no thread failed")).isEmpty();
    long total = 0;
    for (int c = 0; c < counters; c++) {
      byte[] v = s.get(key(c));
      total += v == null ? 0 : count(v);
    }
    assertThat(total)
        .as(
            rule(
                "13.2",
                env().stressThreads()
                    + " threads x "
                    + perThread
                    + " increments through replace loops over "
                    + counters
                    + " counters ("
                    + retries.get()
                    + " retries): an increment was lost, so a compare and its write were not"
                    + " atomic"))
        .isEqualTo((long) env().stressThreads() * perThread);
  }

  void required_r13_3_putIfAbsentHasOneWinner() throws Exception {
    require("13.3", Feature.CONDITIONAL_WRITE);
    Store s = open();
    int keys = Math.max(20, env().stressOps() / 10);
    int[][] wins = new int[env().stressThreads()][keys];
    List<Throwable> errors =
        runThreads(
            "13.3",
            env().stressThreads(),
            t -> {
              for (int i = 0; i < keys; i++) {
                if (s.putIfAbsent(key(i), b("thread-" + t))) {
                  wins[t][i]++;
                }
              }
            });
    assertThat(errors).as(rule("13.3", "no thread failed")).isEmpty();
    for (int i = 0; i < keys; i++) {
      int winner = -1;
      int count = 0;
      for (int t = 0; t < env().stressThreads(); t++) {
        if (wins[t][i] > 0) {
          winner = t;
          count += wins[t][i];
        }
      }
      assertThat(count)
          .as(rule("13.3", "threads told that their putIfAbsent of key " + i + " won"))
          .isEqualTo(1);
      assertThat(s.get(key(i)))
          .as(rule("13.3", "key " + i + " holds the value of the one putIfAbsent that won"))
          .isEqualTo(b("thread-" + winner));
    }
  }

  void required_r13_4_conditionalWritesWithoutFeatureAreRefused() {
    Store s = open();
    s.put(b("k"), b("v"));
    if (has(Feature.CONDITIONAL_WRITE)) {
      assertThat(s.replace(b("k"), b("v"), b("w")))
          .as(rule("13.4", "a declared CONDITIONAL_WRITE works"))
          .isTrue();
      return;
    }
    for (Runnable call :
        List.<Runnable>of(
            () -> s.putIfAbsent(b("n"), b("v")),
            () -> s.replace(b("k"), b("v"), b("w")),
            () -> s.delete(b("k"), b("v")))) {
      assertThat(thrown(call::run))
          .as(rule("13.4", "an engine without CONDITIONAL_WRITE refuses it, naming the feature"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("CONDITIONAL_WRITE");
    }
    assertThat(s.get(b("k"))).as(rule("13.4", "a refused call changes nothing")).isEqualTo(b("v"));
    assertThat(s.get(b("n"))).as(rule("13.4", "a refused call changes nothing")).isNull();
  }

  // ------------------------------------------------------------------ 14: read snapshots

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

  // ------------------------------------------------------------------ 15: multi-get

  void required_r15_1_getAllReturnsValuesInKeyOrder() {
    Store s = open();
    SplittableRandom rnd = new SplittableRandom(seed(13) + 15);
    TreeMap<byte[], byte[]> model = newModel();
    for (int i = 0; i < 200; i++) {
      if (rnd.nextBoolean()) {
        byte[] v = value(rnd, rnd.nextInt(40));
        s.put(key(i), v);
        model.put(key(i), v);
      }
    }
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add(key(rnd.nextInt(250))); // duplicates, absent keys, any order
    }
    List<byte[]> values = s.getAll(keys);
    assertThat(values)
        .as(rule("15.1", "seed=" + (seed(13) + 15) + ": one value per key"))
        .hasSize(300);
    for (int i = 0; i < keys.size(); i++) {
      assertThat(values.get(i))
          .as(
              rule(
                  "15.1",
                  "seed="
                      + (seed(13) + 15)
                      + ": value "
                      + i
                      + " is that of key "
                      + hex(keys.get(i))))
          .isEqualTo(model.get(keys.get(i)));
    }
    assertThat(s.getAll(List.of())).as(rule("15.1", "no keys, no values")).isEmpty();
    int max = s.info().limits().maxKeySize();
    assertThat(thrown(() -> s.getAll(List.of(key(1), new byte[max + 1]))))
        .as(rule("15.1", "an over-limit key is rejected like get's"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(thrown(() -> s.getAll(Arrays.asList(key(1), null))))
        .as(rule("15.1", "a null key is rejected like get's"))
        .isInstanceOf(NullPointerException.class);
  }

  // ------------------------------------------------------------------ 16: backup

  void required_r16_1_backupIsAnOpenableCopy() {
    require("16.1", Feature.BACKUP);
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    SplittableRandom rnd = new SplittableRandom(seed(13) + 16);
    for (int i = 0; i < 2000; i++) {
      byte[] v = value(rnd, rnd.nextInt(300));
      s.put(key(i), v);
      model.put(key(i), v);
    }
    for (int i = 0; i < 2000; i += 7) {
      s.delete(key(i));
      model.remove(key(i));
    }
    Path target = tempDir.resolve("backup");
    s.backup(target);
    s.put(key(5000), b("after")); // the store goes on, the copy does not see it
    Store copy = open(config(target, Durability.BUFFERED));
    copy.verify();
    for (int i = 0; i < 2000; i++) {
      assertThat(copy.get(key(i)))
          .as(rule("16.1", "seed=" + (seed(13) + 16) + ": key " + i + " in the backup"))
          .isEqualTo(model.get(key(i)));
    }
    assertThat(copy.get(key(5000)))
        .as(rule("16.1", "a write made after backup() returned is not in the backup"))
        .isNull();
    if (has(Feature.ORDERED_SCAN)) {
      assertThat(keysOf(scanAll(copy, KeyRange.all())))
          .as(rule("16.1", "the backup holds exactly the store's keys"))
          .containsExactlyElementsOf(keysOf(expected(model, KeyRange.all())));
    }
    copy.put(key(6000), b("copy"));
    assertThat(s.get(key(6000)))
        .as(rule("16.1", "the backup is independent of the store"))
        .isNull();
  }

  void required_r16_2_backupWhileWritingHoldsAPrefix() throws Exception {
    require("16.2", Feature.BACKUP);
    Store s = open();
    AtomicLong acked = new AtomicLong(-1); // highest index whose put returned
    AtomicBoolean stop = new AtomicBoolean();
    long[] window = new long[2];
    Path target = tempDir.resolve("backup-live");
    List<Throwable> errors =
        runThreads(
            "16.2",
            2,
            t -> {
              if (t == 0) {
                for (long i = 0; !stop.get() || i < 200; i++) {
                  if (has(Feature.ATOMIC_BATCH) && i % 5 == 0) {
                    s.write(
                        new WriteBatch().put(key(i), b("v" + i)).put(key(i + 1), b("v" + (i + 1))));
                    acked.set(++i);
                  } else {
                    s.put(key(i), b("v" + i));
                    acked.set(i);
                  }
                }
                return;
              }
              try {
                while (acked.get() < 1000) {
                  Thread.onSpinWait();
                }
                window[0] = acked.get();
                s.backup(target);
                // At most the write in flight when backup returned: a put, or a batch of two keys.
                window[1] = acked.get() + 2;
              } finally {
                stop.set(true);
              }
            });
    assertThat(errors).as(rule("16.2", "no thread failed")).isEmpty();
    Store copy = open(config(target, Durability.BUFFERED));
    long n = 0;
    while (copy.get(key(n)) != null) {
      assertThat(copy.get(key(n)))
          .as(rule("16.2", "key " + n + " in a backup taken while a writer ran"))
          .isEqualTo(b("v" + n));
      n++;
    }
    long present = n;
    assertThat(present - 1)
        .as(
            rule(
                "16.2",
                "the backup holds every write acknowledged before backup() started (up to "
                    + window[0]
                    + ")"))
        .isGreaterThanOrEqualTo(window[0]);
    assertThat(present - 1)
        .as(rule("16.2", "the backup holds no write begun after backup() returned"))
        .isLessThanOrEqualTo(window[1]);
    for (long k = present; k < present + 50; k++) {
      assertThat(copy.get(key(k)))
          .as(
              rule(
                  "16.2",
                  "key "
                      + k
                      + " is absent while key "
                      + (present - 1)
                      + " is present: the backup is not a prefix of the acknowledged writes"))
          .isNull();
    }
  }

  void required_r16_3_backupRefusesATargetHoldingData() throws Exception {
    require("16.3", Feature.BACKUP);
    Store s = open();
    s.put(b("k"), b("v"));
    Path full = Files.createDirectories(tempDir.resolve("occupied"));
    Files.writeString(full.resolve("precious.txt"), "keep me");
    assertThat(thrown(() -> s.backup(full)))
        .as(rule("16.3", "a target that holds files is refused with IllegalArgumentException"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(Files.readString(full.resolve("precious.txt")))
        .as(rule("16.3", "a refused backup leaves the target as it was"))
        .isEqualTo("keep me");
    try (var files = Files.list(full)) {
      assertThat(files.count()).as(rule("16.3", "nothing was added to the target")).isEqualTo(1);
    }
    assertThat(thrown(() -> s.backup(dir())))
        .as(rule("16.3", "the store's own location is refused"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(s.get(b("k"))).as(rule("16.3", "the store is unharmed")).isEqualTo(b("v"));
  }

  void required_r16_4_backupWithoutFeatureIsRefused() {
    Store s = open();
    if (has(Feature.BACKUP)) {
      s.put(b("k"), b("v"));
      s.backup(tempDir.resolve("declared"));
      assertThat(Files.isDirectory(tempDir.resolve("declared")))
          .as(rule("16.4", "a declared BACKUP writes the target"))
          .isTrue();
      return;
    }
    assertThat(thrown(() -> s.backup(tempDir.resolve("b"))))
        .as(rule("16.4", "an engine without BACKUP refuses backup(), naming the feature"))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("BACKUP");
    assertThat(Files.exists(tempDir.resolve("b")))
        .as(rule("16.4", "a refused backup creates nothing"))
        .isFalse();
  }

  // ------------------------------------------------------------------ helpers

  private static byte[] pick(SplittableRandom rnd, byte[][] values) {
    return values[rnd.nextInt(values.length)].clone();
  }

  private static byte[] counter(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  private static long count(byte[] v) {
    if (v == null) {
      return -1;
    }
    return ByteBuffer.wrap(v).getLong();
  }
}
