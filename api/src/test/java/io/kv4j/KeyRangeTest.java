package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KeyRangeTest {
  private static byte[] b(int... v) {
    byte[] r = new byte[v.length];
    for (int i = 0; i < v.length; i++) {
      r[i] = (byte) v[i];
    }
    return r;
  }

  @Test
  void all_containsEverything() {
    assertThat(KeyRange.all().contains(b(0))).isTrue();
    assertThat(KeyRange.all().contains(b(0xFF, 0xFF))).isTrue();
    assertThat(KeyRange.all().isEmpty()).isFalse();
  }

  @Test
  void bounds_compareUnsigned() {
    KeyRange r = KeyRange.all().gte(b(0x7F)).lt(b(0x80, 0x01));
    assertThat(r.contains(b(0x7F))).isTrue();
    assertThat(r.contains(b(0x80))).isTrue();
    assertThat(r.contains(b(0x80, 0x01))).isFalse();
    assertThat(r.contains(b(0x01))).isFalse();
  }

  @Test
  void exclusiveBounds_excludeTheBound() {
    KeyRange r = KeyRange.all().gt(b(1)).lte(b(3));
    assertThat(r.contains(b(1))).isFalse();
    assertThat(r.contains(b(1, 0))).isTrue();
    assertThat(r.contains(b(3))).isTrue();
  }

  @Test
  void prefix_ofFfBytes_hasNoUpperBound() {
    KeyRange r = KeyRange.prefix(b(0xFF, 0xFF));
    assertThat(r.upper()).isNull();
    assertThat(r.contains(b(0xFF, 0xFF))).isTrue();
    assertThat(r.contains(b(0xFF, 0xFF, 0x00))).isTrue();
    assertThat(r.contains(b(0xFF, 0xFE))).isFalse();
  }

  @Test
  void prefix_endingInFf_carriesIntoEarlierByte() {
    KeyRange r = KeyRange.prefix(b(0x01, 0xFF));
    assertThat(r.upper()).containsExactly(0x02);
    assertThat(r.contains(b(0x01, 0xFF, 0x33))).isTrue();
    assertThat(r.contains(b(0x02))).isFalse();
  }

  @Test
  void prefix_empty_isAll() {
    assertThat(KeyRange.prefix(new byte[0])).isEqualTo(KeyRange.all());
  }

  @Test
  void isEmpty_detectsInvertedAndEqualExclusive() {
    assertThat(KeyRange.all().gte(b(5)).lte(b(4)).isEmpty()).isTrue();
    assertThat(KeyRange.all().gte(b(5)).lt(b(5)).isEmpty()).isTrue();
    assertThat(KeyRange.all().gt(b(5)).lte(b(5)).isEmpty()).isTrue();
    assertThat(KeyRange.all().gte(b(5)).lte(b(5)).isEmpty()).isFalse();
    assertThat(KeyRange.all().limit(0).isEmpty()).isTrue();
  }

  @Test
  void limit_negative_isRejected() {
    assertThatThrownBy(() -> KeyRange.all().limit(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
  }

  @Test
  void bounds_areCopiedInAndOut() {
    byte[] lo = b(1);
    KeyRange r = KeyRange.all().gte(lo);
    lo[0] = 9;
    assertThat(r.lower()).containsExactly(1);
    r.lower()[0] = 7;
    assertThat(r.lower()).containsExactly(1);
  }

  @Test
  void reverse_togglesAndKeepsBounds() {
    KeyRange r = KeyRange.between(b(1), b(2)).reverse().limit(3);
    assertThat(r.isReverse()).isTrue();
    assertThat(r.limitValue()).isEqualTo(3);
    assertThat(r.reverse().isReverse()).isFalse();
    assertThat(r.toString()).contains("[01", "02)", "reverse", "limit 3");
  }

  @Test
  void view_coversBoundsInDirection() {
    java.util.TreeMap<byte[], String> m =
        new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
    for (int k : new int[] {0x00, 0x10, 0x7F, 0x80, 0xFF}) {
      m.put(b(k), Integer.toHexString(k));
    }
    assertThat(KeyRange.all().gt(b(0x10)).lte(b(0x80)).view(m).values())
        .containsExactly("7f", "80");
    assertThat(KeyRange.all().gte(b(0x7F)).reverse().view(m).values())
        .containsExactly("ff", "80", "7f");
    assertThat(KeyRange.all().gte(b(0x80)).lt(b(0x10)).view(m)).isEmpty();
    assertThat(KeyRange.prefix(b(0xFF)).view(m).values()).containsExactly("ff");
  }
}
