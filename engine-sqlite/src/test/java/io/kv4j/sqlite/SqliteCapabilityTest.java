package io.kv4j.sqlite;

import static io.kv4j.sqlite.Sqlite.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.StoreDirectory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The issue #25 capabilities beyond what the kit checks: conditional writes mixed into group
 * commits and against a writer outside kv4j, snapshots across store close, their connection and WAL
 * cost, getAll across chunks and over damaged rows, backups while writers run and of read-only
 * stores.
 */
class SqliteCapabilityTest {
  /** Generous deadline for work on other threads; never a measure of speed. */
  private static final long DEADLINE_SECONDS = 120;

  @TempDir Path tmp;

  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(DEADLINE_SECONDS, TimeUnit.SECONDS);
  }

  private Path dir() {
    return tmp.resolve("store");
  }

  private StoreConfig.Builder builder(Path path) {
    return Sqlite.config(path);
  }

  private Store open() {
    return Sqlite.open(dir());
  }

  private static byte[] key(int i) {
    return b(String.format("key%05d", i));
  }

  private static long figure(Store s, String name) {
    return s.stats().figures().get(name).longValue();
  }

  private void sql(String statement) throws Exception {
    Sqlite.sql(dir(), statement);
  }

  // --- declared features ---------------------------------------------------------------------

  @Test
  void info_readOnlyStore_declaresCapabilitiesButRefusesConditionalWrites() {
    open().close();
    try (Store ro = Stores.open(builder(dir()).readOnly(true).build())) {
      assertThat(ro.info().features())
          .contains(Feature.CONDITIONAL_WRITE, Feature.SNAPSHOT_READ, Feature.BACKUP);
      assertThatThrownBy(() -> ro.putIfAbsent(b("a"), b("1")))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("read-only");
      try (Snapshot snap = ro.snapshot()) {
        assertThat(snap.get(b("a"))).isNull();
      }
    }
  }

  // --- conditional writes --------------------------------------------------------------------

  @Test
  void compareAndSet_mixedWithConcurrentPutsAndBatches_losesNoIncrementAndShareCommits()
      throws Exception {
    int threads = 6;
    int increments = 100;
    try (Store s = Stores.open(builder(dir()).durability(Durability.SYNC).build())) {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < increments; i++) {
                    // Counters change only through CAS; the same thread also puts and batches
                    // other keys, so groups mix conditional and plain writes.
                    byte[] k = b("counter" + (i % 2));
                    while (true) {
                      byte[] cur = s.get(k);
                      boolean ok =
                          cur == null
                              ? s.putIfAbsent(k, b("1"))
                              : s.replace(
                                  k, cur, b(Long.toString(Long.parseLong(new String(cur)) + 1)));
                      if (ok) {
                        break;
                      }
                    }
                    s.put(b("t" + id + "-" + i), b("x"));
                    if (i % 10 == 0) {
                      s.write(new WriteBatch().put(b("batch" + id), b("" + i)).delete(b("none")));
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      }
      long total =
          Long.parseLong(new String(s.get(b("counter0"))))
              + Long.parseLong(new String(s.get(b("counter1"))));
      assertThat(total).as("increments by %d threads", threads).isEqualTo(threads * increments);
      assertThat(figure(s, "single-write-commits"))
          .as("concurrent SYNC writers, conditional ones included, share group commits")
          .isLessThan(figure(s, "single-writes"));
    }
    try (Store s = open()) {
      assertThat(s.get(b("counter0")))
          .as("after reopen")
          .isEqualTo(b("" + threads * increments / 2));
    }
  }

  @Test
  void compareAndSet_againstAWriterOutsideKv4j_losesNoIncrement() throws Exception {
    int rounds = 150;
    try (Store s = open()) {
      s.put(b("c"), b("0"));
      // A second program (here: plain JDBC) increments the same counter in its own transactions,
      // with kv4j's row checksum, while the store increments it with replace loops.
      Future<?> outside =
          pool.submit(
              () -> {
                try (Connection c = Sqlite.connect(dir())) {
                  try (Statement st = c.createStatement()) {
                    st.execute("PRAGMA busy_timeout=60000");
                  }
                  for (int i = 0; i < rounds; i++) {
                    try (Statement st = c.createStatement()) {
                      st.execute("BEGIN IMMEDIATE");
                      long n;
                      try (ResultSet rs = st.executeQuery("SELECT v FROM kv WHERE k = x'63'")) {
                        rs.next();
                        n = Long.parseLong(new String(rs.getBytes(1)));
                      }
                      byte[] v = b(Long.toString(n + 1));
                      try (PreparedStatement ps =
                          c.prepareStatement("UPDATE kv SET v = ?, crc32c = ? WHERE k = x'63'")) {
                        ps.setBytes(1, v);
                        ps.setInt(2, RowChecksum.of(b("c"), v));
                        ps.executeUpdate();
                      }
                      st.execute("COMMIT");
                    }
                  }
                }
                return null;
              });
      for (int i = 0; i < rounds; i++) {
        while (true) {
          byte[] cur = s.get(b("c"));
          if (s.replace(b("c"), cur, b(Long.toString(Long.parseLong(new String(cur)) + 1)))) {
            break;
          }
        }
      }
      outside.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertThat(s.get(b("c"))).isEqualTo(b(Long.toString(2L * rounds)));
    }
  }

  @Test
  void compareAndSet_damagedRow_throwsCorruptedAndWritesNothing() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("AAAA"));
    }
    sql("UPDATE kv SET v = x'41414140' WHERE k = x'61'"); // one bit, checksum unchanged
    try (Store s = open()) {
      assertThatThrownBy(() -> s.replace(b("a"), b("AAA@"), b("new")))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("checksum");
      assertThatThrownBy(() -> s.putIfAbsent(b("a"), b("new")))
          .isInstanceOf(StoreCorruptedException.class);
      // The damage fails the call, not the store.
      assertThat(s.putIfAbsent(b("b"), b("1"))).isTrue();
      assertThat(s.get(b("b"))).isEqualTo(b("1"));
    }
    try (Connection c = Sqlite.connect(dir());
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT hex(v) FROM kv WHERE k = x'61'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).as("the damaged row, untouched").isEqualTo("41414140");
    }
  }

  // --- snapshots -----------------------------------------------------------------------------

  @Test
  void snapshot_storeClosedWhileOpen_readsThrowClosedAndNothingLeaks() throws Exception {
    Store s = open();
    for (int i = 0; i < 600; i++) {
      s.put(key(i), b("v" + i));
    }
    Snapshot snap = s.snapshot();
    Cursor unfinished = snap.scan(KeyRange.all()); // more than one chunk: holds a position
    assertThat(unfinished.next().key()).isEqualTo(key(0));
    s.close();
    assertThatThrownBy(() -> snap.get(key(1))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> snap.getAll(List.of(key(1)))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> snap.scan(KeyRange.all())).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(unfinished::next).isInstanceOf(RuntimeException.class);
    snap.close(); // idempotent after the store closed it
    assertThat(Files.exists(dir().resolve("kv.sqlite-wal")))
        .as("SQLite deletes the WAL only when the last connection closes: every one was closed")
        .isFalse();
    try (Store again = open()) {
      assertThat(again.get(key(599))).isEqualTo(b("v599"));
    }
  }

  @Test
  void snapshot_manyOpen_doNotStarveGets() throws Exception {
    try (Store s = Stores.open(builder(dir()).option("reader-pool-size", "1").build())) {
      s.put(b("a"), b("1"));
      List<Snapshot> open = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        open.add(s.snapshot());
      }
      s.put(b("a"), b("2"));
      Future<byte[]> get = pool.submit(() -> s.get(b("a")));
      assertThat(get.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isEqualTo(b("2"));
      assertThat(figure(s, "cursor-connections")).as("one connection per snapshot").isEqualTo(5);
      assertThat(figure(s, "reader-connections")).isEqualTo(1);
      for (Snapshot snap : open) {
        assertThat(snap.get(b("a"))).isEqualTo(b("1"));
        snap.close();
      }
      assertThat(figure(s, AbstractStore.OPEN_SNAPSHOTS)).isZero();
      assertThat(figure(s, "cursor-connections"))
          .as("closed snapshots return their connections; at most 2 stay idle")
          .isLessThanOrEqualTo(2);
    }
  }

  @Test
  void snapshot_open_pinsTheWalAndCompactSkipsVacuumUntilClosed() {
    try (Store s = Stores.open(builder(dir()).option("wal-autocheckpoint", "10").build())) {
      byte[] big = new byte[4000];
      for (int i = 0; i < 100; i++) {
        s.put(key(i), big);
      }
      s.compact();
      assertThat(figure(s, "wal-bytes")).isZero();
      try (Snapshot snap = s.snapshot()) {
        for (int round = 0; round < 5; round++) {
          for (int i = 0; i < 100; i++) {
            s.put(key(i), b("r" + round));
          }
        }
        s.compact();
        assertThat(figure(s, "compact-vacuums-skipped")).isEqualTo(1);
        assertThat(figure(s, "wal-bytes"))
            .as("the WAL keeps every frame written since the snapshot began (autocheckpoint 10)")
            .isGreaterThan(100L * 8192);
        assertThat(snap.get(key(7))).isEqualTo(big);
        assertThat(s.get(key(7))).isEqualTo(b("r4"));
      }
      s.compact();
      assertThat(figure(s, "compact-vacuums")).isEqualTo(2);
      assertThat(figure(s, "wal-bytes")).as("released once the snapshot closed").isZero();
    }
  }

  @Test
  void snapshot_sharedByThreadsWithInterleavedCursors_readsOnePointInTime() throws Exception {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    try (Store s = open()) {
      for (int i = 0; i < 700; i++) {
        s.put(key(i), b("old" + i));
      }
      try (Snapshot snap = s.snapshot()) {
        AtomicBoolean stop = new AtomicBoolean();
        Future<?> writer =
            pool.submit(
                () -> {
                  for (int n = 0; !stop.get() && n < 3000; n++) {
                    s.write(
                        new WriteBatch().put(key(n % 700), b("new")).delete(key((n + 1) % 700)));
                  }
                  return null;
                });
        List<Future<Integer>> readers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          long threadSeed = rnd.nextLong();
          readers.add(
              pool.submit(
                  () -> {
                    Random r = new Random(threadSeed);
                    int seen = 0;
                    try (Cursor a = snap.scan(KeyRange.all());
                        Cursor z = snap.scan(KeyRange.all().reverse())) {
                      for (int i = 0; i < 700; i++) {
                        Entry fwd = a.next();
                        Entry rev = z.next();
                        int k = r.nextInt(700);
                        assertThat(fwd.value()).isEqualTo(b("old" + i));
                        assertThat(rev.value()).isEqualTo(b("old" + (699 - i)));
                        assertThat(snap.get(key(k))).isEqualTo(b("old" + k));
                        seen++;
                      }
                      assertThat(a.hasNext()).isFalse();
                    }
                    return seen;
                  }));
        }
        for (Future<Integer> f : readers) {
          assertThat(f.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).as("seed %d", seed).isEqualTo(700);
        }
        stop.set(true);
        writer.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      }
    }
  }

  // --- getAll --------------------------------------------------------------------------------

  @Test
  void getAll_manyKeysWithDuplicatesAndAbsent_matchesAModelAcrossChunks() {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    TreeMap<ByteBuffer, byte[]> model = new TreeMap<>();
    try (Store s = open()) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 2000; i += 2) {
        byte[] v = new byte[rnd.nextInt(40)];
        rnd.nextBytes(v);
        batch.put(key(i), v);
        model.put(ByteBuffer.wrap(key(i)), v);
      }
      s.write(batch);
      for (int size : new int[] {1, 3, 255, 256, 257, 700, 1500}) {
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          keys.add(key(rnd.nextInt(2100)));
        }
        List<byte[]> got = s.getAll(keys);
        try (Snapshot snap = s.snapshot()) {
          List<byte[]> viaSnapshot = snap.getAll(keys);
          for (int i = 0; i < size; i++) {
            byte[] want = model.get(ByteBuffer.wrap(keys.get(i)));
            assertThat(got.get(i)).as("seed %d, %d keys, #%d", seed, size, i).isEqualTo(want);
            assertThat(viaSnapshot.get(i)).as("seed %d, snapshot", seed).isEqualTo(want);
          }
        }
        for (int i = 0; i < size; i++) {
          for (int j = i + 1; j < size && j < i + 30; j++) {
            if (got.get(i) != null) {
              assertThat(got.get(i)).as("each value its own array").isNotSameAs(got.get(j));
            }
          }
        }
      }
    }
  }

  @Test
  void getAll_rowOfAnotherKeyOrFlippedValue_throwsCorrupted() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("value of a"));
      s.put(b("b"), b("value of b"));
      s.put(b("c"), b("CCCC"));
    }
    sql(
        "UPDATE kv SET v = (SELECT v FROM kv WHERE k = x'62'),"
            + " crc32c = (SELECT crc32c FROM kv WHERE k = x'62') WHERE k = x'61'");
    try (Store s = open()) {
      assertThatThrownBy(() -> s.getAll(List.of(b("b"), b("a"))))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("0x61");
      assertThat(s.getAll(List.of(b("b"), b("c")))).containsExactly(b("value of b"), b("CCCC"));
    }
    sql("UPDATE kv SET v = x'43434342' WHERE k = x'63'");
    try (Store s = open();
        Snapshot snap = s.snapshot()) {
      assertThatThrownBy(() -> snap.getAll(List.of(b("b"), b("c"))))
          .isInstanceOf(StoreCorruptedException.class);
    }
  }

  // --- backup --------------------------------------------------------------------------------

  @Test
  void backup_whileWritersRun_opensWithSameOptionsVerifiesAndHoldsAPrefix() throws Exception {
    StoreConfig config =
        builder(dir()).option("page-size", "16KiB").option("table", "things").build();
    Path copy = tmp.resolve("copy");
    long acknowledgedBefore;
    AtomicLong acknowledged = new AtomicLong();
    try (Store s = Stores.open(config)) {
      AtomicBoolean stop = new AtomicBoolean();
      Future<?> writer =
          pool.submit(
              () -> {
                for (int i = 0; !stop.get(); i++) {
                  if (i % 3 == 0) {
                    s.write(new WriteBatch().put(key(i), b("v" + i)).put(b("pair"), key(i)));
                  } else {
                    s.putIfAbsent(key(i), b("v" + i));
                  }
                  acknowledged.set(i + 1);
                }
                return null;
              });
      while (acknowledged.get() < 300) {
        Thread.onSpinWait();
      }
      acknowledgedBefore = acknowledged.get();
      s.backup(copy);
      long acknowledgedAfter = acknowledged.get();
      stop.set(true);
      writer.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertThat(Files.readString(copy.resolve(StoreDirectory.IDENTITY_FILE)))
          .isEqualTo(Files.readString(dir().resolve(StoreDirectory.IDENTITY_FILE)));
      try (Store b = Stores.open(builder(copy).option("table", "things").build())) {
        b.verify();
        assertThat(b.stats().figures().get("page-size-bytes").intValue()).isEqualTo(16384);
        assertThat(b.stats().figures().get("row-checksums").intValue()).isEqualTo(1);
        long n = b.stats().keyCount() - (b.get(b("pair")) == null ? 0 : 1);
        assertThat(n).isBetween(acknowledgedBefore, acknowledgedAfter + 1);
        for (int i = 0; i < n; i++) {
          assertThat(b.get(key(i))).as("key %d of a %d-key prefix", i, n).isEqualTo(b("v" + i));
        }
        assertThat(b.get(key((int) n))).isNull();
        int lastBatch = (int) ((n - 1) / 3 * 3);
        assertThat(b.get(b("pair"))).as("the last batch whole").isEqualTo(key(lastBatch));
      }
    }
  }

  @Test
  void backup_ofReadOnlyStore_opensReadOnlyAndReadWrite() throws Exception {
    try (Store s = open()) {
      for (int i = 0; i < 50; i++) {
        s.put(key(i), b("v" + i));
      }
    }
    Path copy = tmp.resolve("copy");
    try (Store ro = Stores.open(builder(dir()).readOnly(true).build())) {
      ro.backup(copy);
    }
    try (Stream<Path> files = Files.list(copy)) {
      assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
          .as("a plain sqlite store, no side files left by the copy")
          .containsExactly("kv.sqlite", "kv4j.store");
    }
    try (Store b = Stores.open(builder(copy).readOnly(true).build())) {
      b.verify();
      assertThat(b.stats().keyCount()).isEqualTo(50);
    }
    try (Store b = Stores.open(builder(copy).build())) {
      b.put(b("new"), b("x"));
      assertThat(b.get(key(49))).isEqualTo(b("v49"));
    }
    try (Store s = open()) {
      assertThat(s.get(b("new"))).as("the copy is independent").isNull();
    }
  }

  @Test
  void backupAndSnapshot_readOnlyStoreInUnwritableDirectory_readImmutableFile() throws Exception {
    try (Store s = open()) {
      for (int i = 0; i < 40; i++) {
        s.put(key(i), b("v" + i));
      }
    }
    List<String> before;
    try (Stream<Path> files = Files.list(dir())) {
      before = files.map(p -> p.getFileName().toString()).sorted().toList();
    }
    Path copy = tmp.resolve("copy");
    SqliteTrustTest.makeUnwritable(dir());
    try (Store ro = Stores.open(builder(dir()).readOnly(true).build())) {
      try (Snapshot snap = ro.snapshot()) {
        assertThat(snap.getAll(List.of(key(3), key(99)))).containsExactly(b("v3"), null);
      }
      ro.backup(copy); // VACUUM INTO through an immutable=1 connection
      try (Stream<Path> files = Files.list(dir())) {
        assertThat(files.map(p -> p.getFileName().toString()).sorted().toList()).isEqualTo(before);
      }
    } finally {
      SqliteTrustTest.makeWritable(dir());
    }
    try (Store b = Stores.open(builder(copy).build())) {
      b.verify();
      assertThat(b.stats().keyCount()).isEqualTo(40);
      assertThat(b.get(key(39))).isEqualTo(b("v39"));
    }
  }
}
