package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreLockedException;
import io.kv4j.spi.StoreDirectory;
import io.kv4j.tck.ChildProcess;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Keyspaces as sub-stores in {@code keyspaces/<name>/}: crashes, drops, damage, the layout. */
class KeyspaceTest {
  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(Durability.class)
  void killDuringKeyspaceWritesAndDrops_keepsEveryAcknowledgedWriteAndDrop(Durability d)
      throws Exception {
    Path dir = tmp.resolve("s");
    List<String> lines = runAndKill(dir, d, "write", "ack 40");
    int lastAck = -1;
    for (String l : lines) {
      if (l.startsWith("ack ")) {
        lastAck = Integer.parseInt(l.substring(4).trim());
      }
    }
    assertThat(lastAck).as("acknowledged rounds").isGreaterThanOrEqualTo(40);
    try (Store s = TestStores.open(dir, d, "segment-size", "64KiB")) {
      List<String> names = s.keyspaces();
      // Every acknowledged drop stays dropped; the round in flight may have left its keyspace.
      assertThat(names).startsWith("a", "b");
      for (String n : names.subList(2, names.size())) {
        assertThat(n).as("only the in-flight round's keyspace").isEqualTo("t" + (lastAck + 1));
      }
      assertThat(Files.list(dir.resolve(Keyspaces.DIR_NAME)).map(p -> p.getFileName().toString()))
          .as("drop leftovers deleted at open")
          .noneMatch(n -> n.startsWith("."));
      Store a = s.keyspace("a");
      Store b = s.keyspace("b");
      for (int i = 0; i <= lastAck; i++) {
        byte[] k = KeyspaceCrashChild.key(i);
        assertThat(a.get(k)).as("a " + i).isEqualTo(KeyspaceCrashChild.value("a", i));
        assertThat(b.get(k)).as("b " + i).isEqualTo(KeyspaceCrashChild.value("b", i));
        assertThat(s.get(k)).as("default " + i).isEqualTo(KeyspaceCrashChild.value("default", i));
      }
      for (Store k : List.of(a, b, s)) {
        byte[] next = k.get(KeyspaceCrashChild.key(lastAck + 2));
        assertThat(next).as("nothing beyond the write in flight").isNull();
      }
      assertThat(a.get(KeyspaceCrashChild.key(0))).isNotNull();
      s.verify();
    }
  }

