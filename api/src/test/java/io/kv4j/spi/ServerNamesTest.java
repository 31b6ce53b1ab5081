package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ServerNamesTest {
  private static final long SEED = 24;
  // ASCII: paths with other characters depend on the JVM's file name encoding.
  private static final String ALPHABET = "abcXYZ09_-. :+~/";
  private static final String UNICODE = "abcXYZ09_-. :+é€İ\uD83D\uDE00/";

  /** The mapping the SQL and Redis engines had before it was shared: names must not change. */
  private static String before(Path path, String sep, String keptClass, int max) throws Exception {
    String abs = path.toAbsolutePath().normalize().toString();
    Path last = path.getFileName();
    String name =
        (last == null ? "root" : last.toString())
            .toLowerCase(Locale.ROOT)
            .replaceAll("[^a-z0-9" + keptClass + "]+", "_");
    if (name.length() > max) {
      name = name.substring(0, max);
    }
    byte[] h = MessageDigest.getInstance("SHA-256").digest(abs.getBytes(StandardCharsets.UTF_8));
    return "kv4j" + sep + name + sep + HexFormat.of().formatHex(h, 0, 8);
  }

  @Test
  void forPath_randomPaths_matchTheEnginesEarlierNames() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int i = 0; i < 2000; i++) {
      StringBuilder p = new StringBuilder("/stores/");
      int len = 1 + rnd.nextInt(40);
      for (int j = 0; j < len; j++) {
        p.append(ALPHABET.charAt(rnd.nextInt(ALPHABET.length())));
      }
      String text = p.toString().replaceAll("/+$", "") + "x";
      Path path = Path.of(text);
      assertThat(ServerNames.forPath(path, '_', "", 24))
          .as("seed=%d path #%d %s (SQL engines)", SEED, i, text)
          .isEqualTo(before(path, "_", "", 24));
      assertThat(ServerNames.forPath(path, ':', "._-", 32))
          .as("seed=%d path #%d %s (Redis engine)", SEED, i, text)
          .isEqualTo(before(path, ":", "._-", 32));
    }
  }

  @Test
  void sanitise_randomText_matchesTheRegexItReplaced() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int i = 0; i < 2000; i++) {
      StringBuilder t = new StringBuilder();
      int len = 1 + rnd.nextInt(40);
      for (int j = 0; j < len; j++) {
        t.append(UNICODE.charAt(rnd.nextInt(UNICODE.length())));
      }
      String text = t.toString();
      for (String kept : new String[] {"", "._-"}) {
        String cls = kept.isEmpty() ? "" : "._-";
        assertThat(ServerNames.sanitise(text, kept))
            .as("seed=%d text #%d '%s' keeping '%s'", SEED, i, text, kept)
            .isEqualTo(text.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9" + cls + "]+", "_"));
      }
    }
  }

  @Test
  void forPath_fixedPath_isStable() {
    String name = ServerNames.forPath(Path.of("/stores/Orders 2026"), '_', "", 24);
    assertThat(name).startsWith("kv4j_orders_2026_").hasSize("kv4j_orders_2026_".length() + 16);
    assertThat(name.substring(name.length() - 16))
        .isEqualTo(ServerNames.sha256Hex("/stores/Orders 2026", 16));
    assertThat(ServerNames.forPath(Path.of("/"), ':', "", 8)).startsWith("kv4j:root:");
  }

  @Test
  void forPath_sameLastElement_differentNames() {
    assertThat(ServerNames.forPath(Path.of("/a/x"), '_', "", 24))
        .isNotEqualTo(ServerNames.forPath(Path.of("/b/x"), '_', "", 24));
  }

  @Test
  void sanitise_runsOfOtherCharacters_becomeOneUnderscore() {
    assertThat(ServerNames.sanitise("Ab--C..d_e", "")).isEqualTo("ab_c_d_e");
    assertThat(ServerNames.sanitise("Ab--C..d_e", "._-")).isEqualTo("ab--c..d_e");
    assertThat(ServerNames.sanitise("€€x", "")).isEqualTo("_x");
  }

  @Test
  void sha256Hex_knownVector() {
    // SHA-256("abc") = ba7816bf 8f01cfea ...
    assertThat(ServerNames.sha256Hex("abc", 16)).isEqualTo("ba7816bf8f01cfea");
    assertThat(ServerNames.sha256Hex("abc", 64)).hasSize(64).startsWith("ba7816bf");
  }

  @Test
  void arguments_invalid_areRefused() {
    assertThatThrownBy(() -> ServerNames.forPath(null, '_', "", 24))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> ServerNames.forPath(Path.of("x"), '_', "", 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ServerNames.sha256Hex("x", 3))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ServerNames.sha256Hex("x", 66))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
