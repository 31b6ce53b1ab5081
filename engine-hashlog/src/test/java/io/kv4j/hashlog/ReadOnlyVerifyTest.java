package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code verify()} of a read-only open judges the newest segment as recovery does: after a crash
 * (kill -9 of the writer, a snapshot or a copy of a live store) the preallocated zeros and a torn
 * last write past its records are not damage, and nothing is written; damage still is.
 */
class ReadOnlyVerifyTest {
  private static final Duration LINE_WAIT = Duration.ofMinutes(5);

  /** Acknowledged writes before the kill: two 1 MiB segments sealed (with hints), one active. */
  private static final int WRITES = 7_000;

  /** {@link CrashChild} writes no big value below this key. */
  private static final int NO_BIG = Integer.MAX_VALUE;

  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(Durability.class)
  void killedWriter_openedReadOnly_verifiesReadsEveryAcknowledgedKeyAndWritesNothing(Durability d)
      throws Exception {
    Path image = tmp.resolve("image");
    int lastAck = runAndKill(image, d);
    Manifest m = Manifest.read(image);
    assertThat(m.clean).as("the manifest of a killed writer").isFalse();
    Path newest = newestSegment(image);
    byte[] tail = Files.readAllBytes(newest);
    // Preallocated ahead of the writes in chunks of zeros: 1 MiB, or less when the kill landed
    // while a chunk was being written (seen once on a loaded machine: 1,048,427 bytes).
    assertThat(tail.length)
        .as("the active segment's file, preallocated")
        .isGreaterThan(4096)
        .isLessThanOrEqualTo(1 << 20);
    assertThat(Arrays.copyOfRange(tail, tail.length - 4096, tail.length))
        .as("its unwritten tail")
        .containsOnly(0);
    Map<String, String> before = files(image);

    try (HashLogStore s = openReadOnly(image, d)) {
      verifiesAndReadsEveryAcknowledgedKey(s, lastAck, d + ": acknowledged key");
      s.verify();
    }
    assertThat(files(image)).as("the read-only open and verify wrote nothing").isEqualTo(before);

    // A kill while a chunk of zeros was being written ahead of the writes leaves the active
    // segment's file short, at any length past its records: no damage either.
    Path torn = copyTree(image, tmp.resolve("torn"));
    try (java.nio.channels.FileChannel f =
        java.nio.channels.FileChannel.open(
            torn.resolve(newest.getFileName()), java.nio.file.StandardOpenOption.WRITE)) {
      f.truncate(tail.length - 149); // inside the zero tail checked above, at an odd length
    }
    try (HashLogStore s = openReadOnly(torn, d)) {
      verifiesAndReadsEveryAcknowledgedKey(
          s, lastAck, d + ": torn preallocation, acknowledged key");
    }

    // Damage in a sealed segment (read at open through its hint, not its records) is reported.
    Path flipped = copyTree(image, tmp.resolve("flipped"));
    Path sealed = flipped.resolve(Segment.fileName(TestStores.writeSegment(1)));
    assertThat(HintFile.path(flipped, TestStores.writeSegment(1))).exists();
    flipBit(sealed, Files.size(sealed) / 2);
    try (HashLogStore s = openReadOnly(flipped, d)) {
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(sealed.toString());
    }

    // Damage in the newest segment's records, with valid records after it, is reported.
    Path newestFlipped = copyTree(image, tmp.resolve("newest-flipped"));
    Path n = newestFlipped.resolve(newest.getFileName());
    try (HashLogStore s = openReadOnly(newestFlipped, d)) {
      flipBit(n, RecordCodec.FILE_HEADER + 20);
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(n.toString())
          .hasMessageContaining("offset " + RecordCodec.FILE_HEADER);
    }
  }

  /** {@code verify()} passes, then every key up to {@code lastAck} holds the child's value. */
  private static void verifiesAndReadsEveryAcknowledgedKey(
      HashLogStore s, int lastAck, String what) {
    s.verify();
    for (int i = 0; i <= lastAck; i++) {
      assertThat(s.get(CrashChild.key(i)))
          .as("%s %d", what, i)
          .isEqualTo(CrashChild.value(i, NO_BIG));
    }
  }

