package io.kv4j.rocksdb;

import static io.kv4j.StoreStats.Health.DEGRADED;
import static io.kv4j.StoreStats.Health.OK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;

/**
 * The synced-WAL record ({@link SyncedWals}): after a crash, a WAL cut below what was synced of it,
 * or deleted, fails the open naming it, while what a crash really leaves opens with every
 * acknowledged write and no false alarm.
 */
class RocksDbSyncedWalTest {
  @TempDir Path tmp;

  private static StoreConfig.Builder config(Path dir, Durability d) {
    return StoreConfig.builder("rocksdb").path(dir).durability(d);
  }

  /**
   * A child JVM writes batches of 100 keys and is killed ({@code SIGKILL}) mid-writes, once the
   * record covers at least 10,000 acknowledged keys (with {@code BUFFERED} the child syncs every
   * 1,000 keys). Then three copies of that image: as it is, it opens with every acknowledged key
   * exact and nothing else (batches whole), and {@code verify()} passes; with its live WAL cut to
   * half, or deleted, read-write and read-only opens throw {@link StoreCorruptedException} naming
   * the WAL and leave every file as it was. Before the record existed both opened silently (10,000
   * of 20,000 keys, and none).
   */
  @ParameterizedTest
  @EnumSource(Durability.class)
  void kill9MidWrites_liveWalCutOrDeleted_failsTheOpenNamingIt(Durability d) throws Exception {
    Path image = tmp.resolve("image");
    int acked = writeUntilKilled(image, d, 10_000);
    String wal = newestWal(image);
    long recorded = SyncedWals.read(image).get(wal);
    long size = Files.size(image.resolve(wal));
    System.out.printf(
        "%s image: %d keys acknowledged, live WAL %s %d bytes, %d of them recorded as synced%n",
        d, acked, wal, size, recorded);
    assertThat(recorded)
        .as("the record covers more than half of the live WAL %s (%d bytes)", wal, size)
        .isGreaterThan(size / 2);

    Path whole = copy(image, tmp.resolve("whole"));
    try (Store s = Stores.open(config(whole, d).build())) {
      int present = 0;
      for (int i = 0; i < acked + SyncedWalCrashWorker.BATCH; i++) {
        byte[] v = s.get(SyncedWalCrashWorker.key(i));
        if (i < acked) {
          assertThat(v).as("acknowledged key %d", i).isEqualTo(SyncedWalCrashWorker.value(i));
        }
        present += v == null ? 0 : 1;
      }
      assertThat(present).as("the batch in flight is whole or absent").isIn(acked, acked + 100);
      assertThat(s.get(SyncedWalCrashWorker.key(acked + SyncedWalCrashWorker.BATCH))).isNull();
      s.verify();
    }

    Path cut = copy(image, tmp.resolve("cut"));
    truncate(cut.resolve(wal), size / 2);
    assertOpensFailNaming(cut, d, wal);

    Path deleted = copy(image, tmp.resolve("deleted"));
    Files.delete(deleted.resolve(wal));
    assertOpensFailNaming(deleted, d, wal);
  }

