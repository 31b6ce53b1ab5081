package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.KeyRange;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CodecTest {
  private static final int PAIRS = 20_000;

  @Test
  void longKeys_preserveSignedOrder() {
    long seed = 99;
    Random r = new Random(seed);
    long[] edges = {
      Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, 1, Long.MAX_VALUE - 1, Long.MAX_VALUE
    };
    KeyCodec<Long> c = KeyCodec.longs();
    for (int i = 0; i < PAIRS; i++) {
      long a = r.nextInt(4) == 0 ? edges[r.nextInt(edges.length)] : r.nextLong() >> r.nextInt(64);
      long b = r.nextInt(4) == 0 ? edges[r.nextInt(edges.length)] : r.nextLong() >> r.nextInt(64);
      assertThat(Integer.signum(Arrays.compareUnsigned(c.encode(a), c.encode(b))))
          .as("seed %d, pair %d: %d vs %d", seed, i, a, b)
          .isEqualTo(Long.signum(Long.compare(a, b)));
      assertThat(c.decode(c.encode(a))).as("seed %d, %d", seed, a).isEqualTo(a);
    }
    assertThat(c.encode(Long.MIN_VALUE)).containsExactly(0, 0, 0, 0, 0, 0, 0, 0);
    assertThatThrownBy(() -> c.decode(new byte[7]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expected the 8 bytes of a long key, found 7");
  }

  @Test
  void utf8Keys_preserveCodePointOrder() {
    long seed = 7;
    Random r = new Random(seed);
    String[] chars = {
      "\0", "a", "\u00e9", "\u0800", "\ue000", "\uffff", "\ud83d\ude00", "\udbff\udfff"
    };
    KeyCodec<String> c = KeyCodec.utf8();
    for (int i = 0; i < PAIRS; i++) {
      String a = randomString(r, chars);
      String b = randomString(r, chars);
      int model = Integer.signum(TupleModel.compareElements(a, b)); // code point order
      assertThat(Integer.signum(Arrays.compareUnsigned(c.encode(a), c.encode(b))))
          .as("seed %d, pair %d", seed, i)
          .isEqualTo(model);
      assertThat(c.decode(c.encode(a))).isEqualTo(a);
    }
    assertThatThrownBy(() -> c.encode("x\udc00"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unpaired surrogate");
    assertThatThrownBy(() -> c.decode(new byte[] {(byte) 0xC3}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not valid UTF-8");
    assertThat(c.prefixRange("ab"))
        .isEqualTo(KeyRange.prefix("ab".getBytes(StandardCharsets.UTF_8)));
  }

  private static String randomString(Random r, String[] chars) {
    StringBuilder sb = new StringBuilder();
    for (int n = r.nextInt(4); n > 0; n--) {
      sb.append(chars[r.nextInt(chars.length)]);
    }
    return sb.toString();
  }

  @Test
  void tupleKeys_prefixIsATuplePrefixNotAByteOne() {
    KeyCodec<Tuple> c = KeyCodec.tuple();
    assertThat(c.prefixRange(Tuple.of("a"))).isEqualTo(Tuple.of("a").range());
    assertThat(c.prefixRange(Tuple.of("a")).contains(c.encode(Tuple.of("ab")))).isFalse();
    assertThat(c.comparator().compare(Tuple.of(-1), Tuple.of(0))).isNegative();
  }

  @Test
  void bytesCodecs_passArraysThrough() {
    byte[] b = {0, (byte) 0xFF};
    assertThat(KeyCodec.bytes().encode(b)).isEqualTo(b);
    assertThat(ValueCodec.bytes().decode(b)).isEqualTo(b);
    assertThat(KeyCodec.bytes().comparator().compare(new byte[] {(byte) 0x80}, new byte[] {1}))
        .isPositive();
  }

  @Test
  void longValues_areBigEndianTwosComplement() {
    ValueCodec<Long> c = ValueCodec.longs();
    assertThat(ByteBuffer.wrap(c.encode(-2L)).getLong()).isEqualTo(-2L);
    assertThat(c.decode(ByteBuffer.allocate(8).putLong(Long.MIN_VALUE).array()))
        .isEqualTo(Long.MIN_VALUE);
    assertThatThrownBy(() -> c.decode(new byte[9]))
        .hasMessage("expected the 8 bytes of a long value, found 9");
  }

  @Test
  void customValueCodec_refusesNullsFromTheFunctions() {
    ValueCodec<Integer> c =
        ValueCodec.of(
            i -> i == 0 ? null : new byte[] {i.byteValue()},
            b -> b.length == 0 ? null : (int) b[0]);
    assertThat(c.decode(c.encode(5))).isEqualTo(5);
    assertThatThrownBy(() -> c.encode(0)).hasMessage("encoder returned null");
    assertThatThrownBy(() -> c.decode(new byte[0])).hasMessage("decoder returned null");
    assertThatThrownBy(() -> c.encode(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void typedRange_composesBoundsLikeKeyRange() {
    KeyCodec<Long> c = KeyCodec.longs();
    assertThat(TypedRange.<Long>all().gte(5L).lt(9L).reverse().limit(3).toKeyRange(c))
        .isEqualTo(KeyRange.all().gte(c.encode(5L)).lt(c.encode(9L)).reverse().limit(3));
    // bounds only narrow: a looser bound after a tighter one changes nothing
    assertThat(TypedRange.between(5L, 9L).gte(1L).toKeyRange(c))
        .isEqualTo(KeyRange.between(c.encode(5L), c.encode(9L)));
    assertThat(TypedRange.prefix(Tuple.of("u")).gt(Tuple.of("u", 3)).toKeyRange(KeyCodec.tuple()))
        .isEqualTo(Tuple.of("u").range().gt(Tuple.of("u", 3).pack()));
    assertThatThrownBy(() -> TypedRange.all().limit(-1))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
