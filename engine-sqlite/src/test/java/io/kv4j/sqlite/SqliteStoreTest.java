package io.kv4j.sqlite;

import static io.kv4j.sqlite.Sqlite.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteStoreTest {
  @TempDir Path tmp;

  private Path dir() {
    return tmp.resolve("store");
  }

  private StoreConfig.Builder builder() {
    return Sqlite.config(dir());
  }

  private Store open() {
    return Sqlite.open(dir());
  }

  private static List<String> keys(Cursor c) {
    List<String> out = new ArrayList<>();
    try (c) {
      c.forEachRemaining(e -> out.add(new String(e.key(), StandardCharsets.UTF_8)));
    }
    return out;
  }

  @Test
  void provider_foundById_declaresFeaturesAndOptions() {
    assertThat(Stores.provider("sqlite")).isInstanceOf(SqliteProvider.class);
    assertThat(Stores.provider("sqlite").features())
        .containsExactlyInAnyOrder(
            Feature.ORDERED_SCAN,
            Feature.REVERSE_SCAN,
            Feature.SNAPSHOT_SCAN,
            Feature.ATOMIC_BATCH,
            Feature.PERSISTENT,
            Feature.CHECKSUMS,
            Feature.CONDITIONAL_WRITE,
            Feature.SNAPSHOT_READ,
            Feature.BACKUP,
            Feature.KEYSPACES,
            Feature.KEYSPACE_BATCH,
            Feature.CONDITIONAL_BATCH);
    assertThat(Stores.provider("sqlite").options())
        .extracting(o -> o.name())
        .containsExactly(
            "table",
            "page-size",
            "page-cache-size",
            "mmap-size",
            "busy-timeout",
            "wal-autocheckpoint",
            "reader-pool-size",
            "checksums");
  }

  @Test
  void putGetDelete_roundTrip_includingEmptyValueAndReopen() {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
      s.put(b("e"), new byte[0]);
      s.put(b("a"), b("2"));
      s.put(b("d"), b("x"));
      s.delete(b("d"));
      s.delete(b("absent"));
      assertThat(s.get(b("a"))).isEqualTo(b("2"));
      assertThat(s.get(b("e"))).isEmpty();
      assertThat(s.get(b("d"))).isNull();
    }
    try (Store s = open()) {
      assertThat(s.get(b("a"))).isEqualTo(b("2"));
      assertThat(s.get(b("e"))).isNotNull().isEmpty();
      assertThat(s.stats().keyCount()).isEqualTo(2);
    }
  }

  @Test
  void scan_randomRanges_matchModelInUnsignedOrder() {
    long seed = 20261129L;
    SplittableRandom rnd = new SplittableRandom(seed);
    NavigableMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (Store s = open()) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 1500; i++) {
        byte[] k = new byte[1 + rnd.nextInt(3)];
        rnd.nextBytes(k); // includes bytes >= 0x80: unsigned order matters
        byte[] v = new byte[rnd.nextInt(4000)]; // some chunks end on the byte budget
        rnd.nextBytes(v);
        batch.put(k, v);
        model.put(k, v);
      }
      s.write(batch);
      for (int round = 0; round < 200; round++) {
        byte[] lo = new byte[1 + rnd.nextInt(2)];
        byte[] hi = new byte[1 + rnd.nextInt(2)];
        rnd.nextBytes(lo);
        rnd.nextBytes(hi);
        boolean loInc = rnd.nextBoolean();
        boolean hiInc = rnd.nextBoolean();
        boolean reverse = rnd.nextBoolean();
        int bounds = rnd.nextInt(4);
        long limit = rnd.nextInt(5) == 0 ? rnd.nextInt(600) : Long.MAX_VALUE;
        KeyRange r = KeyRange.all();
        NavigableMap<byte[], byte[]> view = model;
        if ((bounds & 1) != 0) {
          r = loInc ? r.gte(lo) : r.gt(lo);
        }
        if ((bounds & 2) != 0) {
          r = hiInc ? r.lte(hi) : r.lt(hi);
        }
        if (r.isEmpty()) {
          view = new TreeMap<>(Arrays::compareUnsigned);
        } else if (bounds == 3) {
          view = model.subMap(lo, loInc, hi, hiInc);
        } else if (bounds == 1) {
          view = model.tailMap(lo, loInc);
        } else if (bounds == 2) {
          view = model.headMap(hi, hiInc);
        }
        if (reverse) {
          r = r.reverse();
          view = view.descendingMap();
        }
        r = r.limit(limit);
        List<Entry> expected = new ArrayList<>();
        for (Map.Entry<byte[], byte[]> e : view.entrySet()) {
          if (expected.size() >= limit) {
            break;
          }
          expected.add(new Entry(e.getKey(), e.getValue()));
        }
        List<Entry> actual = new ArrayList<>();
        try (Cursor c = s.scan(r)) {
          c.forEachRemaining(actual::add);
        }
        assertThat(actual).as("seed %d round %d range %s", seed, round, r).isEqualTo(expected);
      }
    }
  }

  @Test
  void scan_boundsAreExactAndReverseWorks() {
    try (Store s = open()) {
      for (String k : List.of("a", "b", "c", "d", "e")) {
        s.put(b(k), b(k));
      }
      assertThat(keys(s.scan(KeyRange.all().gt(b("b")).lt(b("e"))))).containsExactly("c", "d");
      assertThat(keys(s.scan(KeyRange.all().gte(b("b")).lte(b("e")))))
          .containsExactly("b", "c", "d", "e");
      assertThat(keys(s.scan(KeyRange.all().gte(b("b")).lte(b("e")).reverse())))
          .containsExactly("e", "d", "c", "b");
      assertThat(keys(s.scan(KeyRange.all().gt(b("b")).lt(b("e")).reverse())))
          .containsExactly("d", "c");
      assertThat(keys(s.scan(KeyRange.all().reverse().limit(2)))).containsExactly("e", "d");
      assertThat(keys(s.scan(KeyRange.all().gt(b("c")).lt(b("c"))))).isEmpty();
    }
  }

  @Test
  void scan_isSnapshot_acrossChunksAndLaterWrites() {
    int n = SqliteCursor.CHUNK_ROWS * 3 + 7;
    try (Store s = open()) {
      for (int i = 0; i < n; i++) {
        s.put(b(String.format("k%05d", i)), b("old"));
      }
      try (Cursor c = s.scan(KeyRange.all())) {
        s.put(b("k00000x"), b("new"));
        s.delete(b(String.format("k%05d", n - 1)));
        for (int i = 0; i < n; i++) {
          s.put(b(String.format("k%05d", i)), b("new"));
        }
        int seen = 0;
        while (c.hasNext()) {
          Entry e = c.next();
          assertThat(e.value()).as("entry %s", e).isEqualTo(b("old"));
          seen++;
        }
        assertThat(seen).isEqualTo(n);
      }
      assertThat(s.get(b("k00000x"))).isEqualTo(b("new"));
    }
  }

  @Test
  void write_batch_appliesInOrderAtomically() {
    try (Store s = open()) {
      s.put(b("gone"), b("1"));
      s.write(
          new WriteBatch()
              .put(b("x"), b("1"))
              .delete(b("x"))
              .put(b("y"), b("1"))
              .put(b("y"), b("2"))
              .delete(b("gone")));
      assertThat(s.get(b("x"))).isNull();
      assertThat(s.get(b("y"))).isEqualTo(b("2"));
      assertThat(s.get(b("gone"))).isNull();
    }
  }

  @Test
  void file_writtenByKv4j_readsBackInIndependentConnection() throws Exception {
    try (Store s = open()) {
      s.put(new byte[] {(byte) 0x80}, b("high"));
      s.put(new byte[] {0x01}, b("low"));
      s.put(new byte[] {0x01, 0x00}, new byte[0]);
      // Readable while the store is open, too (WAL lets another connection read).
      try (Connection c = Sqlite.connect(dir());
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM kv")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).isEqualTo(3);
      }
    }
    try (Connection c = Sqlite.connect(dir());
        Statement st = c.createStatement()) {
      List<String> rows = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("SELECT hex(k), v FROM kv ORDER BY k")) {
        while (rs.next()) {
          byte[] v = rs.getBytes(2);
          rows.add(
              rs.getString(1) + "=" + (v == null ? "" : new String(v, StandardCharsets.UTF_8)));
        }
      }
      assertThat(rows).containsExactly("01=low", "0100=", "80=high");
      // Each row carries its checksum over key and value, in a column of its own.
      try (ResultSet rs = st.executeQuery("SELECT crc32c FROM kv WHERE k = x'80'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).isEqualTo(RowChecksum.of(new byte[] {(byte) 0x80}, b("high")));
      }
      // Keys and values are BLOBs (memcmp order); the schema refuses TEXT written by other tools.
      assertThatThrownBy(() -> st.execute("INSERT INTO kv VALUES('text', x'00', 0)"))
          .hasMessageContaining("CHECK");
      try (ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
      }
      try (ResultSet rs = st.executeQuery("PRAGMA application_id")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).isEqualTo(SqliteStore.APPLICATION_ID);
      }
    }
  }

  @Test
  void tableCreatedBySqlShellSchema_opensAsStore() throws Exception {
    Files.createDirectories(dir());
    try (Connection c = Sqlite.connect(dir());
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE kv(k BLOB NOT NULL PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID");
      st.execute("INSERT INTO kv VALUES(x'6b', x'76')");
    }
    try (Store s = open()) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
    }
  }

  @Test
  void open_foreignFile_throwsCorruptedNamingFile() throws Exception {
    Files.createDirectories(dir());
    Path f = dir().resolve("kv.sqlite");
    Files.write(f, b("this is not a database, it is a text file of some length"));
    assertThatThrownBy(this::open)
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining(f.getFileName().toString())
        .satisfies(e -> assertThat(((StoreCorruptedException) e).file()).endsWith(f.getFileName()));
    // The failed open changed nothing of the file, and released the lock: the next open fails
    // the same way instead of with StoreLockedException.
    assertThat(Files.readAllBytes(f))
        .isEqualTo(b("this is not a database, it is a text file of some length"));
    assertThatThrownBy(this::open).isInstanceOf(StoreCorruptedException.class);
  }

  @Test
  void open_damagedSchemaPage_throwsCorrupted() throws Exception {
    try (Store s = open()) {
      for (int i = 0; i < 100; i++) {
        s.put(b("k" + i), new byte[500]);
      }
    }
    Path f = dir().resolve("kv.sqlite");
    byte[] data = Files.readAllBytes(f);
    SplittableRandom rnd = new SplittableRandom(5);
    for (int i = 100; i < 4096; i++) { // page 1 after the header: the schema's b-tree page
      data[i] = (byte) rnd.nextInt();
    }
    Files.write(f, data);
    assertThatThrownBy(
            () -> {
              try (Store s = open()) {
                s.get(b("k1")); // should not get this far
              }
            })
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("kv.sqlite");
  }

  @Test
  void translate_mapsSqliteCodes() {
    Path f = Path.of("x.sqlite");
    assertThat(SqliteErrors.translate("m", new java.sql.SQLException("c", "s", 11), f))
        .isInstanceOf(StoreCorruptedException.class)
        .hasCauseInstanceOf(java.sql.SQLException.class);
    assertThat(SqliteErrors.translate("m", new java.sql.SQLException("n", "s", 26), f))
        .isInstanceOf(StoreCorruptedException.class);
    assertThat(SqliteErrors.translate("m", new java.sql.SQLException("full", "s", 13), f))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("full");
  }

  @Test
  void verify_pragmaNotApplied_failsClearly() {
    StoreOpening.verify("mmap_size", 1024L, 1024L, Path.of("kv.sqlite")); // applied: no error
    assertThatThrownBy(() -> StoreOpening.verify("mmap_size", 1024L, 0L, Path.of("kv.sqlite")))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("PRAGMA mmap_size")
        .hasMessageContaining("is 0 after setting it to 1024");
  }

  @Test
  void open_foreignTableShape_throwsCorrupted() throws Exception {
    Files.createDirectories(dir());
    try (Connection c = Sqlite.connect(dir());
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE kv(name TEXT, age INTEGER)");
    }
    assertThatThrownBy(this::open)
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("not a kv4j table");
  }

  @Test
  void open_missingDirWithoutCreate_throwsIoAndCreatesNothing() {
    assertThatThrownBy(() -> Stores.open(builder().createIfMissing(false).build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining(dir().toString());
    assertThat(dir()).doesNotExist();
    assertThatThrownBy(() -> Stores.open(builder().readOnly(true).build()))
        .isInstanceOf(StoreIOException.class);
    assertThat(dir()).doesNotExist();
  }

  @Test
  void open_twice_throwsLocked() {
    try (Store s = open()) {
      assertThat(s.info().location()).endsWith("store");
      assertThatThrownBy(this::open).isInstanceOf(StoreLockedException.class);
    }
  }

  @Test
  void readOnly_readsAndScans_refusesWrites() {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
      s.put(b("b"), b("2"));
    }
    try (Store s = Stores.open(builder().readOnly(true).build())) {
      assertThat(s.info().readOnly()).isTrue();
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
      assertThat(keys(s.scan(KeyRange.all().reverse()))).containsExactly("b", "a");
      assertThat(s.stats().keyCount()).isEqualTo(2);
      s.sync();
      assertThatThrownBy(() -> s.put(b("c"), b("3")))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(s::compact).isInstanceOf(UnsupportedOperationException.class);
    }
  }

  @Test
  void readOnly_rollbackJournalFile_failsClearly_readWriteConvertsIt() throws Exception {
    Files.createDirectories(dir());
    String url = "jdbc:sqlite:" + dir().resolve("kv.sqlite");
    try (Connection c = DriverManager.getConnection(url);
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE kv(k BLOB NOT NULL PRIMARY KEY, v BLOB NOT NULL)");
      st.execute("INSERT INTO kv VALUES(x'61', x'31')");
    }
    assertThatThrownBy(() -> Stores.open(builder().readOnly(true).build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("not in WAL mode");
    try (Store s = open()) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
    try (Store s = Stores.open(builder().readOnly(true).build())) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  @Test
  void readOnly_missingTable_throwsAndDoesNotCreateIt() {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
    }
    assertThatThrownBy(() -> Stores.open(builder().readOnly(true).option("table", "other").build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("other");
  }

  @Test
  void useAfterClose_throwsClosed_andCursorToo() {
    Store s = open();
    s.put(b("a"), b("1"));
    s.put(b("b"), b("2"));
    Cursor c = s.scan(KeyRange.all());
    assertThat(c.next().key()).isEqualTo(b("a"));
    s.close();
    s.close(); // idempotent
    assertThatThrownBy(() -> s.get(b("a"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.put(b("a"), b("1"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.scan(KeyRange.all())).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(s::stats).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(s::sync).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(c::hasNext).isInstanceOf(StoreClosedException.class);
  }

  @Test
  void close_closesEveryConnection_evenAfterWorkerThreadsDied() throws Exception {
    Store s = Stores.open(builder().option("reader-pool-size", "3").build());
    for (int i = 0; i < SqliteCursor.CHUNK_ROWS + 44; i++) { // more than one chunk: cursors stay
      // on their connections
      s.put(b("k" + i), b("v" + i));
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int id = t;
        fs.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 200; i++) {
                    assertThat(s.get(b("k" + (i % 100)))).isEqualTo(b("v" + (i % 100)));
                  }
                  Cursor c = s.scan(KeyRange.all()); // left open on purpose, mid-snapshot
                  assertThat(c.hasNext()).isTrue();
                  if (id % 2 == 0) {
                    throw new IllegalStateException("worker dies holding an open cursor");
                  }
                  return null;
                }));
      }
      for (Future<?> f : fs) {
        try {
          f.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException expected) {
          assertThat(expected).hasRootCauseMessage("worker dies holding an open cursor");
        }
      }
    } finally {
      pool.shutdown();
      assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    }
    StoreStats st = s.stats();
    assertThat(st.figures().get("reader-connections").intValue()).isBetween(1, 3);
    assertThat(st.figures().get("cursor-connections").intValue()).isEqualTo(8);
    s.close();
    // SQLite removes the WAL and shm files only when the LAST connection to the file closes.
    assertThat(dir().resolve("kv.sqlite-wal")).doesNotExist();
    assertThat(dir().resolve("kv.sqlite-shm")).doesNotExist();
  }

  @Test
  void scan_fullyBuffered_releasesConnectionBeforeClose() {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
      List<Cursor> small = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        small.add(s.scan(KeyRange.all())); // one row: buffered at once, connection returned
      }
      assertThat(s.stats().figures().get("cursor-connections").intValue()).isLessThanOrEqualTo(2);
      s.put(b("b"), b("2")); // still snapshots: the row was read at scan time
      for (Cursor c : small) {
        assertThat(keys(c)).containsExactly("a");
      }
      for (int i = 0; i < SqliteCursor.CHUNK_ROWS * 2; i++) {
        s.put(b("k" + i), b("v"));
      }
      List<Cursor> big = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        big.add(s.scan(KeyRange.all())); // more than a chunk: each holds its snapshot
      }
      assertThat(s.stats().figures().get("cursor-connections").intValue()).isEqualTo(5);
      big.forEach(Cursor::close);
      assertThat(s.stats().figures().get("cursor-connections").intValue()).isLessThanOrEqualTo(2);
    }
  }

  @Test
  void readers_runInParallelWithWriter() throws Exception {
    try (Store s = open()) {
      for (int i = 0; i < 200; i++) {
        s.put(b("k" + i), b("0"));
      }
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<Integer>> readers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          readers.add(
              pool.submit(
                  () -> {
                    start.await();
                    int seen = 0;
                    for (int i = 0; i < 2000; i++) {
                      byte[] v = s.get(b("k" + (i % 200)));
                      assertThat(v).isNotNull();
                      seen++;
                    }
                    return seen;
                  }));
        }
        Future<?> writer =
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < 500; i++) {
                    s.put(b("k" + (i % 200)), b(Integer.toString(i)));
                  }
                  return null;
                });
        start.countDown();
        writer.get(60, TimeUnit.SECONDS);
        for (Future<Integer> r : readers) {
          assertThat(r.get(60, TimeUnit.SECONDS)).isEqualTo(2000);
        }
      } finally {
        pool.shutdown();
        assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(s.get(b("k99"))).isEqualTo(b("499"));
    }
  }

  @Test
  void put_concurrentSyncWriters_allAppliedWithGroupCommit() throws Exception {
    int threads = 6;
    int each = 150;
    try (Store s = Stores.open(builder().durability(Durability.SYNC).build())) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      CountDownLatch start = new CountDownLatch(1);
      try {
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int id = t;
          fs.add(
              pool.submit(
                  () -> {
                    start.await();
                    for (int i = 0; i < each; i++) {
                      s.put(b(id + ":" + i), b("v" + i));
                      if (i % 3 == 0) {
                        s.delete(b(id + ":" + i));
                      }
                    }
                    return null;
                  }));
        }
        start.countDown();
        for (Future<?> f : fs) {
          f.get(120, TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdown();
        assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
      }
      for (int t = 0; t < threads; t++) {
        for (int i = 0; i < each; i++) {
          assertThat(s.get(b(t + ":" + i)))
              .as("key %d:%d", t, i)
              .isEqualTo(i % 3 == 0 ? null : b("v" + i));
        }
      }
      StoreStats st = s.stats();
      long writes = st.figures().get("single-writes").longValue();
      long commits = st.figures().get("single-write-commits").longValue();
      assertThat(writes).isEqualTo(threads * (each + each / 3));
      assertThat(commits).isBetween(1L, writes);
      assertThat(st.keyCount()).isEqualTo(threads * (each - each / 3));
    }
  }

  @Test
  void stats_reportRowsFileAndWalBytes() {
    try (Store s = open()) {
      for (int i = 0; i < 50; i++) {
        s.put(b("k" + i), new byte[1000]);
      }
      s.delete(b("k0"));
      StoreStats st = s.stats();
      assertThat(st.keyCount()).isEqualTo(49);
      assertThat(st.keyCountExact()).isTrue();
      assertThat(st.figures())
          .containsKeys("rows", "file-bytes", "wal-bytes", "page-size-bytes", "freelist-pages");
      assertThat(st.figures().get("rows").longValue()).isEqualTo(49);
      long file = st.figures().get("file-bytes").longValue();
      long wal = st.figures().get("wal-bytes").longValue();
      assertThat(file + wal).isGreaterThan(49 * 1000L);
      assertThat(st.diskBytes()).isGreaterThanOrEqualTo(file + wal);
    }
  }

  /** Writes 3,000 random 1,000-byte values, deletes two thirds; returns what is left. */
  private static TreeMap<byte[], byte[]> churn(Store s, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    for (int i = 0; i < 3000; i++) {
      byte[] v = new byte[1000];
      rnd.nextBytes(v);
      s.put(b(String.format("k%05d", i)), v);
      model.put(b(String.format("k%05d", i)), v);
    }
    for (int i = 0; i < 3000; i++) {
      if (i % 3 != 0) {
        s.delete(b(String.format("k%05d", i)));
        model.remove(b(String.format("k%05d", i)));
      }
    }
    return model;
  }

  private static void assertHolds(Store s, TreeMap<byte[], byte[]> model) {
    List<Entry> all = new ArrayList<>();
    try (Cursor c = s.scan(KeyRange.all())) {
      c.forEachRemaining(all::add);
    }
    assertThat(all).hasSize(model.size());
    int i = 0;
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      assertThat(all.get(i++)).isEqualTo(new Entry(e.getKey(), e.getValue()));
    }
  }

  @Test
  void compact_vacuumsFreePagesAndTruncatesTheWal() {
    try (Store s = open()) {
      TreeMap<byte[], byte[]> model = churn(s, 31);
      StoreStats before = s.stats();
      s.compact();
      StoreStats after = s.stats();
      Map<String, Number> f = after.figures();
      assertThat(before.figures().get("freelist-pages").longValue())
          .as("deleting two thirds leaves free pages")
          .isPositive();
      assertThat(f.get("compact-vacuums").longValue()).isEqualTo(1);
      assertThat(f.get("compact-vacuums-skipped").longValue()).isZero();
      assertThat(f.get("freelist-pages").longValue()).as("VACUUM drops free pages").isZero();
      assertThat(f.get("wal-bytes").longValue())
          .as("TRUNCATE empties the WAL: no idle reader holds it")
          .isZero();
      assertThat(f.get("file-bytes").longValue())
          .as("1,000 live rows of 1,000 bytes")
          .isLessThan(before.figures().get("file-bytes").longValue())
          .isLessThan(1_400_000L);
      assertThat(after.diskBytes()).isLessThan(before.diskBytes());
      assertHolds(s, model);
      s.put(b("after"), b("1"));
      assertThat(s.get(b("after"))).isEqualTo(b("1"));
    }
    try (Store s = open()) {
      assertThat(s.stats().keyCount()).isEqualTo(1001);
    }
  }

  /**
   * A cursor in the middle of a multi-chunk scan holds a read transaction: compact() skips VACUUM
   * (it would leave a WAL the size of the database behind the reader), checkpoints passively, and
   * the cursor keeps its snapshot. With the cursor closed, the next compact() vacuums.
   */
  @Test
  void compact_withOpenCursor_skipsVacuumAndTheCursorKeepsItsSnapshot() {
    try (Store s = open()) {
      TreeMap<byte[], byte[]> model = churn(s, 32);
      List<Entry> seen = new ArrayList<>();
      try (Cursor c = s.scan(KeyRange.all())) {
        seen.add(c.next());
        s.compact();
        c.forEachRemaining(seen::add);
      }
      assertThat(seen).hasSize(model.size());
      assertThat(s.stats().figures().get("compact-vacuums-skipped").longValue()).isEqualTo(1);
      assertThat(s.stats().figures().get("compact-vacuums").longValue()).isZero();
      s.compact();
      StoreStats st = s.stats();
      assertThat(st.figures().get("compact-vacuums").longValue()).isEqualTo(1);
      assertThat(st.figures().get("freelist-pages").longValue()).isZero();
      assertHolds(s, model);
    }
  }

  /**
   * A reader kv4j does not know about (another tool on the same file) holds a read transaction:
   * VACUUM still runs (WAL mode lets it), the TRUNCATE checkpoint gives up after busy-timeout
   * instead of failing, and the outside reader keeps its snapshot.
   */
  @Test
  void compact_withAnOutsideReader_neverThrows() throws Exception {
    try (Store s = Stores.open(builder().option("busy-timeout", "100").build())) {
      TreeMap<byte[], byte[]> model = churn(s, 33);
      try (Connection c = Sqlite.connect(dir());
          Statement st = c.createStatement()) {
        c.setAutoCommit(false);
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM kv")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(1000);
        }
        s.compact();
        s.put(b("new"), b("1"));
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM kv")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).as("the outside reader's snapshot").isEqualTo(1000);
        }
        c.rollback();
      }
      model.put(b("new"), b("1"));
      assertHolds(s, model);
    }
  }

  @Test
  void options_pageSizeOnlyAtCreation_andInvalidValuesRejected() {
    try (Store s = Stores.open(builder().option("page-size", "4KiB").build())) {
      assertThat(s.stats().figures().get("page-size-bytes").intValue()).isEqualTo(4096);
    }
    try (Store s = Stores.open(builder().option("page-size", "64KiB").build())) {
      assertThat(s.stats().figures().get("page-size-bytes").intValue()).isEqualTo(4096);
    }
    assertThatThrownBy(() -> Stores.open(builder().option("page-size", "3000").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("page-size");
    assertThatThrownBy(() -> Stores.open(builder().option("table", "kv; DROP TABLE x").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("table");
    assertThatThrownBy(() -> Stores.open(builder().option("table", "sqlite_master").build()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder().option("mmap-size", "4GiB").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mmap-size");
    assertThatThrownBy(() -> builder().option("busy-timeout", "-1").build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void options_tableName_keepsTablesApartInOneFile() {
    try (Store s = Stores.open(builder().option("table", "first").build())) {
      s.put(b("a"), b("1"));
    }
    try (Store s = Stores.open(builder().option("table", "Second_2").build())) {
      assertThat(s.get(b("a"))).isNull();
      s.put(b("a"), b("2"));
    }
    try (Store s = Stores.open(builder().option("table", "first").build())) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  @Test
  void options_allApplied_syncDurability() {
    StoreConfig cfg =
        StoreConfig.builder("sqlite")
            .path(dir())
            .durability(Durability.SYNC)
            .option("page-cache-size", "1MiB")
            .option("mmap-size", "0")
            .option("busy-timeout", "250")
            .option("wal-autocheckpoint", "0")
            .option("reader-pool-size", "1")
            .build();
    try (Store s = Stores.open(cfg)) {
      for (int i = 0; i < 20; i++) {
        s.put(b("k" + i), new byte[4000]);
      }
      s.sync();
      // wal-autocheckpoint=0: nothing was copied back, the WAL holds every page written.
      assertThat(s.stats().figures().get("wal-bytes").longValue()).isGreaterThan(20 * 4000L);
      assertThat(s.get(b("k19"))).hasSize(4000);
    }
  }
}
