package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Group 2: keys and order. */
final class Group02Order extends RuleGroup {
  /**
   * Group 2's rules as JUnit tests, in rule order, each run in a new {@code Group02Order}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r2_1_unsignedByteOrder() {
      new Group02Order(this).required_r2_1_unsignedByteOrder();
    }

    @Test
    default void required_r2_2_lexicographicPrefixFirst() {
      new Group02Order(this).required_r2_2_lexicographicPrefixFirst();
    }

    @Test
    default void required_r2_3_maxLengthKeyRoundTrips() {
      new Group02Order(this).required_r2_3_maxLengthKeyRoundTrips();
    }

    @Test
    default void required_r2_4_overLimitKeyRejectedWithLimit() {
      new Group02Order(this).required_r2_4_overLimitKeyRejectedWithLimit();
    }

    @Test
    default void required_r2_5_emptyKeyRejected() {
      new Group02Order(this).required_r2_5_emptyKeyRejected();
    }

    @Test
    default void required_r2_6_nullArgumentsRejected() {
      new Group02Order(this).required_r2_6_nullArgumentsRejected();
    }

    @Test
    default void required_r2_7_everyByteValueIsAKey() {
      new Group02Order(this).required_r2_7_everyByteValueIsAKey();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group02Order(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group02Order(TckBase kit) {
    super(kit);
  }

  void required_r2_1_unsignedByteOrder() {
    require("2.1", Feature.ORDERED_SCAN);
    Store s = open();
    byte[][] keys = {b(0xFF), b(0x80), b(0x7F), b(0x00), b(0x01), b(0xFE), b(0x81)};
    for (byte[] k : keys) {
      s.put(k, k);
    }
    assertThat(keysOf(scanAll(s, KeyRange.all())))
        .as(rule("2.1", "keys compare as UNSIGNED bytes: 00 < 01 < 7f < 80 < 81 < fe < ff"))
        .containsExactly("00", "01", "7f", "80", "81", "fe", "ff");
  }

  void required_r2_2_lexicographicPrefixFirst() {
    require("2.2", Feature.ORDERED_SCAN);
    Store s = open();
    for (String k : List.of("2", "12", "1", "10", "1\u0000", "a", "ab", "b")) {
      s.put(b(k), b(k));
    }
    assertThat(keysOf(scanAll(s, KeyRange.all())))
        .as(rule("2.2", "lexicographic, not length-first; a prefix sorts before its extensions"))
        .containsExactly(
            hex(b("1")),
            hex(b("1\u0000")),
            hex(b("10")),
            hex(b("12")),
            hex(b("2")),
            hex(b("a")),
            hex(b("ab")),
            hex(b("b")));
  }

  void required_r2_3_maxLengthKeyRoundTrips() {
    Store s = open();
    int max = s.info().limits().maxKeySize();
    byte[] k = new byte[max];
    Arrays.fill(k, (byte) 0xAB);
    k[max - 1] = 1;
    s.put(k, b("max"));
    assertThat(s.get(k))
        .as(rule("2.3", "a key of exactly maxKeySize=" + max + " bytes"))
        .isEqualTo(b("max"));
    byte[] k2 = k.clone();
    k2[max - 1] = 2;
    assertThat(s.get(k2))
        .as(rule("2.3", "a key differing in its last byte is another key"))
        .isNull();
  }

  void required_r2_4_overLimitKeyRejectedWithLimit() {
    Store s = open();
    s.put(b("keep"), b("1"));
    int max = s.info().limits().maxKeySize();
    byte[] k = new byte[max + 1];
    assertThat(thrown(() -> s.put(k, b("v"))))
        .as(
            rule(
                "2.4",
                "a key longer than the limit is an IllegalArgumentException naming the limit"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(max));
    assertThat(thrown(() -> s.get(k)))
        .as(
            rule(
                "2.4",
                "get of a key longer than the limit is an IllegalArgumentException (not a lookup)"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(thrown(() -> s.delete(k)))
        .as(
            rule(
                "2.4",
                "delete of a key longer than the limit is an IllegalArgumentException (not a no-op)"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(s.get(b("keep")))
        .as(rule("2.4", "a rejected put loses nothing stored"))
        .isEqualTo(b("1"));
  }

  void required_r2_5_emptyKeyRejected() {
    Store s = open();
    assertThat(thrown(() -> s.put(new byte[0], b("v"))))
        .as(rule("2.5", "empty key is an IllegalArgumentException"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(thrown(() -> s.get(new byte[0])))
        .as(rule("2.5", "get of the empty key is an IllegalArgumentException"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(thrown(() -> s.delete(new byte[0])))
        .as(rule("2.5", "delete of the empty key is an IllegalArgumentException"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  void required_r2_6_nullArgumentsRejected() {
    Store s = open();
    assertThat(thrown(() -> s.put(null, b("v"))))
        .as(rule("2.6", "null key is a NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    assertThat(thrown(() -> s.put(b("k"), null)))
        .as(rule("2.6", "null value is a NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    assertThat(thrown(() -> s.get(null)))
        .as(rule("2.6", "get(null) is a NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    assertThat(thrown(() -> s.delete(null)))
        .as(rule("2.6", "delete(null) is a NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    assertThat(thrown(() -> s.scan(null)))
        .as(rule("2.6", "scan(null) is a NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    assertThat(thrown(() -> s.write(null)))
        .as(rule("2.6", "write(null) is a NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    assertThat(s.get(b("k"))).as(rule("2.6", "nothing was stored")).isNull();
  }

  void required_r2_7_everyByteValueIsAKey() {
    Store s = open();
    for (int i = 0; i < 256; i++) {
      s.put(b(i), b(i, i));
      s.put(b(0x61, i), b(i));
    }
    for (int i = 0; i < 256; i++) {
      assertThat(s.get(b(i))).as(rule("2.7", "single-byte key %02x", i)).isEqualTo(b(i, i));
      assertThat(s.get(b(0x61, i))).as(rule("2.7", "key 61%02x", i)).isEqualTo(b(i));
    }
    if (has(Feature.ORDERED_SCAN)) {
      assertThat(scanAll(s, KeyRange.all())).as(rule("2.7", "all 512 keys scanned")).hasSize(512);
    }
  }

  static String rule(String id, String format, int arg) {
    return rule(id, String.format(format, arg));
  }
}