  @Test
  void killAfterTheDropsRename_dropIsDurable_andTheLeftoverIsDeletedAtOpen() throws Exception {
    Path dir = tmp.resolve("s");
    runAndKill(dir, Durability.SYNC, "drop", "renamed");
    Path ks = dir.resolve(Keyspaces.DIR_NAME);
    assertThat(Files.isDirectory(ks.resolve(".drop-gone"))).as("killed before deletion").isTrue();
    assertThat(Files.exists(ks.resolve("gone"))).isFalse();
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      assertThat(s.keyspaces()).containsExactly("kept");
      assertThat(Files.exists(ks.resolve(".drop-gone"))).isFalse();
      Store kept = s.keyspace("kept");
      for (int i = 0; i < 100; i++) {
        assertThat(kept.get(KeyspaceCrashChild.key(i)))
            .isEqualTo(KeyspaceCrashChild.value("kept", i));
      }
      assertThat(s.keyspace("gone").get(KeyspaceCrashChild.key(0))).as("empty again").isNull();
      s.verify();
    }
  }

  @Test
  void dropLeftoverOfACrashBeforeTheRename_keyspaceStaysWhole() throws Exception {
    Path dir = tmp.resolve("s");
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      s.keyspace("x").put(bytes("k"), bytes("v"));
    }
    // A crash after a drop closed the sub-store, before its rename: nothing on disk changed.
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      assertThat(s.keyspaces()).containsExactly("x");
      assertThat(s.keyspace("x").get(bytes("k"))).isEqualTo(bytes("v"));
    }
  }

  @Test
  void bitFlipInAKeyspaceSegment_isDetectedByVerifyAndTheRead() throws Exception {
    Path dir = tmp.resolve("s");
    byte[] key = bytes("key-00000100");
    try (Store s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
      Store k = s.keyspace("k");
      for (int i = 0; i < 2000; i++) {
        k.put(bytes(String.format("key-%08d", i)), bytes("value-" + i + "-" + "v".repeat(100)));
      }
      s.put(key, bytes("own"));
    }
    Path sub = dir.resolve(Keyspaces.DIR_NAME).resolve("k");
    Path first = sub.resolve(String.format("seg-%08x.log", TestStores.writeSegment(1)));
    assertThat(first).exists();
    byte[] bytes = Files.readAllBytes(first);
    int at = indexOf(bytes, bytes("value-100-"));
    assertThat(at).as("value of key 100 in the first segment").isPositive();
    try (RandomAccessFile f = new RandomAccessFile(first.toFile(), "rw")) {
      f.seek(at + 3);
      f.write(bytes[at + 3] ^ 0x10);
    }
    try (Store s = TestStores.open(dir, Durability.SYNC, "segment-size", "64KiB")) {
      assertThat(s.get(key)).as("the store's own keys are untouched").isEqualTo(bytes("own"));
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(first.getFileName().toString())
          .hasMessageContaining(Keyspaces.DIR_NAME + "/k");
      Store k = s.keyspace("k");
      assertThatThrownBy(() -> k.get(key))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(first.getFileName().toString());
      assertThat(k.get(bytes("key-00000101"))).isNotNull();
    }
  }

  @Test
  void keyspacesDirectory_acceptsKeyspaces_rejectsGarbage() throws Exception {
    Path dir = tmp.resolve("s");
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      s.keyspace("x").put(bytes("k"), bytes("v"));
      s.put(bytes("own"), bytes("v"));
    }
    Path ks = dir.resolve(Keyspaces.DIR_NAME);
    // Adopted without its identity file: "keyspaces" is one of the engine's own names.
    Files.delete(dir.resolve(StoreDirectory.IDENTITY_FILE));
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      assertThat(s.keyspace("x").get(bytes("k"))).isEqualTo(bytes("v"));
    }
    Files.writeString(ks.resolve("junk.txt"), "junk");
    assertThatThrownBy(() -> TestStores.open(dir, Durability.SYNC).close())
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("junk.txt");
    Files.delete(ks.resolve("junk.txt"));
    Files.createDirectory(ks.resolve("-bad"));
    assertThatThrownBy(() -> TestStores.open(dir, Durability.SYNC).close())
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("-bad");
    Files.delete(ks.resolve("-bad"));
    Files.delete(dir.resolve(StoreDirectory.IDENTITY_FILE));
    Files.writeString(dir.resolve("junk.txt"), "junk");
    assertThatThrownBy(() -> TestStores.open(dir, Durability.SYNC).close())
        .as("the store directory's unknown-file check still rejects garbage")
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("junk.txt");
    Files.delete(dir.resolve("junk.txt"));
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      assertThat(s.keyspaces()).containsExactly("x");
      s.verify();
    }
  }

  @Test
  void storeLockCoversKeyspaces_aKeyspaceDirectoryIsNotAStoreOfItsOwn() {
    Path dir = tmp.resolve("s");
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      s.keyspace("x").put(bytes("k"), bytes("v"));
      s.keyspace("y");
      assertThatThrownBy(() -> TestStores.open(dir, Durability.SYNC))
          .isInstanceOf(StoreLockedException.class);
      for (String n : List.of("x", "y")) {
        Path sub = dir.resolve(Keyspaces.DIR_NAME).resolve(n);
        assertThatThrownBy(() -> TestStores.open(sub, Durability.SYNC))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("keyspace '" + n + "'");
      }
    }
    Path sub = dir.resolve(Keyspaces.DIR_NAME).resolve("x");
    assertThatThrownBy(() -> TestStores.open(sub, Durability.SYNC))
        .as("also while the store is closed")
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void readOnlyStore_opensNoKeyspaceWhileAWriterHoldsTheStore() {
    Path dir = tmp.resolve("s");
    try (Store s = TestStores.open(dir, Durability.SYNC)) {
      s.keyspace("x").put(bytes("k"), bytes("x1"));
      s.keyspace("y").put(bytes("k"), bytes("y1"));
      s.keyspace("z").put(bytes("k"), bytes("z1"));
    }
    try (Store r =
        HashLogProvider.open(
            TestStores.config(dir, Durability.SYNC).readOnly(true).build(),
            HashLogProvider.seededHasher(42))) {
      assertThat(r.keyspace("x").get(bytes("k"))).isEqualTo(bytes("x1"));
      try (Store w = TestStores.open(dir, Durability.SYNC)) {
        // The writer holds the store's lock, which is the only lock covering its keyspaces: "y",
        // opened by the writer, and "z", which it could open at any moment, are both refused.
        w.keyspace("y").put(bytes("k"), bytes("y2"));
        for (String n : List.of("y", "z")) {
          assertThatThrownBy(() -> r.keyspace(n))
              .as("keyspace %s", n)
              .isInstanceOf(StoreLockedException.class)
              .hasMessageContaining("open for writing");
        }
      }
      assertThat(r.keyspace("y").get(bytes("k")))
          .as("once the writer closed")
          .isEqualTo(bytes("y2"));
      assertThat(r.keyspace("z").get(bytes("k"))).isEqualTo(bytes("z1"));
    }
  }

  @Test
  void dropRacingReadsAndWrites_endsThemWithClosedErrors_otherKeyspacesGoOn() throws Exception {
    Path dir = tmp.resolve("s");
    try (Store s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
      for (int round = 0; round < 5; round++) {
        Store victim = s.keyspace("victim");
        Store other = s.keyspace("other");
        for (int i = 0; i < 500; i++) {
          victim.put(bytes("k" + i), bytes("v" + i));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> wrong = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
          int id = t;
          threads.add(
              new Thread(
                  () -> {
                    try {
                      for (int i = 0; !stop.get(); i++) {
                        byte[] k = bytes("k" + (i % 500));
                        if (id == 0) {
                          byte[] v = victim.get(k);
                          if (v != null && !new String(v).equals("v" + (i % 500))) {
                            wrong.set(new AssertionError("wrong value " + new String(v)));
                          }
                        } else {
                          victim.put(k, bytes("v" + (i % 500)));
                        }
                      }
                    } catch (StoreClosedException expected) {
                      // the drop closed the handle or the sub-store under the call
                    } catch (Throwable e) {
                      wrong.set(e);
                    }
                  }));
        }
        threads.forEach(Thread::start);
        other.put(bytes("r" + round), bytes("x"));
        assertThat(s.dropKeyspace("victim")).isTrue();
        stop.set(true);
        for (Thread t : threads) {
          t.join(60_000);
          assertThat(t.isAlive()).isFalse();
        }
        assertThat(wrong.get()).as("round " + round).isNull();
        assertThat(other.get(bytes("r" + round))).isEqualTo(bytes("x"));
        assertThat(s.keyspace("victim").get(bytes("k1"))).as("empty after the drop").isNull();
      }
      assertThat(s.keyspaces()).containsExactly("other", "victim");
    }
  }

  @Test
  void storeWithoutKeyspaces_gainsThem_andBackupHoldsEveryKeyspaceAsCopies() throws Exception {
    Path dir = tmp.resolve("s");
    try (Store s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
      for (int i = 0; i < 1000; i++) {
        s.put(bytes("k" + i), bytes("v".repeat(100)));
      }
    }
    assertThat(dir.resolve(Keyspaces.DIR_NAME)).doesNotExist();
    Path copy = tmp.resolve("copy");
    try (Store s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "64KiB")) {
      assertThat(s.keyspaces()).isEmpty();
      Store k = s.keyspace("k");
      for (int i = 0; i < 1000; i++) {
        k.put(bytes("k" + i), bytes("w".repeat(100)));
      }
      s.keyspace("empty");
      s.backup(copy);
    }
    try (Store c = TestStores.open(copy, Durability.SYNC, "segment-size", "64KiB")) {
      assertThat(c.keyspaces()).containsExactly("empty", "k");
      c.verify();
      assertThat(c.keyspace("k").get(bytes("k999"))).isEqualTo(bytes("w".repeat(100)));
      assertThat(c.keyspace("empty").stats().keyCount()).isZero();
      assertThat(c.get(bytes("k999"))).isEqualTo(bytes("v".repeat(100)));
    }
    Path sealed =
        dir.resolve(Keyspaces.DIR_NAME)
            .resolve("k")
            .resolve(String.format("seg-%08x.log", TestStores.writeSegment(1)));
    Path copied = copy.resolve(dir.relativize(sealed));
    assertThat(Files.readAllBytes(copied)).isEqualTo(Files.readAllBytes(sealed));
    assertThat(Files.isSameFile(sealed, copied))
        .as("sealed keyspace segment copied into a file of its own")
        .isFalse();
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** Runs the child until it prints {@code killAt}, kills it with SIGKILL; its output lines. */
  private static List<String> runAndKill(Path dir, Durability d, String mode, String killAt)
      throws Exception {
    List<String> lines = new ArrayList<>();
    try (ChildProcess c =
        TestStores.child(256, KeyspaceCrashChild.class, dir.toString(), d.name(), mode)) {
      Duration wait = Duration.ofMinutes(5);
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        lines.add(line);
        if (line.equals(killAt)) {
          c.kill(); // SIGKILL, mid-round or parked in the hook
        }
      }
      assertThat(lines).as("the child reached its kill point: %s", c.describe()).contains(killAt);
    }
    return lines;
  }
}
