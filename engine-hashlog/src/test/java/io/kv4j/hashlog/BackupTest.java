package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Online backups ({@link Backup}): consistent, openable copies taken while the store works. */
class BackupTest {
  @TempDir Path root;

  private static final int KEYS = 300;
  private static final int PAIR_EVERY = 50;

  /** Value of write number {@code i}: its number, then padding, so that segments roll often. */
  private static byte[] value(long i) {
    byte[] v = new byte[8 + (int) (i % 97)];
    ByteBuffer.wrap(v).putLong(i);
    return v;
  }

  private static long seq(byte[] v) {
    return ByteBuffer.wrap(v).getLong();
  }

  private static byte[] key(long i) {
    return bytes("key-" + (i % KEYS));
  }

  /**
   * Write {@code i}: a put of {@link #key}, and every {@link #PAIR_EVERY}th a batch of that put and
   * the two pair keys.
   */
  private static void write(Store s, long i) {
    if (i % PAIR_EVERY == 0) {
      s.write(
          new WriteBatch()
              .put(key(i), value(i))
              .put(bytes("pair-a"), value(i))
              .put(bytes("pair-b"), value(i)));
    } else {
      s.put(key(i), value(i));
    }
  }

  /** The store's contents after writes 0..m. */
  private static Map<String, Long> modelAfter(long m) {
    Map<String, Long> model = new TreeMap<>();
    for (long i = 0; i <= m; i++) {
      model.put("key-" + (i % KEYS), i);
      if (i % PAIR_EVERY == 0) {
        model.put("pair-a", i);
        model.put("pair-b", i);
      }
    }
    return model;
  }

  private static Map<String, Long> contents(Store s) {
    Map<String, Long> out = new TreeMap<>();
    for (Entry e : TestStores.scan(s, KeyRange.all())) {
      out.put(new String(e.key(), java.nio.charset.StandardCharsets.UTF_8), seq(e.value()));
    }
    return out;
  }

