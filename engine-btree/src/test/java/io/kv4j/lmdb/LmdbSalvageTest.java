package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.DamagedRegion;
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
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Salvage of damaged LMDB stores: what comes back is exactly what was written, what does not is
 * accounted for by the damaged regions, and the store's directory is never touched.
 */
class LmdbSalvageTest {
  private static final long SEED = 20_261_206L;
  private static final String KS = "ks";
  private static final int KEYS = 30;

  @TempDir Path tmp;

  /**
   * What a store holds: key to value, key to keyspace (null: the store's own keys), and the values
   * each key held before (a key deleted since has none in {@code values}).
   */
  private record Written(
      Map<String, byte[]> values, Map<String, String> spaces, Map<String, byte[]> earlier) {}

  /** One entry salvage handed over. */
  private record Got(String keyspace, String key, byte[] value) {}

  private record Salvaged(List<Got> entries, List<DamagedRegion> damage) {
    Map<String, Got> byKey() {
      Map<String, Got> m = new TreeMap<>();
      for (Got g : entries) {
        m.put(g.key(), g);
      }
      return m;
    }
  }

  /**
   * The 30-key store: keys own-00..own-19 in the store's own keys, ks-20..ks-29 in keyspace "ks";
   * values of 200 to 600 random bytes, two of 5,000 (overflow pages). Every key is written twice
   * (an old value in one batch, then the final value, one put each), so free pages hold old
   * versions that salvage must never return.
   */
  private static Written write30(Path dir, String... options) {
    Random r = new Random(SEED);
    Map<String, byte[]> values = new LinkedHashMap<>();
    Map<String, String> spaces = new LinkedHashMap<>();
    Map<String, byte[]> earlier = new LinkedHashMap<>();
    WriteBatch old = new WriteBatch();
    for (int i = 0; i < KEYS; i++) {
      String key = (i < 20 ? "own-" : "ks-") + String.format("%02d", i);
      byte[] v = new byte[i == 7 || i == 23 ? 5000 : 200 + r.nextInt(400)];
      r.nextBytes(v);
      byte[] stale = new byte[v.length];
      r.nextBytes(stale);
      values.put(key, v);
      earlier.put(key, stale);
      spaces.put(key, i < 20 ? null : KS);
      if (i < 20) {
        old.put(b(key), stale);
      } else {
        old.put(KS, b(key), stale);
      }
    }
    try (Store s = Lmdb.open(dir, options)) {
      s.write(old);
      try (Store ks = s.keyspace(KS)) {
        for (Map.Entry<String, byte[]> e : values.entrySet()) {
          (spaces.get(e.getKey()) == null ? s : ks).put(b(e.getKey()), e.getValue());
        }
      }
    }
    return new Written(values, spaces, earlier);
  }

  private static StoreConfig config(Path dir) {
    return StoreConfig.builder("lmdb").path(dir).readOnly(true).createIfMissing(false).build();
  }

  private static Salvaged salvage(Path dir) {
    List<Got> got = new ArrayList<>();
    List<DamagedRegion> damage =
        Stores.provider("lmdb")
            .salvage(
                config(dir),
                (keyspace, key, value) ->
                    got.add(new Got(keyspace, new String(key, StandardCharsets.UTF_8), value)));
    return new Salvaged(got, damage);
  }

  // ---- intact stores ----

