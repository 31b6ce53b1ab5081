package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.DamagedRegion;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCopy;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RocksDbProvider#salvage}: what it recovers from a damaged store, what it reports lost, and
 * that it never returns a value other than the one written last, never touches the store's files,
 * and finds nothing wrong with an intact store or a crash image.
 */
class RocksDbSalvageTest {
  private static final long SEED = 20_261_206L;

  /** Values of 600 random bytes: a 4 KiB data block holds 6 of them. */
  private static final int VALUE = 600;

  @TempDir static Path templates;

  @TempDir Path tmp;

  /** The cleanly closed 30-key store: key00..key19 of its own, ks00..ks09 in keyspace "ks". */
  private static Path thirty;

  private static final Map<String, TreeMap<String, byte[]>> THIRTY = new TreeMap<>();

  @BeforeAll
  static void writeThirty() {
    thirty = templates.resolve("thirty");
    SplittableRandom rnd = new SplittableRandom(SEED);
    THIRTY.put("", new TreeMap<>());
    THIRTY.put("ks", new TreeMap<>());
    try (Store s = Stores.open(config(thirty).build());
        Store ks = s.keyspace("ks")) {
      for (int i = 0; i < 30; i++) {
        byte[] v = new byte[VALUE];
        rnd.nextBytes(v);
        String key = i < 20 ? String.format("key%02d", i) : String.format("ks%02d", i - 20);
        (i < 20 ? s : ks).put(b(key), v);
        THIRTY.get(i < 20 ? "" : "ks").put(key, v);
      }
    }
  }

  static StoreConfig.Builder config(Path dir) {
    return StoreConfig.builder("rocksdb").path(dir).durability(Durability.SYNC);
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** What a salvage returned: keyspace ("" for the store's own) to key to value. */
  record Salvaged(Map<String, TreeMap<String, byte[]>> entries, List<DamagedRegion> damage) {
    int count() {
      return entries.values().stream().mapToInt(Map::size).sum();
    }

    /** The regions whose lost range holds the key, in its keyspace. */
    List<DamagedRegion> covering(String keyspace, String key) {
      List<DamagedRegion> out = new ArrayList<>();
      for (DamagedRegion d : damage) {
        String ks = d.keyspace() == null ? "" : d.keyspace();
        if (ks.equals(keyspace) && d.lostKeys() != null && d.lostKeys().contains(b(key))) {
          out.add(d);
        }
      }
      return out;
    }

    String describe() {
      StringBuilder s = new StringBuilder(count() + " entries, damage:");
      for (DamagedRegion d : damage) {
        s.append("\n  ").append(d.describe());
      }
      return s.toString();
    }
  }

  static Salvaged salvage(Path dir) {
    Map<String, TreeMap<String, byte[]>> out = new TreeMap<>();
    List<DamagedRegion> damage =
        new RocksDbProvider()
            .salvage(
                config(dir).readOnly(true).createIfMissing(false).build(),
                (keyspace, key, value) -> {
                  byte[] had =
                      out.computeIfAbsent(keyspace == null ? "" : keyspace, k -> new TreeMap<>())
                          .put(new String(key, StandardCharsets.UTF_8), value);
                  assertThat(had)
                      .as("key %s of keyspace %s handed over once", new String(key), keyspace)
                      .isNull();
                });
    return new Salvaged(out, damage);
  }

  /**
   * Every file of a directory with the SHA-256 of its bytes: equal before and after a salvage means
   * it wrote, created, renamed and deleted nothing there.
   */
  static TreeMap<String, String> hashes(Path dir) throws Exception {
    TreeMap<String, String> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        out.put(
            p.getFileName().toString(),
            HexFormat.of().formatHex(sha.digest(Files.readAllBytes(p))));
      }
    }
    return out;
  }