  /**
   * A keyspace written once holds its WAL while the store's own keys move on to newer ones; such an
   * older WAL deleted or cut is refused too (the record lists every WAL), whereas a WAL the record
   * lists but that RocksDB deleted after a flush is no damage: a read-only open tells the two apart
   * by the oldest WAL the database still needs.
   */
  @ParameterizedTest
  @EnumSource(Durability.class)
  void olderWalHeldByAKeyspace_cutOrDeleted_failsButOneAFlushDeleted_opens(Durability d)
      throws Exception {
    Path dir = tmp.resolve("live");
    try (Store s = Stores.open(config(dir, d).build())) {
      RocksDbStore r = (RocksDbStore) s;
      r.recorder.stop(); // rounds run only when this test asks for them
      put(s, 0, 2_000);
      s.keyspace("idle").put(b("held"), b("in the first WAL"));
      String first = newestWal(dir);
      flush(r, r.column.handle); // the store's own keys move on to a new WAL
      put(s, 2_000, 4_000);
      s.sync();
      assertThat(r.recorder.recordNow()).isTrue();
      assertThat(SyncedWals.read(dir)).containsKeys(first, newestWal(dir));

      Path deleted = copy(dir, tmp.resolve("deleted"));
      Files.delete(deleted.resolve(first));
      assertOpensFailNaming(deleted, d, first);

      Path cut = copy(dir, tmp.resolve("cut"));
      truncate(cut.resolve(first), Files.size(cut.resolve(first)) / 2);
      assertOpensFailNaming(cut, d, first);

      flush(r, r.column("idle").handle); // now no column family needs the first WAL
      Waits.await(
          "RocksDB deletes " + first,
          Duration.ofSeconds(30),
          () -> !Files.exists(dir.resolve(first)));
      Path flushed = copy(dir, tmp.resolve("flushed"));
      assertThat(SyncedWals.read(flushed)).containsKey(first);
      try (Store o = Stores.open(config(flushed, d).readOnly(true).build())) {
        assertThat(o.keyspace("idle").get(b("held"))).isEqualTo(b("in the first WAL"));
      }
      try (Store o = Stores.open(config(flushed, d).build())) {
        assertThat(o.keyspace("idle").get(b("held"))).isEqualTo(b("in the first WAL"));
        for (int i = 0; i < 4_000; i++) {
          assertThat(o.get(SyncedWalCrashWorker.key(i))).isEqualTo(SyncedWalCrashWorker.value(i));
        }
        o.verify();
      }
      assertThat(flushed.resolve(SyncedWals.FILE_NAME))
          .as("a read-write open removes the previous session's record")
          .doesNotExist();
    }
    assertThat(dir.resolve(SyncedWals.FILE_NAME)).as("a clean close removes it").doesNotExist();
  }

  /** The record is only ever replaced whole: a damaged one is corruption, named, not ignored. */
  @Test
  void damagedRecord_failsTheOpenNamingIt() throws Exception {
    Path dir = tmp.resolve("live");
    try (Store s = Stores.open(config(dir, Durability.SYNC).build())) {
      RocksDbStore r = (RocksDbStore) s;
      r.recorder.stop();
      put(s, 0, 1_000);
      assertThat(r.recorder.recordNow()).isTrue();
      Path image = copy(dir, tmp.resolve("image"));
      Path record = image.resolve(SyncedWals.FILE_NAME);
      byte[] bytes = Files.readAllBytes(record);
      int at = new String(bytes, StandardCharsets.UTF_8).indexOf("synced=") + 7;
      bytes[at] = (byte) (bytes[at] == '9' ? '8' : bytes[at] + 1);
      Files.write(record, bytes);
      assertOpensFailNaming(image, Durability.SYNC, SyncedWals.FILE_NAME);
    }
  }

  /**
   * A record that cannot be written (here a directory where its temporary file goes) makes the
   * store DEGRADED, naming the task, while writes go on; once it can be written again the store is
   * OK and the record is there.
   */
  @ParameterizedTest
  @EnumSource(Durability.class)
  void recordThatCannotBeWritten_degradesTheStoreUntilItCanBe(Durability d) throws Exception {
    Path dir = tmp.resolve("degraded");
    Path blocker = dir.resolve(SyncedWals.FILE_NAME + ".tmp");
    try (Store s = Stores.open(config(dir, d).build())) {
      Files.createDirectory(blocker);
      put(s, 0, 100);
      s.sync();
      Waits.await(
          "the store is DEGRADED", Duration.ofSeconds(30), () -> s.stats().health() == DEGRADED);
      assertThat(s.stats().problem()).contains(WalRecorder.TASK, blocker.getFileName().toString());
      put(s, 100, 200);
      assertThat(s.get(SyncedWalCrashWorker.key(150))).isEqualTo(SyncedWalCrashWorker.value(150));
      Files.delete(blocker);
      Waits.await("the store is OK", Duration.ofSeconds(30), () -> s.stats().health() == OK);
      assertThat(SyncedWals.read(dir)).containsKey(newestWal(dir));
    }
  }

