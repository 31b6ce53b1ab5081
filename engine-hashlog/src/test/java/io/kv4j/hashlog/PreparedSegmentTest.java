package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.DamagedRegion;
import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A BUFFERED store's next segment is made by the sealer while the active one fills (its chunk of
 * zeros and its header, under a temporary name), and the roll renames that file instead of writing
 * the chunk on the writer's path. Only a file made for exactly the segment the roll creates is
 * taken; none outlives the store.
 */
class PreparedSegmentTest {
  private static final long WAIT_NANOS = 60_000_000_000L;
  static final String[] OPTIONS = {"segment-size", "4MiB", "compaction-threads", "0"};
  private static final Duration LINE_WAIT = Duration.ofMinutes(5);

  @TempDir Path dir;
  @TempDir Path copy;

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(int i) {
    byte[] v = new byte[1000];
    v[0] = (byte) i;
    v[999] = (byte) (i >>> 8);
    return v;
  }

  private static void await(String what, Supplier<Boolean> condition) {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!condition.get()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: %s", what).isNegative();
      Thread.onSpinWait();
    }
  }

  /** Writes until the active segment is past half full; returns the next key index. */
  private static int fillPastHalf(HashLogStore s, int from) {
    Segment a = s.segments.active;
    int i = from;
    while (s.segments.active == a && a.end <= a.capacity / 2 + 4096) {
      s.put(key(i), value(i));
      i++;
    }
    return i;
  }

  /** Writes until the active segment rolls; returns the next key index. */
  private static int writeUntilRoll(HashLogStore s, int from) {
    Segment a = s.segments.active;
    int i = from;
    while (s.segments.active == a) {
      s.put(key(i), value(i));
      i++;
    }
    return i;
  }

  /** Reopens the store: keys 0 to {@code n - 1} hold their values and {@code verify()} passes. */
  private void assertEveryKeyAfterReopen(int n) {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      for (int i = 0; i < n; i++) {
        assertThat(s.get(key(i))).as("key %d after reopen", i).isEqualTo(value(i));
      }
      s.verify();
    }
  }

  private static Sealer.Next awaitPrepared(HashLogStore s) {
    Segment a = s.segments.active;
    Sealer.Next want = new Sealer.Next(SegmentLog.nextWriteId(a.id), a.id, s.log.segmentSize);
    await("the sealer to prepare " + want, () -> want.equals(s.log.sealer.prepared()));
    return want;
  }

  /**
   * Salvages {@code d} without opening it for writing, asserting ({@code what}) that it finds no
   * damaged region; returns the keys it handed over.
   */
  private static List<String> salvageWithoutDamage(Path d, String what) {
    List<String> salvaged = new ArrayList<>();
    List<DamagedRegion> damage =
        new HashLogProvider()
            .salvage(
                StoreConfig.builder("hashlog")
                    .path(d)
                    .readOnly(true)
                    .createIfMissing(false)
                    .build(),
                (ks, k, v) -> salvaged.add(new String(k, StandardCharsets.UTF_8)));
    assertThat(damage).as(what).isEmpty();
    return salvaged;
  }

  /** Opens {@code d} read-only with this test's options. */
  private static HashLogStore openReadOnly(Path d) {
    StoreConfig.Builder readOnly =
        TestStores.config(d, Durability.BUFFERED).readOnly(true).option(OPTIONS[0], OPTIONS[1]);
    return HashLogProvider.open(readOnly.build(), HashLogProvider.seededHasher(42));
  }

  private static Object fileKey(Path p) throws IOException {
    return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
  }

  /** Every temporary file in {@code d}: prepared segments and hints being written. */
  private static List<Path> temps(Path d) throws IOException {
    return files(d, ".tmp");
  }

  /**
   * Prepared segment files in {@code d} (with compaction off, the only {@code .log.tmp} files; a
   * hint the sealer is writing is a {@code .hint.tmp}).
   */
  private static List<Path> prepared(Path d) throws IOException {
    return files(d, ".log.tmp");
  }

  private static List<Path> files(Path d, String suffix) throws IOException {
    try (Stream<Path> l = Files.list(d)) {
      return l.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
    }
  }

  @Test
  void roll_renamesThePreparedFile_andEveryRecordSurvivesReopen() throws Exception {
    int n;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      n = fillPastHalf(s, 0);
      Sealer.Next next = awaitPrepared(s);
      Path tmp = Segment.preparedPath(dir, next.id());
      assertThat(tmp).as("the prepared file").exists();
      Object prepared = fileKey(tmp);
      n = writeUntilRoll(s, n);
      Segment rolled = s.segments.active;
      assertThat(rolled.id).as("the new active segment's id").isEqualTo(next.id());
      assertThat(fileKey(rolled.path))
          .as("the new active segment is the prepared file, renamed")
          .isEqualTo(prepared);
      assertThat(tmp).as("the prepared file's temporary name after the roll").doesNotExist();
      for (int i = n; i < n + 100; i++) {
        s.put(key(i), value(i));
      }
      n += 100;
    }
    assertEveryKeyAfterReopen(n);
  }

  @Test
  void preparedFileForAnotherPredecessor_isDeleted_notTaken() throws Exception {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      fillPastHalf(s, 0);
      Sealer.Next next = awaitPrepared(s);
      Path tmp = Segment.preparedPath(dir, next.id());
      Path target = dir.resolve(Segment.fileName(next.id()));
      s.segments.writeLock.lock();
      try {
        Sealer.Next other = new Sealer.Next(next.id(), next.previous() + 1, next.capacity());
        assertThat(s.log.sealer.takePrepared(other, target))
            .as("a file prepared for %s, taken for %s", next, other)
            .isNull();
      } finally {
        s.segments.writeLock.unlock();
      }
      assertThat(tmp).as("the prepared file nobody can take").doesNotExist();
      assertThat(target).as("no segment file made from it").doesNotExist();
      assertThat(s.log.sealer.prepared()).isNull();
    }
  }

  @Test
  void close_deletesAPreparedFile() throws Exception {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      fillPastHalf(s, 0);
      Sealer.Next next = awaitPrepared(s);
      assertThat(Segment.preparedPath(dir, next.id())).exists();
      s.verify(); // a live store with a prepared file: no false alarm
    }
    assertThat(temps(dir)).as("temporary files after close").isEmpty();
  }

  @Test
  void killMidPrepare_leavesAPartialFileThatSalvageVerifyAndOpenIgnore() throws Exception {
    // The child's sealer stops between the chunk of zeros and the header of the next segment's
    // file; its writer rolls past it (creating that segment itself) and is killed a segment later.
    int lastAck = -1;
    int ackAtPreparing = -1;
    boolean killed = false;
    try (ChildProcess c = TestStores.child(256, PrepareCrashChild.class, dir.toString())) {
      for (String line = c.readLine(LINE_WAIT); line != null; line = c.readLine(LINE_WAIT)) {
        if (line.equals("preparing")) {
          ackAtPreparing = Math.max(0, lastAck);
        } else if (line.startsWith("ack ")) {
          lastAck = Integer.parseInt(line.substring(4).trim());
          // 4 MiB segments of about 4,000 records: the roll is at most a segment away.
          if (ackAtPreparing >= 0 && !killed && lastAck >= ackAtPreparing + 8_000) {
            c.kill();
            killed = true;
          }
        }
      }
      assertThat(killed).as("the child reached its kill point: %s", c.describe()).isTrue();
    }
    List<Path> partial = prepared(dir);
    assertThat(partial).as("the killed child left the partial prepared file").hasSize(1);
    Path tmp = partial.get(0);
    byte[] start = new byte[RecordCodec.FILE_HEADER];
    try (InputStream in = Files.newInputStream(tmp)) {
      assertThat(in.readNBytes(start, 0, start.length)).isEqualTo(start.length);
    }
    assertThat(start).as("the partial file has no header").containsOnly((byte) 0);
    String name = tmp.getFileName().toString();
    assertThat(dir.resolve(name.substring(0, name.length() - ".tmp".length())))
        .as("the segment the writer created itself, beside the partial file of the same id")
        .exists();
    int n = lastAck + 1;
    List<String> salvaged = salvageWithoutDamage(dir, "salvage after a kill mid-prepare");
    assertThat(salvaged.size()).as("keys salvaged").isGreaterThanOrEqualTo(n);
    try (HashLogStore ro = openReadOnly(dir)) {
      ro.verify(); // no false alarm on the read-only image
    }
    assertThat(prepared(dir)).as("a read-only open leaves the partial file").hasSize(1);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      for (int i = 0; i < n; i++) {
        assertThat(s.get(key(i))).as("acknowledged key %d after the kill", i).isEqualTo(value(i));
      }
      assertThat(prepared(dir)).as("prepared files after opening").isEmpty();
      s.verify();
      writeUntilRoll(s, n); // the next roll prepares and takes a file of its own again
    }
    assertEveryKeyAfterReopen(n);
  }

  @Test
  void crashImageWithAPreparedFile_opensWithEveryRecord_andDropsTheFile() throws Exception {
    int n;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, OPTIONS)) {
      n = fillPastHalf(s, 0);
      awaitPrepared(s);
      try (Stream<Path> l = Files.list(dir)) {
        for (Path p : l.toList()) {
          if (Files.isRegularFile(p)) {
            Files.copy(p, copy.resolve(p.getFileName()));
          }
        }
      }
    }
    assertThat(prepared(copy)).as("the crash image holds the prepared file").hasSize(1);
    List<String> salvaged =
        salvageWithoutDamage(copy, "salvage of a crash image with a prepared file");
    assertThat(salvaged).as("keys salvaged").hasSize(n);
    try (HashLogStore ro = openReadOnly(copy)) {
      ro.verify(); // no false alarm on the read-only crash image
      assertThat(ro.get(key(n - 1))).isEqualTo(value(n - 1));
    }
    try (HashLogStore s = TestStores.open(copy, Durability.BUFFERED, OPTIONS)) {
      for (int i = 0; i < n; i++) {
        assertThat(s.get(key(i))).as("key %d in the crash image", i).isEqualTo(value(i));
      }
      assertThat(prepared(copy)).as("prepared files after opening the crash image").isEmpty();
      s.verify();
    }
  }

  @Test
  void preparingFails_theRollCreatesTheSegment_andNothingIsLostOrLeft() throws Exception {
    FaultyStorage storage = new FaultyStorage();
    List<String> deletions = new CopyOnWriteArrayList<>();
    storage.trace(
        t -> {
          if (t.startsWith("delete ")) {
            deletions.add(t.substring("delete ".length()));
          }
        });
    // The first prepared file's chunk of zeros (its creation is the first write): a full disk.
    storage.failWrite(2, ".log.tmp");
    int n;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, storage, OPTIONS)) {
      n = fillPastHalf(s, 0);
      Segment a = s.segments.active;
      String failed = Segment.preparedPath(dir, SegmentLog.nextWriteId(a.id)).toString();
      await("the failed prepared file to be deleted", () -> deletions.contains(failed));
      assertThat(s.log.sealer.prepared()).as("nothing prepared after the failure").isNull();
      n = writeUntilRoll(s, n);
      assertThat(s.segments.active.id).isEqualTo(SegmentLog.nextWriteId(a.id));
      Sealer.Next ready = s.log.sealer.prepared();
      for (Path t : prepared(dir)) {
        assertThat(ready)
            .as("%s left after a failed prepare", t)
            .isNotNull()
            .extracting(r -> Segment.preparedPath(dir, r.id()))
            .isEqualTo(t);
      }
    }
    assertEveryKeyAfterReopen(n);
  }

  @Test
  void syncStore_preparesNothing() throws Exception {
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, OPTIONS)) {
      writeUntilRoll(s, 0);
      assertThat(s.log.sealer.prepared()).isNull();
      assertThat(prepared(dir)).as("prepared segment files of a SYNC store").isEmpty();
    }
  }
}
