package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kv4j salvage: a hashlog store with one flipped bit, salvaged into another engine. */
class SalvageTest {
  @TempDir Path dir;

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String value(int i) {
    return String.format("value-%03d-", i) + "x".repeat(200);
  }

  private Path closedStore(int keys) {
    Path store = dir.resolve("broken");
    try (Store s = Stores.open("hashlog:" + store)) {
      for (int i = 0; i < keys; i++) {
        s.put(utf8(String.format("key-%03d", i)), utf8(value(i)));
      }
    }
    return store;
  }

  /** Every file's name and SHA-256: salvage must leave the source exactly as it was. */
  private static Map<String, String> fingerprint(Path store) throws Exception {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.walk(store)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(p)) {
          byte[] d = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
          out.put(store.relativize(p).toString(), HexFormat.of().formatHex(d));
        } else {
          out.put(store.relativize(p) + "/", "dir");
        }
      }
    }
    return out;
  }

  private static Path segmentHolding(Path store, byte[] needle) throws Exception {
    try (Stream<Path> files = Files.list(store)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        if (p.getFileName().toString().endsWith(".log")
            && indexOf(Files.readAllBytes(p), needle) >= 0) {
          return p;
        }
      }
    }
    throw new AssertionError("no segment of " + store + " holds " + new String(needle));
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

  @Test
  void salvage_oneFlippedBit_writes29Of30ToAnotherEngineAndLeavesTheSourceAlone() throws Exception {
    Path store = closedStore(30);
    Path segment = segmentHolding(store, utf8(value(10)));
    byte[] bytes = Files.readAllBytes(segment);
    int at = indexOf(bytes, utf8(value(10)));
    bytes[at + 50] ^= 0x04;
    Files.write(segment, bytes);
    Map<String, String> before = fingerprint(store);
    Cli.Run refused = Cli.inProcess("get", "hashlog:" + store, "key-011");
    Path rescued = dir.resolve("rescued");

    Cli.Run r = Cli.inProcess("salvage", "hashlog:" + store, "sqlite:" + rescued);

    assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.CORRUPT);
    assertThat(r.out())
        .as("%s", r)
        .contains("LOST " + segment)
        .contains("DAMAGED: 29 entries")
        .contains("1 damaged region(s), 1 entries lost");
    assertThat(fingerprint(store)).as("the source after salvage").isEqualTo(before);
    try (Store s = Stores.open("sqlite:" + rescued + "?read-only=true")) {
      Map<String, String> got = new TreeMap<>();
      try (var c = s.scan(KeyRange.all())) {
        while (c.hasNext()) {
          Entry e = c.next();
          got.put(
              new String(e.key(), StandardCharsets.UTF_8),
              new String(e.value(), StandardCharsets.UTF_8));
        }
      }
      assertThat(got).hasSize(29).doesNotContainKey("key-010");
      for (int i = 0; i < 30; i++) {
        if (i != 10) {
          assertThat(got.get(String.format("key-%03d", i))).as("key %d", i).isEqualTo(value(i));
        }
      }
    }
    // What made salvage necessary: the normal open (or read) of the damaged store fails.
    assertThat(refused.exit()).as("%s", refused).isEqualTo(ExitCode.CORRUPT);
  }

  @Test
  void salvage_intactStore_exits0WithEveryEntry() throws Exception {
    Path store = closedStore(30);
    Path rescued = dir.resolve("rescued");

    Cli.Run r = Cli.inProcess("salvage", "hashlog:" + store, "hashlog:" + rescued);

    assertThat(r.exit()).as("%s", r).isZero();
    assertThat(r.out()).as("%s", r).contains("OK: 30 entries").contains("no damage found");
    Cli.Run verify = Cli.inProcess("verify", "hashlog:" + rescued);
    assertThat(verify.exit()).as("%s", verify).isZero();
    assertThat(verify.out()).contains("OK: 30 entries");
  }

  @Test
  void salvage_nonEmptyTargetOrSameStore_isAUsageErrorAndWritesNothing() throws Exception {
    Path store = closedStore(3);
    Path other = dir.resolve("other");
    try (Store s = Stores.open("hashlog:" + other)) {
      s.put(utf8("mine"), utf8("keep"));
    }
    Map<String, String> before = fingerprint(store);

    Cli.Run full = Cli.inProcess("salvage", "hashlog:" + store, "hashlog:" + other);
    Cli.Run same = Cli.inProcess("salvage", "hashlog:" + store, "sqlite:" + store);

    assertThat(full.exit()).as("%s", full).isEqualTo(ExitCode.USAGE);
    assertThat(full.err()).contains("not empty");
    assertThat(same.exit()).as("%s", same).isEqualTo(ExitCode.USAGE);
    assertThat(same.err()).contains("same store");
    assertThat(fingerprint(store)).isEqualTo(before);
    try (Store s = Stores.open("hashlog:" + other)) {
      assertThat(s.get(utf8("mine"))).isEqualTo(utf8("keep"));
      assertThat(s.stats().keyCount()).isEqualTo(1);
    }
  }
}