  /**
   * Starts the worker, reads its acknowledgements until {@code minKeys}, waits for a record that
   * covers the live WAL as it was then, kills the worker right away and returns the number of keys
   * acknowledged before the kill.
   */
  private static int writeUntilKilled(Path dir, Durability d, int minKeys) throws Exception {
    int acked = -1;
    try (ChildProcess c =
        ChildProcess.java(SyncedWalCrashWorker.class, dir.toString(), d.name()).start()) {
      Duration wait = Duration.ofMinutes(2);
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        acked = Integer.parseInt(line.substring("ACK ".length()));
        if (acked >= minKeys) {
          break;
        }
      }
      assertThat(acked).as("worker: %s", c.describe()).isGreaterThanOrEqualTo(minKeys);
      String wal = newestWal(dir);
      long size = Files.size(dir.resolve(wal));
      Waits.await(
          "a record of at least " + size + " bytes of " + wal + ": " + c.describe(),
          Duration.ofSeconds(30),
          () -> {
            Map<String, Long> r = SyncedWals.read(dir);
            return r != null && r.getOrDefault(wal, 0L) >= size;
          });
      c.kill(); // SIGKILL: the worker is writing its next batch
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        acked = Integer.parseInt(line.substring("ACK ".length()));
      }
    }
    return acked;
  }

  private static void assertOpensFailNaming(Path dir, Durability d, String wal) throws IOException {
    TreeMap<String, Long> before = sizes(dir);
    for (boolean readOnly : new boolean[] {false, true}) {
      assertThatThrownBy(() -> Stores.open(config(dir, d).readOnly(readOnly).build()).close())
          .as("%s, read-only %s", dir.getFileName(), readOnly)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(wal)
          .satisfies(
              e ->
                  assertThat(((StoreCorruptedException) e).file())
                      .isEqualTo(dir.toRealPath().resolve(wal)));
      TreeMap<String, Long> after = sizes(dir);
      after.keySet().removeIf(RocksDbDamageTest::isDiagnosticFile);
      TreeMap<String, Long> expected = new TreeMap<>(before);
      expected.keySet().removeIf(RocksDbDamageTest::isDiagnosticFile);
      assertThat(after).as("a failed open deletes and shortens nothing").isEqualTo(expected);
    }
  }

  /** Puts keys {@code from} (inclusive) to {@code to} in batches of 100. */
  private static void put(Store s, int from, int to) {
    for (int n = from; n < to; n += 100) {
      WriteBatch batch = new WriteBatch();
      for (int i = n; i < Math.min(to, n + 100); i++) {
        batch.put(SyncedWalCrashWorker.key(i), SyncedWalCrashWorker.value(i));
      }
      s.write(batch);
    }
  }

  private static void flush(RocksDbStore r, ColumnFamilyHandle h) throws Exception {
    try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
      r.db.flush(fo, List.of(h));
    }
  }

  private static String newestWal(Path dir) {
    List<Path> wals = RecordLog.walFiles(dir);
    assertThat(wals).as("WALs in %s", dir).isNotEmpty();
    return wals.get(wals.size() - 1).getFileName().toString();
  }

  private static TreeMap<String, Long> sizes(Path dir) throws IOException {
    TreeMap<String, Long> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        out.put(p.getFileName().toString(), Files.size(p));
      }
    }
    return out;
  }

  /** A copy of a store directory as it is now: of a live store, what a crash would leave. */
  private static Path copy(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> s = Files.list(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Files.copy(p, to.resolve(p.getFileName()));
      }
    }
    return to;
  }

  private static void truncate(Path f, long size) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.setLength(size);
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
