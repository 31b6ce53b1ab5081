package io.kv4j.sqlite;

import static io.kv4j.sqlite.Sqlite.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreDirectory;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Row checksums and their format, the write-failure policy and read-only opens. */
class SqliteTrustTest {
  private static final Duration CHATTR_WAIT = Duration.ofMinutes(1);

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

  private void sql(String statement) throws Exception {
    Sqlite.sql(dir(), statement);
  }

  private static List<String> files(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  // --- checksums ---------------------------------------------------------------------------------

  @Test
  void get_rowOfAnotherKeyBehindTheIndex_throwsCorruptedInsteadOfItsValue() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("value of a"));
      s.put(b("b"), b("value of b"));
    }
    // What a damaged index entry does: key a now leads to b's value, with b's intact checksum.
    sql(
        "UPDATE kv SET v = (SELECT v FROM kv WHERE k = x'62'),"
            + " crc32c = (SELECT crc32c FROM kv WHERE k = x'62') WHERE k = x'61'");
    try (Store s = open()) {
      assertThat(s.info().features()).contains(Feature.CHECKSUMS);
      assertThat(s.get(b("b"))).isEqualTo(b("value of b"));
      assertThatThrownBy(() -> s.get(b("a")))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("0x61")
          .hasMessageContaining("fails its checksum")
          .hasMessageContaining("kv.sqlite");
      assertThatThrownBy(() -> drain(s.scan(KeyRange.all())))
          .isInstanceOf(StoreCorruptedException.class);
    }
  }

  @Test
  void get_flippedBitInValue_throwsCorrupted_scanToo() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("AAAA"));
    }
    sql("UPDATE kv SET v = x'41414140' WHERE k = x'61'"); // one bit of the last byte
    try (Store s = open()) {
      assertThatThrownBy(() -> s.get(b("a"))).isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(() -> drain(s.scan(KeyRange.all().reverse())))
          .isInstanceOf(StoreCorruptedException.class);
    }
  }

  @Test
  void scan_flippedBitInStoredKey_throwsCorrupted() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
      s.put(b("c"), b("3"));
    }
    sql("UPDATE kv SET k = x'62' WHERE k = x'63'"); // 'c' -> 'b': one bit
    try (Store s = open()) {
      assertThatThrownBy(() -> drain(s.scan(KeyRange.all())))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("0x62");
      assertThatThrownBy(() -> s.get(b("b"))).isInstanceOf(StoreCorruptedException.class);
      assertThat(s.get(b("c"))).isNull(); // lost: reported by the scan above
    }
  }

  @Test
  void verify_keyIndexEntryDamaged_getReadsNull_butScanAndVerifyReport() throws Exception {
    String key = "index-key-000042";
    String value = "the value of key 42, long enough to find";
    try (Store s = open()) {
      for (int i = 0; i < 100; i++) {
        s.put(b(String.format("index-key-%06d", i)), b("value " + i));
      }
      s.put(b(key), b(value));
    }
    Path f = dir().resolve("kv.sqlite");
    byte[] data = Files.readAllBytes(f);
    byte[] k = b(key);
    int indexCopy = -1;
    for (int i = 0; i + k.length <= data.length; i++) {
      if (java.util.Arrays.equals(data, i, i + k.length, k, 0, k.length)) {
        boolean tableRow =
            java.util.Arrays.equals(data, i + k.length, i + k.length + 8, b(value), 0, 8);
        if (!tableRow) {
          indexCopy = i;
        }
      }
    }
    assertThat(indexCopy).as("the key's copy in the unique index").isPositive();
    data[indexCopy + k.length - 1] ^= 0x01; // "...42" -> "...43": sorts after, unfindable
    Files.write(f, data);
    try (Store s = open()) {
      assertThat(s.get(b(key))).isNull();
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("integrity_check")
          .hasMessageContaining("kv.sqlite");
      assertThatThrownBy(() -> drain(s.scan(KeyRange.all())))
          .isInstanceOf(StoreCorruptedException.class);
    }
  }

  @Test
  void verify_intactStore_passes_andReadOnlyToo() {
    try (Store s = open()) {
      for (int i = 0; i < 500; i++) {
        s.put(b("k" + i), b("v" + i));
      }
      s.verify();
    }
    try (Store s = Stores.open(builder().readOnly(true).build())) {
      s.verify();
    }
  }

  @Test
  void checksumsFalse_newStore_plainRows_noFeature_conflictingOptionFails() throws Exception {
    try (Store s = Stores.open(builder().option("checksums", "false").build())) {
      s.put(b("a"), b("1"));
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
      assertThat(s.info().features()) // plain rows: everything but the checksums
          .contains(Feature.CONDITIONAL_WRITE, Feature.SNAPSHOT_READ, Feature.BACKUP);
      assertThat(s.stats().figures().get("row-checksums")).isEqualTo(0);
    }
    try (Connection c = Sqlite.connect(dir());
        ResultSet rs =
            c.createStatement().executeQuery("SELECT count(*) FROM pragma_table_info('kv')")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getInt(1)).isEqualTo(2);
    }
    assertThat(Files.readString(dir().resolve(StoreDirectory.IDENTITY_FILE))).contains("format=2");
    try (Store s = open()) { // no option: the store keeps its format
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
    }
    assertThatThrownBy(() -> Stores.open(builder().option("checksums", "true").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checksums=true")
        .hasMessageContaining("kv4j copy");
  }

  @Test
  void checksummedStore_explicitFalse_fails_explicitTrue_opens() {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
    }
    assertThatThrownBy(() -> Stores.open(builder().option("checksums", "false").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("carry checksums");
    try (Store s = Stores.open(builder().option("checksums", "true").build())) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  @Test
  void legacyStore_adoptedAtFormat1_keepsPlainRows_withoutChecksumsFeature() throws Exception {
    Files.createDirectories(dir());
    Files.createFile(dir().resolve("kv4j.lock")); // what kv4j before identities left behind
    sql("PRAGMA journal_mode=WAL");
    sql(
        "CREATE TABLE kv(k BLOB NOT NULL UNIQUE CHECK (typeof(k) = 'blob'),"
            + " v BLOB NOT NULL CHECK (typeof(v) = 'blob'))");
    sql("INSERT INTO kv VALUES(x'61', x'31')");
    try (Store s = open()) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
      s.put(b("b"), b("2"));
    }
    assertThat(Files.readString(dir().resolve(StoreDirectory.IDENTITY_FILE))).contains("format=1");
    assertThatThrownBy(() -> Stores.open(builder().option("checksums", "true").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("carry no checksums");
  }

  @Test
  void checksummedFileCopiedAlone_isStillReadWithChecksums() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
    }
    Path other = tmp.resolve("copy");
    Files.createDirectories(other);
    Files.copy(dir().resolve("kv.sqlite"), other.resolve("kv.sqlite"));
    try (Store s = Stores.open(builder().path(other).build())) {
      assertThat(s.info().features()).contains(Feature.CHECKSUMS);
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  @Test
  void foreignFileBesideTheDatabase_refused_nothingCreated() throws Exception {
    Files.createDirectories(dir());
    Files.writeString(dir().resolve("notes.txt"), "mine");
    assertThatThrownBy(this::open)
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("notes.txt");
    assertThat(files(dir())).containsExactly("kv4j.lock", "notes.txt");
  }

  // --- failure policy ----------------------------------------------------------------------------

  @Test
  void put_afterDiskFull_failsUntilReopened_readsGoOn_closeClean() {
    List<String> acknowledged = new ArrayList<>();
    byte[] big = new byte[3000];
    try (Store s = open()) {
      for (int i = 0; i < 20; i++) {
        s.put(b("before" + i), big);
        acknowledged.add("before" + i);
      }
      ((SqliteStore) s).limitGrowthForTest(2);
      StoreIOException first = null;
      for (int i = 0; i < 200 && first == null; i++) {
        try {
          s.put(b("fill" + i), big);
          acknowledged.add("fill" + i);
        } catch (StoreIOException e) {
          first = e;
        }
      }
      assertThat(first).as("SQLITE_FULL from max_page_count").isNotNull();
      assertThat(first.getMessage()).contains("failed until reopened").contains("SQLITE_FULL");
      assertThatThrownBy(() -> s.put(b("x"), b("1")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      assertThatThrownBy(() -> s.delete(b("before0")))
          .hasMessageContaining("failed until reopened");
      assertThatThrownBy(() -> s.write(new WriteBatch().put(b("y"), b("1"))))
          .hasMessageContaining("failed until reopened");
      assertThatThrownBy(s::sync).hasMessageContaining("failed until reopened");
      assertThatThrownBy(s::compact).hasMessageContaining("failed until reopened");
      for (String k : acknowledged) {
        assertThat(s.get(b(k))).as(k).isEqualTo(big);
      }
      assertThat(drain(s.scan(KeyRange.all()))).isEqualTo(acknowledged.size());
    } catch (java.sql.SQLException e) {
      throw new AssertionError(e);
    }
    try (Store s = open()) {
      assertThat(s.stats().keyCount()).isEqualTo(acknowledged.size());
      s.put(b("after"), b("reopened")); // reopening clears the failure
      assertThat(s.get(b("after"))).isEqualTo(b("reopened"));
    }
  }

  @Test
  void put_concurrentWritersWhenDiskFills_eachGetsItsOutcome_noneHangs() throws Exception {
    List<String> acknowledged = java.util.Collections.synchronizedList(new ArrayList<>());
    byte[] big = new byte[2000];
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try (Store s = Stores.open(builder().durability(Durability.SYNC).build())) {
      ((SqliteStore) s).limitGrowthForTest(8);
      List<Future<Integer>> fs = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        int id = t;
        fs.add(
            pool.submit(
                () -> {
                  int failures = 0;
                  for (int i = 0; i < 100; i++) {
                    String k = "t" + id + "-" + i;
                    try {
                      s.put(b(k), big);
                      acknowledged.add(k);
                    } catch (StoreIOException e) {
                      assertThat(e.getMessage()).contains("failed until reopened");
                      failures++;
                    }
                  }
                  return failures;
                }));
      }
      int failures = 0;
      for (Future<Integer> f : fs) {
        failures += f.get(60, TimeUnit.SECONDS);
      }
      assertThat(failures).isPositive();
    } finally {
      pool.shutdownNow();
    }
    try (Store s = open()) {
      for (String k : acknowledged) {
        assertThat(s.get(b(k))).as("acknowledged " + k).isEqualTo(big);
      }
      assertThat(s.stats().keyCount()).isEqualTo(acknowledged.size());
    }
  }

  // --- read-only ---------------------------------------------------------------------------------

  @Test
  void readOnly_whileWriterHasTheStore_sameJvm_seesCommits_andSnapshotScans() {
    try (Store w = Stores.open(builder().option("wal-autocheckpoint", "0").build())) {
      w.put(b("a"), b("1"));
      try (Store r = Stores.open(builder().readOnly(true).build());
          Store r2 = Stores.open(builder().readOnly(true).build())) {
        assertThat(r.get(b("a"))).isEqualTo(b("1"));
        try (Cursor c = r.scan(KeyRange.all())) {
          w.put(b("b"), b("2"));
          assertThat(r2.get(b("b"))).isEqualTo(b("2"));
          assertThat(drain(c)).isEqualTo(1); // the cursor's snapshot predates b
        }
        assertThat(r.get(b("b"))).isEqualTo(b("2"));
      }
      w.put(b("c"), b("3")); // the writer goes on after the readers closed
    }
    try (Store s = open()) {
      assertThat(s.stats().keyCount()).isEqualTo(3);
    }
  }

  @Test
  void readOnly_fromSecondProcess_whileWriterHasTheStore() throws Exception {
    try (Store w = Stores.open(builder().option("wal-autocheckpoint", "0").build())) {
      w.put(b("a"), b("only in the WAL"));
      w.put(b("b"), b("2"));
      try (ChildProcess c = ChildProcess.java(ReadOnlyChild.class, dir().toString(), "a").start()) {
        c.assertSucceeded(Duration.ofSeconds(60));
        assertThat(c.stdout())
            .as(c.describe())
            .contains("value=only in the WAL")
            .contains("keys=2");
      }
      w.put(b("c"), b("3")); // the writer is undisturbed
      assertThat(w.get(b("c"))).isEqualTo(b("3"));
    }
  }

  /** What a listing compares of each file. */
  record FileState(long size, FileTime modified, String sha256) {}

  /**
   * Each file of a directory by name. Run {@link #backdate} first, so that a write by the open
   * under test cannot hide in the granularity of the file system's clock.
   */
  private static Map<String, FileState> states(Path d) throws Exception {
    Map<String, FileState> out = new TreeMap<>();
    try (Stream<Path> l = Files.list(d)) {
      for (Path p : l.toList()) {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
        out.put(
            p.getFileName().toString(),
            new FileState(
                Files.size(p), Files.getLastModifiedTime(p), HexFormat.of().formatHex(digest)));
      }
    }
    return out;
  }

  /** Sets the modification time of every file of a directory a day back. */
  private static void backdate(Path d) throws Exception {
    FileTime dayAgo = FileTime.from(Instant.now().minus(Duration.ofDays(1)));
    try (Stream<Path> l = Files.list(d)) {
      for (Path p : l.toList()) {
        Files.setLastModifiedTime(p, dayAgo);
      }
    }
  }

  /**
   * A store no writer has open: while the read-only store is open, SQLite's {@code -wal} and {@code
   * -shm} exist (a writer that opens meanwhile must see the reader in {@code -shm}); once it is
   * closed, or its open failed, the directory is as it was: the same files, sizes, times and bytes.
   */
  @Test
  void readOnly_ofACleanlyClosedStore_leavesTheDirectoryAsItFoundIt() throws Exception {
    try (Store s = open()) {
      for (int i = 0; i < 100; i++) {
        s.put(b("k" + i), b("v" + i));
      }
      s.keyspace("ks").put(b("k"), b("v"));
    }
    backdate(dir());
    Map<String, FileState> before = states(dir());
    assertThatThrownBy(
            () -> Stores.open(builder().readOnly(true).option("checksums", "false").build()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(states(dir())).as("after a failed read-only open").isEqualTo(before);
    try (Store s = Stores.open(builder().readOnly(true).build())) {
      assertThat(s.get(b("k7"))).isEqualTo(b("v7"));
      assertThat(drain(s.scan(KeyRange.all()))).isEqualTo(100);
      assertThat(s.keyspace("ks").get(b("k"))).isEqualTo(b("v"));
      s.verify();
      assertThat(files(dir())).contains("kv.sqlite-wal", "kv.sqlite-shm");
    }
    assertThat(states(dir())).isEqualTo(before);
  }

  /**
   * The removal of the side files at a read-only store's close never takes what a writer needs: a
   * writer that opened meanwhile and stays keeps its files and goes on; one that came, committed
   * and left (its close could not checkpoint past the reader) leaves its commits in the WAL, which
   * the read-only store neither removes nor copies into the database file.
   */
  @Test
  void readOnly_ofAClosedStore_whenAWriterComesMeanwhile_removesNothingItNeeds() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
    }
    Store r = Stores.open(builder().readOnly(true).build());
    try (Store w = open()) {
      w.put(b("b"), b("2"));
      assertThat(r.get(b("b"))).isEqualTo(b("2"));
      r.close();
      assertThat(files(dir())).contains("kv.sqlite-wal", "kv.sqlite-shm");
      w.put(b("c"), b("3"));
      assertThat(w.get(b("b"))).isEqualTo(b("2"));
    } finally {
      r.close();
    }
    assertThat(files(dir())).doesNotContain("kv.sqlite-wal", "kv.sqlite-shm");

    Store r2 = Stores.open(builder().readOnly(true).build());
    Map<String, FileState> before;
    try {
      try (Store w = Stores.open(builder().option("wal-autocheckpoint", "0").build())) {
        w.put(b("d"), b("4"));
      }
      assertThat(Files.size(dir().resolve("kv.sqlite-wal")))
          .as("commits left in the WAL")
          .isPositive();
      backdate(dir());
      before = states(dir());
    } finally {
      r2.close();
    }
    assertThat(states(dir())).as("nothing removed, nothing copied").isEqualTo(before);
    try (Store s = open()) {
      for (String k : List.of("a", "b", "c", "d")) {
        assertThat(s.get(b(k))).as(k).isNotNull();
      }
    }
  }

  @Test
  void readOnly_createsNoLockFile() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
    }
    Files.delete(dir().resolve("kv4j.lock"));
    try (Store s = Stores.open(builder().readOnly(true).build())) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
    assertThat(files(dir())).doesNotContain("kv4j.lock").contains("kv.sqlite", "kv4j.store");
  }

  @Test
  void readOnly_unwritableDirectory_opensImmutable_createsNothing() throws Exception {
    try (Store s = open()) {
      for (int i = 0; i < 100; i++) {
        s.put(b("k" + i), b("v" + i));
      }
    }
    List<String> before = files(dir());
    makeUnwritable(dir());
    try (Store s = Stores.open(builder().readOnly(true).build())) {
      assertThat(s.get(b("k7"))).isEqualTo(b("v7"));
      assertThat(drain(s.scan(KeyRange.all()))).isEqualTo(100);
      s.verify();
      assertThat(files(dir())).isEqualTo(before);
    } finally {
      makeWritable(dir());
    }
    assertThat(files(dir())).isEqualTo(before);
  }

  @Test
  void readOnly_unwritableDirectory_walWithCommits_refusedWithReason() throws Exception {
    Path copy = tmp.resolve("copy");
    try (Store s = Stores.open(builder().option("wal-autocheckpoint", "0").build())) {
      s.put(b("a"), b("1"));
      // A copy taken while the store is open: its WAL holds the commit, the -shm is left out.
      Files.createDirectories(copy);
      Files.copy(dir().resolve("kv.sqlite"), copy.resolve("kv.sqlite"));
      Files.copy(dir().resolve("kv.sqlite-wal"), copy.resolve("kv.sqlite-wal"));
      Files.copy(dir().resolve(StoreDirectory.IDENTITY_FILE), copy.resolve("kv4j.store"));
    }
    assertThat(Files.size(copy.resolve("kv.sqlite-wal"))).isPositive();
    makeUnwritable(copy);
    try {
      assertThatThrownBy(() -> Stores.open(builder().path(copy).readOnly(true).build()))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("not writable")
          .hasMessageContaining("kv.sqlite-wal");
    } finally {
      makeWritable(copy);
    }
    try (Store s = Stores.open(builder().path(copy).build())) { // read-write recovers the WAL
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  /**
   * Makes a directory unwritable for this process: by its permissions, or, for root (whom
   * permissions do not stop), by the immutable attribute.
   */
  static void makeUnwritable(Path d) throws Exception {
    assertThat(d.toFile().setWritable(false, false)).isTrue();
    String chattr = "chattr not run";
    if (Files.isWritable(d)) {
      chattr = chattr("+i", d);
    }
    Assumptions.assumeFalse(
        Files.isWritable(d),
        "cannot make a directory unwritable here (root without chattr): " + chattr);
  }

  static void makeWritable(Path d) throws Exception {
    String chattr = "chattr not run";
    if (!Files.isWritable(d)) {
      try {
        chattr = chattr("-i", d);
      } catch (IOException e) {
        // No chattr: permissions were enough.
      }
    }
    assertThat(d.toFile().setWritable(true, false)).as(chattr).isTrue();
  }

  /** Runs {@code chattr <flag> <d>}; how it ended, with its output. */
  private static String chattr(String flag, Path d) throws IOException, InterruptedException {
    try (ChildProcess c = ChildProcess.command(List.of("chattr", flag, d.toString())).start()) {
      c.await(CHATTR_WAIT);
      return c.describe();
    }
  }

  private static int drain(Cursor c) {
    int n = 0;
    try (c) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    return n;
  }
}
