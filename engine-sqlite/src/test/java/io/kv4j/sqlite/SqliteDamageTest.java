package io.kv4j.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The damage contract (TCK rule group 12) applied by the engine's own tests, in process: SQLite
 * reports damage with error codes and kv4j checks the file's length before SQLite maps it, so no
 * case can crash the JVM. A store of 20,000 keys (every 7th then deleted) is written with {@code
 * SYNC} and closed cleanly once; each case damages a copy of it.
 */
class SqliteDamageTest {
  private static final int KEYS = 20_000;
  private static final long DATA_SEED = 20;

  @TempDir static Path shared;
  private static Path pristine;
  private static final TreeMap<String, byte[]> MODEL = new TreeMap<>();
  private static final List<byte[]> DELETED = new java.util.ArrayList<>();

  @TempDir Path tmp;

  private static StoreConfig config(Path dir) {
    return StoreConfig.builder("sqlite").path(dir).durability(Durability.SYNC).build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(StandardCharsets.US_ASCII);
  }

  @BeforeAll
  static void writeStore() {
    pristine = shared.resolve("pristine");
    SplittableRandom rnd = new SplittableRandom(DATA_SEED);
    try (Store s = Stores.open(config(pristine))) {
      assertThat(s.info().features()).contains(Feature.CHECKSUMS);
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < KEYS; i++) {
        byte[] v = new byte[40 + rnd.nextInt(160)];
        rnd.nextBytes(v);
        batch.put(key(i), v);
        MODEL.put(new String(key(i), StandardCharsets.US_ASCII), v);
        if (batch.size() == 500) {
          s.write(batch);
          batch = new WriteBatch();
        }
      }
      for (int i = 0; i < KEYS; i += 7) {
        batch.delete(key(i));
        DELETED.add(key(i));
        MODEL.remove(new String(key(i), StandardCharsets.US_ASCII));
      }
      s.write(batch);
    }
  }

  private Path copy(String name) throws IOException {
    Path d = tmp.resolve(name);
    Files.createDirectories(d);
    try (Stream<Path> files = Files.list(pristine)) {
      for (Path f : files.toList()) {
        Files.copy(f, d.resolve(f.getFileName()));
      }
    }
    return d;
  }

  private static Map<String, Long> sizes(Path dir) throws IOException {
    Map<String, Long> m = new HashMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        m.put(f.getFileName().toString(), Files.size(f));
      }
    }
    return m;
  }

  private static List<String> regularFiles() throws IOException {
    try (Stream<Path> files = Files.list(pristine)) {
      return files.map(f -> f.getFileName().toString()).sorted().toList();
    }
  }

  /** What a case ended in, for messages. */
  enum Outcome {
    OPEN_REFUSED,
    ALL_EXACT,
    DAMAGE_REPORTED
  }

  /**
   * Opens a damaged store read-write with the same config and checks the contract's outcomes: a
   * refused open that changed no file's length, or exact values, corruption reported, and nulls or
   * missing scan entries only when a full scan or verify() reports corruption.
   */
  private static Outcome checkContract(Path dir, String what) throws IOException {
    Map<String, Long> before = sizes(dir);
    Store s;
    try {
      s = Stores.open(config(dir));
    } catch (StoreException e) {
      Map<String, Long> after = sizes(dir);
      for (Map.Entry<String, Long> f : before.entrySet()) {
        assertThat(after.get(f.getKey()))
            .as("%s: a failed open (%s) must not delete or shorten %s", what, e, f.getKey())
            .isNotNull()
            .isGreaterThanOrEqualTo(f.getValue());
      }
      return Outcome.OPEN_REFUSED;
    }
    try (s) {
      boolean lost = false;
      boolean reported = false;
      for (Map.Entry<String, byte[]> e : MODEL.entrySet()) {
        try {
          byte[] v = s.get(e.getKey().getBytes(StandardCharsets.US_ASCII));
          if (v == null) {
            lost = true;
          } else {
            assertThat(v)
                .as("%s: get(%s) returned a wrong value", what, e.getKey())
                .isEqualTo(e.getValue());
          }
        } catch (StoreCorruptedException ex) {
          reported = true;
        }
      }
      for (byte[] k : DELETED) {
        try {
          assertThat(s.get(k)).as("%s: deleted key %s read a value", what, new String(k)).isNull();
        } catch (StoreCorruptedException ex) {
          reported = true;
        }
      }
      boolean scanReported = false;
      int seen = 0;
      try (Cursor c = s.scan(KeyRange.all())) {
        while (c.hasNext()) {
          Entry e = c.next();
          String k = new String(e.key(), StandardCharsets.US_ASCII);
          byte[] want = MODEL.get(k);
          assertThat(want).as("%s: scan returned key %s that is not stored", what, k).isNotNull();
          assertThat(e.value())
              .as("%s: scan returned a wrong value for %s", what, k)
              .isEqualTo(want);
          seen++;
        }
      } catch (StoreCorruptedException ex) {
        scanReported = true;
      }
      if (!scanReported && seen < MODEL.size()) {
        lost = true;
      }
      boolean verifyReported = false;
      try {
        s.verify();
      } catch (StoreCorruptedException ex) {
        verifyReported = true;
      }
      if (lost) {
        assertThat(scanReported || verifyReported)
            .as("%s: keys read as absent, but neither a full scan nor verify() reported it", what)
            .isTrue();
      }
      return reported || scanReported || verifyReported
          ? Outcome.DAMAGE_REPORTED
          : Outcome.ALL_EXACT;
    }
  }

  private static void truncate(Path f, long length) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.setLength(length);
    }
  }

  private static void flipBit(Path f, long offset, int bit) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.seek(offset);
      int b = raf.read();
      raf.seek(offset);
      raf.write(b ^ (1 << bit));
    }
  }

  @Test
  void cleanClose_leavesNoWalOrShm_soThereIsNoWalToDamage() throws IOException {
    assertThat(regularFiles())
        .containsExactlyInAnyOrder("kv.sqlite", StoreDirectory.IDENTITY_FILE, "kv4j.lock");
  }

  @Test
  void truncateToHalf_eachFile_followsContract() throws IOException {
    for (String name : regularFiles()) {
      Path d = copy("half-" + name);
      Path f = d.resolve(name);
      truncate(f, Files.size(f) / 2);
      Outcome o = checkContract(d, "truncate " + name + " to half");
      if (name.equals("kv.sqlite")) {
        assertThat(o)
            .as("the data file cut in half is refused at open")
            .isEqualTo(Outcome.OPEN_REFUSED);
      }
    }
  }

  @Test
  void truncateDataFileToHalf_failsOpenNamingFileAndOffset() throws IOException {
    Path d = copy("half");
    Path f = d.resolve("kv.sqlite");
    long half = Files.size(f) / 2;
    truncate(f, half);
    try (Store s = Stores.open(config(d))) {
      fail("opened a store whose data file was cut in half: " + s);
    } catch (StoreCorruptedException e) {
      assertThat(e.file()).isEqualTo(f.toRealPath());
      assertThat(e.offset()).isEqualTo(half);
      assertThat(e.getMessage()).contains("cut short").contains("sqlite");
    }
    assertThat(Files.size(f)).isEqualTo(half);
  }

  @Test
  void truncateToZero_eachFile_followsContract_dataFileRefused() throws IOException {
    for (String name : regularFiles()) {
      Path d = copy("zero-" + name);
      truncate(d.resolve(name), 0);
      Outcome o = checkContract(d, "truncate " + name + " to 0");
      if (name.equals("kv.sqlite")) {
        assertThat(o).as("an empty data file is refused").isEqualTo(Outcome.OPEN_REFUSED);
      }
    }
  }

  @Test
  void delete_eachFile_followsContract_dataFileRefused() throws IOException {
    for (String name : regularFiles()) {
      Path d = copy("delete-" + name);
      Files.delete(d.resolve(name));
      Outcome o = checkContract(d, "delete " + name);
      if (name.equals("kv.sqlite")) {
        assertThat(o).as("a missing data file is refused").isEqualTo(Outcome.OPEN_REFUSED);
        assertThat(d.resolve(name)).as("nothing re-created the data file").doesNotExist();
      }
    }
  }

  @Test
  void flipOneBit_seededOffsetsInEachFile_followsContract() throws IOException {
    Map<Outcome, Integer> outcomes = new java.util.EnumMap<>(Outcome.class);
    for (String name : regularFiles()) {
      long size = Files.size(pristine.resolve(name));
      int cases = name.equals("kv.sqlite") ? 30 : 3;
      for (int seed = 1; seed <= cases; seed++) {
        SplittableRandom rnd = new SplittableRandom(seed);
        // The middle of the file, then seeded offsets around it (middle half of the file).
        long offset = seed == 1 ? size / 2 : size / 4 + rnd.nextLong(Math.max(1, size / 2));
        int bit = rnd.nextInt(8);
        Path d = copy("flip-" + name + "-" + seed);
        flipBit(d.resolve(name), offset, bit);
        Outcome o =
            checkContract(
                d,
                "flip bit "
                    + bit
                    + " at offset "
                    + offset
                    + " of "
                    + name
                    + " (seed "
                    + seed
                    + ")");
        if (name.equals("kv.sqlite")) {
          outcomes.merge(o, 1, Integer::sum);
        }
      }
    }
    // Most flips land in rows or index entries: reported, not silently absorbed.
    assertThat(
            outcomes.getOrDefault(Outcome.DAMAGE_REPORTED, 0)
                + outcomes.getOrDefault(Outcome.OPEN_REFUSED, 0))
        .as("flips reported among 30 in kv.sqlite: %s", outcomes)
        .isGreaterThan(15);
  }

  @Test
  void zero4KiB_middleOfEachFile_followsContract() throws IOException {
    for (String name : regularFiles()) {
      Path d = copy("zero4k-" + name);
      Path f = d.resolve(name);
      long size = Files.size(f);
      long at = Math.max(0, size / 2 - 2048);
      try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
        raf.seek(at);
        raf.write(new byte[(int) Math.min(4096, size - at)]);
      }
      Outcome o = checkContract(d, "zero 4 KiB at " + at + " of " + name);
      if (name.equals("kv.sqlite")) {
        assertThat(o).as("4 KiB of zeros in the data file").isNotEqualTo(Outcome.ALL_EXACT);
      }
    }
  }

  @Test
  void foreignStore_refusedNamingBothEngines_createsNothing() throws IOException {
    Path d = tmp.resolve("foreign");
    Files.createDirectories(d);
    Files.write(d.resolve("seg-00000001.log"), new byte[4096]); // a hashlog segment's name
    try (Store s = Stores.open(config(d))) {
      fail("opened a hashlog directory as sqlite: " + s);
    } catch (StoreCorruptedException e) {
      assertThat(e.getMessage()).contains("'hashlog'").contains("'sqlite'").contains("kv4j copy");
    }
    try (Stream<Path> files = Files.list(d)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList())
          .as("no sqlite file created beside the foreign one")
          .containsExactlyInAnyOrder("seg-00000001.log", "kv4j.lock");
    }
  }

  @Test
  void directoryReplacedByAnotherEnginesStore_refused() throws IOException {
    Path d = copy("replaced");
    try (Stream<Path> files = Files.list(d)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    // Another engine's store: its identity file names it.
    Files.writeString(d.resolve("data.mdb"), "x".repeat(8192));
    String body = "# kv4j store identity\nengine=lmdb\nformat=1\ncreated=2026-01-01T00:00:00Z\n";
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(body.getBytes(StandardCharsets.UTF_8));
    Files.writeString(
        d.resolve(StoreDirectory.IDENTITY_FILE),
        body + String.format("crc32c=%08x%n", crc.getValue()));
    Map<String, Long> before = sizes(d);
    try (Store s = Stores.open(config(d))) {
      fail("opened an lmdb store as sqlite: " + s);
    } catch (StoreCorruptedException e) {
      assertThat(e.getMessage()).contains("'lmdb'").contains("kv4j copy");
    }
    Map<String, Long> after = sizes(d);
    after.remove("kv4j.lock"); // StoreDirectory's lock, taken before it reads the identity
    assertThat(after).as("nothing created or changed but the lock file").isEqualTo(before);
  }
}
