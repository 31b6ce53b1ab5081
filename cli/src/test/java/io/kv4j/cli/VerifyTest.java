package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kv4j verify on an intact hashlog store and after a byte of a closed store's segment flipped. */
class VerifyTest {
  @TempDir Path dir;

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
  void verify_flippedByteInSealedSegment_reportsFileAndOffsetAndExits3() throws Exception {
    Path store = dir.resolve("hl");
    String uri = "hashlog:" + store + "?segment-size=4KiB";
    try (Store s = Stores.open(uri)) {
      for (int i = 0; i < 120; i++) {
        s.put(
            String.format("key-%03d", i).getBytes(StandardCharsets.UTF_8),
            (String.format("value-%03d-", i) + "x".repeat(100)).getBytes(StandardCharsets.UTF_8));
      }
    }
    Cli.Run ok = Cli.process(dir, "verify", uri);
    assertThat(ok.exit()).as("%s", ok).isZero();
    assertThat(ok.out()).contains("OK: 120 entries", "no corruption found");

    Path segment = store.resolve("seg-00000001.log");
    assertThat(Files.list(store).filter(p -> p.toString().endsWith(".log")).count())
        .as("the store must have several segments so segment 1 is sealed")
        .isGreaterThan(2);
    byte[] bytes = Files.readAllBytes(segment);
    int at = indexOf(bytes, "value-010-".getBytes(StandardCharsets.UTF_8));
    assertThat(at).as("value of key-010 in %s", segment).isPositive();
    int flipped = at + 20;
    bytes[flipped] ^= 0x01;
    Files.write(segment, bytes);

    Cli.Run bad = Cli.process(dir, "verify", uri);
    assertThat(bad.exit()).as("%s", bad).isEqualTo(ExitCode.CORRUPT);
    String all = bad.out() + bad.err();
    Matcher m =
        Pattern.compile(Pattern.quote(segment.toString()) + ",? offset (\\d+)").matcher(all);
    assertThat(m.find()).as("%s", bad).isTrue();
    long offset = Long.parseLong(m.group(1));
    assertThat(offset).as("record offset").isBetween(1L, (long) flipped);
    assertThat(bad.err()).as("%s", bad).startsWith("kv4j: error: ");
    // The forward scan stops at key-010; the reverse scan reads everything above it.
    assertThat(bad.out())
        .as("%s", bad)
        .contains("UNREADABLE entries after key key-009 and before key key-011")
        .contains("FAILED: 119 entries");
  }

  @Test
  void verify_emptyOrMissingDirectory_exits2AsNoStore() throws Exception {
    Files.createDirectories(dir.resolve("empty"));
    for (String path : new String[] {"empty", "absent"}) {
      Cli.Run r = Cli.inProcess("verify", "hashlog:" + dir.resolve(path));
      assertThat(r.exit()).as("%s: %s", path, r).isEqualTo(ExitCode.NOT_FOUND);
      assertThat(r.err()).contains("no store at");
    }
    assertThat(dir.resolve("empty")).isEmptyDirectory();
    assertThat(dir.resolve("absent")).doesNotExist();
  }

  @Test
  void verifyAndGet_storeOfAnotherEngine_exit7NamingBothEnginesAndCreateNothing() throws Exception {
    Path store = dir.resolve("hl");
    try (Store s = Stores.open("hashlog:" + store)) {
      s.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
    }
    java.util.List<Path> before;
    try (var l = Files.list(store)) {
      before = l.sorted().toList();
    }
    Cli.Run verify = Cli.inProcess("verify", "sqlite:" + store);
    assertThat(verify.exit()).as("%s", verify).isEqualTo(ExitCode.WRONG_ENGINE);
    assertThat(verify.err()).contains("'hashlog' store").contains("kv4j copy --from hashlog:");
    Cli.Run put = Cli.inProcess("put", "sqlite:" + store, "k2", "v2");
    assertThat(put.exit()).as("%s", put).isEqualTo(ExitCode.WRONG_ENGINE);
    try (var l = Files.list(store)) {
      assertThat(l.sorted().toList()).as("no sqlite file beside the hashlog one").isEqualTo(before);
    }
  }
}
