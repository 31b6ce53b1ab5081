package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class GlobAndCursorTest {
  private static boolean match(String pattern, String s) {
    return new Glob(pattern.getBytes(StandardCharsets.UTF_8))
        .matches(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void glob_followsRedisSyntax() {
    assertThat(match("*", "")).isTrue();
    assertThat(match("h?llo", "hello")).isTrue();
    assertThat(match("h?llo", "hllo")).isFalse();
    assertThat(match("h*llo", "heeeello")).isTrue();
    assertThat(match("h[ae]llo", "hallo")).isTrue();
    assertThat(match("h[ae]llo", "hillo")).isFalse();
    assertThat(match("h[^e]llo", "hallo")).isTrue();
    assertThat(match("h[^e]llo", "hello")).isFalse();
    assertThat(match("h[a-b]llo", "hbllo")).isTrue();
    assertThat(match("h\\*llo", "h*llo")).isTrue();
    assertThat(match("h\\*llo", "hello")).isFalse();
    assertThat(match("*a*b*c", "xxaxxbxxc")).isTrue();
    assertThat(match("*a*b*c", "xxaxxcxxb")).isFalse();
  }

  @Test
  void glob_pathologicalPattern_isFast() {
    String key = "a".repeat(5000);
    String pattern = "*a".repeat(50) + "b";
    assertThat(match(pattern, key)).isFalse();
  }

  @Test
  void glob_literalPrefix_stopsAtTheFirstWildcard() {
    assertThat(new Glob("user:1*".getBytes(StandardCharsets.UTF_8)).literalPrefix())
        .isEqualTo("user:1".getBytes(StandardCharsets.UTF_8));
    assertThat(new Glob("[ab]x".getBytes(StandardCharsets.UTF_8)).literalPrefix()).isEmpty();
  }

  @Test
  void cursors_roundTripShortAndLongKeysAsUnsigned64BitNumbers() {
    ScanCursors c = new ScanCursors(4);
    long seed = 7;
    Random random = new Random(seed);
    for (int len = 1; len <= 40; len++) {
      byte[] key = new byte[len];
      random.nextBytes(key);
      String cursor = c.encode(key);
      assertThat(cursor).as("seed %d len %d", seed, len).isNotEqualTo("0").matches("\\d+");
      assertThat(Long.parseUnsignedLong(cursor)).isNotZero();
      assertThat(c.decode(cursor)).as("seed %d len %d", seed, len).isEqualTo(key);
    }
    assertThat(c.decode("0")).isNull();
  }

  @Test
  void cursors_evictedOrForged_areRejected() {
    ScanCursors c = new ScanCursors(2);
    String first = c.encode("a long key number 1".getBytes(StandardCharsets.UTF_8));
    c.encode("a long key number 2".getBytes(StandardCharsets.UTF_8));
    c.encode("a long key number 3".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> c.decode(first)).hasMessageContaining("invalid cursor");
    assertThatThrownBy(() -> c.decode("3")).hasMessageContaining("invalid cursor");
    assertThatThrownBy(() -> c.decode("-1")).hasMessageContaining("invalid cursor");
  }
}
