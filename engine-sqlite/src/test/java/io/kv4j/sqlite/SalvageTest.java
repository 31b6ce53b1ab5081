package io.kv4j.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.DamagedRegion;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCopy;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code salvage} (the provider's, through {@link Stores#provider}, and {@link StoreCopy#salvage})
 * on damaged copies of one cleanly closed store: 30 keys of 300–600 bytes, 20 of the store's own
 * and 10 in keyspace {@code ks}, so its file holds the schema, an interior page, three leaf pages,
 * two key indexes, the keyspace catalog and its indexes. Every salvage here is checked for: no
 * exception, no value other than the one written, no key twice, and a source directory unchanged
 * byte for byte (every file hashed, names listed, before and after).
 */
class SalvageTest {
  private static final long DATA_SEED = 30;
  private static final String KS = "ks";

  @TempDir static Path shared;
  private static Path pristine;

  /** "ks/key-07" or "/key-03" (the store's own keys) to the value written. */
  private static final Map<String, byte[]> MODEL = new TreeMap<>();

  @TempDir Path tmp;

  private static String name(String keyspace, byte[] key) {
    return (keyspace == null ? "" : keyspace) + "/" + new String(key, StandardCharsets.US_ASCII);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  @BeforeAll
  static void writeStore() {
    pristine = shared.resolve("pristine");
    SplittableRandom rnd = new SplittableRandom(DATA_SEED);
    try (Store s = Stores.open(Sqlite.config(pristine).build())) {
      Store ks = s.keyspace(KS);
      for (int i = 0; i < 30; i++) {
        byte[] v = new byte[300 + rnd.nextInt(300)];
        rnd.nextBytes(v);
        byte[] k = b(String.format("key-%02d", i));
        String space = i % 3 == 0 ? KS : null;
        (space == null ? s : ks).put(k, v);
        MODEL.put(name(space, k), v);
      }
    }
  }

  /** What a salvage returned: entries by {@link #name}, and the damage. */
  record Salvaged(Map<String, byte[]> entries, List<DamagedRegion> damage) {
    List<String> missing(Map<String, byte[]> model) {
      List<String> out = new ArrayList<>(model.keySet());
      out.removeAll(entries.keySet());
      return out;
    }
  }

  private static StoreConfig readOnly(Path dir) {
    return Sqlite.config(dir).readOnly(true).createIfMissing(false).build();
  }

  /**
   * Salvages {@code dir}, checking that it does not throw, hands each key over once, changes no
   * file of the directory, and returns no value but the one {@code model} holds.
   */
  private static Salvaged salvage(Path dir, Map<String, byte[]> model, String what)
      throws IOException {
    Map<String, String> before = hashes(dir);
    Map<String, byte[]> got = new LinkedHashMap<>();
    List<DamagedRegion> damage;
    try {
      damage =
          Stores.provider("sqlite")
              .salvage(
                  readOnly(dir),
                  (ks, k, v) -> {
                    String n = name(ks, k);
                    assertThat(got.put(n, v)).as("%s: %s handed over twice", what, n).isNull();
                    assertThat(model).as("%s: a key never written: %s", what, n).containsKey(n);
                    assertThat(v).as("%s: the value of %s", what, n).isEqualTo(model.get(n));
                  });
    } catch (RuntimeException e) {
      throw new AssertionError(what + ": salvage threw", e);
    }
    assertThat(hashes(dir)).as("%s: the store's files after salvage", what).isEqualTo(before);
    return new Salvaged(got, damage);
  }

  /** Every file of a directory: name to size and SHA-256. */
  static Map<String, String> hashes(Path dir) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        byte[] data = Files.readAllBytes(f);
        try {
          byte[] h = MessageDigest.getInstance("SHA-256").digest(data);
          out.put(f.getFileName().toString(), data.length + " " + HexFormat.of().formatHex(h));
        } catch (NoSuchAlgorithmException e) {
          throw new AssertionError(e);
        }
      }
    }
    return out;
  }

  private Path copy(String name) throws IOException {
    return copyDir(pristine, tmp.resolve(name));
  }

  static Path copyDir(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path f : files.toList()) {
        Files.copy(f, to.resolve(f.getFileName()));
      }
    }
    return to;
  }

  private static void flip(Path f, long offset, int bit) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.seek(offset);
      int v = raf.read();
      raf.seek(offset);
      raf.write(v ^ (1 << bit));
    }
  }

  /** Where a byte string occurs in a byte array (exactly once), else -1. */
  private static int indexOf(byte[] data, byte[] part) {
    int found = -1;
    for (int i = 0; i + part.length <= data.length; i++) {
      if (Arrays.equals(data, i, i + part.length, part, 0, part.length)) {
        assertThat(found).as("the bytes occur once").isEqualTo(-1);
        found = i;
      }
    }
    return found;
  }

  /**
   * The bytes of each key's row in the table (not its index entry, nor a stale copy in unused
   * space): the occurrence of its value on a leaf page of its table (by SQLite's own dbstat), from
   * 8 bytes before its key (a table leaf cell: payload size 2 bytes and rowid 1, record header 5)
   * to 4 after its value (the checksum column); then the value's own span. A flip outside every
   * row's span leaves every row intact.
   */
  private static Map<String, long[]> rowSpans(Path file) throws IOException {
    byte[] data = Files.readAllBytes(file);
    Map<Long, String> leaves = new TreeMap<>();
    try (Connection c = DriverManager.getConnection(immutable(file));
        ResultSet rs =
            c.createStatement()
                .executeQuery("SELECT pageno, name FROM dbstat WHERE pagetype = 'leaf'")) {
      while (rs.next()) {
        leaves.put(rs.getLong(1), rs.getString(2));
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
    Map<String, long[]> out = new TreeMap<>();
    for (Map.Entry<String, byte[]> e : MODEL.entrySet()) {
      String table = e.getKey().startsWith("/") ? "kv" : KeyspaceCatalog.TABLE_PREFIX + "1_" + KS;
      byte[] key = b(e.getKey().substring(e.getKey().indexOf('/') + 1));
      byte[] v = e.getValue();
      List<Integer> live = new ArrayList<>();
      for (int i = 0; i + v.length <= data.length; i++) {
        if (Arrays.equals(data, i, i + v.length, v, 0, v.length)
            && table.equals(leaves.get((long) i / 8192 + 1))) {
          live.add(i);
        }
      }
      assertThat(live).as("the row of %s on a leaf of %s", e.getKey(), table).hasSize(1);
      int at = live.get(0);
      assertThat(Arrays.equals(data, at - key.length, at, key, 0, key.length))
          .as("key %s stored right before its value", e.getKey())
          .isTrue();
      out.put(e.getKey(), new long[] {at - key.length - 8, at + v.length + 4, at, at + v.length});
    }
    return out;
  }

  /** Checks that the reported regions account for what is missing, key by key. */
  private static void assertAccounted(Path dir, Salvaged r, String what) {
    Path file = dir.resolve(SqliteStore.DB_FILE_NAME);
    List<String> missing = r.missing(MODEL);
    if (!missing.isEmpty()) {
      assertThat(r.damage()).as("%s: keys missing but no damage reported", what).isNotEmpty();
    }
    long counted = 0;
    for (DamagedRegion d : r.damage()) {
      assertThat(d.file().getFileName().toString())
          .as("%s: %s", what, d.describe())
          .startsWith(SqliteStore.DB_FILE_NAME);
      assertThat(d.file().getParent()).as("%s: %s", what, d.describe()).isEqualTo(realPath(dir));
      if (d.lostEntries() > 0) {
        assertThat(d.file()).isEqualTo(realPath(file));
      }
      counted += Math.max(0, d.lostEntries());
    }
    assertThat(counted)
        .as("%s: entries reported lost: %s", what, r.damage())
        .isEqualTo(missing.size());
    for (String m : missing) {
      String keyspace = m.startsWith("/") ? null : m.substring(0, m.indexOf('/'));
      byte[] key = b(m.substring(m.indexOf('/') + 1));
      assertThat(r.damage())
          .as("%s: a region of keyspace %s whose lost keys hold %s", what, keyspace, m)
          .anySatisfy(
              d -> {
                assertThat(d.keyspace()).isEqualTo(keyspace);
                assertThat(d.lostKeys()).isNotNull();
                assertThat(d.lostKeys().contains(key)).isTrue();
              });
    }
  }

  /** A JDBC URL that reads a database file without creating side files beside it. */
  private static String immutable(Path file) {
    return "jdbc:sqlite:" + file.toUri() + "?mode=ro&immutable=1";
  }

  private static Path realPath(Path p) {
    try {
      return p.toRealPath();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  // ---- intact stores ---------------------------------------------------------------------------

  @Test
  void salvage_intactStoreWithKeyspace_everyKeyNoDamage_filesUnchanged() throws IOException {
    Salvaged r = salvage(copy("intact"), MODEL, "intact store");
    assertThat(r.damage()).isEmpty();
    assertThat(r.entries().keySet()).isEqualTo(MODEL.keySet());
  }

  @Test
  void salvage_crashImage_everyAcknowledgedWriteNoDamage_sameAsSqliteRecovery() throws Exception {
    Path dir = tmp.resolve("crash");
    int acked = crash(dir, 400);
    assertThat(Files.size(dir.resolve(SqliteStore.DB_FILE_NAME + "-wal")))
        .as("a crash image with commits in its WAL")
        .isPositive();
    Map<String, byte[]> recovered = readBySqlite(copyDir(dir, tmp.resolve("reference")));
    Path fileOnly = Files.createDirectories(tmp.resolve("file-only"));
    Files.copy(dir.resolve(SqliteStore.DB_FILE_NAME), fileOnly.resolve(SqliteStore.DB_FILE_NAME));
    Files.copy(dir.resolve("kv4j.store"), fileOnly.resolve("kv4j.store"));
    Map<String, byte[]> fileAlone = readBySqlite(fileOnly);
    assertThat(
            recovered.entrySet().stream()
                .filter(e -> !Arrays.equals(e.getValue(), fileAlone.get(e.getKey())))
                .count())
        .as("keys whose newest value only the WAL holds")
        .isPositive();
    Salvaged r = salvage(dir, recovered, "crash image after " + acked + " acknowledged writes");
    assertThat(r.damage()).as("a crash image is not damage").isEmpty();
    assertThat(r.entries().keySet())
        .as("salvage reads what SQLite's own recovery reads")
        .isEqualTo(recovered.keySet());
    // And each key has its last acknowledged write, or a later one: the child writes on between
    // printing "acked" and the SIGKILL, as many writes as the parent needs to read the line and
    // kill it (more than three on a loaded machine), so any later write may have landed.
    Map<String, Integer> last = new TreeMap<>();
    for (int i = 0; i <= acked; i++) {
      int batch = i % 10 == 0 ? 3 : 1;
      for (int j = i; j < i + batch; j++) {
        last.put(name(SalvageCrashChild.keyspace(i), SalvageCrashChild.key(j)), j);
      }
    }
    for (Map.Entry<String, Integer> e : last.entrySet()) {
      byte[] got = r.entries().get(e.getKey());
      assertThat(got).as("acknowledged key %s", e.getKey()).isNotNull();
      boolean acknowledged = Arrays.equals(got, SalvageCrashChild.value(e.getValue()));
      boolean inFlight = false;
      for (int j = acked + 1; j <= acked + 10_000 && !inFlight; j++) {
        inFlight = Arrays.equals(got, SalvageCrashChild.value(j));
      }
      assertThat(acknowledged || inFlight)
          .as("%s holds its last acknowledged write %d or a later one", e.getKey(), e.getValue())
          .isTrue();
    }
  }

  /** Runs {@link SalvageCrashChild} until {@code writes} writes are acknowledged, then SIGKILL. */
  private static int crash(Path dir, int writes) throws Exception {
    int acked = -1;
    try (ChildProcess c = ChildProcess.java(SalvageCrashChild.class, dir.toString()).start()) {
      String line;
      while (acked < writes && (line = c.readLine(Duration.ofMinutes(5))) != null) {
        if (line.startsWith("acked ")) {
          acked = Integer.parseInt(line.substring(6));
        }
      }
      if (acked >= writes) {
        c.kill(); // SIGKILL: no close, the WAL keeps its commits
      } else {
        c.await(Duration.ofSeconds(60));
      }
      assertThat(acked).as("child: %s", c.describe()).isGreaterThanOrEqualTo(writes);
    }
    return acked;
  }

  /** Everything a store holds, read by opening it normally (SQLite recovers its WAL). */
  private static Map<String, byte[]> readBySqlite(Path dir) {
    Map<String, byte[]> out = new TreeMap<>();
    try (Store s = Stores.open(Sqlite.config(dir).build())) {
      readAll(s, null, out);
      for (String ks : s.keyspaces()) {
        try (Store k = s.keyspace(ks)) {
          readAll(k, ks, out);
        }
      }
    }
    return out;
  }

  private static void readAll(Store s, String keyspace, Map<String, byte[]> out) {
    try (Cursor c = s.scan(KeyRange.all())) {
      while (c.hasNext()) {
        Entry e = c.next();
        out.put(name(keyspace, e.key()), e.value());
      }
    }
  }

  // ---- one flipped bit --------------------------------------------------------------------------

  @Test
  void salvage_bitFlippedInEachValue_recoversTheOther29_reportsTheOne() throws IOException {
    Map<String, long[]> spans = rowSpans(pristine.resolve(SqliteStore.DB_FILE_NAME));
    SplittableRandom rnd = new SplittableRandom(31);
    for (Map.Entry<String, long[]> e : spans.entrySet()) {
      long[] span = e.getValue();
      long offset = span[2] + rnd.nextLong(span[3] - span[2]);
      int bit = rnd.nextInt(8);
      String what =
          "bit " + bit + " at " + offset + " in the value of " + e.getKey() + " (seed 31)";
      Path dir = copy("value-" + offset);
      flip(dir.resolve(SqliteStore.DB_FILE_NAME), offset, bit);
      Salvaged r = salvage(dir, MODEL, what);
      assertThat(r.missing(MODEL)).as(what).containsExactly(e.getKey());
      assertThat(r.entries()).as(what).hasSize(29);
      assertThat(r.damage()).as(what).hasSize(1);
      DamagedRegion d = r.damage().get(0);
      assertThat(d.lostEntries()).as(what).isEqualTo(1);
      assertThat(offset)
          .as("%s: inside %s", what, d.describe())
          .isBetween(d.offset(), d.offset() + d.length() - 1);
      assertAccounted(dir, r, what);
    }
  }

  @Test
  void salvage_oneBitFlippedAtSeededOffsets_neverWrong_everyUntouchedKeyBack() throws IOException {
    byte[] data = Files.readAllBytes(pristine.resolve(SqliteStore.DB_FILE_NAME));
    Map<String, long[]> spans = rowSpans(pristine.resolve(SqliteStore.DB_FILE_NAME));
    int pageSize = 8192;
    List<Long> offsets = new ArrayList<>();
    SplittableRandom rnd = new SplittableRandom(32);
    for (int i = 0; i < 250; i++) {
      offsets.add(rnd.nextLong(data.length)); // anywhere: headers, pointers, cells, free space
    }
    for (long page = 0; page < data.length / pageSize; page++) {
      for (int i = 0; i < 6; i++) {
        long at = page * pageSize + (page == 0 ? 100 : 0); // each page's header and pointers
        offsets.add(at + rnd.nextInt(24));
      }
    }
    int lossless = 0;
    int oneLost = 0;
    int dirs = 0;
    for (long offset : offsets) {
      int bit = rnd.nextInt(8);
      String what = "bit " + bit + " at " + offset + " (seed 32)";
      Path dir = copy("flip-" + offset + "-" + bit + "-" + dirs++);
      flip(dir.resolve(SqliteStore.DB_FILE_NAME), offset, bit);
      Salvaged r = salvage(dir, MODEL, what);
      List<String> missing = r.missing(MODEL);
      for (String m : missing) {
        long[] span = spans.get(m);
        assertThat(offset)
            .as("%s: lost %s (%s), though the flip is outside its row", what, m, r.damage())
            .isBetween(span[0], span[1] - 1);
      }
      assertThat(missing).as("%s: %s", what, r.damage()).hasSizeLessThanOrEqualTo(1);
      assertAccounted(dir, r, what);
      if (missing.isEmpty()) {
        lossless++;
      } else {
        oneLost++;
      }
    }
    assertThat(lossless + oneLost).isEqualTo(offsets.size());
    assertThat(oneLost)
        .as("flips that landed in a row: %d of %d", oneLost, offsets.size())
        .isPositive();
  }

  // ---- free pages, stale rows -------------------------------------------------------------------

  @Test
  void salvage_damagedInteriorPagesOverFreePages_neverReturnsStaleOrDeletedRows() throws Exception {
    Path dir = tmp.resolve("churned");
    Map<String, byte[]> model = new TreeMap<>();
    SplittableRandom rnd = new SplittableRandom(33);
    try (Store s = Stores.open(Sqlite.config(dir).build())) {
      for (int round = 0; round < 3; round++) { // every round overwrites: old rows go stale
        for (int i = 0; i < 1500; i++) {
          byte[] v = new byte[50 + rnd.nextInt(400)];
          rnd.nextBytes(v);
          byte[] k = b(String.format("key-%05d", i));
          s.put(k, v);
          model.put(name(null, k), v);
        }
      }
      for (int i = 0; i < 1500; i++) {
        if (rnd.nextInt(10) < 7) { // most rows deleted: whole pages go to the free list
          s.delete(b(String.format("key-%05d", i)));
          model.remove(name(null, b(String.format("key-%05d", i))));
        }
      }
    }
    Path file = dir.resolve(SqliteStore.DB_FILE_NAME);
    List<Long> interior = new ArrayList<>();
    long freePages;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT pageno FROM dbstat WHERE name = 'kv' AND pagetype = 'internal'")) {
      while (rs.next()) {
        interior.add(rs.getLong(1));
      }
      freePages = freelistCount(c);
    }
    assertThat(freePages).as("free pages holding stale rows").isGreaterThan(20);
    assertThat(interior).as("interior pages of the table").isNotEmpty();
    Salvaged intact = salvage(dir, model, "churned store, intact");
    assertThat(intact.damage()).isEmpty();
    assertThat(intact.entries().keySet()).isEqualTo(model.keySet());
    // Low bits of child pointers flipped (the child page numbers of the table's interior pages):
    // the pointer then names a nearby page, often a free one full of stale rows, which must not
    // come back; the child it named is found again through the key index.
    byte[] data = Files.readAllBytes(file);
    List<Long> pointers = new ArrayList<>();
    for (long page : interior) {
      int at = (int) ((page - 1) * 8192);
      assertThat(data[at]).as("page %d is a table interior page", page).isEqualTo((byte) 5);
      int cells = ((data[at + 3] & 0xff) << 8) | (data[at + 4] & 0xff);
      pointers.add(at + 8L); // the right-most child
      for (int i = 0; i < cells; i++) {
        int cell = ((data[at + 12 + 2 * i] & 0xff) << 8) | (data[at + 13 + 2 * i] & 0xff);
        pointers.add(at + (long) cell); // a cell: its left child's page number, then a key
      }
    }
    int lossless = 0;
    int cases = 150;
    long lostTotal = 0;
    for (int i = 0; i < cases; i++) {
      long pointer = pointers.get(rnd.nextInt(pointers.size()));
      long offset = pointer + 3; // the page number's low byte
      int bit = rnd.nextInt(4);
      Path d = copyDir(dir, tmp.resolve("churn-" + i));
      flip(d.resolve(SqliteStore.DB_FILE_NAME), offset, bit);
      String what = "bit " + bit + " of the child pointer at " + pointer + " (seed 33)";
      Salvaged r = salvage(d, model, what); // checks every value against the model
      List<String> missing = r.missing(model);
      long counted = 0;
      for (DamagedRegion g : r.damage()) {
        counted += Math.max(0, g.lostEntries());
      }
      assertThat(counted)
          .as("%s: lost entries reported (%s)", what, r.damage())
          .isEqualTo(missing.size());
      lostTotal += missing.size();
      if (missing.isEmpty()) {
        lossless++;
      }
    }
    assertThat(lossless)
        .as(
            "child pointer flips that cost nothing: %d of %d (%d keys lost in all)",
            lossless, cases, lostTotal)
        .isGreaterThan(cases / 2);
  }

  private static long freelistCount(Connection c) throws SQLException {
    try (ResultSet rs = c.createStatement().executeQuery("PRAGMA freelist_count")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  // ---- other table formats ----------------------------------------------------------------------

  @Test
  void salvage_plainRowsAndWithoutRowidTable_intact_everyRowNoDamage() throws Exception {
    // Without checksums (checksums=false): rows come back as stored, nothing to check them by.
    Path plain = tmp.resolve("plain");
    Map<String, byte[]> model = new TreeMap<>();
    SplittableRandom rnd = new SplittableRandom(34);
    try (Store s = Stores.open(Sqlite.config(plain).option("checksums", "false").build())) {
      for (int i = 0; i < 300; i++) {
        byte[] v = new byte[1 + rnd.nextInt(900)];
        rnd.nextBytes(v);
        s.put(b("plain-" + i), v);
        model.put(name(null, b("plain-" + i)), v);
      }
    }
    Salvaged r = salvage(plain, model, "store without row checksums");
    assertThat(r.damage()).isEmpty();
    assertThat(r.entries().keySet()).isEqualTo(model.keySet());
    // A WITHOUT ROWID table made by hand (kv4j opens it): an index b-tree, entries in interior
    // pages too.
    Path hand = Files.createDirectories(tmp.resolve("without-rowid"));
    try (Connection c = Sqlite.connect(hand)) {
      c.createStatement()
          .execute("CREATE TABLE kv(k BLOB NOT NULL PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID");
    }
    Map<String, byte[]> handModel = new TreeMap<>();
    try (Store s = Stores.open(Sqlite.config(hand).build())) {
      for (int i = 0; i < 2000; i++) {
        byte[] v = new byte[20 + rnd.nextInt(200)];
        rnd.nextBytes(v);
        s.put(b(String.format("row-%05d", i)), v);
        handModel.put(name(null, b(String.format("row-%05d", i))), v);
      }
    }
    Salvaged w = salvage(hand, handModel, "WITHOUT ROWID table");
    assertThat(w.damage()).isEmpty();
    assertThat(w.entries().keySet()).isEqualTo(handModel.keySet());
  }

  // ---- the WAL ----------------------------------------------------------------------------------

  @Test
  void salvage_walFrameWithOneFlippedBit_repairedByItsChecksum_sameAsRecoveryOfTheIntactImage()
      throws Exception {
    Path dir = tmp.resolve("wal-one");
    crash(dir, 200);
    Map<String, byte[]> reference = readBySqlite(copyDir(dir, tmp.resolve("wal-one-ref")));
    Path wal = dir.resolve(SqliteStore.DB_FILE_NAME + "-wal");
    long frame = tableLeafFrame(wal);
    long offset = 32 + frame * (24 + 8192) + 24 + 4000; // inside the frame's page
    flip(wal, offset, 2);
    String what = "bit 2 at " + offset + " of the WAL (frame " + frame + ")";
    Salvaged r = salvage(dir, reference, what);
    assertThat(r.entries().keySet()).as(what).isEqualTo(reference.keySet());
    assertThat(r.damage())
        .as(what)
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.file()).isEqualTo(wal.toRealPath());
              assertThat(d.offset()).isEqualTo(32 + frame * (24 + 8192));
              assertThat(d.lostEntries()).isZero();
              assertThat(d.problem()).contains("repaired");
            });
  }

  @Test
  void salvage_walFrameDamagedBeyondRepair_laterCommitsApplied_itsPageReported_neverWrong()
      throws Exception {
    Path dir = tmp.resolve("wal-two");
    crash(dir, 200);
    Map<String, byte[]> reference = readBySqlite(copyDir(dir, tmp.resolve("wal-two-ref")));
    Path wal = dir.resolve(SqliteStore.DB_FILE_NAME + "-wal");
    long frame = tableLeafFrame(wal);
    long page = 32 + frame * (24 + 8192) + 24;
    flip(wal, page + 3000, 1); // two bits: no single flip explains them
    flip(wal, page + 6000, 6);
    String what = "bits at " + (page + 3000) + " and " + (page + 6000) + " (frame " + frame + ")";
    Salvaged r = salvage(dir, reference, what); // every value as SQLite recovers the intact image
    assertThat(r.damage())
        .as(what)
        .anySatisfy(
            d -> {
              assertThat(d.file()).isEqualTo(wal.toRealPath());
              assertThat(d.offset()).isEqualTo(32 + frame * (24 + 8192));
              assertThat(d.problem()).contains("the frames after it validate and are applied");
            });
    long counted = 0;
    for (DamagedRegion d : r.damage()) {
      assertThat(d.lostEntries()).as("%s: %s", what, d.describe()).isGreaterThanOrEqualTo(-1);
      counted += Math.max(0, d.lostEntries());
    }
    assertThat(counted)
        .as("%s: entries reported lost (%s)", what, r.damage())
        .isEqualTo(reference.size() - r.entries().size());
  }

  /**
   * A frame in the first half of the WAL's current generation (the frames carrying the header's
   * salts; older generations' frames may follow them), followed by commits, that holds a table leaf
   * page (type byte 13) of some table.
   */
  private static long tableLeafFrame(Path wal) throws IOException {
    byte[] data = Files.readAllBytes(wal);
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(data);
    long current = 0;
    while (32 + (current + 1) * (24 + 8192) <= data.length) {
      int at = (int) (32 + current * (24 + 8192));
      if (b.getInt(at + 8) != b.getInt(16) || b.getInt(at + 12) != b.getInt(20)) {
        break;
      }
      current++;
    }
    assertThat(current).as("frames of the WAL's current generation").isGreaterThan(6);
    for (long f = current / 3; f < current / 2; f++) {
      int at = (int) (32 + f * (24 + 8192));
      if (b.getInt(at) > 1 && data[at + 24] == 13) {
        return f;
      }
    }
    throw new AssertionError("no table leaf frame in the WAL's middle");
  }

  // ---- verify -----------------------------------------------------------------------------------

  @Test
  void verify_damageInTwoPlaces_reportsBothRegions_withTheirKeyspaces() throws Exception {
    Path dir = copy("verify-two");
    Path file = dir.resolve(SqliteStore.DB_FILE_NAME);
    Map<Long, String> pages = new TreeMap<>();
    try (Connection c = DriverManager.getConnection(immutable(file));
        ResultSet rs =
            c.createStatement()
                .executeQuery("SELECT pageno, name FROM dbstat WHERE pagetype = 'leaf'")) {
      while (rs.next()) {
        pages.put(rs.getLong(1), rs.getString(2));
      }
    }
    long kvLeaf =
        pages.entrySet().stream()
            .filter(e -> e.getValue().equals("kv"))
            .findFirst()
            .orElseThrow()
            .getKey();
    long ksLeaf =
        pages.entrySet().stream()
            .filter(e -> e.getValue().startsWith(KeyspaceCatalog.TABLE_PREFIX))
            .findFirst()
            .orElseThrow()
            .getKey();
    // The first cell pointer of each page, bit 14 flipped: past the end of the page.
    flip(file, (kvLeaf - 1) * 8192 + 8, 6);
    flip(file, (ksLeaf - 1) * 8192 + 8, 6);
    try (Store s = Stores.open(Sqlite.config(dir).build())) {
      assertThatThrownBy(s::verify)
          .isInstanceOfSatisfying(
              StoreCorruptedException.class,
              e -> {
                assertThat(e.damage()).as(e.getMessage()).hasSizeGreaterThanOrEqualTo(2);
                assertThat(e.damage())
                    .as("%s", e.damage())
                    .anySatisfy(
                        d -> {
                          assertThat(d.offset()).isEqualTo((kvLeaf - 1) * 8192);
                          assertThat(d.keyspace()).isNull();
                          assertThat(d.file()).isEqualTo(realPath(file));
                        })
                    .anySatisfy(
                        d -> {
                          assertThat(d.offset()).isEqualTo((ksLeaf - 1) * 8192);
                          assertThat(d.keyspace()).isEqualTo(KS);
                        });
                assertThat(e.getMessage()).contains("integrity_check").contains("regions");
              });
    }
  }

  // ---- end to end, refusals
  // ----------------------------------------------------------------------

  @Test
  void storeCopySalvage_intoFreshSqliteStore_writesEveryIntactKeyIntoItsKeyspace()
      throws IOException {
    Path dir = copy("copy-src");
    Map<String, long[]> spans = rowSpans(dir.resolve(SqliteStore.DB_FILE_NAME));
    String lostOwn = "/key-01";
    String lostKs = KS + "/key-03";
    flip(dir.resolve(SqliteStore.DB_FILE_NAME), spans.get(lostOwn)[2] + 17, 3);
    flip(dir.resolve(SqliteStore.DB_FILE_NAME), spans.get(lostKs)[2] + 100, 5);
    Map<String, String> before = hashes(dir);
    StoreCopy.Salvaged result;
    try (Store to = Stores.open(Sqlite.config(tmp.resolve("copy-dst")).build())) {
      result = StoreCopy.salvage(readOnly(dir), to, StoreCopy.Options.defaults());
      to.verify();
    }
    assertThat(hashes(dir)).as("the source, after StoreCopy.salvage").isEqualTo(before);
    assertThat(result.entries()).isEqualTo(28);
    assertThat(result.damage()).hasSize(2);
    Map<String, byte[]> expected = new TreeMap<>(MODEL);
    expected.remove(lostOwn);
    expected.remove(lostKs);
    Map<String, byte[]> target = readBySqlite(tmp.resolve("copy-dst"));
    assertThat(target.keySet()).isEqualTo(expected.keySet());
    for (Map.Entry<String, byte[]> e : expected.entrySet()) {
      assertThat(target.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
    }
  }

  @Test
  void salvage_storeOpenForWriting_refused_readOnlyOpenFine() throws IOException {
    Path dir = copy("locked");
    try (Store s = Stores.open(Sqlite.config(dir).build())) {
      assertThatThrownBy(() -> Stores.provider("sqlite").salvage(readOnly(dir), (ks, k, v) -> {}))
          .isInstanceOf(StoreLockedException.class);
      assertThat(s.get(b("key-01"))).isEqualTo(MODEL.get("/key-01"));
    }
    try (Store s = Stores.open(readOnly(dir))) {
      assertThat(salvage(dir, MODEL, "beside a read-only store").entries()).hasSize(30);
      assertThat(s.get(b("key-01"))).isEqualTo(MODEL.get("/key-01"));
    }
  }

  @Test
  void salvage_noStoreThere_storeIOException() throws IOException {
    Path none = tmp.resolve("none");
    assertThatThrownBy(() -> Stores.provider("sqlite").salvage(readOnly(none), (ks, k, v) -> {}))
        .isInstanceOf(StoreIOException.class);
    Path empty = Files.createDirectories(tmp.resolve("empty"));
    assertThatThrownBy(() -> Stores.provider("sqlite").salvage(readOnly(empty), (ks, k, v) -> {}))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining(SqliteStore.DB_FILE_NAME);
    try (Stream<Path> files = Files.list(empty)) {
      assertThat(files.toList()).as("nothing created").isEmpty();
    }
  }
}