  static Path copy(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> s = Files.list(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Files.copy(p, to.resolve(p.getFileName()));
      }
    }
    return to;
  }

  static void flip(Path f, long offset, int bit) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.seek(offset);
      int v = raf.read();
      raf.seek(offset);
      raf.write(v ^ (1 << bit));
    }
  }

  static List<Path> files(Path dir, String suffix) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
    }
  }

  /**
   * Checks a salvage against the model: every value handed over is the one written last; every key
   * of the model that was not handed over lies in the lost range of a region of its keyspace that
   * names a file of the store; returns how many keys came back.
   */
  static int checkAgainst(
      Map<String, TreeMap<String, byte[]>> model, Salvaged got, Path dir, String what) {
    int back = 0;
    for (var ks : model.entrySet()) {
      TreeMap<String, byte[]> returned = got.entries().getOrDefault(ks.getKey(), new TreeMap<>());
      for (var e : ks.getValue().entrySet()) {
        byte[] v = returned.get(e.getKey());
        if (v != null) {
          assertThat(v)
              .as("%s: value of %s/%s is the one written last", what, ks.getKey(), e.getKey())
              .isEqualTo(e.getValue());
          back++;
        } else {
          assertThat(got.covering(ks.getKey(), e.getKey()))
              .as(
                  "%s: %s/%s was not handed over, so a region must hold it; %s",
                  what, ks.getKey(), e.getKey(), got.describe())
              .isNotEmpty();
        }
      }
      for (String k : returned.keySet()) {
        assertThat(ks.getValue())
            .as("%s: %s/%s handed over but never written (or deleted)", what, ks.getKey(), k)
            .containsKey(k);
      }
    }
    for (String ks : got.entries().keySet()) {
      assertThat(model).as("%s: keyspace %s handed over", what, ks).containsKey(ks);
    }
    for (DamagedRegion d : got.damage()) {
      assertThat(d.file().getParent())
          .as("%s: %s names a file of the store", what, d.describe())
          .isEqualTo(realPath(dir));
    }
    return back;
  }

  static Path realPath(Path p) {
    try {
      return p.toRealPath();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  // ------------------------------------------------------------------ tests

  /**
   * An intact store salvages whole: every key of its own and of its keyspace, exact, and no damage;
   * its files are byte for byte as before.
   */
  @Test
  void salvage_intactStoreWithKeyspace_returnsEveryKeyAndNoDamage() throws Exception {
    TreeMap<String, String> before = hashes(thirty);
    Salvaged got = salvage(thirty);
    assertThat(hashes(thirty)).as("the store's files").isEqualTo(before);
    assertThat(got.damage()).as(got.describe()).isEmpty();
    assertThat(checkAgainst(THIRTY, got, thirty, "intact")).isEqualTo(30);
  }

  /**
   * One flipped bit at each of many seeded positions of the table files (data blocks and the meta
   * blocks after them), the MANIFEST and CURRENT, each on a fresh copy of the cleanly closed 30-key
   * store: salvage never throws and never returns a value other than the one written; every key not
   * returned lies in a reported region naming the damaged file; the store's files are byte for byte
   * unchanged. A bit in a data block loses that block's keys (the unit of loss: 6 values of 600
   * bytes fill a 4 KiB block), a bit in a table's index, properties or footer loses that table's
   * keys, a bit in the MANIFEST or CURRENT nothing (no key of this store has two versions).
   */
  @Test
  void salvage_oneFlippedBitAnywhere_neverWrongAndEveryUntouchedKeyBack() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED);
    List<Path> targets = new ArrayList<>(files(thirty, ".sst"));
    targets.addAll(files(thirty, "CURRENT"));
    try (Stream<Path> s = Files.list(thirty)) {
      s.filter(p -> p.getFileName().toString().startsWith("MANIFEST-")).forEach(targets::add);
    }
    TreeMap<Integer, Integer> histogram = new TreeMap<>();
    int runs = 0;
    for (Path target : targets) {
      long size = Files.size(target);
      int positions = target.getFileName().toString().endsWith(".sst") ? 40 : 8;
      for (int n = 0; n < positions; n++) {
        long at = rnd.nextLong(size);
        int bit = rnd.nextInt(8);
        Path dir = copy(thirty, tmp.resolve("flip-" + runs++));
        flip(dir.resolve(target.getFileName()), at, bit);
        TreeMap<String, String> before = hashes(dir);
        String what =
            target.getFileName() + " bit " + bit + " of byte " + at + " (seed " + SEED + ")";
        Salvaged got = salvage(dir);
        assertThat(hashes(dir)).as("%s: the store's files", what).isEqualTo(before);
        int back = checkAgainst(THIRTY, got, dir, what);
        // Every byte of these files is under a checksum (or, in CURRENT, names the MANIFEST).
        assertThat(got.damage())
            .as("%s: the damage is reported, naming the damaged file", what)
            .isNotEmpty()
            .allSatisfy(d -> assertThat(d.file().getFileName()).isEqualTo(target.getFileName()));
        if (back == 30) {
          assertThat(got.damage())
              .as("%s: nothing lost, so no region says it lost something", what)
              .allSatisfy(d -> assertThat(d.lostEntries()).isIn(-1L, 0L));
        }
        for (DamagedRegion d : got.damage()) {
          if (d.problem().contains("block_type = Data")) {
            // The unit of loss: one data block, 6 values of 600 bytes.
            String ks = d.keyspace() == null ? "" : d.keyspace();
            long held =
                THIRTY.get(ks).keySet().stream().filter(k -> d.lostKeys().contains(b(k))).count();
            assertThat(held)
                .as("%s: keys in the lost range of %s", what, d.describe())
                .isBetween(1L, 6L);
          }
        }
        histogram.merge(back, 1, Integer::sum);
      }
    }
    System.out.println("keys salvaged of 30 -> runs: " + histogram);
  }

  /**
   * A store whose data is only in its WAL (closed without the flush: 3,000 keys in batches of 100,
   * values of 300 random bytes, about 30 blocks of WAL) with one bit flipped at each of 16 seeded
   * positions of the WAL in turn: every value handed over is exact, and exactly the operations the
   * WAL regions count as lost are missing (a flip in a record loses its batch of 100; one in a
   * length field the rest of its 32 KiB block), all other keys are back.
   */
  @Test
  void salvage_flippedBitInTheWal_losesExactlyTheDamagedBatches() throws Exception {
    Path template = tmp.resolve("in-wal");
    TreeMap<String, byte[]> own = new TreeMap<>();
    SplittableRandom rnd = new SplittableRandom(SEED + 1);
    Store s = Stores.open(config(template).build());
    for (int n = 0; n < 30; n++) {
      WriteBatch batch = new WriteBatch();
      for (int i = n * 100; i < (n + 1) * 100; i++) {
        byte[] v = new byte[300];
        rnd.nextBytes(v);
        own.put(String.format("w%05d", i), v);
        batch.put(b(String.format("w%05d", i)), v);
      }
      s.write(batch);
    }
    ((RocksDbStore) s).closeWithoutFlush();
    Map<String, TreeMap<String, byte[]>> model = Map.of("", own);
    Path wal = files(template, ".log").get(files(template, ".log").size() - 1);
    long size = Files.size(wal);
    assertThat(size).as("the WAL holds the data").isGreaterThan(900_000);
    assertThat(salvage(template).damage()).isEmpty();
    int unknown = 0;
    for (int n = 0; n < 16; n++) {
      long at = rnd.nextLong(size);
      int bit = rnd.nextInt(8);
      Path dir = copy(template, tmp.resolve("wal-flip-" + n));
      flip(dir.resolve(wal.getFileName()), at, bit);
      TreeMap<String, String> before = hashes(dir);
      String what = "WAL bit " + bit + " of byte " + at + " (seed " + (SEED + 1) + ")";
      Salvaged got = salvage(dir);
      assertThat(hashes(dir)).as("%s: the store's files", what).isEqualTo(before);
      List<DamagedRegion> damage = got.damage();
      assertThat(damage)
          .as("%s: %s", what, got.describe())
          .isNotEmpty()
          .allSatisfy(
              d -> assertThat(d.file()).isEqualTo(realPath(dir).resolve(wal.getFileName())));
      java.util.TreeSet<Integer> lostBatches = new java.util.TreeSet<>();
      for (var e : own.entrySet()) {
        byte[] v = got.entries().getOrDefault("", new TreeMap<>()).get(e.getKey());
        if (v != null) {
          assertThat(v).as("%s: %s", what, e.getKey()).isEqualTo(e.getValue());
        } else {
          lostBatches.add(Integer.parseInt(e.getKey().substring(1)) / 100);
        }
      }
      assertThat(got.count())
          .as("%s: keys are lost in whole batches %s", what, lostBatches)
          .isEqualTo(3_000 - 100 * lostBatches.size());
      long counted = damage.stream().mapToLong(d -> Math.max(0, d.lostEntries())).sum();
      DamagedRegion last = damage.get(damage.size() - 1);
      if (damage.stream().allMatch(d -> d.lostEntries() >= 0)) {
        assertThat(100L * lostBatches.size())
            .as("%s: keys missing = operations the regions count", what)
            .isEqualTo(counted);
      } else {
        // Unknown only where no intact batch follows: the span runs to the end of the WAL and
        // took the last batches with it.
        assertThat(damage.subList(0, damage.size() - 1))
            .allSatisfy(d -> assertThat(d.lostEntries()).isNotNegative());
        assertThat(last.offset() + last.length()).as(what).isEqualTo(size);
        assertThat(lostBatches).as(what).contains(29);
        assertThat(100L * lostBatches.size()).as(what).isGreaterThan(counted);
      }
      unknown += last.lostEntries() < 0 ? 1 : 0;
    }
    assertThat(unknown).as("flips whose loss could not be counted").isLessThan(16);
  }

  /**
   * verify() of a store damaged in two separate places, and in two blocks of one file, reports
   * every region: each names its file, the data block's offset and the keys it cost.
   */
  @Test
  void verify_damageInTwoPlaces_reportsEveryRegion() throws Exception {
    List<Path> tables = files(thirty, ".sst");
    assertThat(tables).hasSize(2);
    Path own = tables.get(0);
    Path ks = tables.get(1);

    Path two = copy(thirty, tmp.resolve("two-files"));
    flip(two.resolve(own.getFileName()), 100, 3);
    flip(two.resolve(ks.getFileName()), 100, 3);
    try (Store s = Stores.open(config(two).readOnly(true).build())) {
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(own.getFileName().toString())
          .hasMessageContaining(ks.getFileName().toString())
          .satisfies(
              e -> {
                List<DamagedRegion> d = ((StoreCorruptedException) e).damage();
                assertThat(d)
                    .extracting(r -> r.file().getFileName().toString())
                    .containsExactlyInAnyOrder(
                        own.getFileName().toString(), ks.getFileName().toString());
                assertThat(d).allSatisfy(r -> assertThat(r.offset()).isZero());
                assertThat(d).allSatisfy(r -> assertThat(r.lostKeys()).isNotNull());
              });
    }

    Path oneFile = copy(thirty, tmp.resolve("one-file"));
    flip(oneFile.resolve(own.getFileName()), 100, 3);
    flip(oneFile.resolve(own.getFileName()), 8_500, 3);
    try (Store s = Stores.open(config(oneFile).build())) {
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .satisfies(
              e -> {
                List<DamagedRegion> d = ((StoreCorruptedException) e).damage();
                assertThat(d).as(e.getMessage()).hasSize(2);
                assertThat(d.get(0).offset()).isZero();
                assertThat(d.get(1).offset()).isGreaterThan(4_000).isLessThanOrEqualTo(8_500);
                assertThat(e.getMessage()).contains("2 damaged regions");
              });
    }
  }

  /**
   * StoreCopy.salvage end to end: a damaged 30-key store into a fresh rocksdb store, keyspace
   * included: the target holds exactly the salvaged entries, each as written, and the result lists
   * the damage.
   */
  @Test
  void storeCopySalvage_damagedStoreIntoFreshStore_writesEveryIntactEntry() throws Exception {
    Path src = copy(thirty, tmp.resolve("damaged"));
    flip(src.resolve(files(thirty, ".sst").get(0).getFileName()), 100, 5);
    TreeMap<String, String> before = hashes(src);
    Salvaged direct = salvage(src);
    try (Store to = Stores.open(config(tmp.resolve("rescued")).build())) {
      StoreCopy.Salvaged r =
          StoreCopy.salvage(config(src).build(), to, StoreCopy.Options.defaults());
      assertThat(r.entries()).isEqualTo(direct.count()).isEqualTo(24);
      assertThat(r.keyspaces()).containsExactly("ks");
      assertThat(r.damage()).isEqualTo(direct.damage()).hasSize(1);
      assertThat(r.intact()).isFalse();
      Map<String, TreeMap<String, byte[]>> target = new TreeMap<>();
      for (String ks : List.of("", "ks")) {
        TreeMap<String, byte[]> m = new TreeMap<>();
        try (Store view = ks.isEmpty() ? null : to.keyspace(ks);
            var c = (view == null ? to : view).scan(KeyRange.all())) {
          while (c.hasNext()) {
            var e = c.next();
            m.put(new String(e.key(), StandardCharsets.UTF_8), e.value());
          }
        }
        target.put(ks, m);
      }
      assertThat(target.get("").keySet()).isEqualTo(direct.entries().get("").keySet());
      assertThat(target.get("ks").keySet()).isEqualTo(direct.entries().get("ks").keySet());
      assertThat(checkAgainst(THIRTY, new Salvaged(target, direct.damage()), src, "copy"))
          .isEqualTo(24);
    }
    assertThat(hashes(src)).isEqualTo(before);
  }

  /** A store open for writing in this process is refused, and stays locked and usable. */
  @Test
  void salvage_storeOpenForWriting_isRefused() throws Exception {
    Path dir = tmp.resolve("busy");
    try (Store s = Stores.open(config(dir).build())) {
      s.put(b("k"), b("v"));
      assertThatThrownBy(() -> salvage(dir))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("open for writing");
      s.put(b("k2"), b("v2"));
      assertThatThrownBy(() -> Stores.open(config(dir).build()))
          .isInstanceOf(StoreLockedException.class);
    }
    assertThat(salvage(dir).count()).isEqualTo(2);
  }

  /**
   * A crash image: a child JVM writing batches of 100 is refused while it writes (and writes on),
   * then killed with SIGKILL; the image (data in the WAL, torn where the kill landed) salvages with
   * no damage and every acknowledged key exact, the batch in flight whole or absent.
   */
  @Test
  void salvage_kill9CrashImage_everyAcknowledgedKeyAndNoDamage() throws Exception {
    Path dir = tmp.resolve("crash");
    int acked = -1;
    try (ChildProcess c =
        ChildProcess.java(SyncedWalCrashWorker.class, dir.toString(), "SYNC").start()) {
      Duration wait = Duration.ofMinutes(2);
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        acked = Integer.parseInt(line.substring("ACK ".length()));
        if (acked >= 3_000) {
          break;
        }
      }
      assertThat(acked).as("worker: %s", c.describe()).isGreaterThanOrEqualTo(3_000);
      assertThatThrownBy(() -> salvage(dir))
          .as("the worker has the store open")
          .isInstanceOf(StoreLockedException.class);
      int next = Integer.parseInt(c.readLine(wait).substring("ACK ".length()));
      assertThat(next).as("the worker writes on after the refusal").isGreaterThan(acked);
      acked = next; // acknowledged too: a slow worker may print nothing more before the kill
      c.kill();
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        acked = Integer.parseInt(line.substring("ACK ".length()));
      }
    }
    TreeMap<String, String> before = hashes(dir);
    Map<String, TreeMap<String, byte[]>> out = new TreeMap<>();
    List<DamagedRegion> damage =
        new RocksDbProvider()
            .salvage(
                config(dir).readOnly(true).build(),
                (ks, k, v) ->
                    out.computeIfAbsent(String.valueOf(ks), x -> new TreeMap<>())
                        .put(new String(k, StandardCharsets.UTF_8), v));
    assertThat(hashes(dir)).isEqualTo(before);
    assertThat(damage).isEmpty();
    TreeMap<String, byte[]> own = out.get("null");
    for (int i = 0; i < acked; i++) {
      assertThat(own.get(new String(SyncedWalCrashWorker.key(i), StandardCharsets.UTF_8)))
          .as("acknowledged key %d of %d", i, acked)
          .isEqualTo(SyncedWalCrashWorker.value(i));
    }
    assertThat(own.size()).as("the batch in flight is whole or absent").isIn(acked, acked + 100);
    assertThat(out).containsOnlyKeys("null");
  }

  /**
   * A store with a history: five sessions of seeded puts, overwrites and deletes over the store's
   * own keys and two keyspaces (compressible values, so table blocks are LZ4-compressed; a 64 KiB
   * write buffer, so each session leaves several table files and compactions run), the last one
   * closed without the flush (its writes only in the WAL). Then, each on a fresh copy: 40 flipped
   * bits at seeded positions of the table files, WALs and MANIFEST, and every table file with its
   * footer damaged, cut to half, or deleted. Each salvage hands over only the value each key holds
   * now (never an older one, never a deleted key), reports a region for every key it does not hand
   * over, and leaves the store's files as they were.
   */
  @Test
  void salvage_storeWithHistory_neverStaleNeverResurrected() throws Exception {
    Path template = tmp.resolve("history");
    Map<String, TreeMap<String, byte[]>> model = new TreeMap<>();
    List<String> spaces = List.of("", "a", "b");
    for (String ks : spaces) {
      model.put(ks, new TreeMap<>());
    }
    SplittableRandom rnd = new SplittableRandom(SEED + 2);
    String[] words = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"};
    for (int session = 0; session < 5; session++) {
      Store s = Stores.open(config(template).option("write-buffer-size", "64KiB").build());
      for (int op = 0; op < 600; op++) {
        String ks = spaces.get(rnd.nextInt(3));
        String key = String.format("h%04d", rnd.nextInt(400));
        Store target = ks.isEmpty() ? s : s.keyspace(ks);
        if (rnd.nextInt(4) == 0) {
          target.delete(b(key));
          model.get(ks).remove(key);
        } else {
          StringBuilder v = new StringBuilder(key + " session " + session + ":");
          for (int w = rnd.nextInt(20, 120); w > 0; w--) {
            v.append(' ').append(words[rnd.nextInt(words.length)]);
          }
          target.put(b(key), b(v.toString()));
          model.get(ks).put(key, b(v.toString()));
        }
        if (target != s) {
          target.close();
        }
      }
      if (session == 4) {
        ((RocksDbStore) s).closeWithoutFlush();
      } else {
        s.close();
      }
    }
    assertThat(checkAgainst(model, salvage(template), template, "intact history"))
        .isEqualTo(model.values().stream().mapToInt(Map::size).sum());
    assertThat(salvage(template).damage()).isEmpty();

    List<Path> targets = new ArrayList<>(files(template, ".sst"));
    targets.addAll(files(template, ".log"));
    try (Stream<Path> st = Files.list(template)) {
      st.filter(p -> p.getFileName().toString().startsWith("MANIFEST-")).forEach(targets::add);
    }
    long total = 0;
    for (Path t : targets) {
      total += Files.size(t);
    }
    int run = 0;
    for (int n = 0; n < 40; n++) {
      long pick = rnd.nextLong(total);
      Path target = targets.get(0);
      for (Path t : targets) {
        if (pick < Files.size(t)) {
          target = t;
          break;
        }
        pick -= Files.size(t);
      }
      int bit = rnd.nextInt(8);
      Path dir = copy(template, tmp.resolve("history-" + run++));
      flip(dir.resolve(target.getFileName()), pick, bit);
      checkHistory(model, dir, target.getFileName() + " bit " + bit + " of byte " + pick, template);
    }
    for (Path manifest : targets) {
      if (!manifest.getFileName().toString().startsWith("MANIFEST-")) {
        continue;
      }
      for (int n = 0; n < 6; n++) {
        long at = rnd.nextLong(Files.size(manifest));
        Path dir = copy(template, tmp.resolve("history-" + run++));
        flip(dir.resolve(manifest.getFileName()), at, n);
        String what = manifest.getFileName() + " bit " + n + " of byte " + at;
        if (n % 2 == 1) {
          // and a WAL: without the MANIFEST, keys its lost records wrote must not come back old
          Path wal = files(template, ".log").get(n % files(template, ".log").size());
          long w = rnd.nextLong(Files.size(wal));
          flip(dir.resolve(wal.getFileName()), w, n);
          what += ", " + wal.getFileName() + " bit " + n + " of byte " + w;
        }
        checkHistory(model, dir, what, template);
      }
    }
    for (Path sst : files(template, ".sst")) {
      long size = Files.size(sst);
      Path footer = copy(template, tmp.resolve("history-" + run++));
      flip(footer.resolve(sst.getFileName()), size - 20, 1);
      checkHistory(model, footer, sst.getFileName() + " footer");
      Path half = copy(template, tmp.resolve("history-" + run++));
      try (RandomAccessFile raf =
          new RandomAccessFile(half.resolve(sst.getFileName()).toFile(), "rw")) {
        raf.setLength(size / 2);
      }
      checkHistory(model, half, sst.getFileName() + " cut to half");
      Path gone = copy(template, tmp.resolve("history-" + run++));
      Files.delete(gone.resolve(sst.getFileName()));
      checkHistory(model, gone, sst.getFileName() + " deleted");
    }
  }

  private static void checkHistory(
      Map<String, TreeMap<String, byte[]>> model, Path dir, String damage) throws Exception {
    checkHistory(model, dir, damage, null);
  }

  /**
   * As above; with {@code undamaged} (the store before the damage), a key may come back with an
   * older value only as the documented limit allows (docs/salvage.md, "What it cannot know"): a WAL
   * region salvage reported as lost held a write of that key, which the damage made unrecognisable
   * (its key or column-family bytes). Which bytes a flip meets depends on how RocksDB's background
   * flushes split the history between tables and WALs, which differs from run to run.
   */
  private static void checkHistory(
      Map<String, TreeMap<String, byte[]>> model, Path dir, String damage, Path undamaged)
      throws Exception {
    String what = damage + " (seed " + (SEED + 2) + ")";
    TreeMap<String, String> before = hashes(dir);
    Salvaged got = salvage(dir);
    assertThat(hashes(dir)).as("%s: the store's files", what).isEqualTo(before);
    boolean walLoss =
        got.damage().stream()
            .anyMatch(
                d -> d.file().getFileName().toString().endsWith(".log") && d.lostEntries() != 0);
    int back = 0;
    for (var ks : model.entrySet()) {
      TreeMap<String, byte[]> returned = got.entries().getOrDefault(ks.getKey(), new TreeMap<>());
      for (String k : returned.keySet()) {
        assertThat(ks.getValue())
            .as("%s: %s/%s was deleted (or never written) but came back", what, ks.getKey(), k)
            .containsKey(k);
        if (undamaged != null
            && !Arrays.equals(returned.get(k), ks.getValue().get(k))
            && lostWalRegionHolds(got, undamaged, k)) {
          continue; // an older value: the write that replaced it was in a lost WAL region
        }
        assertThat(returned.get(k))
            .as("%s: %s/%s holds its newest value", what, ks.getKey(), k)
            .isEqualTo(ks.getValue().get(k));
        back++;
      }
      for (String k : ks.getValue().keySet()) {
        if (!returned.containsKey(k) && !walLoss) {
          assertThat(got.covering(ks.getKey(), k))
              .as(
                  "%s: %s/%s not handed over, so a region holds it: %s",
                  what, ks.getKey(), k, got.describe())
              .isNotEmpty();
        }
      }
    }
    System.out.printf(
        "%s: %d of %d keys back, %d regions%n",
        damage, back, model.values().stream().mapToInt(Map::size).sum(), got.damage().size());
  }

  /**
   * Whether a WAL region salvage reported with lost operations held, before the damage, a record
   * naming {@code key}: its bytes in the undamaged file (to the file's end where the region's
   * length is unknown) contain the key.
   */
  private static boolean lostWalRegionHolds(Salvaged got, Path undamaged, String key)
      throws IOException {
    byte[] k = b(key);
    for (DamagedRegion d : got.damage()) {
      String name = d.file().getFileName().toString();
      if (!name.endsWith(".log") || d.lostEntries() == 0) {
        continue;
      }
      byte[] file = Files.readAllBytes(undamaged.resolve(name));
      int from = (int) Math.max(0, Math.min(d.offset(), file.length));
      int to = d.length() < 0 ? file.length : (int) Math.min(file.length, from + d.length());
      for (int i = from; i + k.length <= to; i++) {
        if (Arrays.equals(file, i, i + k.length, k, 0, k.length)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * TableScan on a table of LZ4-compressed blocks with whole blocks zeroed (so an unchecked read
   * fails on them too, and stepping over them needs the checked backward read or the bisection):
   * three damaged runs, one of two neighbouring blocks. Each run is one loss whose bounds are the
   * intact keys either side of it, exactly; every key of every intact block comes back with its
   * value.
   */
  @Test
  void tableScan_zeroedCompressedBlocks_stepsOverEachRunExactly() throws Exception {
    Path sst = tmp.resolve("compressed.sst");
    TreeMap<String, byte[]> model = new TreeMap<>();
    try (org.rocksdb.Options o =
            new org.rocksdb.Options()
                .setCompressionType(org.rocksdb.CompressionType.LZ4_COMPRESSION);
        org.rocksdb.EnvOptions eo = new org.rocksdb.EnvOptions();
        org.rocksdb.SstFileWriter w = new org.rocksdb.SstFileWriter(eo, o)) {
      w.open(sst.toString());
      for (int i = 0; i < 300; i++) {
        String k = String.format("t%03d", i);
        byte[] v = b(("value " + i + " ").repeat(60));
        w.put(b(k), v);
        model.put(k, v);
      }
      w.finish();
    }
    // The blocks, found by damaging each in turn: offset, length, last key before, first after.
    List<TableScan.Loss> blocks = new ArrayList<>();
    long at = 0;
    while (true) {
      Path probe =
          copy(sst.getParent(), tmp.resolve("probe-" + blocks.size())).resolve(sst.getFileName());
      flip(probe, at + 2, 0);
      try (TableScan t = TableScan.open(probe)) {
        for (t.seekToFirst(); t.valid(); t.next()) {
          // read through
        }
        if (t.losses().isEmpty() || !t.losses().get(0).problem().contains("block_type = Data")) {
          break;
        }
        blocks.add(t.losses().get(0));
        at = t.losses().get(0).offset() + t.losses().get(0).length();
      } catch (org.rocksdb.RocksDBException e) {
        break; // past the data blocks
      }
    }
    assertThat(blocks).as("data blocks").hasSizeGreaterThan(10);
    Path damaged = copy(sst.getParent(), tmp.resolve("zeroed")).resolve(sst.getFileName());
    int[] zeroed = {2, 5, 6, 9};
    try (RandomAccessFile raf = new RandomAccessFile(damaged.toFile(), "rw")) {
      for (int z : zeroed) {
        raf.seek(blocks.get(z).offset());
        raf.write(new byte[(int) blocks.get(z).length() - 5]);
      }
    }
    TreeMap<String, byte[]> read = new TreeMap<>();
    List<TableScan.Loss> losses;
    try (TableScan t = TableScan.open(damaged)) {
      for (t.seekToFirst(); t.valid(); t.next()) {
        read.put(new String(t.key(), StandardCharsets.UTF_8), t.value());
      }
      losses = List.copyOf(t.losses());
    }
    assertThat(losses).hasSize(3);
    int[][] runs = {{2, 2}, {5, 6}, {9, 9}};
    for (int r = 0; r < 3; r++) {
      TableScan.Loss got = losses.get(r);
      TableScan.Loss first = blocks.get(runs[r][0]);
      TableScan.Loss last = blocks.get(runs[r][1]);
      assertThat(got.offset()).as("run %d", r).isEqualTo(first.offset());
      assertThat(got.length())
          .as("run %d", r)
          .isEqualTo(last.offset() + last.length() - first.offset());
      assertThat(got.before()).as("run %d", r).isEqualTo(first.before());
      assertThat(got.after()).as("run %d", r).isEqualTo(last.after());
    }
    TreeMap<String, byte[]> expected = new TreeMap<>(model);
    for (int[] run : runs) {
      expected
          .subMap(
              new String(blocks.get(run[0]).before(), StandardCharsets.UTF_8), false,
              new String(blocks.get(run[1]).after(), StandardCharsets.UTF_8), false)
          .clear();
    }
    assertThat(read.keySet()).isEqualTo(expected.keySet());
    read.forEach((k, v) -> assertThat(v).as(k).isEqualTo(model.get(k)));
  }

  static String str(byte[] k) {
    return k == null ? "null" : new String(k, StandardCharsets.UTF_8);
  }

  /**
   * A flipped bit in the length field of a record in the WAL's last, partial block makes the record
   * run past the end of the file, which is what a torn tail looks like; but intact records follow
   * it, so it is damage: salvage reports the one write lost and hands over every other key, and the
   * open's check refuses the WAL instead of ending it there (which would drop the 39 writes after
   * it without a word).
   */
  @Test
  void salvage_damagedLengthInTheLastWalBlock_isDamageNotATornTail() throws Exception {
    Path template = tmp.resolve("short-wal");
    TreeMap<String, byte[]> own = new TreeMap<>();
    SplittableRandom rnd = new SplittableRandom(SEED + 3);
    Store s = Stores.open(config(template).build());
    for (int i = 0; i < 60; i++) {
      byte[] v = new byte[300];
      rnd.nextBytes(v);
      own.put(String.format("p%02d", i), v);
      s.put(b(String.format("p%02d", i)), v);
    }
    ((RocksDbStore) s).closeWithoutFlush();
    Path wal = files(template, ".log").get(0);
    assertThat(Files.size(wal)).as("one partial block").isLessThan(RecordLog.BLOCK);
    List<Long> records = new ArrayList<>();
    LogSurvey.read(wal, true, (offset, type, payload) -> records.add(offset));
    assertThat(records).hasSize(60);
    Path dir = copy(template, tmp.resolve("short-wal-flip"));
    long at = records.get(20);
    flip(dir.resolve(wal.getFileName()), at + 5, 7); // the length's high byte: +32,768
    TreeMap<String, String> before = hashes(dir);
    Salvaged got = salvage(dir);
    assertThat(hashes(dir)).isEqualTo(before);
    assertThat(got.damage()).as(got.describe()).hasSize(1);
    DamagedRegion d = got.damage().get(0);
    assertThat(d.file()).isEqualTo(realPath(dir).resolve(wal.getFileName()));
    assertThat(d.offset()).isEqualTo(at);
    assertThat(d.lostEntries()).isEqualTo(1);
    own.remove("p20");
    assertThat(checkAgainst(Map.of("", own), got, dir, "length flip")).isEqualTo(59);
    assertThatThrownBy(() -> RecordLog.check(dir.resolve(wal.getFileName()), true))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("offset " + at);
  }
}
