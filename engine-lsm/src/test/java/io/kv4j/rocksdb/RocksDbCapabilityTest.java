package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the kit (rules 13–16) does not cover for the rocksdb engine: write ordering through the key
 * locks, getAll on a damaged block, snapshots across close, and backups of busy and read-only
 * stores.
 */
class RocksDbCapabilityTest {
  private static final long DEADLINE_MS = TimeUnit.SECONDS.toMillis(60);

  @TempDir Path tmp;

  private static StoreConfig.Builder config(Path dir) {
    return StoreConfig.builder("rocksdb").path(dir).durability(Durability.BUFFERED);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] num(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  private static long num(byte[] v) {
    return ByteBuffer.wrap(v).getLong();
  }

  private static void awaitQueued(ReentrantLock lock) throws Exception {
    Waits.await(
        "a writer queued for the key lock", Duration.ofMillis(DEADLINE_MS), lock::hasQueuedThreads);
  }

  /**
   * While a conditional write runs, every write path waits for the stripe lock of its key, the lock
   * the conditional write holds from its read to its write: while the test holds it as a running
   * conditional write does ({@link KeyLocks#beginConditional()}, then the stripe), the write is
   * queued and the key unchanged.
   */
  @Test
  void writes_keyLockHeld_waitUntilReleased() throws Exception {
    try (RocksDbStore s = (RocksDbStore) Stores.open(config(tmp.resolve("db")).build())) {
      byte[] k = b("key");
      s.put(k, b("v0"));
      List<Runnable> writes =
          List.of(
              () -> s.put(k, b("put")),
              () -> s.delete(k),
              () -> s.write(new WriteBatch().put(b("other"), b("x")).put(k, b("batch"))),
              () -> s.replace(k, b("batch"), b("cas")),
              () -> s.putIfAbsent(k, b("never")));
      List<byte[]> after = Arrays.asList(b("put"), null, b("batch"), b("cas"), b("cas"));
      for (int i = 0; i < writes.size(); i++) {
        ReentrantLock lock = s.keyLock(k);
        byte[] before = s.get(k);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        Runnable w = writes.get(i);
        Thread t;
        s.keyLocks.beginConditional();
        lock.lock();
        try {
          t =
              new Thread(
                  () -> {
                    try {
                      w.run();
                    } catch (Throwable e) {
                      errors.add(e);
                    }
                  });
          t.start();
          awaitQueued(lock);
          assertThat(s.get(k))
              .as("write %d applied while its key lock was held", i)
              .isEqualTo(before);
        } finally {
          lock.unlock();
          s.keyLocks.endConditional();
        }
        t.join(DEADLINE_MS);
        assertThat(t.isAlive()).isFalse();
        assertThat(errors).isEmpty();
        assertThat(s.get(k)).as("write %d", i).isEqualTo(after.get(i));
      }
    }
  }

  /**
   * Conditional increments of counters interleaved with batches and puts that share the counters'
   * lock stripes (and batches spanning many stripes): no increment is lost, no lock order
   * deadlocks, and the plain writes land.
   */
  @Test
  void compareAndSet_mixedWithBatchesOnSharedStripes_losesNothing() throws Exception {
    long seed = 2025;
    int threads = 4;
    int increments = 500;
    try (Store s = Stores.open(config(tmp.resolve("db")).build())) {
      List<byte[]> counters = new ArrayList<>();
      for (int c = 0; c < 4; c++) {
        counters.add(b("counter" + c));
      }
      // Keys in the same stripes as the counters, so batches and puts contend for their locks.
      List<byte[]> neighbours = new ArrayList<>();
      for (int i = 0; neighbours.size() < 8; i++) {
        byte[] k = b("n" + i);
        for (byte[] c : counters) {
          if (KeyLocks.stripe(0, k) == KeyLocks.stripe(0, c)) {
            neighbours.add(k);
            break;
          }
        }
      }
      AtomicBoolean stop = new AtomicBoolean();
      ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
      AtomicLong plainWrites = new AtomicLong();
      Thread plain =
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                try {
                  long n = 0;
                  while (!stop.get()) {
                    WriteBatch batch = new WriteBatch();
                    for (int i = 0; i < 50; i++) {
                      batch.put(b("wide" + rnd.nextInt(5000)), num(n));
                    }
                    for (byte[] k : neighbours) {
                      batch.put(k, num(n));
                    }
                    s.write(batch);
                    s.put(neighbours.get(rnd.nextInt(neighbours.size())), num(n));
                    n++;
                    plainWrites.set(n);
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              });
      plain.start();
      List<Thread> casThreads = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        SplittableRandom rnd = new SplittableRandom(seed + 1 + t);
        Thread th =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; i < increments; i++) {
                      byte[] c = counters.get(rnd.nextInt(counters.size()));
                      while (true) {
                        byte[] cur = s.get(c);
                        boolean ok =
                            cur == null
                                ? s.putIfAbsent(c, num(1))
                                : s.replace(c, cur, num(num(cur) + 1));
                        if (ok) {
                          break;
                        }
                      }
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                });
        th.start();
        casThreads.add(th);
      }
      for (Thread th : casThreads) {
        th.join(DEADLINE_MS * 4);
        assertThat(th.isAlive()).as("conditional writer stuck, seed %d", seed).isFalse();
      }
      stop.set(true);
      plain.join(DEADLINE_MS);
      assertThat(plain.isAlive()).isFalse();
      assertThat(errors).as("seed %d", seed).isEmpty();
      long total = 0;
      for (byte[] c : counters) {
        byte[] v = s.get(c);
        total += v == null ? 0 : num(v);
      }
      assertThat(total).as("increments, seed %d", seed).isEqualTo((long) threads * increments);
      long last = plainWrites.get() - 1;
      assertThat(last).isGreaterThanOrEqualTo(0);
      for (byte[] k : neighbours) {
        assertThat(num(s.get(k))).isBetween(last - 1, last);
      }
    }
  }

  /**
   * RocksJava's multi-get reports a key whose block fails its checksum as absent; getAll (of the
   * store and of a snapshot) must throw as get does instead.
   */
  @Test
  void getAll_damagedDataBlock_throwsLikeGet() throws IOException {
    Path dir = tmp.resolve("db");
    StoreConfig c =
        config(dir).option("compression", "none").option("block-cache-size", "0").build();
    List<byte[]> keys = new ArrayList<>();
    try (Store s = Stores.open(c)) {
      for (int i = 0; i < 2000; i++) {
        byte[] k = b(String.format("key%06d", i));
        keys.add(k);
        s.put(k, new byte[100]);
      }
    } // a clean close flushes: every value is in a table file
    Path sst;
    try (Stream<Path> files = Files.list(dir)) {
      sst = files.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
    }
    try (RandomAccessFile f = new RandomAccessFile(sst.toFile(), "rw")) {
      f.seek(20_000); // inside a data block (the file is ~250 KB, index and filter at its end)
      f.write(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
    }
    Files.delete(dir.resolve(CleanClose.FILE_NAME)); // the record would fail the open first
    try (Store s = Stores.open(c)) {
      List<byte[]> damaged = new ArrayList<>();
      List<byte[]> intact = new ArrayList<>();
      for (byte[] k : keys) {
        try {
          assertThat(s.get(k)).hasSize(100);
          intact.add(k);
        } catch (StoreCorruptedException e) {
          damaged.add(k);
        }
      }
      assertThat(damaged).as("keys in the damaged block").isNotEmpty();
      assertThat(s.getAll(intact))
          .hasSize(intact.size())
          .allSatisfy(v -> assertThat(v).hasSize(100));
      List<byte[]> mixed = List.of(intact.get(0), damaged.get(0), b("absent"));
      assertThatThrownBy(() -> s.getAll(mixed))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(sst.getFileName().toString());
      try (Snapshot snap = s.snapshot()) {
        assertThatThrownBy(() -> snap.getAll(mixed)).isInstanceOf(StoreCorruptedException.class);
        assertThat(snap.getAll(List.of(intact.get(1), b("absent"))))
            .satisfiesExactly(v -> assertThat(v).hasSize(100), v -> assertThat(v).isNull());
      }
    }
  }

  /**
   * Closing a store with open snapshots (one with an open cursor, one already closed by the user)
   * frees their native objects; their reads then throw StoreClosedException, and closing them again
   * is harmless.
   */
  @Test
  void snapshot_storeClosedUnderIt_freedOnceAndReadsThrow() {
    RocksDbStore s = (RocksDbStore) Stores.open(config(tmp.resolve("db")).build());
    for (int i = 0; i < 100; i++) {
      s.put(num(i), num(i));
    }
    RocksDbSnapshot open = (RocksDbSnapshot) s.snapshot();
    Cursor cursor = open.scan(KeyRange.all());
    cursor.next();
    RocksDbSnapshot closedByUser = (RocksDbSnapshot) s.snapshot();
    assertThat(s.stats().figures()).containsEntry("live-snapshots", 2L);
    closedByUser.close();
    closedByUser.close();
    assertThat(closedByUser.readOptions().isOwningHandle()).isFalse();
    assertThat(s.stats().figures())
        .containsEntry("live-snapshots", 1L)
        .containsEntry("open-snapshots", 1);
    assertThat(open.readOptions().isOwningHandle()).isTrue();
    s.close();
    assertThat(open.readOptions().isOwningHandle()).isFalse();
    assertThatThrownBy(() -> open.get(num(1))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> open.getAll(List.of(num(1)))).isInstanceOf(StoreClosedException.class);
    // A cursor of a snapshot the store closed reports the store closed, as the snapshot's get does.
    assertThatThrownBy(cursor::hasNext)
        .isInstanceOf(StoreClosedException.class)
        .hasMessageContaining("store is closed");
    assertThatCode(open::close).doesNotThrowAnyException();
    assertThatThrownBy(() -> closedByUser.get(num(1))).isInstanceOf(IllegalStateException.class);
  }

  /**
   * Threads taking snapshots and reading through them (get, getAll, scans) while the store closes:
   * each ends on StoreClosedException, never a crash, and every snapshot's native objects are
   * freed. Ten rounds, seeded.
   */
  @Test
  void snapshot_readsRacingClose_endCleanlyAndFreeEverything() throws Exception {
    long seed = 99;
    for (int round = 0; round < 10; round++) {
      RocksDbStore s = (RocksDbStore) Stores.open(config(tmp.resolve("race" + round)).build());
      for (int i = 0; i < 200; i++) {
        s.put(num(i), num(i));
      }
      List<RocksDbSnapshot> made = Collections.synchronizedList(new ArrayList<>());
      ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
      AtomicLong reads = new AtomicLong();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        SplittableRandom rnd = new SplittableRandom(seed + round * 7L + t);
        Thread th =
            new Thread(
                () -> {
                  try {
                    while (true) {
                      RocksDbSnapshot snap = (RocksDbSnapshot) s.snapshot();
                      made.add(snap);
                      for (int i = 0; i < 5; i++) {
                        long k = rnd.nextInt(200);
                        assertThat(num(snap.get(num(k)))).isEqualTo(k);
                        assertThat(snap.getAll(List.of(num(k), num(1000)))).hasSize(2);
                        try (Cursor c = snap.scan(KeyRange.all().gte(num(k)).limit(10))) {
                          c.forEachRemaining(e -> {});
                        }
                        reads.incrementAndGet();
                      }
                      if (rnd.nextBoolean()) {
                        snap.close();
                      }
                      if (rnd.nextInt(4) == 0) {
                        long k = rnd.nextInt(200);
                        s.put(num(k), num(k)); // a new version of the same value
                      }
                    }
                  } catch (StoreClosedException expected) {
                    // the store closed: done
                  } catch (IllegalStateException e) {
                    // A cursor open while the store closed its snapshot says so (AbstractCursor).
                    if (!String.valueOf(e.getMessage()).startsWith("cursor's snapshot is closed")) {
                      unexpected.add(e);
                    }
                  } catch (Throwable e) {
                    unexpected.add(e);
                  }
                });
        th.start();
        threads.add(th);
      }
      while (reads.get() < 300 && unexpected.isEmpty()) {
        Thread.onSpinWait();
      }
      s.close();
      for (Thread th : threads) {
        th.join(DEADLINE_MS);
        assertThat(th.isAlive()).isFalse();
      }
      assertThat(unexpected).as("seed %d round %d", seed, round).isEmpty();
      assertThat(made).isNotEmpty();
      for (RocksDbSnapshot snap : made) {
        assertThat(snap.readOptions().isOwningHandle()).isFalse();
      }
    }
  }

  /**
   * A backup taken while a writer writes keys 1, 2, 3, ... (by put + replace, putIfAbsent, and
   * batches), then the key "last": the copy verifies, holds every key up to its "last", which is at
   * least what was acknowledged before backup() and at most one write past what was acknowledged
   * when it returned, and holds nothing begun later.
   */
  @Test
  void backup_whileWritersRun_copyVerifiesAndHoldsAPrefix() throws Exception {
    Path dir = tmp.resolve("db");
    StoreConfig c = config(dir).build();
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    AtomicLong acked = new AtomicLong();
    Path target = tmp.resolve("copy");
    long before;
    long after;
    try (Store s = Stores.open(c)) {
      Thread writer =
          new Thread(
              () -> {
                try {
                  for (long n = 1; !stop.get(); n++) {
                    if (n % 3 == 0) {
                      s.write(new WriteBatch().put(num(n), num(n)).put(b("last"), num(n)));
                    } else if (n % 3 == 1) {
                      assertThat(s.putIfAbsent(num(n), num(n))).isTrue();
                      s.put(b("last"), num(n));
                    } else {
                      s.put(num(n), num(-1));
                      assertThat(s.replace(num(n), num(-1), num(n))).isTrue();
                      s.put(b("last"), num(n));
                    }
                    acked.set(n);
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              });
      writer.start();
      while (acked.get() < 2000 && errors.isEmpty()) {
        Thread.onSpinWait();
      }
      before = acked.get();
      s.backup(target);
      after = acked.get();
      stop.set(true);
      writer.join(DEADLINE_MS);
      assertThat(errors).isEmpty();
    }
    try (Stream<Path> files = Files.list(target)) {
      List<String> names = files.map(p -> p.getFileName().toString()).toList();
      assertThat(names)
          .contains(StoreDirectory.IDENTITY_FILE, "CURRENT")
          .doesNotContain(CleanClose.FILE_NAME, "checkpoint");
    }
    assertThat(Files.readAllBytes(target.resolve(StoreDirectory.IDENTITY_FILE)))
        .isEqualTo(Files.readAllBytes(dir.resolve(StoreDirectory.IDENTITY_FILE)));
    try (Store copy = Stores.open(config(target).build())) {
      copy.verify();
      long last = num(copy.get(b("last")));
      assertThat(last).isBetween(before, after + 1);
      for (long n = 1; n <= last; n++) {
        assertThat(copy.get(num(n))).as("key %d of a copy up to %d", n, last).isEqualTo(num(n));
      }
      // A write in flight may have landed its key before "last", never a later one.
      assertThat(copy.get(num(last + 2))).isNull();
      assertThat(copy.info().features())
          .contains(Feature.CONDITIONAL_WRITE, Feature.SNAPSHOT_READ, Feature.BACKUP);
    }
  }

  /**
   * A read-only store declares snapshots and backups (and conditional writes, refused as writes),
   * backs up without touching its directory, and the copy opens writable and verifies; the table
   * files are hard links where the file system allows.
   */
  @Test
  void backup_readOnlyStore_copiesWithoutWriting() throws IOException {
    Path dir = tmp.resolve("db");
    TreeMap<Long, Long> model = new TreeMap<>();
    try (Store s = Stores.open(config(dir).build())) {
      for (long i = 0; i < 3000; i++) {
        s.put(num(i), num(i * 7));
        model.put(i, i * 7);
      }
      for (long i = 0; i < 3000; i += 5) {
        s.delete(num(i));
        model.remove(i);
      }
    }
    Map<String, Long> sizesBefore = sizes(dir);
    Path target = tmp.resolve("copy");
    try (Store ro = Stores.open(config(dir).readOnly(true).build())) {
      assertThat(ro.info().features())
          .contains(Feature.CONDITIONAL_WRITE, Feature.SNAPSHOT_READ, Feature.BACKUP);
      assertThatThrownBy(() -> ro.putIfAbsent(b("k"), b("v")))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("read-only");
      try (Snapshot snap = ro.snapshot()) {
        assertThat(num(snap.get(num(1)))).isEqualTo(7);
      }
      ro.backup(target);
    }
    assertThat(sizes(dir)).isEqualTo(sizesBefore);
    try (Stream<Path> files = Files.list(target)) {
      for (Path sst : files.filter(p -> p.toString().endsWith(".sst")).toList()) {
        Object links = Files.getAttribute(sst, "unix:nlink");
        assertThat(((Number) links).intValue()).as("links of %s", sst).isGreaterThanOrEqualTo(2);
      }
    }
    try (Store copy = Stores.open(config(target).build())) {
      copy.verify();
      TreeMap<Long, Long> seen = new TreeMap<>();
      try (Cursor cur = copy.scan(KeyRange.all())) {
        cur.forEachRemaining(e -> seen.put(num(e.key()), num(e.value())));
      }
      assertThat(seen).isEqualTo(model);
      copy.put(num(1), num(0)); // independent of the original
    }
    try (Store s = Stores.open(config(dir).readOnly(true).build())) {
      assertThat(num(s.get(num(1)))).isEqualTo(7);
    }
  }

  /**
   * RocksDB's checkpoint of a read-only database leaves out the writes its view replayed from the
   * WAL; a read-only store whose view holds such writes refuses the backup instead of writing a
   * copy without them, and creates nothing. Once a read-write open closed the store cleanly (which
   * flushes), the read-only backup holds them.
   */
  @Test
  void backup_readOnlyStoreWithWalData_refusedUntilFlushed() {
    Path dir = tmp.resolve("db");
    RocksDbStore w = (RocksDbStore) Stores.open(config(dir).build());
    w.put(b("flushed"), b("1"));
    w.compact(); // flushes the memtable into a table file
    w.put(b("walOnly"), b("2"));
    w.closeWithoutFlush();
    Path target = tmp.resolve("copy");
    try (Store ro = Stores.open(config(dir).readOnly(true).build())) {
      assertThat(ro.get(b("walOnly"))).isEqualTo(b("2"));
      assertThatThrownBy(() -> ro.backup(target))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("replayed from the WAL");
    }
    assertThat(target).doesNotExist();
    assertThat(tmp.toFile().list()).containsExactly("db");
    Stores.open(config(dir).build()).close();
    try (Store ro = Stores.open(config(dir).readOnly(true).build())) {
      ro.backup(target);
    }
    try (Store copy = Stores.open(config(target).build())) {
      copy.verify();
      assertThat(copy.get(b("flushed"))).isEqualTo(b("1"));
      assertThat(copy.get(b("walOnly"))).isEqualTo(b("2"));
    }
  }

  private static Map<String, Long> sizes(Path dir) throws IOException {
    Map<String, Long> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : files.toList()) {
        String n = p.getFileName().toString();
        if (!RocksDbDamageTest.isDiagnosticFile(n)) {
          out.put(n, Files.size(p));
        }
      }
    }
    return out;
  }
}