  @Test
  void salvage_intactStoreWithKeyspace_returnsEveryEntryAndNoDamage() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Map<String, String> before = files(dir);
    Salvaged s = salvage(dir);
    assertThat(files(dir)).as("the directory after salvage").isEqualTo(before);
    assertThat(s.damage()).isEmpty();
    assertThat(s.entries()).hasSize(KEYS);
    assertHonest(w, s, "intact store");
  }

  @Test
  void salvage_intactStoresOfEveryFormat_returnEveryEntry() throws Exception {
    Written raw = write30(tmp.resolve("raw"), "checksums", "false"); // format 3
    Salvaged s = salvage(tmp.resolve("raw"));
    assertThat(s.damage()).isEmpty();
    assertThat(s.entries()).hasSize(KEYS);
    assertHonest(raw, s, "format 3");
    Map<String, String> legacy = new TreeMap<>();
    for (int i = 0; i < 50; i++) {
      legacy.put("k" + i, "value " + i);
    }
    for (boolean framed : new boolean[] {false, true}) { // formats 1 and 2, no identity file
      Path dir = tmp.resolve("legacy-" + framed);
      Lmdb.legacy(dir, framed, legacy);
      Salvaged l = salvage(dir);
      assertThat(l.damage()).as("framed=%s", framed).isEmpty();
      Map<String, String> got = new TreeMap<>();
      for (Got g : l.entries()) {
        assertThat(g.keyspace()).isNull();
        got.put(g.key(), new String(g.value(), StandardCharsets.UTF_8));
      }
      assertThat(got).as("framed=%s", framed).isEqualTo(legacy);
    }
  }

  /**
   * The files around the data: a missing store or data file cannot be salvaged (StoreIOException);
   * a data file cut short of its meta pages gives no entry and one region saying so; a damaged
   * identity file is reported and the format told from the data, every entry read.
   */
  @Test
  void salvage_missingOrDamagedFiles_areReportedNeverGuessed() throws Exception {
    assertThatThrownBy(() -> salvage(tmp.resolve("nothing")))
        .isInstanceOf(io.kv4j.StoreIOException.class);
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path identity = dir.resolve("kv4j.store");
    String id = Files.readString(identity);
    Files.writeString(identity, id.replace("format=4", "format=3")); // checksum no longer holds
    Salvaged s = salvage(dir);
    assertHonest(w, s, "damaged identity");
    assertThat(s.entries()).hasSize(KEYS);
    assertThat(s.damage())
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.file()).isEqualTo(identity.toRealPath());
              assertThat(d.lostEntries()).isZero();
            });
    Files.writeString(identity, id);
    Path data = dir.resolve("data.mdb");
    byte[] all = Files.readAllBytes(data);
    Files.write(data, Arrays.copyOf(all, 100));
    Salvaged cut = salvage(dir);
    assertThat(cut.entries()).isEmpty();
    assertThat(cut.damage())
        .singleElement()
        .satisfies(d -> assertThat(d.problem()).contains("no snapshot can be found"));
    Files.delete(data);
    assertThatThrownBy(() -> salvage(dir))
        .isInstanceOf(io.kv4j.StoreIOException.class)
        .hasMessageContaining("data.mdb");
  }

  // ---- one flipped bit ----

  /**
   * One bit flipped at each of many places of the used part of data.mdb in turn (seeded), every
   * page type included: salvage never throws, never hands over a value that was not written under
   * that key and keyspace, hands each key over once, and every key it does not hand over lies in a
   * reported region of the right keyspace; when every region counts its loss, the counts add up.
   */
  @Test
  void salvage_oneFlippedBitAnywhere_neverLiesAndAccountsForEveryLostKey() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    long used = usedBytes(data);
    Random r = new Random(SEED);
    Map<Integer, Integer> recovered = new TreeMap<>();
    int reported = 0;
    for (int round = 0; round < 1500; round++) {
      long at = r.nextLong(used);
      int bit = r.nextInt(8);
      String ctx = "bit " + bit + " at " + at + " (seed " + SEED + ", round " + round + ")";
      flip(data, at, bit);
      Map<String, String> before = files(dir);
      Salvaged s = salvage(dir);
      assertThat(files(dir)).as("the directory after salvage, %s", ctx).isEqualTo(before);
      flip(data, at, bit);
      assertHonest(w, s, ctx);
      recovered.merge(s.entries().size(), 1, Integer::sum);
      reported += s.damage().isEmpty() ? 0 : 1;
    }
    System.out.println(
        "salvage after one flipped bit, entries recovered -> rounds: "
            + recovered
            + "; rounds with damage reported: "
            + reported);
    assertThat(recovered.keySet()).as("some flips cost entries").anyMatch(n -> n < KEYS);
  }

  /**
   * Every bit of both meta pages (their 152 bytes) and of the first 48 bytes of every other page in
   * use (page header and node table, or the start of an overflow value) flipped in turn: salvage
   * never lies, and a flipped bit loses at most the one entry whose value it lies in. A damaged
   * header field, node-table slot, page number, page type or overflow-run header is made up for by
   * the page's nodes (or the value's checksum) and reported without loss.
   */
  @Test
  void salvage_everyBitOfEveryHeader_losesAtMostTheEntryItLiesIn() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    int psize = pageSize(data);
    long pages = usedBytes(data) / psize;
    Map<Integer, Integer> recovered = new TreeMap<>();
    for (long page = 0; page < pages; page++) {
      int span = page < 2 ? MetaPages.META_BYTES : 48;
      for (int i = 0; i < span * 8; i++) {
        long at = page * psize + i / 8;
        int bit = i % 8;
        String ctx = "bit " + bit + " at " + at + " (page " + page + ", byte " + i / 8 + ")";
        flip(data, at, bit);
        Salvaged s = salvage(dir);
        flip(data, at, bit);
        assertHonest(w, s, ctx);
        recovered.merge(s.entries().size(), 1, Integer::sum);
        if (s.entries().size() < KEYS) {
          assertThat(s.entries()).as(ctx).hasSize(KEYS - 1);
          assertThat(s.damage())
              .as(ctx)
              .singleElement()
              .satisfies(d -> assertThat(d.problem()).contains("CRC32C"));
        }
      }
    }
    System.out.println("salvage after one flipped header bit, entries -> rounds: " + recovered);
  }

  /**
   * Every bit of the list of keyspaces (the main database's leaf: names and 48-byte database
   * records, which LMDB keeps without a checksum) flipped in turn: salvage never lies about a key
   * or value, and a name flipped off {@code default} still gives the store's own keys. The one
   * thing it cannot tell: a keyspace's name flipped into another valid name; the keyspace's entries
   * then come back exact, under that name, unreported (the README says so).
   */
  @Test
  void salvage_everyBitOfTheListOfKeyspaces_neverLiesAboutEntries() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    int psize = pageSize(data);
    ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(data)).order(ByteOrder.LITTLE_ENDIAN);
    int meta = file.getLong(MetaPages.TXNID) > file.getLong(psize + MetaPages.TXNID) ? 0 : psize;
    long names = file.getLong(meta + MetaPages.MAIN_DB + 40) * psize; // the main database's root
    assertThat(file.getShort((int) names + 10) & 0xFF).as("a leaf").isEqualTo(2);
    int upper = file.getShort((int) names + 14) & 0xFFFF;
    Map<String, Integer> outcomes = new TreeMap<>();
    for (long at = names + upper; at < names + psize; at++) {
      for (int bit = 0; bit < 8; bit++) {
        String ctx = "bit " + bit + " at " + at;
        flip(data, at, bit);
        Salvaged s = salvage(dir);
        flip(data, at, bit);
        List<Got> renamed = new ArrayList<>();
        for (Got g : s.entries()) {
          if (!java.util.Objects.equals(g.keyspace(), w.spaces().get(g.key()))) {
            renamed.add(g);
          }
        }
        if (renamed.isEmpty()) {
          assertHonest(w, s, ctx);
          outcomes.merge(s.entries().size() + " entries", 1, Integer::sum);
          continue;
        }
        // The blind spot: "ks" read as another valid name, one bit off; the entries are exact.
        String other = renamed.get(0).keyspace();
        assertThat(other).as(ctx).isNotNull().hasSize(KS.length()).isNotEqualTo(KS);
        assertThat(Integer.bitCount((other.charAt(0) ^ 'k') | (other.charAt(1) ^ 's') << 8))
            .as(ctx)
            .isEqualTo(1);
        assertThat(renamed).as(ctx).hasSize(10).allMatch(g -> g.keyspace().equals(other));
        for (Got g : renamed) {
          assertThat(w.spaces().get(g.key())).as(ctx).isEqualTo(KS);
          assertThat(g.value()).as(ctx).isEqualTo(w.values().get(g.key()));
        }
        outcomes.merge("renamed", 1, Integer::sum);
      }
    }
    System.out.println("salvage after one flipped bit in the list of keyspaces: " + outcomes);
    assertThat(outcomes).containsKey("30 entries");
  }

  /**
   * A flipped bit in each value in turn (in the leaf or in its overflow pages): exactly that entry
   * is lost, 29 of 30 come back, and one region names it, its keyspace and the file.
   */
  @Test
  void salvage_flippedBitInAValue_losesExactlyThatEntry_29of30() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    Random r = new Random(SEED);
    for (Map.Entry<String, byte[]> e : w.values().entrySet()) {
      byte[] v = e.getValue();
      int into = r.nextInt(v.length);
      int bit = r.nextInt(8);
      List<Long> at = flipValue(data, v, into, bit);
      String ctx = e.getKey() + ": bit " + bit + " at " + at + " (seed " + SEED + ")";
      Salvaged s = salvage(dir);
      assertHonest(w, s, ctx);
      assertThat(s.entries()).as(ctx).hasSize(KEYS - 1);
      assertThat(s.byKey()).as(ctx).doesNotContainKey(e.getKey());
      assertThat(s.damage()).as(ctx).hasSize(1);
      DamagedRegion d = s.damage().get(0);
      assertThat(d.file()).as(ctx).isEqualTo(data.toRealPath());
      assertThat(d.keyspace()).as(ctx).isEqualTo(w.spaces().get(e.getKey()));
      assertThat(d.lostEntries()).as(ctx).isEqualTo(1);
      assertThat(d.lostKeys().contains(b(e.getKey()))).as(ctx + ": " + d.describe()).isTrue();
      assertThat(d.problem()).as(ctx).contains("CRC32C");
      if (v.length < 1000) { // inline: the region is the node, value included
        assertThat(at)
            .as(ctx + ": " + d.describe())
            .anyMatch(x -> x >= d.offset() && x < d.offset() + d.length());
      }
      try (Store ro = Stores.open(Lmdb.config(dir).readOnly(true).build())) {
        assertThatThrownBy(ro::verify)
            .as(ctx)
            .isInstanceOfSatisfying(
                StoreCorruptedException.class,
                c -> assertThat(c.damage()).as(ctx).containsExactly(d));
      }
      flipBack(data, at, bit);
    }
  }

  // ---- verify ----

  @Test
  void verify_twoValuesDamaged_reportsBothRegions() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    for (String key : List.of("own-03", "ks-25")) {
      flipValue(data, w.values().get(key), 10, 2);
    }
    try (Store s = Lmdb.open(dir)) {
      assertThatThrownBy(s::verify)
          .isInstanceOfSatisfying(
              StoreCorruptedException.class,
              c -> {
                assertThat(c.damage()).hasSize(2);
                assertThat(c.damage()).anyMatch(d -> covers(d, null, "own-03"));
                assertThat(c.damage()).anyMatch(d -> covers(d, KS, "ks-25"));
                assertThat(c.getMessage()).contains("CRC32C").contains("2 damaged regions");
              });
    }
  }

  /**
   * A leaf page's header zeroed (the page walk stops there; nothing says what the page held) and a
   * value in another page: verify() reports both, the page with the entries it held.
   */
  @Test
  void verify_damagedPageAndDamagedValue_reportsBothRegions() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    int psize = pageSize(data);
    long page = liveCopy(dir, data, "own-10", w.values().get("own-10")) / psize;
    Salvaged intact = salvage(dir);
    write(data, page * psize, new byte[16]); // the page's header: number, type, bounds
    flipValue(data, w.values().get("ks-25"), 10, 2);
    Salvaged s = salvage(dir);
    assertHonest(w, s, "page " + page + " and ks-25");
    int inPage = intact.entries().size() - s.entries().size() - 1;
    assertThat(inPage).as("entries of the damaged page").isPositive();
    try (Store ro = Stores.open(Lmdb.config(dir).readOnly(true).build())) {
      assertThatThrownBy(ro::verify)
          .isInstanceOfSatisfying(
              StoreCorruptedException.class,
              c -> {
                assertThat(c.getMessage()).contains("page " + page + " says it is page 0");
                assertThat(c.damage()).hasSize(2).containsExactlyInAnyOrderElementsOf(s.damage());
                assertThat(c.damage())
                    .anyMatch(
                        d ->
                            d.offset() == page * psize
                                && d.lostEntries() == inPage
                                && d.lostKeys().contains(b("own-10")));
                assertThat(c.damage()).anyMatch(d -> covers(d, KS, "ks-25"));
              });
    }
  }

  // ---- crash images, writers ----

  /**
   * A child writes batches over the store's keys and keyspaces a, b and c (durability sync) and is
   * killed with SIGKILL: the crash image salvages without damage, every keyspace at the same last
   * batch, at least the last acknowledged one. Salvage changes nothing in the directory.
   */
  @Test
  void salvage_crashImageOfCrossKeyspaceBatches_hasNoDamageAndEveryAcknowledgedBatch()
      throws Exception {
    Path dir = tmp.resolve("store");
    long acked = -1;
    try (ChildProcess c =
        ChildProcess.java(LmdbChildMain.class, "batches", dir.toString())
            .jvmOptions("-Xmx128m")
            .start()) {
      Duration wait = Duration.ofMinutes(5);
      for (String line = c.readLine(wait); line != null && acked < 30; line = c.readLine(wait)) {
        if (line.startsWith("ACKED ")) {
          acked = Long.parseLong(line.substring(6));
        }
      }
      assertThat(acked).as(c.describe()).isEqualTo(30);
      assertThatThrownBy(() -> salvage(dir))
          .as("salvage beside the writer")
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("open for writing in another process");
      c.kill();
    }
    Map<String, String> before = files(dir);
    Salvaged s = salvage(dir);
    assertThat(files(dir)).isEqualTo(before);
    assertThat(s.damage()).isEmpty();
    Map<String, Map<String, byte[]>> spaces = new TreeMap<>();
    for (Got g : s.entries()) {
      byte[] prev =
          spaces
              .computeIfAbsent(String.valueOf(g.keyspace()), k -> new TreeMap<>())
              .put(g.key(), g.value());
      assertThat(prev).as("%s handed over once", g).isNull();
    }
    assertThat(spaces.keySet()).containsExactly("a", "b", "c", "null");
    long n = Long.parseLong(Lmdb.s(spaces.get("null").get("n")));
    assertThat(n).isGreaterThanOrEqualTo(acked);
    assertThat(Lmdb.s(spaces.get("a").get("n"))).isEqualTo(String.valueOf(n));
    assertThat(Lmdb.s(spaces.get("b").get("n"))).isEqualTo(String.valueOf(n));
    assertThat(spaces.get("c")).hasSize((int) (n + 1) * 100);
  }

  /**
   * A child commits puts (some in overflow pages) and deletes without fsync until killed: the crash
   * image salvages without damage to exactly what a read-only open reads.
   */
  @Test
  void salvage_crashImageOfChurningWriter_equalsWhatTheStoreReads() throws Exception {
    Path dir = tmp.resolve("store");
    try (ChildProcess c =
        ChildProcess.java(LmdbChildMain.class, "churn", dir.toString())
            .jvmOptions("-Xmx128m")
            .start()) {
      assertThat(c.readLine(Duration.ofMinutes(2))).as(c.describe()).isEqualTo("READY");
      List<String> names = names(dir);
      assertThatThrownBy(() -> salvage(dir)).isInstanceOf(StoreLockedException.class);
      assertThat(names(dir)).isEqualTo(names);
      c.kill();
    }
    Map<String, String> before = files(dir);
    Salvaged s = salvage(dir);
    assertThat(files(dir)).isEqualTo(before);
    assertThat(s.damage()).isEmpty();
    Map<String, byte[]> read = new TreeMap<>();
    try (Store ro = Stores.open(Lmdb.config(dir).readOnly(true).build())) {
      ro.forEach(KeyRange.all(), e -> read.put(Lmdb.s(e.key()), e.value()));
    }
    assertThat(read).hasSizeGreaterThan(100);
    Map<String, byte[]> got = new TreeMap<>();
    for (Got g : s.entries()) {
      assertThat(g.keyspace()).isNull();
      assertThat(got.put(g.key(), g.value())).as("%s once", g.key()).isNull();
    }
    assertThat(got.keySet()).isEqualTo(read.keySet());
    for (Map.Entry<String, byte[]> e : read.entrySet()) {
      assertThat(got.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
    }
  }

  /**
   * A store open in this JVM is refused, nothing is created, and the store keeps its lock against
   * other processes: closing a channel on kv4j.lock in this JVM would drop the JVM's own lock on it
   * (POSIX locks belong to the process), so salvage must not open it then.
   */
  @Test
  void salvage_storeOpenInThisJvm_isRefusedAndKeepsTheStoresLock() throws Exception {
    Path dir = tmp.resolve("store");
    write30(dir);
    try (Store s = Lmdb.open(dir)) {
      List<String> names = names(dir);
      assertThatThrownBy(() -> salvage(dir))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("open in this JVM");
      assertThat(names(dir)).isEqualTo(names);
      try (ChildProcess c =
          ChildProcess.java(LmdbChildMain.class, "open", dir.toString())
              .jvmOptions("-Xmx64m")
              .start()) {
        c.assertSucceeded(Duration.ofMinutes(2));
        assertThat(c.stdoutLines())
            .as("another process opening the store: %s", c.describe())
            .anyMatch(l -> l.startsWith("LOCKED"));
      }
      s.put(b("after"), b("still writable"));
    }
    assertThat(salvage(dir).entries()).hasSize(KEYS + 1);
  }

  // ---- a larger store, stale versions in free pages ----

  /**
   * The damage test's store (3,000 keys, every 17th deleted, some values in overflow pages, written
   * in 16 commits so free pages hold old versions): intact it salvages whole; with one bit flipped
   * or 4 KiB zeroed at seeded places, salvage never hands over a deleted key or a wrong value, and
   * accounts for every key it does not hand over.
   */
  @Test
  void salvage_largerStoreWithDeletes_neverReturnsDeletedOrStaleEntries() throws Exception {
    Path dir = tmp.resolve("store");
    LmdbDamageMain.write(dir);
    Written w = damageStore();
    Salvaged intact = salvage(dir);
    assertThat(intact.damage()).isEmpty();
    assertThat(intact.entries()).hasSize(w.values().size());
    assertHonest(w, intact, "intact");
    Path data = dir.resolve("data.mdb");
    long used = usedBytes(data);
    Random r = new Random(SEED);
    for (int round = 0; round < 300; round++) {
      long at = r.nextLong(used);
      String ctx = "round " + round + " at " + at + " (seed " + SEED + ")";
      if (round % 10 == 9) {
        byte[] saved = read(data, at, 4096);
        write(data, at, new byte[saved.length]);
        assertHonest(w, salvage(dir), "zero 4 KiB, " + ctx);
        write(data, at, saved);
      } else {
        int bit = r.nextInt(8);
        flip(data, at, bit);
        assertHonest(w, salvage(dir), "bit " + bit + ", " + ctx);
        flip(data, at, bit);
      }
    }
  }

  /**
   * Each of the 5 low bits of every child pointer of the 3,000-key store's branch pages flipped in
   * turn (most land on other pages in use or free), then each pointer rewritten to a free page that
   * holds an older copy of its own leaf (deleted keys among them): salvage never follows a pointer
   * into a free page or onto a page that is not the pointer's, so it never hands over a deleted key
   * or an older value; the subtree the pointer led to is reported lost with its key range and
   * count.
   */
  @Test
  void salvage_damagedBranchPointers_neverLeadToFreePagesOrOtherPages() throws Exception {
    Path dir = tmp.resolve("store");
    LmdbDamageMain.write(dir);
    Written w = damageStore();
    Path data = dir.resolve("data.mdb");
    int psize = pageSize(data);
    ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(data)).order(ByteOrder.LITTLE_ENDIAN);
    List<Long> pointers = new ArrayList<>(); // file offsets of child page numbers
    for (long page : branchPages(file, psize, ownRoot(file, psize))) {
      int lower = file.getShort((int) (page * psize) + 12) & 0xFFFF;
      for (int slot = 16; slot < lower; slot += 2) {
        pointers.add(page * psize + (file.getShort((int) (page * psize) + slot) & 0xFFFF));
      }
    }
    assertThat(pointers).as("child pointers").hasSizeGreaterThan(50);
    int lostSubtrees = 0;
    for (long at : pointers) {
      for (int bit = 0; bit < 5; bit++) {
        String ctx = "bit " + bit + " of the child pointer at " + at;
        flip(data, at, bit);
        Salvaged s = salvage(dir);
        flip(data, at, bit);
        assertHonest(w, s, ctx);
        if (s.entries().size() < w.values().size()) {
          lostSubtrees++;
          assertThat(s.damage())
              .as(ctx)
              .anyMatch(d -> d.lostEntries() > 0 && d.lostKeys() != null && d.offset() != -1);
        }
      }
    }
    assertThat(lostSubtrees).as("flips that redirected a pointer").isPositive();
    // A pointer rewritten to a free page holding an older copy of its own leaf (deleted keys in
    // it): the copy fits the pointer's key range, only the free-page list tells it apart.
    List<Long> leaves = new ArrayList<>();
    for (long page : branchPages(file, psize, ownRoot(file, psize))) {
      leaves.addAll(children(file, psize, page));
    }
    int redirected = 0;
    for (long page : branchPages(file, psize, ownRoot(file, psize))) {
      int lower = file.getShort((int) (page * psize) + 12) & 0xFFFF;
      for (int slot = 16; slot < lower; slot += 2) {
        int node = (int) (page * psize) + (file.getShort((int) (page * psize) + slot) & 0xFFFF);
        long leaf = childOf(file, node);
        long stale = olderCopy(file, psize, leaf, leaves);
        if (stale < 0) {
          continue;
        }
        String ctx = "the pointer at " + node + " to leaf " + leaf + " set to free page " + stale;
        byte[] saved = read(data, node, 6);
        ByteBuffer to = ByteBuffer.allocate(6).order(ByteOrder.LITTLE_ENDIAN);
        to.putShort((short) stale)
            .putShort((short) (stale >>> 16))
            .putShort((short) (stale >>> 32));
        write(data, node, to.array());
        Salvaged s = salvage(dir);
        write(data, node, saved);
        assertHonest(w, s, ctx);
        assertThat(s.damage())
            .as(ctx)
            .anyMatch(d -> d.problem().contains("refers to page " + stale + ", a page the free"));
        redirected++;
      }
    }
    assertThat(redirected).as("leaves with an older copy in a free page").isGreaterThan(10);
  }

  private static long childOf(ByteBuffer file, int node) {
    return (file.getShort(node) & 0xFFFFL)
        | (file.getShort(node + 2) & 0xFFFFL) << 16
        | (file.getShort(node + 4) & 0xFFFFL) << 32;
  }

  private static List<Long> children(ByteBuffer file, int psize, long branch) {
    List<Long> out = new ArrayList<>();
    int at = (int) (branch * psize);
    int lower = file.getShort(at + 12) & 0xFFFF;
    for (int slot = 16; slot < lower; slot += 2) {
      out.add(childOf(file, at + (file.getShort(at + slot) & 0xFFFF)));
    }
    return out;
  }

  /**
   * A leaf page outside the tree ({@code leaves} are the tree's) whose keys overlap those of {@code
   * leaf}: an older copy of it, left in a free page. -1 if there is none.
   */
  private static long olderCopy(ByteBuffer file, int psize, long leaf, List<Long> leaves) {
    byte[][] span = keySpan(file, psize, leaf);
    for (long page = 2; (page + 1) * psize <= file.capacity(); page++) {
      int at = (int) (page * psize);
      if (leaves.contains(page)
          || file.getLong(at) != page
          || (file.getShort(at + 10) & 0x7F) != 2) {
        continue;
      }
      byte[][] other = keySpan(file, psize, page);
      if (other != null
          && Arrays.compareUnsigned(other[0], span[1]) <= 0
          && Arrays.compareUnsigned(other[1], span[0]) >= 0
          && new String(other[0], StandardCharsets.UTF_8).startsWith("key-")) {
        return page;
      }
    }
    return -1;
  }

  /** The first and last key of a leaf page, or null if it has no node. */
  private static byte[][] keySpan(ByteBuffer file, int psize, long page) {
    int at = (int) (page * psize);
    int lower = file.getShort(at + 12) & 0xFFFF;
    if (lower <= 16 || lower > psize) {
      return null;
    }
    byte[][] span = new byte[2][];
    for (int k = 0; k < 2; k++) {
      int slot = k == 0 ? 16 : lower - 2;
      int node = at + (file.getShort(at + slot) & 0xFFFF);
      int ksize = file.getShort(node + 6) & 0xFFFF;
      span[k] = new byte[Math.min(ksize, 64)];
      file.get(node + 8, span[k]);
    }
    return span;
  }

  /** The 3,000-key damage-test store as written by {@link LmdbDamageMain#write}. */
  private static Written damageStore() {
    Map<String, byte[]> values = new LinkedHashMap<>();
    Map<String, String> spaces = new LinkedHashMap<>();
    Map<String, byte[]> earlier = new LinkedHashMap<>();
    for (int i = 0; i < LmdbDamageMain.KEYS; i++) {
      String k = new String(LmdbDamageMain.key(i), StandardCharsets.UTF_8);
      spaces.put(k, null);
      if (LmdbDamageMain.deleted(i)) {
        earlier.put(k, LmdbDamageMain.value(i));
      } else {
        values.put(k, LmdbDamageMain.value(i));
      }
    }
    return new Written(values, spaces, earlier);
  }

  /** The root page of the database of the store's own keys (format 4), read from the file. */
  private static long ownRoot(ByteBuffer file, int psize) {
    int meta = file.getLong(MetaPages.TXNID) > file.getLong(psize + MetaPages.TXNID) ? 0 : psize;
    int names = (int) (file.getLong(meta + MetaPages.MAIN_DB + 40) * psize);
    int lower = file.getShort(names + 12) & 0xFFFF;
    for (int slot = 16; slot < lower; slot += 2) {
      int node = names + (file.getShort(names + slot) & 0xFFFF);
      int ksize = file.getShort(node + 6) & 0xFFFF;
      byte[] key = new byte[ksize];
      file.get(node + 8, key);
      if (Arrays.equals(key, b(Keyspaces.OWN))) {
        return file.getLong(node + 8 + ksize + 40);
      }
    }
    throw new AssertionError("no database 'default'");
  }

  /** The branch pages of the tree under {@code root}. */
  private static List<Long> branchPages(ByteBuffer file, int psize, long root) {
    List<Long> out = new ArrayList<>();
    List<Long> level = List.of(root);
    while (!level.isEmpty()) {
      List<Long> next = new ArrayList<>();
      for (long page : level) {
        int at = (int) (page * psize);
        if ((file.getShort(at + 10) & 1) == 0) {
          continue; // a leaf
        }
        out.add(page);
        int lower = file.getShort(at + 12) & 0xFFFF;
        for (int slot = 16; slot < lower; slot += 2) {
          int node = at + (file.getShort(at + slot) & 0xFFFF);
          next.add(
              (file.getShort(node) & 0xFFFFL)
                  | (file.getShort(node + 2) & 0xFFFFL) << 16
                  | (file.getShort(node + 4) & 0xFFFFL) << 32);
        }
      }
      level = next;
    }
    return out;
  }

  // ---- checksums off ----

  /**
   * Without checksums (format 3) salvage checks structure only: a flipped bit in a value comes back
   * as a different value, unreported (the README says so); a damaged page is still reported and the
   * entries of other pages come back exact.
   */
  @Test
  void salvage_withoutChecksums_reportsDamagedPagesButCannotTellValues() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir, "checksums", "false");
    Path data = dir.resolve("data.mdb");
    List<Long> at = flipValue(data, w.values().get("own-04"), 7, 1);
    Salvaged s = salvage(dir);
    assertThat(s.damage()).isEmpty();
    assertThat(s.entries()).hasSize(KEYS);
    assertThat(s.byKey().get("own-04").value()).isNotEqualTo(w.values().get("own-04"));
    flipBack(data, at, 1);
    int psize = pageSize(data);
    long page = liveCopy(dir, data, "own-15", w.values().get("own-15")) / psize;
    flip(data, page * psize + 12, 5); // the leaf's lower bound of free space: its node count
    Salvaged p = salvage(dir);
    assertHonest(w, p, "page " + page + " header");
    assertThat(p.damage()).isNotEmpty().allMatch(d -> d.offset() == page * psize);
  }

  // ---- StoreCopy ----

  @Test
  void storeCopySalvage_intoFreshLmdbStore_writesEveryIntactEntry() throws Exception {
    Path dir = tmp.resolve("store");
    Written w = write30(dir);
    Path data = dir.resolve("data.mdb");
    flipValue(data, w.values().get("ks-22"), 3, 6);
    Map<String, String> before = files(dir);
    try (Store to = Lmdb.open(tmp.resolve("rescued"))) {
      StoreCopy.Salvaged r = StoreCopy.salvage(config(dir), to, StoreCopy.Options.defaults());
      assertThat(r.entries()).isEqualTo(KEYS - 1);
      assertThat(r.keyspaces()).containsExactly(KS);
      assertThat(r.damage()).hasSize(1);
      assertThat(covers(r.damage().get(0), KS, "ks-22")).isTrue();
      try (Store ks = to.keyspace(KS)) {
        for (Map.Entry<String, byte[]> e : w.values().entrySet()) {
          Store in = w.spaces().get(e.getKey()) == null ? to : ks;
          byte[] expected = e.getKey().equals("ks-22") ? null : e.getValue();
          assertThat(in.get(b(e.getKey()))).as(e.getKey()).isEqualTo(expected);
        }
        assertThat(to.stats().keyCount()).isEqualTo(20);
        assertThat(ks.stats().keyCount()).isEqualTo(9);
      }
      to.verify();
    }
    assertThat(files(dir)).isEqualTo(before);
  }

  // ---- checks ----

  /**
   * What salvage handed over was written, under that key and keyspace, each once: the key's last
   * value, or (as the salvage contract allows where a damaged region held the overwrite or the
   * deletion) an earlier one of a key a reported region covers. Every key not handed over lies in a
   * region of data.mdb of its keyspace (or of unknown keyspace) whose lost keys hold it (or are
   * unknown); when every region counts its loss, the counts add up.
   */
  private static void assertHonest(Written w, Salvaged s, String ctx) {
    StringBuilder regions = new StringBuilder();
    for (DamagedRegion d : s.damage()) {
      regions.append("\n  ").append(d.describe());
      assertThat(d.file().getFileName().toString()).as(ctx).isIn("data.mdb", "kv4j.store");
    }
    Map<String, Got> seen = new TreeMap<>();
    for (Got g : s.entries()) {
      assertThat(w.spaces())
          .as("%s: handed over a key never written: %s", ctx, g.key())
          .containsKey(g.key());
      assertThat(g.keyspace())
          .as("%s: the keyspace of %s", ctx, g.key())
          .isEqualTo(w.spaces().get(g.key()));
      assertThat(seen.put(g.key(), g)).as("%s: %s handed over twice", ctx, g.key()).isNull();
      if (!Arrays.equals(g.value(), w.values().get(g.key()))) {
        assertThat(g.value())
            .as("%s: the value of %s is neither its last nor an earlier one", ctx, g.key())
            .isEqualTo(w.earlier().get(g.key()));
        assertThat(s.damage())
            .as(
                "%s: %s came back with an earlier value, no region covers it:%s",
                ctx, g.key(), regions)
            .anyMatch(d -> covers(d, g.keyspace(), g.key()));
      }
    }
    List<String> missing = new ArrayList<>();
    for (String k : w.values().keySet()) {
      if (!seen.containsKey(k)) {
        missing.add(k);
      }
    }
    for (String k : missing) {
      assertThat(s.damage())
          .as("%s: lost key %s lies in a reported region:%s", ctx, k, regions)
          .anyMatch(d -> covers(d, w.spaces().get(k), k));
    }
    if (s.damage().stream().allMatch(d -> d.lostEntries() >= 0)) {
      long counted = s.damage().stream().mapToLong(DamagedRegion::lostEntries).sum();
      assertThat(counted)
          .as("%s: lost entries counted vs missing %s:%s", ctx, missing, regions)
          .isEqualTo(missing.size());
    } else {
      long known = s.damage().stream().mapToLong(d -> Math.max(d.lostEntries(), 0)).sum();
      assertThat(known)
          .as("%s: known losses vs missing:%s", ctx, regions)
          .isLessThanOrEqualTo(missing.size());
    }
  }

  private static boolean covers(DamagedRegion d, String keyspace, String key) {
    return (d.keyspace() == null || d.keyspace().equals(keyspace))
        && d.lostEntries() != 0
        && (d.lostKeys() == null || d.lostKeys().contains(b(key)));
  }

  // ---- files ----

  /** Flips one bit of every copy of a value in the file (pages that are free hold old copies). */
  private static List<Long> flipValue(Path data, byte[] value, int into, int bit)
      throws IOException {
    byte[] file = Files.readAllBytes(data);
    List<Long> at = new ArrayList<>();
    for (int i = indexOf(file, value, 0); i >= 0; i = indexOf(file, value, i + 1)) {
      at.add((long) i + into);
    }
    assertThat(at).as("the value is in the file").isNotEmpty();
    for (long a : at) {
      flip(data, a, bit);
    }
    return at;
  }

  private static void flipBack(Path data, List<Long> at, int bit) throws IOException {
    for (long a : at) {
      flip(data, a, bit);
    }
  }

  /**
   * Where the copy of a value that the store reads lies: the copy whose damage changes what salvage
   * hands over for the key.
   */
  private static long liveCopy(Path dir, Path data, String key, byte[] value) throws IOException {
    byte[] file = Files.readAllBytes(data);
    for (int i = indexOf(file, value, 0); i >= 0; i = indexOf(file, value, i + 1)) {
      flip(data, i, 0);
      Got got = salvage(dir).byKey().get(key);
      flip(data, i, 0);
      if (got == null || !Arrays.equals(got.value(), value)) {
        return i;
      }
    }
    throw new AssertionError("no copy of " + key + "'s value is the one read");
  }

  /** Every file of the directory with the SHA-256 of its bytes. */
  private static Map<String, String> files(Path dir) throws IOException {
    Map<String, String> m = new TreeMap<>();
    try (Stream<Path> l = Files.list(dir)) {
      for (Path p : l.toList()) {
        m.put(p.getFileName().toString(), sha256(Files.readAllBytes(p)));
      }
    }
    return m;
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> l = Files.list(dir)) {
      return l.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** The bytes of pages 0..mm_last_pg of the current meta page. */
  private static long usedBytes(Path data) throws IOException {
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
      MetaPages m = MetaPages.read(ch, data, "test");
      return m.requiredSize();
    }
  }

  private static int pageSize(Path data) throws IOException {
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
      return MetaPages.read(ch, data, "test").pageSize();
    }
  }

  private static void flip(Path f, long at, int bit) throws IOException {
    byte[] b = read(f, at, 1);
    b[0] ^= (byte) (1 << bit);
    write(f, at, b);
  }

  private static byte[] read(Path f, long at, int len) throws IOException {
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.allocate((int) Math.min(len, ch.size() - at));
      while (b.hasRemaining() && ch.read(b, at + b.position()) >= 0) {
        // read on
      }
      return b.array();
    }
  }

  private static void write(Path f, long at, byte[] bytes) throws IOException {
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      while (b.hasRemaining()) {
        ch.write(b, at + b.position());
      }
    }
  }

  private static int indexOf(byte[] hay, byte[] needle, int from) {
    outer:
    for (int i = from; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
