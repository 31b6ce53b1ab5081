package io.kv4j.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.StoreConfig;
import io.kv4j.spi.ServerNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The key prefix a store path maps to must never change: it is where an existing store's keys are.
 * {@link EtcdSettings#prefixFor} moved to the SPI's {@link ServerNames#forPath}; this checks it
 * against the engine's own function as it was before ({@link #before}, kept here verbatim) and
 * against prefixes computed by that function and written down. No server needed.
 */
class PrefixNameTest {
  private static final long SEED = 0x65746364L;

  /** The engine's prefix function before it used {@link ServerNames}, verbatim. */
  private static String before(Path path) {
    String abs = path.toAbsolutePath().normalize().toString();
    Path last = path.getFileName();
    String name =
        (last == null ? "root" : last.toString())
            .toLowerCase(Locale.ROOT)
            .replaceAll("[^a-z0-9._-]+", "_");
    if (name.length() > 32) {
      name = name.substring(0, 32);
    }
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(abs.getBytes(StandardCharsets.UTF_8));
      return "kv4j/" + name + "/" + HexFormat.of().formatHex(h, 0, 8) + "/";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  @Test
  void prefixFor_pathsOfExistingStores_givesThePrefixesTheyWereCreatedWith() {
    List<String> paths =
        List.of(
            "/",
            "/data/app",
            "/data/app/",
            "/data/./app",
            "/data/x/../app",
            "/tmp/Foo Bar",
            "/tmp/UPPER.Case-name_1",
            "/tmp/a..b--c__d",
            "/tmp/a  +  b",
            "/tmp/.hidden",
            "/tmp/trailing.",
            "/tmp/tab\tand\nnewline",
            "/tmp/{braces}:colons/and/slashes",
            "/tmp/" + "x".repeat(31) + "!",
            "/tmp/" + "y".repeat(32),
            "/tmp/" + "z".repeat(33),
            "/tmp/" + "long-name.".repeat(10),
            "/tmp/ÄÖÜ-ß",
            "/tmp/İstanbul",
            "/tmp/emoji😀name",
            "/tmp/日本語のパス",
            "relative/store",
            "store",
            ".",
            "..");
    List<Path> checked = new ArrayList<>();
    for (String p : paths) {
      checked.add(Path.of(p));
    }
    checked.addAll(randomPaths(500));
    for (Path p : checked) {
      assertThat(EtcdSettings.prefixFor(p)).as("path '%s' (seed %d)", p, SEED).isEqualTo(before(p));
    }
    assertThat(checked).hasSizeGreaterThan(400);
  }

  @Test
  void prefixFor_knownPaths_matchesPrefixesWrittenDown() {
    // Computed by the engine before the move to ServerNames: stores at these paths hold keys
    // under these prefixes on clusters now.
    assertThat(EtcdSettings.prefixFor(Path.of("/data/app")))
        .isEqualTo("kv4j/app/d8516f448b4428f9/");
    assertThat(EtcdSettings.prefixFor(Path.of("/"))).isEqualTo("kv4j/root/8a5edab282632443/");
    assertThat(EtcdSettings.prefixFor(Path.of("/tmp/Foo Bar")))
        .isEqualTo("kv4j/foo_bar/96db9b8411209fd3/");
    assertThat(EtcdSettings.prefixFor(Path.of("/tmp/emoji😀name")))
        .isEqualTo("kv4j/emoji_name/ea0ab59ee0ce7b61/");
    assertThat(EtcdSettings.prefixFor(Path.of("/srv/Orders.2024-Q1 (copy)")))
        .isEqualTo("kv4j/orders.2024-q1_copy_/08137aedd0c480d6/");
  }

  @Test
  void prefixFor_optionGiven_usesItWithATrailingSlash() {
    var config =
        StoreConfig.builder("etcd")
            .path(Path.of("/data/app"))
            .option("prefix", "apps/orders")
            .build();
    assertThat(EtcdSettings.of(config).prefix()).isEqualTo("apps/orders/");
  }

  /** Seeded random store names from letters, digits, punctuation, accents and astral symbols. */
  private static List<Path> randomPaths(int n) {
    String pool = "aZ09._-_ +:{}!?~#%&()[]'\"\\ÄäßéİıΣσЖж日本😀\u0301\t";
    int[] cps = pool.codePoints().toArray();
    Random r = new Random(SEED);
    List<Path> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      StringBuilder sb = new StringBuilder();
      int len = 1 + r.nextInt(45);
      for (int j = 0; j < len; j++) {
        sb.appendCodePoint(cps[r.nextInt(cps.length)]);
      }
      String name = sb.toString().strip();
      if (name.isEmpty() || name.equals(".") || name.equals("..")) {
        continue;
      }
      try {
        out.add(Path.of("/srv/kv4j", "seed-" + SEED, name));
      } catch (InvalidPathException e) {
        throw new AssertionError("seed " + SEED + ": cannot make a path of '" + name + "'", e);
      }
    }
    return out;
  }
}