  @Test
  void backupsWhileWritingAndCompacting_eachOpenVerifyAndHoldAPrefixOfTheWrites() throws Exception {
    Path dir = root.resolve("store");
    String[] options = {
      "segment-size", "8192", "compaction-garbage-threshold", "0.2", "compaction-threads", "1"
    };
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, options)) {
      AtomicLong begun = new AtomicLong(); // writes started
      AtomicLong acked = new AtomicLong(); // writes returned
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread writer =
          new Thread(
              () -> {
                try {
                  for (long i = 0; !stop.get(); i++) {
                    begun.set(i + 1);
                    write(s, i);
                    acked.set(i + 1);
                  }
                } catch (Throwable t) {
                  failure.set(t);
                }
              });
      writer.start();
      List<long[]> bounds = new ArrayList<>();
      List<Path> copies = new ArrayList<>();
      long deadline = System.nanoTime() + 180_000_000_000L; // 0.2-3.3 s here; a slow machine
      try {
        while (acked.get() < 2000 && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        for (int b = 0;
            (b < 6 || TestStores.figure(s, "compaction-runs") < 3) && System.nanoTime() < deadline;
            b++) {
          Path copy = root.resolve("copy-" + b);
          long before = acked.get();
          s.backup(copy);
          long after = begun.get();
          bounds.add(new long[] {before, after});
          copies.add(copy);
        }
      } finally {
        stop.set(true);
        writer.join(60_000);
      }
      assertThat(failure.get()).isNull();
      assertThat(TestStores.figure(s, "compaction-runs"))
          .as("compaction ran during the backups")
          .isGreaterThanOrEqualTo(3);
      assertThat(copies).hasSizeGreaterThanOrEqualTo(6);
      for (int b = 0; b < copies.size(); b++) {
        long before = bounds.get(b)[0];
        long after = bounds.get(b)[1];
        try (HashLogStore c = TestStores.open(copies.get(b), Durability.BUFFERED, options)) {
          c.verify();
          Map<String, Long> got = contents(c);
          long m = got.values().stream().mapToLong(Long::longValue).max().orElse(-1);
          assertThat(m + 1)
              .as("backup %s holds every write acknowledged before it (%s..%s)", b, before, after)
              .isGreaterThanOrEqualTo(before)
              .isLessThanOrEqualTo(after);
          assertThat(got)
              .as("backup %s is exactly the store after write %s", b, m)
              .isEqualTo(modelAfter(m));
        }
      }
    }
  }

  @Test
  void backup_whenItsSegmentsAreCompactedAwayMeanwhile_copiesThemFromPinnedMappings()
      throws Exception {
    Path dir = root.resolve("store");
    Path copy = root.resolve("copy");
    String[] options = {"segment-size", "4096", "compaction-threads", "0"};
    FaultyStorage storage = new FaultyStorage();
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, storage, options)) {
      for (long i = 0; i < 3000; i++) {
        write(s, i);
      }
      for (int k = 0; k < KEYS; k += 3) {
        s.delete(key(k));
      }
      Map<String, Long> expected = contents(s);
      List<Path> files = new ArrayList<>();
      for (Segment g : s.segments()) {
        files.add(g.path);
      }
      assertThat(files).hasSizeGreaterThan(3);
      AtomicLong pinned = new AtomicLong(-1);
      // Runs after the backup noted and pinned its segments, before it copies the first file.
      storage.beforeFirstCopy(
          () -> {
            s.reclaim(); // seals the active segment and compacts every noted segment away
            pinned.set(TestStores.figure(s, "retired-segments-pinned"));
            s.put(bytes("after-noting"), bytes("not in the copy"));
          });
      s.backup(copy);
      for (Path p : files) {
        assertThat(p).as("compacted away while the backup ran").doesNotExist();
      }
      assertThat(pinned.get()).as("the backup pinned the retired segments").isPositive();
      s.guard.reap();
      assertThat(TestStores.figure(s, "retired-segments-pinned"))
          .as("and released them when it was done")
          .isZero();
      try (HashLogStore c = TestStores.open(copy, Durability.BUFFERED, options)) {
        c.verify();
        assertThat(contents(c)).isEqualTo(expected);
        assertThat(c.get(bytes("after-noting"))).isNull();
      }
    }
  }

  @Test
  void backup_copiesEveryFile_soDamageToOneNeverReachesTheOther() throws IOException {
    Path dir = root.resolve("store");
    Path copy = root.resolve("copy");
    Path second = root.resolve("second");
    String[] options = {"segment-size", "4096", "compaction-threads", "0"};
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      for (long i = 0; i < 600; i++) {
        write(s, i);
      }
      s.log.sealer.drain(); // hints written
      int active = s.activeSegment().id;
      s.backup(copy);
      s.backup(second);
      int victim = TestStores.writeSegment(2);

      // A flipped bit in the backup: the backup reports it, the live store never sees it.
      Path damaged = copy.resolve(Segment.fileName(victim));
      flipBit(damaged, Files.size(damaged) / 2);
      s.verify();
      assertThat(contents(s)).isEqualTo(modelAfter(599));
      try (HashLogStore c = TestStores.open(copy, Durability.SYNC, options)) {
        assertThatThrownBy(c::verify)
            .isInstanceOf(StoreCorruptedException.class)
            .hasMessageContaining(damaged.toString());
      }

      // And the reverse: a flipped bit in the live store, the other backup never sees it.
      Path live = dir.resolve(Segment.fileName(victim));
      flipBit(live, Files.size(live) / 2);
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(live.toString());
      try (HashLogStore c = TestStores.open(second, Durability.SYNC, options)) {
        c.verify();
        assertThat(contents(c)).isEqualTo(modelAfter(599));
      }
      // Every file of the copy is a file of its own.
      assertThat(Files.readAllBytes(copy.resolve(StoreDirectory.IDENTITY_FILE)))
          .isEqualTo(Files.readAllBytes(dir.resolve(StoreDirectory.IDENTITY_FILE)));
      int sealed = 0;
      for (Segment g : s.segments()) {
        Path c = copy.resolve(Segment.fileName(g.id));
        assertThat(inode(c))
            .as("segment %s is a file of its own", g.id)
            .isNotEqualTo(inode(g.path));
        if (g.id == active) {
          assertThat(Files.size(c)).isEqualTo(g.end);
        } else {
          if (g.id != victim) {
            assertThat(Files.readAllBytes(c)).isEqualTo(Files.readAllBytes(g.path));
          }
          assertThat(inode(copy.resolve(Segment.hintName(g.id))))
              .as("hint %s is a file of its own", g.id)
              .isNotEqualTo(inode(HintFile.path(dir, g.id)));
          sealed++;
        }
      }
      assertThat(sealed).isGreaterThan(2);
    }
  }

  @Test
  void backupHardLinks_linksSealedSegments_copiesTheActiveOne_andSharesTheirDamage()
      throws IOException {
    Path dir = root.resolve("store");
    Path copy = root.resolve("copy");
    String[] options = {
      "segment-size", "4096", "compaction-threads", "0", "backup-hard-links", "true"
    };
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      for (long i = 0; i < 600; i++) {
        write(s, i);
      }
      s.log.sealer.drain(); // hints written
      int active = s.activeSegment().id;
      Map<String, Long> expected = contents(s);
      s.backup(copy);
      int linked = 0;
      for (Segment g : s.segments()) {
        Path c = copy.resolve(Segment.fileName(g.id));
        boolean same = inode(c).equals(inode(g.path));
        if (g.id == active) {
          assertThat(same).as("the active segment is copied").isFalse();
          assertThat(Files.size(c)).isEqualTo(g.end);
        } else {
          assertThat(same).as("sealed segment %s is a hard link", g.id).isTrue();
          assertThat(inode(copy.resolve(Segment.hintName(g.id))))
              .isEqualTo(inode(HintFile.path(dir, g.id)));
          linked++;
        }
      }
      assertThat(linked).isGreaterThan(2);
      // The store goes on: overwrites, compaction deleting the linked files, more writes.
      for (long i = 600; i < 1200; i++) {
        write(s, i);
      }
      s.compact();
      try (HashLogStore c = TestStores.open(copy, Durability.SYNC, options)) {
        c.verify();
        assertThat(contents(c)).isEqualTo(expected);
        c.put(bytes("key-1"), value(99999));
        c.compact(); // deletes the copy's links; the store's files are not touched
      }
      assertThat(contents(s)).isEqualTo(modelAfter(1199));
      s.verify();
      // What the option trades: a backup that shares the live store's inodes shares its damage.
      Path shared = root.resolve("shared");
      s.backup(shared);
      Segment g = s.segments()[0];
      assertThat(g).isNotSameAs(s.activeSegment());
      assertThat(g.isRetired()).isFalse();
      Path link = shared.resolve(Segment.fileName(g.id));
      assertThat(inode(link)).isEqualTo(inode(g.path));
      flipBit(link, Files.size(link) / 2);
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(g.path.toString());
    }
  }

  @Test
  void backup_intoTheStoreThroughALink_orAsItsKeyspacesDirectory_isRefused() throws IOException {
    Path real = Files.createDirectories(root.resolve("real"));
    Path alias = Files.createSymbolicLink(root.resolve("alias"), real);
    Path dir = alias.resolve("store"); // opened through a link: its location is the real path
    String[] options = {"segment-size", "4096"};
    Map<String, String> before;
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      for (long i = 0; i < 300; i++) {
        write(s, i);
      }
      s.sync();
      // Background work writes files too (the sealer's hints, compaction): let it finish first,
      // so the listing changes only if a refused backup wrote something.
      s.log.sealer.drain();
      s.compactor.awaitIdle();
      Path into = Files.createSymbolicLink(root.resolve("into"), real.resolve("store"));
      before = listing(real.resolve("store"));
      for (Path target :
          List.of(
              dir.resolve(Keyspaces.DIR_NAME), // a name the store owns, not there yet
              dir.resolve("copy"),
              into,
              into.resolve("copy"),
              into.resolve(Keyspaces.DIR_NAME))) {
        assertThatThrownBy(() -> s.backup(target))
            .as(target.toString())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("engine 'hashlog'")
            .hasMessageContaining(real.resolve("store").toString())
            .hasMessageContaining(target.toString())
            .hasMessageContaining("own location");
      }
      assertThat(listing(real.resolve("store")))
          .as("nothing written into the store")
          .isEqualTo(before);
      s.keyspace("k").put(bytes("a"), bytes("b"));
      s.backup(alias.resolve("copy")); // beside the store through the same link: fine
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      s.verify();
      assertThat(contents(s)).isEqualTo(modelAfter(299));
      assertThat(s.keyspaces()).containsExactly("k");
    }
    try (HashLogStore c = TestStores.open(real.resolve("copy"), Durability.SYNC, options)) {
      c.verify();
      assertThat(contents(c)).isEqualTo(modelAfter(299));
      assertThat(c.keyspace("k").get(bytes("a"))).isEqualTo(bytes("b"));
    }
  }

  @Test
  void backup_openedReadOnly_readsAndVerifies_andChangesNoFile() throws IOException {
    Path dir = root.resolve("store");
    Path copy = root.resolve("copy");
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4096")) {
      for (long i = 0; i < 1000; i++) {
        write(s, i);
      }
      s.backup(copy);
    }
    Map<String, String> before = listing(copy);
    HashLogStore ro =
        HashLogProvider.open(
            TestStores.config(copy, Durability.BUFFERED)
                .option("segment-size", "4096")
                .readOnly(true)
                .build(),
            HashLogProvider.seededHasher(42));
    try (ro) {
      ro.verify();
      assertThat(contents(ro)).isEqualTo(modelAfter(999));
    }
    assertThat(listing(copy)).as("a read-only open of the copy changes nothing").isEqualTo(before);
  }

  @Test
  void backup_ofAReadOnlyStore_opensReadWrite() throws IOException {
    Path dir = root.resolve("store");
    Path copy = root.resolve("copy");
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "4096")) {
      for (long i = 0; i < 800; i++) {
        write(s, i);
      }
    }
    Map<String, String> before = listing(dir);
    HashLogStore ro =
        HashLogProvider.open(
            TestStores.config(dir, Durability.SYNC)
                .option("segment-size", "4096")
                .readOnly(true)
                .build(),
            HashLogProvider.seededHasher(42));
    try (ro) {
      ro.backup(copy);
    }
    assertThat(listing(dir)).as("the source is unchanged").isEqualTo(before);
    try (HashLogStore c = TestStores.open(copy, Durability.SYNC, "segment-size", "4096")) {
      c.verify();
      assertThat(contents(c)).isEqualTo(modelAfter(799));
      c.put(bytes("new"), value(1));
      assertThat(c.get(bytes("new"))).isEqualTo(value(1));
    }
  }

  @Test
  void backup_whenTheStoreClosesWhileItCopies_failsCleanlyAndLeavesNoCopy() throws IOException {
    Path dir = root.resolve("store");
    Path copy = root.resolve("copy");
    FaultyStorage storage = new FaultyStorage();
    HashLogStore s = TestStores.open(dir, Durability.BUFFERED, storage, "segment-size", "4096");
    for (long i = 0; i < 1000; i++) {
      write(s, i);
    }
    // At the backup's first file: everything unmapped before the active segment is copied.
    storage.beforeFirstCopy(s::close);
    assertThatThrownBy(() -> s.backup(copy)).isInstanceOf(StoreClosedException.class);
    assertThat(copy).doesNotExist();
    try (Stream<Path> left = Files.list(root)) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .as("the partial copy was deleted")
          .containsExactly("store");
    }
    try (HashLogStore again = TestStores.open(dir, Durability.BUFFERED, "segment-size", "4096")) {
      assertThat(contents(again)).isEqualTo(modelAfter(999));
    }
  }

  private static void flipBit(Path file, long offset) throws IOException {
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0x04);
    }
  }

  private static Object inode(Path p) throws IOException {
    return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
  }

  /** File name → size and modification time. */
  private static Map<String, String> listing(Path dir) throws IOException {
    Map<String, String> out = new HashMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        out.put(p.getFileName().toString(), Files.size(p) + "@" + Files.getLastModifiedTime(p));
      }
    }
    return out;
  }
}