  @Test
  void copyOfALiveStore_openedReadOnly_verifiesAndReadsEverything() throws IOException {
    Path dir = tmp.resolve("live");
    Path image = tmp.resolve("image");
    Map<String, byte[]> model = new TreeMap<>();
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "256KiB")) {
      for (int i = 0; i < 3_000; i++) {
        byte[] v = TestStores.bytes("value-" + i + "-" + "x".repeat(i % 200));
        s.put(TestStores.bytes("key-" + i), v);
        model.put("key-" + i, v);
      }
      s.log.sealer.drain();
      assertThat(s.activeSegment().end).isLessThan(256 << 10);
      // Copied while the writer holds it, as a copy or a snapshot of a live store is.
      Files.createDirectories(image);
      try (Stream<Path> files = Files.list(dir)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          Files.copy(p, image.resolve(p.getFileName()));
        }
      }
    }
    Map<String, String> before = files(image);
    try (HashLogStore s = openReadOnly(image, Durability.BUFFERED)) {
      s.verify();
      for (Map.Entry<String, byte[]> e : model.entrySet()) {
        assertThat(s.get(TestStores.bytes(e.getKey()))).as(e.getKey()).isEqualTo(e.getValue());
      }
    }
    assertThat(files(image)).isEqualTo(before);
  }

  @Test
  void cleanlyClosedStore_openedReadOnly_passesWithZerosPastItsEnd_andReportsDamage()
      throws IOException {
    Path dir = tmp.resolve("clean");
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, "segment-size", "64KiB")) {
      for (int i = 0; i < 1_000; i++) {
        s.put(TestStores.bytes("key-" + i), TestStores.bytes("value-" + i));
      }
    }
    Path newest = newestSegment(dir);
    // Zeros past the end recorded at the clean close: recovery accepts them (only non-zero bytes
    // there are damage), and so does verify.
    Path zeros = copyTree(dir, tmp.resolve("zeros"));
    Path z = zeros.resolve(newest.getFileName());
    Files.write(z, new byte[4096], StandardOpenOption.APPEND);
    Map<String, String> before = files(zeros);
    try (HashLogStore s = openReadOnly(zeros, Durability.SYNC)) {
      s.verify();
      assertThat(s.get(TestStores.bytes("key-999"))).isEqualTo(TestStores.bytes("value-999"));
      assertThat(files(zeros)).as("nothing written or cut").isEqualTo(before);
      // Written after the open: what the open judged no longer holds.
      Files.write(z, new byte[] {1, 2, 3}, StandardOpenOption.APPEND);
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(z.toString());
    }
    Path bits = copyTree(dir, tmp.resolve("bits"));
    Path b = bits.resolve(newest.getFileName());
    try (HashLogStore s = openReadOnly(bits, Durability.SYNC)) {
      s.verify();
      flipBit(b, RecordCodec.FILE_HEADER + 20);
      assertThatThrownBy(s::verify)
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(b.toString())
          .hasMessageContaining("offset " + RecordCodec.FILE_HEADER);
    }
  }

  private static HashLogStore openReadOnly(Path dir, Durability d) {
    StoreConfig c = TestStores.config(dir, d).readOnly(true).build();
    return HashLogProvider.open(c, HashLogProvider.seededHasher(42));
  }

  /** Starts a writer child, kills it after {@link #WRITES} acknowledged puts; the last ack read. */
  private static int runAndKill(Path dir, Durability d) throws Exception {
    int lastAck = -1;
    try (ChildProcess c =
        TestStores.child(
            256,
            CrashChild.class,
            dir.toString(),
            d.name(),
            Integer.toString(NO_BIG),
            Boolean.toString(false))) {
      boolean killed = false;
      for (String line = c.readLine(LINE_WAIT); line != null; line = c.readLine(LINE_WAIT)) {
        if (line.startsWith("ack ")) {
          lastAck = Integer.parseInt(line.substring(4).trim());
          if (lastAck >= WRITES && !killed) {
            c.kill(); // SIGKILL while it writes on
            killed = true;
          }
        }
      }
      assertThat(killed).as("the child reached %d writes: %s", WRITES, c.describe()).isTrue();
    }
    return lastAck;
  }

  private static Path newestSegment(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".log")).sorted().reduce((a, b) -> b).get();
    }
  }

  /** Every file's length and SHA-256 by name. */
  private static Map<String, String> files(Path dir) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        byte[] b = Files.readAllBytes(p);
        try {
          byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(b);
          out.put(p.getFileName().toString(), b.length + " " + HexFormat.of().formatHex(sha));
        } catch (java.security.NoSuchAlgorithmException e) {
          throw new AssertionError(e);
        }
      }
    }
    return out;
  }

  private static Path copyTree(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Files.copy(p, to.resolve(p.getFileName()));
      }
    }
    return to;
  }

  private static void flipBit(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0x10);
    }
  }
}
