package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full disk, for real: the store lives on a 4 MiB tmpfs. Readers use memory mappings of the
 * segment files, which are sparse beyond their data, so the engine must meet the full disk in a
 * {@code write(2)} (an {@code IOException}) and never in a store into a mapping (a SIGBUS that
 * would kill the JVM). Needs root to mount; skipped with the reason otherwise.
 */
class DiskFullTest {
  @TempDir Path parent;
  private Path mount;

  @BeforeEach
  void mountSmallFileSystem() throws Exception {
    mount = parent.resolve("small");
    Files.createDirectories(mount);
    String out;
    try {
      out = run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.toString());
    } catch (IOException e) {
      out = e.toString();
    }
    Assumptions.assumeTrue(
        out == null, "cannot mount a 4 MiB tmpfs to fill (needs root and mount(8)): " + out);
  }

  @AfterEach
  void unmount() throws Exception {
    if (mount != null) {
      run("umount", "-l", mount.toString()); // lazy: the temp dir can go even if still busy
    }
  }

  @Test
  void put_onFullDisk_failsTheStoreCleanly_andKeepsWhatWasStored() {
    Path dir = mount.resolve("store");
    List<byte[]> stored = new ArrayList<>();
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "1MiB")) {
      StoreIOException failure = null;
      for (int i = 0; i < 10_000 && failure == null; i++) {
        byte[] v = new byte[1024];
        v[0] = (byte) i;
        v[1] = (byte) (i >>> 8);
        try {
          s.put(bytes("k" + i), v);
          stored.add(v);
        } catch (StoreIOException e) {
          failure = e;
        }
      }
      assertThat(failure).as("4 MiB cannot hold 10,000 KiB").isNotNull();
      assertThat(failure.getMessage()).contains("hashlog").contains(mount.toString());
      // A segment whose creation met the full disk is removed, with the zeros it had written.
      assertThat(headerless(dir)).as("segment files without a header").isEmpty();
      assertThat(stored.size()).as("most of the space was used first").isGreaterThan(1000);
      // Failed until reopened, with a clear error; reads go on and see every stored value.
      assertThatThrownBy(() -> s.put(bytes("after"), new byte[1]))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      for (int i = 0; i < stored.size(); i++) {
        assertThat(s.get(bytes("k" + i))).as("key k%d", i).isEqualTo(stored.get(i));
      }
    }
  }

  /**
   * A store closed cleanly on a disk another file then fills: a read-write open must write its
   * manifest and cannot, so it fails naming the cause and pointing to a read-only open, which reads
   * everything; once there is room again, the store opens read-write with everything.
   */
  @Test
  void readWriteOpen_onFullDisk_failsNamingTheCause_andReadOnlyReadsEverything()
      throws IOException {
    Path dir = mount.resolve("store");
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "256KiB")) {
      for (int i = 0; i < 100; i++) {
        s.put(bytes("k" + i), bytes("v" + i));
      }
    }
    Path filler = mount.resolve("filler");
    fill(filler);
    assertThatThrownBy(() -> TestStores.open(dir, Durability.SYNC, "segment-size", "256KiB"))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("No space left on device")
        .hasMessageContaining("a read-only open needs no free space")
        .hasMessageContaining(dir.toString());
    try (Store ro = Stores.open(StoreConfig.builder("hashlog").path(dir).readOnly(true).build())) {
      for (int i = 0; i < 100; i++) {
        assertThat(ro.get(bytes("k" + i))).as("key k%d, read-only", i).isEqualTo(bytes("v" + i));
      }
    }
    Files.delete(filler);
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "256KiB")) {
      for (int i = 0; i < 100; i++) {
        assertThat(s.get(bytes("k" + i))).as("key k%d, reopened", i).isEqualTo(bytes("v" + i));
      }
      s.verify();
      s.put(bytes("k0"), bytes("w"));
    }
  }

  /**
   * Bounded space under churn on a small disk: 750 KiB of live values on the 4 MiB file system,
   * overwritten over 250 times in 256 KiB segments, never fill it; compaction (and, where it falls
   * behind, the throttle) keeps the store within its space amplification. The peak, sampled, was
   * 2.5x–2.6x the live data, i.e. live / (1 - threshold) plus about five segments: the active one,
   * a run's output, the throttle's slack and sealed segments not yet worth compacting; here about
   * 3.2 MiB. (At 1.5 MiB live, a peak of about 5 MiB, this failed about one run in ten; at 1 MiB,
   * about 3.9 MiB, it left too little room for a slow compactor.)
   */
  @Test
  void overwrites_withRoomForCompaction_neverFillTheDisk() {
    long seed = System.nanoTime();
    Churn c = churn(750, 200_000, seed);
    assertThat(c.failure).as("seed %d, after %d writes", seed, c.acked).isNull();
    try (HashLogStore s =
        TestStores.open(mount.resolve("store"), Durability.BUFFERED, "segment-size", "256KiB")) {
      c.assertReadBack(s, "after reopen");
    }
  }

  /**
   * Overwrites of 2.5 MiB of live values on the 4 MiB file system fill it before compaction has
   * garbage enough to take (a segment becomes a victim at 40% garbage, so the store may need 1.7x
   * its live data): the write that meets the full disk fails the store, and nothing acknowledged is
   * lost, then or after a reopen. On the still-full disk {@code compact()} has no room to roll the
   * active segment or for its output: it fails with a {@link StoreIOException} naming the
   * directory, and every value still reads back. Once the file system has room again (here:
   * remounted larger), {@code compact()} reclaims the garbage and writes go on.
   */
  @Test
  void overwrites_fillingTheDisk_loseNothingAcknowledged_andCompactOnceThereIsRoom()
      throws Exception {
    long seed = System.nanoTime();
    Churn c = churn(2_600, 200_000, seed);
    assertThat(c.failure).as("seed %d: 2.5 MiB live cannot churn in 4 MiB", seed).isNotNull();
    assertThat(c.failure.getMessage()).contains("hashlog", mount.toString());
    Path dir = mount.resolve("store");
    HashLogStore reopened;
    try {
      reopened = TestStores.open(dir, Durability.BUFFERED, "segment-size", "256KiB");
    } catch (StoreIOException e) {
      // A read-write open rewrites the manifest: with not a block free it cannot, and says why.
      assertThat(e.getMessage())
          .as("seed %d", seed)
          .contains("No space left on device", dir.toString(), "read-only open");
      reopened = null;
    }
    if (reopened == null) {
      try (Store ro =
          Stores.open(StoreConfig.builder("hashlog").path(dir).readOnly(true).build())) {
        c.assertReadBack(ro, "read-only on the full disk");
      }
    } else {
      try (HashLogStore s = reopened) {
        c.assertReadBack(s, "after reopen on the full disk");
        // With little room left, the roll of the active segment or the output meets the full
        // disk; either way nothing is lost.
        try {
          s.compact();
        } catch (StoreIOException e) {
          assertThat(e.getMessage())
              .as("seed %d", seed)
              .contains("No space left on device", dir.toString());
        }
        c.assertReadBack(s, "after compact() on the full disk");
      }
    }
    assertThat(run("mount", "-o", "remount,size=8m", mount.toString())).isNull();
    // No background compactor: it could reclaim the garbage before 'before' is read, and then
    // compact() only adds the header of a new active segment and a hint.
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "256KiB", "compaction-threads", "0")) {
      long before = s.stats().diskBytes();
      s.compact();
      assertThat(TestStores.figure(s, "dead-bytes")).as("seed %d: garbage left", seed).isZero();
      assertThat(s.stats().diskBytes()).as("seed %d", seed).isLessThanOrEqualTo(before);
      s.verify();
      c.assertReadBack(s, "after compaction with room");
      s.put(bytes("k0"), new byte[] {1});
      assertThat(s.get(bytes("k0"))).isEqualTo(new byte[] {1});
    }
  }

  /** What a churn left: each key's last acknowledged value, and the failure that ended it. */
  private static final class Churn {
    final byte[][] last;
    final long seed;
    int acked;
    StoreIOException failure;

    Churn(int keys, long seed) {
      this.last = new byte[keys][];
      this.seed = seed;
    }

    void assertReadBack(Store s, String when) {
      for (int k = 0; k < last.length; k++) {
        assertThat(s.get(bytes("k" + k)))
            .as("key k%d %s, seed %d, %d acknowledged, failure %s", k, when, seed, acked, failure)
            .isEqualTo(last[k]);
      }
    }
  }

  /**
   * Overwrites random keys of {@code keys} with random 1 KiB values in 256 KiB segments until
   * {@code writes} are acknowledged or the store fails; checks every key reads its last
   * acknowledged value before closing.
   */
  private Churn churn(int keys, int writes, long seed) {
    Churn c = new Churn(keys, seed);
    SplittableRandom r = new SplittableRandom(seed);
    try (HashLogStore s =
        TestStores.open(mount.resolve("store"), Durability.BUFFERED, "segment-size", "256KiB")) {
      while (c.acked < writes && c.failure == null) {
        int k = r.nextInt(keys);
        byte[] v = new byte[1024];
        r.nextBytes(v);
        try {
          s.put(bytes("k" + k), v);
          c.last[k] = v;
          c.acked++;
        } catch (StoreIOException e) {
          c.failure = e;
        }
      }
      c.assertReadBack(s, "before close");
    }
    return c;
  }

  /** The segment files in {@code dir} whose header is missing: shorter than one, or all zeros. */
  private static List<Path> headerless(Path dir) {
    List<Path> out = new ArrayList<>();
    try (java.util.stream.Stream<Path> files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        if (!p.getFileName().toString().endsWith(".log")) {
          continue;
        }
        byte[] head = new byte[RecordCodec.FILE_HEADER];
        int n;
        try (java.io.InputStream in = Files.newInputStream(p)) {
          n = in.readNBytes(head, 0, head.length);
        }
        boolean zeros = true;
        for (byte b : head) {
          zeros &= b == 0;
        }
        if (n < head.length || zeros) {
          out.add(p);
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out;
  }

  /** Writes {@code file} until the file system is full. */
  private static void fill(Path file) throws IOException {
    byte[] block = new byte[4096];
    try (java.io.OutputStream out = Files.newOutputStream(file)) {
      while (true) {
        out.write(block);
        out.flush();
      }
    } catch (IOException e) {
      if (!String.valueOf(e.getMessage()).contains("No space left on device")) {
        throw e;
      }
    }
  }

  /** Runs a command; null when it exited 0, else its output and exit code. */
  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return "timed out";
    }
    return p.exitValue() == 0 ? null : out + " (exit " + p.exitValue() + ")";
  }
}
