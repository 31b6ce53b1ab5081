package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Group 16: online backup — a consistent copy while the store serves ({@link Feature#BACKUP}). */
final class Group16Backup extends RuleGroup {
  /**
   * Group 16's rules as JUnit tests, in rule order, each run in a new {@code Group16Backup}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r16_1_backupIsAnOpenableCopy() {
      new Group16Backup(this).required_r16_1_backupIsAnOpenableCopy();
    }

    @Test
    default void required_r16_2_backupWhileWritingHoldsAPrefix() throws Exception {
      new Group16Backup(this).required_r16_2_backupWhileWritingHoldsAPrefix();
    }

    @Test
    default void required_r16_3_backupRefusesATargetHoldingData() throws Exception {
      new Group16Backup(this).required_r16_3_backupRefusesATargetHoldingData();
    }

    @Test
    default void required_r16_4_backupWithoutFeatureIsRefused() {
      new Group16Backup(this).required_r16_4_backupWithoutFeatureIsRefused();
    }

    @Test
    default void required_r16_5_backupIsOnePointInTimeAcrossKeyspaces() throws Exception {
      new Group16Backup(this).required_r16_5_backupIsOnePointInTimeAcrossKeyspaces();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group16Backup(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group16Backup(TckBase kit) {
    super(kit);
  }

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

  /** The keyspaces rule 16.5's batches span, and the one its other writer writes. */
  private static final String[] SPACES = {"backup-a", "backup-b", "backup-c"};

  /**
   * 16.5: three backups taken while one thread writes batches setting a counter key to the same
   * number in two keyspaces, and two other threads put without pause into the store's own keys and
   * a third keyspace. Every backup must succeed and hold both keyspaces at one point in time: the
   * two counters equal, and between the batches acknowledged before the backup started and those
   * begun after it returned.
   */
  void required_r16_5_backupIsOnePointInTimeAcrossKeyspaces() throws Exception {
    require("16.5", Feature.BACKUP);
    require("16.5", Feature.KEYSPACE_BATCH);
    Store s = open();
    byte[] counterKey = b("counter");
    Store third = s.keyspace(SPACES[2]); // exists before any backup: every copy must list it
    third.put(key(0), counter(0));
    AtomicLong acked = new AtomicLong(0); // the highest batch number whose write returned
    AtomicBoolean stop = new AtomicBoolean();
    int backups = 3;
    long[][] window = new long[backups][2];
    List<Throwable> errors =
        runThreads(
            "16.5",
            4,
            t -> {
              if (t == 0) {
                for (long i = 1; !stop.get() || i < 200; i++) {
                  byte[] n = counter(i);
                  WriteBatch b =
                      new WriteBatch()
                          .put(SPACES[0], counterKey, n)
                          .put(SPACES[0], key(i % 64), n)
                          .put(SPACES[1], key(i % 64), n)
                          .put(SPACES[1], counterKey, n);
                  s.write(b);
                  acked.set(i);
                }
                return;
              }
              if (t < 3) {
                Store into = t == 1 ? s : third;
                for (long i = 0; !stop.get() || i < 200; i++) {
                  into.put(key(i % 500), counter(i));
                }
                return;
              }
              try {
                for (int k = 0; k < backups; k++) {
                  long from = acked.get() + 100;
                  while (acked.get() < from) {
                    Thread.onSpinWait();
                  }
                  window[k][0] = acked.get();
                  s.backup(tempDir.resolve("backup-spaces-" + k));
                  window[k][1] = acked.get() + 1; // at most the batch in flight when it returned
                }
              } finally {
                stop.set(true);
              }
            });
    assertThat(errors)
        .as(
            rule(
                "16.5",
                "no thread failed: a backup() taken while other threads write succeeds, and the"
                    + " writes go on"))
        .isEmpty();
    for (int k = 0; k < backups; k++) {
      Path target = tempDir.resolve("backup-spaces-" + k);
      Store copy = open(config(target, Durability.BUFFERED));
      long a = count(copy.keyspace(SPACES[0]).get(counterKey));
      long b = count(copy.keyspace(SPACES[1]).get(counterKey));
      String where =
          "backup #"
              + (k + 1)
              + " (started after batch "
              + window[k][0]
              + " was acknowledged, returned before batch "
              + (window[k][1] + 1)
              + " began)";
      assertThat(b)
          .as(
              rule(
                  "16.5",
                  where
                      + " holds counter "
                      + a
                      + " in '"
                      + SPACES[0]
                      + "' and "
                      + b
                      + " in '"
                      + SPACES[1]
                      + "', which every batch sets to the same number: the backup must be one"
                      + " point in time across keyspaces"))
          .isEqualTo(a);
      assertThat(a)
          .as(rule("16.5", where + " holds every batch acknowledged before it started"))
          .isGreaterThanOrEqualTo(window[k][0]);
      assertThat(a)
          .as(rule("16.5", where + " holds no batch begun after it returned"))
          .isLessThanOrEqualTo(window[k][1]);
      assertThat(copy.keyspaces())
          .as(rule("16.5", where + " lists the three keyspaces"))
          .contains(SPACES);
      close(copy);
    }
  }
}
