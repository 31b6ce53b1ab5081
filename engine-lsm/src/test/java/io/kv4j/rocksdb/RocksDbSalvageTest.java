package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.DamagedRegion;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
        if (back < 30) {
          assertThat(got.damage())
              .as("%s: keys were lost, so damage is reported", what)
              .isNotEmpty()
              .allSatisfy(d -> assertThat(d.file().getFileName()).isEqualTo(target.getFileName()));
        }
        histogram.merge(back, 1, Integer::sum);
      }
    }
    System.out.println("keys salvaged of 30 -> runs: " + histogram);
  }

  static String key(DamagedRegion d) {
    return Objects.toString(d.keyspace()) + KeyRange.all();
  }
}
