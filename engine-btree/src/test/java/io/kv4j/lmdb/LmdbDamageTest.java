package io.kv4j.lmdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The damage contract, applied the way the TCK's rule group 12 applies it and more: a store written
 * with durability=SYNC and closed cleanly is copied, one file of each copy is damaged, and a child
 * JVM opens every copy read-write and checks that the open fails with a StoreException, or that
 * every key reads its exact value or StoreCorruptedException, absent keys being reported by a scan
 * or verify(). A native crash or a hang of the child fails the test with the case it was on.
 */
class LmdbDamageTest {
  private static final long SEED = 20_261_202L;

  @TempDir Path tmp;

  private final Map<Path, String> cases = new LinkedHashMap<>();
  private final Map<Path, Map<String, Long>> sizes = new LinkedHashMap<>();

  @Test
  void everyDamage_failsTheOpenOrIsReported_neverCrashesOrLies() throws Exception {
    Path ref = tmp.resolve("ref");
    LmdbDamageMain.write(ref);
    // The reference store reads back whole (also proves the child's checks against a clean copy).
    Path clean = copy(ref, "clean");
    cases.put(clean, "no damage");
    List<String> files;
    try (Stream<Path> l = Files.list(ref)) {
      files = l.map(p -> p.getFileName().toString()).sorted().toList();
    }
    assertThat(files).contains("data.mdb", "lock.mdb", "kv4j.store");
    for (String f : files) {
      long size = Files.size(ref.resolve(f));
      damage(ref, f, "truncate to half", c -> truncate(c, f, size / 2));
      damage(ref, f, "truncate to 0", c -> truncate(c, f, 0));
      damage(ref, f, "delete", c -> Files.delete(c.resolve(f)));
      damage(ref, f, "flip a bit in the middle", c -> flip(c, f, size / 2, 3));
      damage(ref, f, "zero 4 KiB in the middle", c -> zero(c, f, size / 2 - 2048, 4096));
    }
    long dataSize = Files.size(ref.resolve("data.mdb"));
    long used = dataSize - LmdbStore.TAIL;
    Random r = new Random(SEED);
    for (int i = 0; i < 40; i++) {
      long at = r.nextLong(used);
      int bit = r.nextInt(8);
      damage(
          ref,
          "data.mdb",
          "flip bit " + bit + " at " + at + " (seed " + SEED + ")",
          c -> flip(c, "data.mdb", at, bit));
    }
    for (int i = 0; i < 16; i++) {
      long at = i % 2 == 0 ? r.nextLong(used / 4096) * 4096 : r.nextLong(used - 4096);
      damage(
          ref,
          "data.mdb",
          "zero 4 KiB at " + at + " (seed " + SEED + ")",
          c -> zero(c, "data.mdb", at, 4096));
    }
    for (long at : new long[] {10, 16, 20, 40, 136, 144, 4096 + 16, 4096 + 144}) {
      damage(
          ref,
          "data.mdb",
          "flip the low bit of meta field at " + at,
          c -> flip(c, "data.mdb", at, 0));
    }
    // A leaf node's flags: 0x04 (duplicates) makes LMDB dereference the duplicate-sort cursor this
    // database lacks (a SIGSEGV, found by hand); 0x02 (sub-database), 0x01 (overflow value).
    long flagsAt = leafNodeFlags(ref.resolve("data.mdb"), 5);
    for (int flag : new int[] {0x04, 0x02, 0x01}) {
      damage(
          ref,
          "data.mdb",
          "set flag 0x" + flag + " on a leaf node (flags at " + flagsAt + ")",
          c -> flip(c, "data.mdb", flagsAt, Integer.numberOfTrailingZeros(flag)));
    }
    damage(ref, "data.mdb", "zero meta page 1", c -> zero(c, "data.mdb", 4096, 4096));
    damage(ref, "data.mdb", "truncate to one page", c -> truncate(c, "data.mdb", 4096));
    damage(
        ref,
        "data.mdb",
        "truncate to the last page in use minus one page",
        c -> truncate(c, "data.mdb", used - 4096));
    damage(
        ref,
        "kv4j.store",
        "directory of another engine",
        c -> {
          for (String f : files) {
            Files.delete(c.resolve(f));
          }
          Files.writeString(c.resolve("kv4j.store"), identity("hashlog"));
          Files.write(c.resolve("seg-00000001.log"), new byte[100]);
        });

    List<String> dirs = new ArrayList<>();
    for (Path c : cases.keySet()) {
      dirs.add(c.toString());
    }
    Map<String, String> verdicts = new LinkedHashMap<>();
    try (ChildProcess child =
        ChildProcess.java(LmdbDamageMain.class, dirs.toArray(new String[0]))
            .jvmOptions("-Xmx256m", "-XX:-CreateCoredumpOnCrash")
            .directory(tmp)
            .start()) {
      boolean done = true;
      int exit;
      try {
        exit = child.await(Duration.ofMinutes(10));
      } catch (AssertionError hung) { // killed; wait for the last of its output
        done = false;
        exit = child.await(Duration.ofMinutes(1));
      }
      String last = null;
      for (String line : child.stdoutLines()) {
        if (line.startsWith("BEGIN ")) {
          last = line.substring(6);
        } else if (line.startsWith("END ")) {
          String rest = line.substring(4);
          int sp = rest.indexOf(' ');
          verdicts.put(rest.substring(0, sp), rest.substring(sp + 1));
          last = null;
        }
      }
      assertThat(done)
          .as("child finished (hung on case %s): %s", describe(last), child.describe())
          .isTrue();
      assertThat(exit)
          .as("child exit (crashed on case %s): %s", describe(last), child.describe())
          .isZero();
    }
    List<String> failures = new ArrayList<>();
    StringBuilder report = new StringBuilder();
    for (Map.Entry<Path, String> c : cases.entrySet()) {
      String v = verdicts.get(c.getKey().toString());
      report.append(c.getValue()).append(": ").append(v).append('\n');
      if (v == null || !v.startsWith("OK")) {
        failures.add(c.getValue() + ": " + v);
      }
      for (Map.Entry<String, Long> f : sizes.get(c.getKey()).entrySet()) {
        Path file = c.getKey().resolve(f.getKey());
        if (!Files.exists(file) || Files.size(file) < f.getValue()) {
          failures.add(c.getValue() + ": the open deleted or shortened " + f.getKey());
        }
      }
    }
    Files.writeString(tmp.resolve("report.txt"), report);
    System.out.println(report);
    assertThat(failures).as("report:\n%s", report).isEmpty();
    assertThat(verdicts.get(clean.toString()))
        .startsWith("OK opened: exact=3000 reported=0 absent=0");
  }

