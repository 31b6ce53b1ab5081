package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
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
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreDirectory;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HashLogProvider#salvage}: a cleanly closed 30-key store (18 keys of its own, 5 of them in
 * one batch, and 12 in keyspace {@code ks}; values of 300..599 bytes; 4 KiB segments, so sealed
 * segments with hints and a newest segment in both directories) damaged by one flipped bit at a
 * time, everywhere that matters: every byte of one record header per segment, a byte of each
 * record's header, key and value, the segment headers, the hints, the manifests and the identities.
 * Salvage never throws, never hands over a value other than the one written, loses exactly the one
 * record the bit landed in (29 of 30) and reports it as one region naming the file, the keyspace
 * and the count (the key too, where an intact hint names it), and changes no file. Intact stores
 * and kill -9 crash images salvage whole with no damage; {@code verify()} lists every damaged
 * region; {@link StoreCopy#salvage} writes the rest into a fresh store.
 */
class SalvageTest {
  private static final long SEED = 0x5a1_7a9eL;
  private static final String[] OPTIONS = {"segment-size", "4KiB", "compaction-threads", "0"};
  private static final String KS = "ks";
  private static final Duration LINE_WAIT = Duration.ofMinutes(5);

  @TempDir Path tmp;

  // ---------------------------------------------------------------- helpers

  /** What one salvage handed over ({@code "<keyspace>/<key>"}, the default keyspace empty). */
  private record Salvaged(Map<String, byte[]> entries, List<DamagedRegion> damage) {}

  private static String id(String keyspace, byte[] key) {
    return (keyspace == null ? "" : keyspace) + "/" + new String(key, StandardCharsets.UTF_8);
  }

  private static StoreConfig config(Path dir) {
    return StoreConfig.builder("hashlog").path(dir).readOnly(true).createIfMissing(false).build();
  }

  /** Salvages {@code dir}; fails on an entry handed over twice. */
  private static Salvaged salvage(Path dir) {
    Map<String, byte[]> got = new TreeMap<>();
    List<String> twice = new ArrayList<>();
    List<DamagedRegion> damage =
        new HashLogProvider()
            .salvage(
                config(dir),
                (ks, k, v) -> {
                  if (got.put(id(ks, k), v) != null) {
                    twice.add(id(ks, k));
                  }
                });
    assertThat(twice).as("entries handed over twice").isEmpty();
    return new Salvaged(got, damage);
  }

  /** Writes the 30-key store of the class comment, closes it cleanly, returns its contents. */
  private static Map<String, byte[]> write30(Path dir) {
    SplittableRandom r = new SplittableRandom(SEED);
    Map<String, byte[]> model = new TreeMap<>();
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, OPTIONS)) {
      Store ks = s.keyspace(KS);
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 30; i++) {
        byte[] k = bytes(String.format("key-%02d", i));
        byte[] v = new byte[300 + r.nextInt(300)];
        r.nextBytes(v);
        if (i >= 18) {
          ks.put(k, v);
          model.put(id(KS, k), v);
          continue;
        }
        if (i >= 5 && i < 10) {
          batch.put(k, v);
          if (i == 9) {
            s.write(batch);
          }
        } else {
          s.put(k, v);
        }
        model.put(id(null, k), v);
      }
    }
    return model;
  }

  /** Name and SHA-256 of every file under {@code dir}, directories included by name. */
  private static Map<String, String> fingerprint(Path dir) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        String name = dir.relativize(p).toString();
        if (Files.isDirectory(p)) {
          out.put(name + "/", "dir");
        } else {
          try {
            out.put(
                name,
                HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
          } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
          }
        }
      }
    }
    return out;
  }

  private static void flipBit(Path file, long offset, int bit) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ (1 << bit));
    }
  }

  /** A record of a segment file as written: where it is and whose it is. */
  private record Rec(int offset, int size, int type, String key) {}

  private static List<Rec> records(Path segment) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(segment));
    List<Rec> out = new ArrayList<>();
    for (int p = RecordCodec.FILE_HEADER; p < b.limit(); ) {
      int type = RecordCodec.type(b, p);
      int k = RecordCodec.keyLength(b, p);
      int size = (int) RecordCodec.size(b, p);
      byte[] key = new byte[k];
      b.get(RecordCodec.keyOffset(p), key);
      out.add(new Rec(p, size, type, new String(key, StandardCharsets.UTF_8)));
      p += size;
    }
    return out;
  }

  private static List<Path> segmentFiles(Path dir) throws IOException {
    List<Path> out = new ArrayList<>();
    for (int id : Recovery.list(Storage.NIO, dir).segments) {
      out.add(dir.resolve(Segment.fileName(id)));
    }
    return out;
  }

  // ---------------------------------------------------------------- one flipped bit

  /** One bit to flip, and what salvage must make of it. */
  private record Flip(Path file, long offset, int bit, String keyspace, String lostKey, Kind kind) {
    @Override
    public String toString() {
      return file.getFileName()
          + "@"
          + offset
          + "."
          + bit
          + " ("
          + kind
          + ", keyspace "
          + keyspace
          + ")";
    }
  }

  private enum Kind {
    /** Inside a put record: exactly that key is lost, in one region of one entry. */
    RECORD,
    /** Inside a batch record's header: its members are read on their own; nothing is lost. */
    BATCH_HEADER,
    /** A segment header, a hint, the manifest or the identity: a region that lost nothing. */
    NO_ENTRY
  }

  @Test
  void salvage_oneFlippedBitAnywhere_recoversEveryOtherKeyAndReportsTheRegion() throws Exception {
    Path dir = tmp.resolve("store");
    Map<String, byte[]> model = write30(dir);
    SplittableRandom r = new SplittableRandom(SEED + 1);
    List<Flip> flips = new ArrayList<>();
    int sealedWithHint = 0;
    for (String ks : new String[] {null, KS}) {
      Path d = ks == null ? dir : dir.resolve(Keyspaces.DIR_NAME).resolve(ks);
      flips.add(new Flip(Manifest.path(d), r.nextInt(32), r.nextInt(8), ks, null, Kind.NO_ENTRY));
      // In the identity's text before its checksum line: a bit there always fails the checksum,
      // where one in the checksum's hex digits may only change a letter's case (still the same
      // number, so no damage at all).
      Path identity = d.resolve(StoreDirectory.IDENTITY_FILE);
      String text = Files.readString(identity, StandardCharsets.UTF_8);
      flips.add(
          new Flip(
              identity,
              r.nextInt(text.lastIndexOf("crc32c=")),
              r.nextInt(8),
              ks,
              null,
              Kind.NO_ENTRY));
      List<Path> segs = segmentFiles(d);
      for (Path seg : segs) {
        Path hint = d.resolve(seg.getFileName().toString().replace(".log", ".hint"));
        if (Files.exists(hint)) {
          sealedWithHint++;
          for (int i = 0; i < 3; i++) {
            flips.add(
                new Flip(
                    hint,
                    r.nextInt((int) Files.size(hint)),
                    r.nextInt(8),
                    ks,
                    null,
                    Kind.NO_ENTRY));
          }
        }
        flips.add(new Flip(seg, r.nextInt(32), r.nextInt(8), ks, null, Kind.NO_ENTRY));
        List<Rec> recs = records(seg);
        Rec every = recs.get(r.nextInt(recs.size())); // every bit of one header
        for (Rec c : recs) {
          Kind kind = c.type == RecordCodec.BATCH ? Kind.BATCH_HEADER : Kind.RECORD;
          String lost = kind == Kind.RECORD ? id(ks, bytes(c.key)) : null;
          int headerBytes = c.type == RecordCodec.BATCH ? c.size : RecordCodec.RECORD_HEADER;
          List<Integer> at = new ArrayList<>();
          if (c == every) {
            for (int i = 0; i < headerBytes * 8; i++) {
              flips.add(new Flip(seg, c.offset + i / 8, i % 8, ks, lost, kind));
            }
          } else {
            at.add(c.offset + r.nextInt(headerBytes));
          }
          if (kind == Kind.RECORD) {
            int k = c.key.length();
            at.add(c.offset + RecordCodec.RECORD_HEADER + r.nextInt(k)); // the key
            int v = c.size - RecordCodec.RECORD_HEADER - k;
            at.add(c.offset + RecordCodec.RECORD_HEADER + k + r.nextInt(v)); // the value
          }
          for (int a : at) {
            flips.add(new Flip(seg, a, r.nextInt(8), ks, lost, kind));
          }
        }
      }
    }
    assertThat(sealedWithHint)
        .as("sealed segments with hints in the two directories")
        .isGreaterThan(2);
    assertThat(flips.stream().filter(f -> f.kind == Kind.BATCH_HEADER)).isNotEmpty();

    int recordFlips = 0;
    for (Flip f : flips) {
      flipBit(f.file, f.offset, f.bit);
      Map<String, String> before = fingerprint(dir);
      Salvaged s;
      try {
        s = salvage(dir);
      } catch (RuntimeException e) {
        throw new AssertionError("seed " + SEED + ", " + f + ": salvage threw", e);
      }
      assertThat(fingerprint(dir))
          .as("seed %d, %s: files after salvage", SEED, f)
          .isEqualTo(before);
      flipBit(f.file, f.offset, f.bit); // restore

      for (Map.Entry<String, byte[]> e : s.entries.entrySet()) {
        assertThat(model)
            .as("seed %d, %s: salvaged key %s was written", SEED, f, e.getKey())
            .containsKey(e.getKey());
        assertThat(e.getValue())
            .as("seed %d, %s: value of %s", SEED, f, e.getKey())
            .isEqualTo(model.get(e.getKey()));
      }
      Map<String, byte[]> expected = new TreeMap<>(model);
      if (f.lostKey != null) {
        expected.remove(f.lostKey);
      }
      assertThat(s.entries.keySet())
          .as("seed %d, %s: keys salvaged (damage %s)", SEED, f, s.damage)
          .isEqualTo(expected.keySet());
      assertThat(s.damage).as("seed %d, %s: one damaged region", SEED, f).hasSize(1);
      DamagedRegion d = s.damage.get(0);
      assertThat(d.file())
          .as("seed %d, %s: %s", SEED, f, d.describe())
          .isEqualTo(f.file.toRealPath());
      assertThat(d.keyspace()).as("seed %d, %s: %s", SEED, f, d.describe()).isEqualTo(f.keyspace);
      if (f.kind == Kind.NO_ENTRY) {
        assertThat(d.lostEntries()).as("seed %d, %s: %s", SEED, f, d.describe()).isZero();
        continue;
      }
      assertThat(d.offset())
          .as("seed %d, %s: %s", SEED, f, d.describe())
          .isLessThanOrEqualTo(f.offset);
      assertThat(d.offset() + d.length())
          .as("seed %d, %s: %s", SEED, f, d.describe())
          .isGreaterThan(f.offset);
      boolean hinted = Files.exists(Path.of(f.file.toString().replace(".log", ".hint")));
      if (f.kind == Kind.BATCH_HEADER) {
        assertThat(d.lostEntries()).as("seed %d, %s: %s", SEED, f, d.describe()).isIn(0L, -1L);
        continue;
      }
      recordFlips++;
      if (hinted) {
        // The intact hint tells exactly what the region held: one entry, this key.
        assertThat(d.lostEntries()).as("seed %d, %s: %s", SEED, f, d.describe()).isEqualTo(1);
        String key = f.lostKey.substring(f.lostKey.indexOf('/') + 1);
        assertThat(d.lostKeys().contains(bytes(key)))
            .as("seed %d, %s: %s", SEED, f, d.describe())
            .isTrue();
      } else {
        // The newest segment has no hint: the count comes from the record headers, which a bit
        // in a length or type field leaves unreadable; a bit elsewhere leaves them whole.
        long inRecord = f.offset - d.offset();
        boolean lengthsWhole = inRecord < 4 || inRecord >= RecordCodec.RECORD_HEADER;
        assertThat(d.lostEntries())
            .as("seed %d, %s: %s", SEED, f, d.describe())
            .isIn(lengthsWhole ? List.of(1L) : List.of(1L, -1L));
      }
    }
    assertThat(recordFlips).as("flips inside put records").isGreaterThan(150);
    System.out.println(
        "salvage: "
            + flips.size()
            + " single-bit flips ("
            + recordFlips
            + " inside put records: 29 of 30 keys salvaged each time)");
  }

  @Test
  void salvage_damagedLastRecord_isDamageAfterCleanClose_andATornTailAfterACrash()
      throws Exception {
    Path dir = tmp.resolve("store");
    Map<String, byte[]> model = write30(dir);
    List<Path> segs = segmentFiles(dir);
    Path newest = segs.get(segs.size() - 1);
    List<Rec> recs = records(newest);
    Rec last = recs.get(recs.size() - 1);
    flipBit(newest, last.offset + last.size - 1, 3); // the last byte of the last value
    String lost = id(null, bytes(last.key));

    Salvaged clean = salvage(dir);
    assertThat(clean.entries).doesNotContainKey(lost).hasSize(29);
    assertThat(clean.damage).as("a cleanly closed store has no torn tail").hasSize(1);
    assertThat(clean.damage.get(0).offset()).isEqualTo(last.offset);
    assertThat(clean.damage.get(0).length()).isEqualTo(last.size);
    assertThat(clean.damage.get(0).lostEntries()).isEqualTo(1);

    // The same bytes after a crash: the last record is a torn write, as recovery judges it.
    TestStores.markCrashed(dir);
    Salvaged crashed = salvage(dir);
    assertThat(crashed.entries).doesNotContainKey(lost).hasSize(29);
    assertThat(crashed.damage).as("a torn tail after a crash is not damage").isEmpty();
    try (Store ro =
        new HashLogProvider()
            .open(StoreConfig.builder("hashlog").path(dir).readOnly(true).build())) {
      assertThat(ro.get(bytes(last.key))).as("recovery drops it too").isNull();
    }
    for (String k : crashed.entries.keySet()) {
      assertThat(crashed.entries.get(k)).as(k).isEqualTo(model.get(k));
    }
  }

  @Test
  void salvage_intactStore_returnsEveryKeyAndNoDamage_withOrWithoutHints() throws Exception {
    Path dir = tmp.resolve("store");
    Map<String, byte[]> model = write30(dir);
    Map<String, String> before = fingerprint(dir);
    Salvaged s = salvage(dir);
    assertThat(s.damage).isEmpty();
    assertThat(s.entries).containsOnlyKeys(model.keySet());
    model.forEach((k, v) -> assertThat(s.entries.get(k)).as(k).isEqualTo(v));
    assertThat(fingerprint(dir)).isEqualTo(before);

    // Hints are only an index: without any, the same.
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        if (p.getFileName().toString().endsWith(".hint")) {
          Files.delete(p);
        }
      }
    }
    Map<String, String> hintless = fingerprint(dir);
    Salvaged without = salvage(dir);
    assertThat(without.damage).isEmpty();
    assertThat(without.entries).containsOnlyKeys(model.keySet());
    assertThat(fingerprint(dir)).as("no hint rebuilt").isEqualTo(hintless);
  }

  @Test
  void salvage_overwritesDeletesAndCompaction_handsOverExactlyWhatTheStoreHolds() {
    Path dir = tmp.resolve("store");
    SplittableRandom r = new SplittableRandom(SEED + 2);
    Map<String, byte[]> model = new TreeMap<>();
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      Store ks = s.keyspace(KS);
      for (int round = 0; round < 6; round++) {
        for (int i = 0; i < 400; i++) {
          boolean inKs = r.nextInt(4) == 0;
          Store t = inKs ? ks : s;
          byte[] k = bytes(String.format("k-%03d", r.nextInt(120)));
          if (r.nextInt(5) == 0) {
            t.delete(k);
            model.remove(id(inKs ? KS : null, k));
          } else {
            byte[] v = new byte[r.nextInt(300)];
            r.nextBytes(v);
            t.put(k, v);
            model.put(id(inKs ? KS : null, k), v);
          }
        }
        if (round == 1 || round == 3) { // the last rounds' older versions stay in the log
          s.compact();
          ks.compact();
        }
      }
    }
    Salvaged got = salvage(dir);
    assertThat(got.damage).as("seed %d", SEED + 2).isEmpty();
    assertThat(got.entries).as("seed %d", SEED + 2).containsOnlyKeys(model.keySet());
    model.forEach(
        (k, v) -> assertThat(got.entries.get(k)).as("seed %d: %s", SEED + 2, k).isEqualTo(v));
  }

  @Test
  void salvage_killNineCrashImageWithKeyspaces_equalsWhatRecoveryReads_noDamage() throws Exception {
    Path dir = tmp.resolve("crash");
    int lastAck = -1;
    try (ChildProcess c =
        TestStores.child(256, KeyspaceCrashChild.class, dir.toString(), "BUFFERED", "write")) {
      for (String line = c.readLine(LINE_WAIT); line != null; line = c.readLine(LINE_WAIT)) {
        if (line.startsWith("ack ")) {
          lastAck = Integer.parseInt(line.substring(4).trim());
          if (lastAck == 60) {
            c.kill(); // SIGKILL, somewhere in round 61
          }
        }
      }
      assertThat(lastAck)
          .as("the child reached its kill point: %s", c.describe())
          .isGreaterThanOrEqualTo(60);
    }
    Map<String, String> before = fingerprint(dir);
    Salvaged s = salvage(dir);
    assertThat(fingerprint(dir)).as("files after salvage").isEqualTo(before);
    assertThat(s.damage).as("a kill -9 image is not damaged").isEmpty();

    // What recovery reads of the store's keys and keyspaces a and b, salvage hands over exactly.
    Map<String, byte[]> recovered = new TreeMap<>();
    try (Store ro =
        new HashLogProvider()
            .open(StoreConfig.builder("hashlog").path(dir).readOnly(true).build())) {
      ro.forEach(KeyRange.all(), e -> recovered.put(id(null, e.key()), e.value()));
      for (String name : new String[] {"a", "b"}) {
        ro.keyspace(name).forEach(KeyRange.all(), e -> recovered.put(id(name, e.key()), e.value()));
      }
    }
    Map<String, byte[]> others = new TreeMap<>(s.entries);
    others.keySet().removeIf(k -> k.startsWith("/") || k.startsWith("a/") || k.startsWith("b/"));
    s.entries.keySet().removeAll(others.keySet());
    assertThat(s.entries).containsOnlyKeys(recovered.keySet());
    recovered.forEach((k, v) -> assertThat(s.entries.get(k)).as(k).isEqualTo(v));
    for (int i = 0; i <= lastAck; i++) {
      for (String ks : new String[] {"a", "b", null}) {
        assertThat(s.entries.get(id(ks, KeyspaceCrashChild.key(i))))
            .as("acknowledged key %d of %s", i, ks)
            .isEqualTo(KeyspaceCrashChild.value(ks == null ? "default" : ks, i));
      }
    }
    // Keyspaces t<i> are created and dropped in round i: only the round the kill cut short may
    // have left one, holding at most its one key.
    int cut = lastAck + 1;
    for (Map.Entry<String, byte[]> e : others.entrySet()) {
      assertThat(e.getKey()).isEqualTo(id("t" + cut, KeyspaceCrashChild.key(cut)));
      assertThat(e.getValue()).isEqualTo(KeyspaceCrashChild.value("t", cut));
    }
  }

  @Test
  void salvage_tornLastWriteOfAKilledWriter_isNotDamage() throws Exception {
    Path dir = tmp.resolve("torn");
    int big = 150;
    int lastAck = -1;
    boolean torn = false;
    try (ChildProcess c =
        TestStores.child(
            256, CrashChild.class, dir.toString(), "BUFFERED", Integer.toString(big), "true")) {
      for (String line = c.readLine(LINE_WAIT); line != null; line = c.readLine(LINE_WAIT)) {
        if (line.startsWith("ack ")) {
          lastAck = Integer.parseInt(line.substring(4).trim());
        } else if (line.equals("torn")) {
          c.kill(); // half of key 150's 64 MiB record is in the file
          torn = true;
        }
      }
      assertThat(torn).as("the child tore its write: %s", c.describe()).isTrue();
    }
    assertThat(lastAck).isEqualTo(big - 1);
    Salvaged s = salvage(dir);
    assertThat(s.damage).as("a torn last write is not damage").isEmpty();
    assertThat(s.entries).hasSize(big);
    for (int i = 0; i < big; i++) {
      assertThat(s.entries.get(id(null, CrashChild.key(i))))
          .as("acknowledged key %d", i)
          .isEqualTo(CrashChild.value(i, big));
    }
  }

  @Test
  void salvage_storeOpenForWriting_isRefusedAndCreatesNothing() throws Exception {
    Path dir = tmp.resolve("store");
    write30(dir);
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, OPTIONS)) {
      Map<String, String> before = fingerprint(dir);
      assertThatThrownBy(() -> salvage(dir))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("open for writing");
      assertThat(fingerprint(dir)).isEqualTo(before);
      assertThat(s.get(bytes("key-00"))).isNotNull();
    }
  }

  // ---------------------------------------------------------------- verify

  @Test
  void verify_damageInThreePlaces_reportsEveryRegion() throws Exception {
    Path dir = tmp.resolve("store");
    write30(dir);
    // Two records of one sealed segment of the store's own keys, one of the keyspace's: the open
    // reads sealed segments from their hints, so the store still opens.
    Path own = segmentFiles(dir).get(0);
    Path ksDir = dir.resolve(Keyspaces.DIR_NAME).resolve(KS);
    Path ksSeg = segmentFiles(ksDir).get(0);
    List<Rec> ownRecs = records(own);
    List<Rec> ksRecs = records(ksSeg);
    Rec a = ownRecs.get(0);
    Rec b = ownRecs.get(ownRecs.size() - 1);
    Rec c = ksRecs.get(1);
    assertThat(ownRecs.size()).isGreaterThan(2);
    long[] at = {a.offset + a.size - 5, b.offset + 20, c.offset + c.size - 1};
    flipBit(own, at[0], 1);
    flipBit(own, at[1], 6);
    flipBit(ksSeg, at[2], 0);
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, OPTIONS)) {
      StoreCorruptedException e =
          org.junit.jupiter.api.Assertions.assertThrows(StoreCorruptedException.class, s::verify);
      List<DamagedRegion> d = e.damage();
      assertThat(d).as(e.getMessage()).hasSize(3);
      assertThat(d.get(0).file()).isEqualTo(own.toRealPath());
      assertThat(d.get(0).offset()).isEqualTo(a.offset);
      assertThat(d.get(0).length()).isEqualTo(a.size);
      assertThat(d.get(0).lostEntries()).isEqualTo(1);
      assertThat(d.get(0).keyspace()).isNull();
      assertThat(d.get(1).file()).isEqualTo(own.toRealPath());
      assertThat(d.get(1).offset()).isEqualTo(b.offset);
      assertThat(d.get(2).file()).isEqualTo(ksSeg.toRealPath());
      assertThat(d.get(2).offset()).isEqualTo(c.offset);
      assertThat(d.get(2).keyspace()).isEqualTo(KS);
      assertThat(e.file()).isEqualTo(own.toRealPath());
      assertThat(e.getMessage())
          .contains(own.getFileName().toString())
          .contains("and 2 more damaged regions")
          .contains(ksSeg.getFileName().toString());
    }
  }

  // ---------------------------------------------------------------- StoreCopy

  @Test
  void storeCopySalvage_oneFlippedBit_writesTheOther29IntoAFreshStore() throws Exception {
    Path dir = tmp.resolve("store");
    Map<String, byte[]> model = write30(dir);
    Path seg = segmentFiles(dir).get(1);
    Rec victim =
        records(seg).stream().filter(c -> c.type == RecordCodec.PUT).findFirst().orElseThrow();
    flipBit(seg, victim.offset + victim.size - 7, 2);
    try (Store ro =
        new HashLogProvider()
            .open(StoreConfig.builder("hashlog").path(dir).readOnly(true).build())) {
      assertThatThrownBy(ro::verify).isInstanceOf(StoreCorruptedException.class);
    }
    Map<String, String> before = fingerprint(dir);
    Path target = tmp.resolve("rescued");
    StoreCopy.Salvaged r;
    try (Store to = TestStores.open(target, Durability.SYNC)) {
      r =
          StoreCopy.salvage(
              StoreConfig.builder("hashlog").path(dir).build(), to, StoreCopy.Options.defaults());
    }
    assertThat(fingerprint(dir)).isEqualTo(before);
    assertThat(r.entries()).isEqualTo(29);
    assertThat(r.damage()).hasSize(1);
    assertThat(r.damage().get(0).file()).isEqualTo(seg.toRealPath());
    assertThat(r.damage().get(0).lostEntries()).isEqualTo(1);
    Map<String, byte[]> expected = new TreeMap<>(model);
    expected.remove(id(null, bytes(victim.key)));
    Map<String, byte[]> copied = new TreeMap<>();
    try (Store to = TestStores.open(target, Durability.SYNC)) {
      to.verify();
      to.forEach(KeyRange.all(), e -> copied.put(id(null, e.key()), e.value()));
      to.keyspace(KS).forEach(KeyRange.all(), e -> copied.put(id(KS, e.key()), e.value()));
    }
    assertThat(copied).containsOnlyKeys(expected.keySet());
    expected.forEach((k, v) -> assertThat(copied.get(k)).as(k).isEqualTo(v));
  }
}
