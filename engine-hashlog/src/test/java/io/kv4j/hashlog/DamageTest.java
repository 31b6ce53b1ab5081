package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #20's damage contract for hashlog: a store of a few thousand keys written SYNC and closed
 * cleanly, then one file damaged at a time. Every case ends in a failed open that names the file
 * and changed nothing on disk, or in an open store whose every key reads its exact value or throws
 * {@link StoreCorruptedException} — never "absent" for a key that was written, never a raw runtime
 * exception.
 */
class DamageTest {
  private static final long SEED = 20;
  private static final int KEYS = 3000;
  private static final String[] OPTIONS = {"segment-size", "64KiB", "compaction-threads", "0"};

  @TempDir Path dir;
  private final Map<String, byte[]> model = new TreeMap<>();

  @BeforeEach
  void writeStore() {
    SplittableRandom r = new SplittableRandom(SEED);
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, OPTIONS)) {
      // SYNC, in atomic batches of 25 (one fsync each) and single puts between them.
      io.kv4j.WriteBatch batch = new io.kv4j.WriteBatch();
      for (int i = 0; i < KEYS; i++) {
        String k = String.format("key-%06d", i);
        byte[] v = new byte[40 + r.nextInt(120)];
        r.nextBytes(v);
        if (i % 100 == 99) {
          s.put(bytes(k), v);
        } else {
          batch.put(bytes(k), v);
        }
        if (batch.size() == 25) {
          s.write(batch);
          batch = new io.kv4j.WriteBatch();
        }
        model.put(k, v);
      }
      if (!batch.isEmpty()) {
        s.write(batch);
      }
      assertThat(s.segments().length).as("seed %d: sealed segments", SEED).isGreaterThan(4);
    }
  }

  private HashLogStore open() {
    return TestStores.open(dir, Durability.SYNC, OPTIONS);
  }

  private Path seg(int id) {
    return dir.resolve(Segment.fileName(id));
  }

  private List<Integer> segmentIds() throws IOException {
    return Recovery.list(Storage.NIO, dir).segments;
  }

  private int newest() throws IOException {
    List<Integer> ids = segmentIds();
    return ids.get(ids.size() - 1);
  }

  private int middleSealed() throws IOException {
    List<Integer> ids = segmentIds();
    return ids.get(ids.size() / 2 - 1);
  }

  /** Offsets of the put records of a segment file, in order (batch headers left out). */
  private static List<Integer> records(Path file) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
    List<Integer> out = new ArrayList<>();
    for (int p = RecordCodec.FILE_HEADER; p < b.limit(); p += (int) RecordCodec.size(b, p)) {
      if (RecordCodec.type(b, p) == RecordCodec.PUT) {
        out.add(p);
      }
    }
    return out;
  }

  private static String keyOf(Path file, int offset) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
    byte[] k = new byte[RecordCodec.keyLength(b, offset)];
    b.get(offset + RecordCodec.RECORD_HEADER, k);
    return new String(k, java.nio.charset.StandardCharsets.UTF_8);
  }

  private static void flipBit(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0x04);
    }
  }

  private static void overwrite(Path file, long offset, byte[] bytes) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      f.write(bytes);
    }
  }

  private static void truncate(Path file, long length) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(length);
    }
  }

  /** Name and content of every file in the store directory. */
  private Map<String, byte[]> files() throws IOException {
    Map<String, byte[]> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        out.put(p.getFileName().toString(), Files.readAllBytes(p));
      }
    }
    return out;
  }

  /** The open fails with corruption naming {@code file}, and no file changed or disappeared. */
  private void assertOpenFails(Path file, String what) throws IOException {
    Map<String, byte[]> before = files();
    Path real = file.getParent().toRealPath().resolve(file.getFileName());
    assertThatThrownBy(() -> open().close())
        .as(what)
        .isInstanceOfSatisfying(
            StoreCorruptedException.class,
            e -> {
              assertThat(e.file()).as(what + ": " + e.getMessage()).isEqualTo(real);
              assertThat(e.getMessage()).contains(file.getFileName().toString());
            });
    Map<String, byte[]> after = files();
    after.remove(io.kv4j.spi.DirectoryLock.FILE_NAME);
    before.remove(io.kv4j.spi.DirectoryLock.FILE_NAME);
    assertThat(after.keySet())
        .as(what + ": files after the failed open")
        .isEqualTo(before.keySet());
    for (String n : before.keySet()) {
      assertThat(after.get(n)).as(what + ": " + n + " unchanged").isEqualTo(before.get(n));
    }
  }

  /**
   * Every key reads its value or throws corruption; a key never reads absent or wrong; a full scan
   * and verify() throw if any key did. Returns the number of keys that threw.
   */
  private int assertEveryKeyExactOrCorrupt(HashLogStore s) {
    int corrupt = 0;
    for (Map.Entry<String, byte[]> e : model.entrySet()) {
      try {
        assertThat(s.get(bytes(e.getKey())))
            .as("seed %d key %s", SEED, e.getKey())
            .isEqualTo(e.getValue());
      } catch (StoreCorruptedException x) {
        corrupt++;
      }
    }
    if (corrupt > 0) {
      assertThatThrownBy(() -> TestStores.scan(s, KeyRange.all()))
          .isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(s::verify).isInstanceOf(StoreCorruptedException.class);
    }
    return corrupt;
  }

  @Test
  void cleanStore_opensVerifiesAndDeclaresChecksums() {
    try (HashLogStore s = open()) {
      assertThat(assertEveryKeyExactOrCorrupt(s)).isZero();
      s.verify();
      assertThat(TestStores.scan(s, KeyRange.all())).hasSize(KEYS);
      assertThat(s.info().features()).contains(Feature.CHECKSUMS);
      assertThat(TestStores.figure(s, "truncated-tail-bytes")).isZero();
    }
    try (HashLogStore s =
        TestStores.open(dir, Durability.SYNC, "verify-checksums-on-read", "false")) {
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
    }
  }

  @Test
  void bitFlipInAValueOfTheNewestSegment_failsTheOpen_notATornTail() throws IOException {
    Path newest = seg(newest());
    List<Integer> recs = records(newest);
    assertThat(recs.size()).as("records in the newest segment").isGreaterThan(3);
    int victim = recs.get(1); // plenty of valid records after it
    int valueAt = victim + RecordCodec.RECORD_HEADER + keyOf(newest, victim).length() + 3;
    flipBit(newest, valueAt);
    assertOpenFails(newest, "bit flip in a value of the newest segment");
    assertThatThrownBy(() -> open().close())
        .isInstanceOfSatisfying(
            StoreCorruptedException.class, e -> assertThat(e.offset()).isEqualTo(victim));
  }

  @Test
  void bitFlipInTheNewestSegmentAfterACrash_withValidRecordsAfterIt_isStillCorruption()
      throws IOException {
    TestStores.markCrashed(dir);
    Path newest = seg(newest());
    int victim = records(newest).get(1);
    flipBit(newest, victim + RecordCodec.RECORD_HEADER + 2);
    assertOpenFails(newest, "bit flip after a crash, valid records after it");
    assertThatThrownBy(() -> open().close())
        .isInstanceOfSatisfying(
            StoreCorruptedException.class, e -> assertThat(e.offset()).isEqualTo(victim));
  }

  @Test
  void bitFlipInsideAKeyOfASealedSegment_withHints_getThrowsInsteadOfAbsent() throws IOException {
    int id = middleSealed();
    assertThat(Files.exists(HintFile.path(dir, id))).isTrue();
    Path file = seg(id);
    int victim = records(file).get(2);
    String key = keyOf(file, victim);
    flipBit(file, victim + RecordCodec.RECORD_HEADER + key.length() - 1);
    try (HashLogStore s = open()) {
      assertThatThrownBy(() -> s.get(bytes(key)))
          .isInstanceOfSatisfying(
              StoreCorruptedException.class,
              e -> {
                assertThat(e.offset()).isEqualTo(victim);
                assertThat(e.getMessage()).contains(file.getFileName().toString());
              });
      assertThat(assertEveryKeyExactOrCorrupt(s)).isEqualTo(1);
      // Overwriting the damaged key works, and the key then reads its new value.
      s.put(bytes(key), bytes("new"));
      assertThat(s.get(bytes(key))).isEqualTo(bytes("new"));
    }
  }

  @Test
  void fourKibOfGarbageInASealedSegment_withHints_noKeyReadsAbsent_scanThrowsCorruption()
      throws IOException {
    int id = middleSealed();
    Path file = seg(id);
    long size = Files.size(file);
    byte[] garbage = new byte[4096];
    new SplittableRandom(SEED).nextBytes(garbage);
    overwrite(file, size / 2 - 2048, garbage);
    try (HashLogStore s = open()) {
      int corrupt = assertEveryKeyExactOrCorrupt(s);
      assertThat(corrupt).as("seed %d: keys under the garbage", SEED).isGreaterThan(10);
    }
    // Zeros instead of garbage: the same.
    overwrite(file, size / 2 - 2048, new byte[4096]);
    try (HashLogStore s = open()) {
      assertThat(assertEveryKeyExactOrCorrupt(s)).isGreaterThan(10);
    }
    // Without the hint the segment is read at open: the open fails.
    Files.delete(HintFile.path(dir, id));
    assertOpenFails(file, "garbage in a sealed segment without its hint");
  }

  @Test
  void deletedSealedOrNewestSegment_failsTheOpen() throws IOException {
    Path sealed = seg(middleSealed());
    byte[] saved = Files.readAllBytes(sealed);
    Files.delete(sealed);
    assertOpenFails(sealed, "deleted sealed segment");
    Files.write(sealed, saved);
    Path newest = seg(newest());
    Files.delete(newest);
    assertOpenFails(newest, "deleted newest segment");
  }

  @Test
  void truncatedSegments_failTheOpen_andStayAsTheyWere() throws IOException {
    Path sealed = seg(middleSealed());
    byte[] saved = Files.readAllBytes(sealed);
    for (long len : new long[] {saved.length / 2, 0}) {
      truncate(sealed, len);
      assertOpenFails(sealed, "sealed segment cut to " + len);
      assertThat(Files.size(sealed)).isEqualTo(len);
    }
    Files.write(sealed, saved);
    Path newest = seg(newest());
    long size = Files.size(newest);
    // Cut exactly at a record boundary too: only the clean-close length can tell.
    List<Integer> recs = records(newest);
    for (long len : new long[] {size / 2, recs.get(recs.size() / 2), 0}) {
      truncate(newest, len);
      assertOpenFails(newest, "newest segment cut to " + len);
    }
  }

  @Test
  void damagedTruncatedOrDeletedHints_areRebuilt_everyKeyReads() throws IOException {
    List<Integer> ids = segmentIds();
    Path h1 = HintFile.path(dir, ids.get(0));
    Path h2 = HintFile.path(dir, ids.get(1));
    Path h3 = HintFile.path(dir, ids.get(2));
    byte[] original = Files.readAllBytes(h1);
    truncate(h1, Files.size(h1) / 2);
    Files.delete(h2);
    flipBit(h3, Files.size(h3) / 2);
    try (HashLogStore s = open()) {
      assertThat(TestStores.figure(s, "hint-files-rebuilt")).isEqualTo(3);
      assertThat(assertEveryKeyExactOrCorrupt(s)).isZero();
      s.verify();
    }
    assertThat(Files.readAllBytes(h1)).isEqualTo(original);
  }

  @Test
  void damagedOrMissingManifest_failsTheOpen() throws IOException {
    Path m = Manifest.path(dir);
    byte[] saved = Files.readAllBytes(m);
    flipBit(m, saved.length / 2);
    assertOpenFails(m, "bit flip in the manifest");
    truncate(m, saved.length / 2);
    assertOpenFails(m, "manifest cut short");
    Files.delete(m);
    assertOpenFails(m, "manifest deleted");
  }

  @Test
  void identityWithoutAnySegment_failsTheOpen_neverAFreshStore() throws IOException {
    for (int id : segmentIds()) {
      Files.delete(seg(id));
    }
    assertThatThrownBy(() -> open().close()).isInstanceOf(StoreCorruptedException.class);
    assertThat(segmentIds()).isEmpty();
  }

  @Test
  void storeWithoutIdentityOrManifest_isAdoptedAsFormat1_andGetsAManifest() throws IOException {
    Files.delete(dir.resolve(StoreDirectory.IDENTITY_FILE));
    Files.delete(Manifest.path(dir));
    try (HashLogStore s = open()) {
      assertThat(assertEveryKeyExactOrCorrupt(s)).isZero();
    }
    assertThat(Files.readString(dir.resolve(StoreDirectory.IDENTITY_FILE))).contains("format=1");
    assertThat(Manifest.read(dir).clean).isTrue();
    Path sealed = seg(middleSealed());
    Files.delete(sealed);
    assertOpenFails(sealed, "deleted sealed segment of an adopted store");
  }

  @Test
  void crashImage_chainOfSegmentsRolledSinceTheManifest_detectsAGap() throws IOException {
    Path image = dir.resolveSibling(dir.getFileName() + "-crash");
    Files.createDirectories(image);
    try (HashLogStore s = open()) {
      for (int i = 0; i < 1500; i += 50) {
        io.kv4j.WriteBatch b = new io.kv4j.WriteBatch();
        for (int j = i; j < i + 50; j++) {
          b.put(bytes(String.format("more-%06d", j)), new byte[100]);
        }
        s.write(b);
      }
      // Quiescent and synced: copying the files now gives what a kill -9 would leave.
      try (Stream<Path> files = Files.list(dir)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          if (!p.getFileName().toString().equals(io.kv4j.spi.DirectoryLock.FILE_NAME)) {
            Files.copy(p, image.resolve(p.getFileName()));
          }
        }
      }
    }
    Manifest m = Manifest.read(image);
    assertThat(m.clean).isFalse();
    List<Integer> chain = new ArrayList<>();
    for (int id : Recovery.list(Storage.NIO, image).segments) {
      if (id > m.active) {
        chain.add(id);
      }
    }
    assertThat(chain).as("segments rolled since the manifest").hasSizeGreaterThan(2);
    Path broken = image.resolveSibling(image.getFileName() + "-gap");
    copyTree(image, broken);
    Path gap = broken.resolve(Segment.fileName(chain.get(chain.size() / 2)));
    Files.delete(gap);
    assertThatThrownBy(() -> TestStores.open(broken, Durability.SYNC, OPTIONS).close())
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining(gap.getFileName().toString());
    try (HashLogStore s = TestStores.open(image, Durability.SYNC, OPTIONS)) {
      assertThat(assertEveryKeyExactOrCorrupt(s)).isZero();
      assertThat(s.get(bytes("more-001499"))).hasSize(100);
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Files.copy(p, to.resolve(p.getFileName()));
      }
    }
  }

  @Test
  void compactedStore_deletedOutputFailsTheOpen_cleanCompactedStoreOpens() throws IOException {
    try (HashLogStore s = open()) {
      for (int i = 0; i < KEYS; i += 2) {
        s.delete(bytes(String.format("key-%06d", i)));
        model.remove(String.format("key-%06d", i));
      }
      s.compact();
    }
    try (HashLogStore s = open()) {
      assertThat(assertEveryKeyExactOrCorrupt(s)).isZero();
      for (int i = 0; i < KEYS; i += 2) {
        assertThat(s.get(bytes(String.format("key-%06d", i)))).isNull();
      }
      s.verify();
    }
    Path output = seg(middleSealed());
    Files.delete(output);
    assertOpenFails(output, "deleted segment after compaction");
  }

  @Test
  void garbageInASealedSegment_fullScanThrowsCorruption_neverARuntimeException()
      throws IOException {
    Path file = seg(middleSealed());
    byte[] garbage = new byte[4096];
    Arrays.fill(garbage, (byte) 0xFF); // lengths at their maximum: the worst for bounds
    overwrite(file, Files.size(file) / 2 - 2048, garbage);
    try (HashLogStore s = open()) {
      assertThatThrownBy(() -> TestStores.scan(s, KeyRange.all()))
          .isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(() -> TestStores.scan(s, KeyRange.all().reverse()))
          .isInstanceOf(StoreCorruptedException.class);
      assertThat(assertEveryKeyExactOrCorrupt(s)).isPositive();
    }
  }

  @Test
  void readOnlyOpen_createsAndChangesNothing_andIsRefusedWhileAWriterHoldsTheStore()
      throws IOException {
    Files.delete(dir.resolve(io.kv4j.spi.DirectoryLock.FILE_NAME));
    Map<String, byte[]> before = files();
    StoreConfig ro = StoreConfig.builder("hashlog").path(dir).readOnly(true).build();
    try (var s = Stores.open(ro)) {
      assertThat(s.get(bytes("key-000007"))).isEqualTo(model.get("key-000007"));
      s.verify();
    }
    assertThat(files().keySet()).isEqualTo(before.keySet());
    for (String n : before.keySet()) {
      assertThat(files().get(n)).as(n).isEqualTo(before.get(n));
    }
    try (HashLogStore w = open()) {
      assertThatThrownBy(() -> Stores.open(ro))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("open for writing");
      w.put(bytes("x"), bytes("y"));
    }
    try (var s = Stores.open(ro)) {
      assertThat(s.get(bytes("x"))).isEqualTo(bytes("y"));
    }
  }

  @Test
  void errorDuringOpen_releasesTheDirectory_andAbsurdIndexCapacityIsAnArgumentError() {
    FaultyStorage failing = new FaultyStorage();
    failing.beforeEachCall(
        () -> {
          throw new OutOfMemoryError("test: simulated while opening");
        });
    assertThatThrownBy(() -> TestStores.open(dir, Durability.SYNC, failing, OPTIONS).close())
        .isInstanceOf(OutOfMemoryError.class);
    try (HashLogStore s = open()) {
      assertThat(s.get(bytes("key-000001"))).isEqualTo(model.get("key-000001"));
    }
    assertThatThrownBy(() -> Opening.checkIndexCapacity(1 << 28, 1L << 30))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("initial-index-capacity");
    Opening.checkIndexCapacity(1 << 20, 1L << 30);
    if (Runtime.getRuntime().maxMemory() < KeyDir.initialBytes(1 << 28)) {
      assertThatThrownBy(
              () ->
                  TestStores.open(dir, Durability.SYNC, "initial-index-capacity", "268435456")
                      .close())
          .isInstanceOf(IllegalArgumentException.class);
    }
    try (HashLogStore s = open()) {
      assertThat(TestStores.scan(s, KeyRange.all())).extracting(Entry::value).hasSize(KEYS);
    }
  }
}