  private interface Damage {
    void apply(Path copy) throws IOException;
  }

  private void damage(Path ref, String file, String what, Damage d) throws IOException {
    Path c = copy(ref, "case" + cases.size());
    d.apply(c);
    cases.put(c, file + ": " + what);
    Map<String, Long> s = new LinkedHashMap<>();
    try (Stream<Path> l = Files.list(c)) {
      for (Path p : l.toList()) {
        s.put(p.getFileName().toString(), Files.size(p));
      }
    }
    sizes.put(c, s);
  }

  private String describe(String dir) {
    return dir == null ? "(none)" : cases.get(Path.of(dir)) + " in " + dir;
  }

  private Path copy(Path ref, String name) throws IOException {
    Path c = tmp.resolve(name);
    Files.createDirectories(c);
    try (Stream<Path> l = Files.list(ref)) {
      for (Path p : l.toList()) {
        Files.copy(p, c.resolve(p.getFileName()));
      }
    }
    sizes.put(c, Map.of());
    return c;
  }

  private static void truncate(Path dir, String f, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(dir.resolve(f), StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }

  private static void flip(Path dir, String f, long at, int bit) throws IOException {
    try (FileChannel ch =
        FileChannel.open(dir.resolve(f), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ (1 << bit)));
      b.rewind();
      ch.write(b, at);
    }
  }

  private static void zero(Path dir, String f, long at, int len) throws IOException {
    try (FileChannel ch = FileChannel.open(dir.resolve(f), StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(len), Math.max(0, at));
    }
  }

  /** The file offset of the flags of node {@code index} of the main database's first leaf. */
  private static long leafNodeFlags(Path data, int index) throws IOException {
    ByteBuffer d =
        ByteBuffer.wrap(Files.readAllBytes(data)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    int ps = d.getInt(40);
    int meta = d.getLong(144) > d.getLong(ps + 144) ? 0 : ps;
    long pg = d.getLong(meta + 88 + 40);
    while (true) {
      int off = (int) (pg * ps);
      int flags = d.getShort(off + 10);
      if ((flags & 1) == 0) {
        int node = d.getShort(off + 16 + 2 * index) & 0xFFFF;
        return off + node + 4;
      }
      int node = d.getShort(off + 16) & 0xFFFF;
      pg =
          (d.getShort(off + node) & 0xFFFFL)
              | (d.getShort(off + node + 2) & 0xFFFFL) << 16
              | (d.getShort(off + node + 4) & 0xFFFFL) << 32;
    }
  }

  private static String identity(String engine) {
    String body =
        "# kv4j store identity\nengine=" + engine + "\nformat=1\ncreated=2026-01-01T00:00:00Z\n";
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(body.getBytes(StandardCharsets.UTF_8));
    return body + "crc32c=" + String.format("%08x", crc.getValue()) + "\n";
  }
}
