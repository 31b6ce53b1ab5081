package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Predicate;
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

  @Test
  void prefixThenLowerBound_belowPrefix_keepsThePrefix() {
    KeyRange r = KeyRange.prefix(b(0x10)).gte(b(0x05));
    assertThat(r.contains(b(0x06))).as("%s must not widen below the prefix", r).isFalse();
    assertThat(r.contains(b(0x10, 0x00))).isTrue();
    assertThat(KeyRange.prefix(b(0x10)).gte(b(0x20)).isEmpty()).isTrue();
    assertThat(KeyRange.prefix(b(0x10)).lt(b(0x40)).contains(b(0x20))).isFalse();
    assertThat(KeyRange.all().gte(b(5)).gt(b(5)).contains(b(5))).isFalse();
    assertThat(KeyRange.all().gt(b(5)).gte(b(5)).contains(b(5))).isFalse();
    assertThat(KeyRange.all().lt(b(5)).lte(b(5)).contains(b(5))).isFalse();
    assertThat(KeyRange.all().lte(b(5)).lt(b(9)).contains(b(6))).isFalse();
  }

  /** Every key over a small alphabet that makes unsigned order and prefixes matter. */
  private static List<byte[]> universe() {
    int[] alphabet = {0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF};
    List<byte[]> keys = new ArrayList<>();
    for (int a : alphabet) {
      keys.add(b(a));
      for (int c : alphabet) {
        keys.add(b(a, c));
        for (int d : alphabet) {
          keys.add(b(a, c, d));
        }
      }
    }
    return keys;
  }

  @Test
  void composedBounds_neverReturnAKeyOutsideAnyBoundSet_property() {
    long seed = Long.getLong("kv4j.test.seed", System.nanoTime());
    SplittableRandom rnd = new SplittableRandom(seed);
    List<byte[]> keys = universe();
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    for (byte[] k : keys) {
      model.put(k, k);
    }
    for (int round = 0; round < 20_000; round++) {
      List<Predicate<byte[]>> conditions = new ArrayList<>();
      StringBuilder how = new StringBuilder();
      KeyRange r;
      int start = rnd.nextInt(3);
      if (start == 0) {
        r = KeyRange.all();
        how.append("all()");
      } else if (start == 1) {
        byte[] p = keys.get(rnd.nextInt(keys.size())).clone();
        p = Arrays.copyOf(p, rnd.nextInt(p.length + 1)); // the empty prefix too
        byte[] pf = p;
        r = KeyRange.prefix(p);
        conditions.add(k -> startsWith(k, pf));
        how.append("prefix(").append(hex(p)).append(")");
      } else {
        byte[] a = keys.get(rnd.nextInt(keys.size()));
        byte[] z = keys.get(rnd.nextInt(keys.size()));
        r = KeyRange.between(a, z);
        conditions.add(k -> Arrays.compareUnsigned(k, a) >= 0 && Arrays.compareUnsigned(k, z) < 0);
        how.append("between(").append(hex(a)).append(", ").append(hex(z)).append(")");
      }
      for (int n = rnd.nextInt(5); n > 0; n--) {
        byte[] k = keys.get(rnd.nextInt(keys.size()));
        switch (rnd.nextInt(5)) {
          case 0 -> {
            r = r.gte(k);
            conditions.add(x -> Arrays.compareUnsigned(x, k) >= 0);
            how.append(".gte(").append(hex(k)).append(")");
          }
          case 1 -> {
            r = r.gt(k);
            conditions.add(x -> Arrays.compareUnsigned(x, k) > 0);
            how.append(".gt(").append(hex(k)).append(")");
          }
          case 2 -> {
            r = r.lte(k);
            conditions.add(x -> Arrays.compareUnsigned(x, k) <= 0);
            how.append(".lte(").append(hex(k)).append(")");
          }
          case 3 -> {
            r = r.lt(k);
            conditions.add(x -> Arrays.compareUnsigned(x, k) < 0);
            how.append(".lt(").append(hex(k)).append(")");
          }
          default -> {
            r = r.reverse();
            how.append(".reverse()");
          }
        }
      }
      List<String> want = new ArrayList<>();
      for (byte[] k : keys) {
        if (conditions.stream().allMatch(c -> c.test(k))) {
          want.add(hex(k));
        }
      }
      want.sort(null); // hex of unsigned bytes sorts like the keys, lengths aside
      List<String> viewed = new ArrayList<>();
      List<String> contained = new ArrayList<>();
      for (byte[] k : r.isEmpty() ? List.<byte[]>of() : r.view(model).keySet()) {
        viewed.add(hex(k));
      }
      for (byte[] k : keys) {
        if (r.contains(k)) {
          contained.add(hex(k));
        }
      }
      viewed.sort(null);
      contained.sort(null);
      String msg = "seed " + seed + " round " + round + ": " + how + " = " + r;
      assertThat(contained).as(msg).isEqualTo(want);
      assertThat(viewed).as(msg).isEqualTo(want);
      if (r.isEmpty()) {
        assertThat(want).as(msg + " claims to be empty").isEmpty();
      }
    }
  }

  private static boolean startsWith(byte[] k, byte[] p) {
    return k.length >= p.length && Arrays.equals(k, 0, p.length, p, 0, p.length);
  }

  private static String hex(byte[] k) {
    return HexFormat.of().formatHex(k);
  }
}
