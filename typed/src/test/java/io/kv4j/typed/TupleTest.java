package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TupleTest {

  private static Arguments vector(String hex, Object... items) {
    return Arguments.of(Tuple.of(items), hex.replace(" ", ""));
  }

  /**
   * FoundationDB's documented encodings: the test cases of its design/tuple.md and the serialized
   * forms its Java binding tests (TupleSerializationTest), for the types kv4j supports.
   */
  static Stream<Arguments> foundationDbVectors() {
    return Stream.of(
        vector(""),
        vector("14", 0L),
        vector("15 01", 1L),
        vector("13 fe", -1L),
        vector("15 ff", 255L),
        vector("13 00", -255L),
        vector("16 01 00", 256L),
        vector("12 fe ff", -256L),
        vector("17 01 00 00", 65536),
        vector("11 fe ff ff", -65536),
        vector("11 ab 4b 93", -5551212),
        vector("10 00 00 00 00", -((1L << 32) - 1)),
        vector("1c 7f ff ff ff ff ff ff ff", Long.MAX_VALUE),
        vector("0c 80 00 00 00 00 00 00 01", Long.MIN_VALUE + 2),
        vector("0c 80 00 00 00 00 00 00 00", Long.MIN_VALUE + 1),
        vector("0c 7f ff ff ff ff ff ff ff", Long.MIN_VALUE),
        vector("16 30 19", (short) 0x3019),
        vector("15 03", (byte) 3),
        vector("20 c0 48 f5 c3", 3.14f),
        vector("20 3f b7 0a 3c", -3.14f),
        vector("20 3d d7 ff ff", -42f),
        vector("21 c0 09 1e b8 51 eb 85 1f", 3.14),
        vector("21 3f f6 e1 47 ae 14 7a e0", -3.14),
        vector("20 80 00 00 00", 0.0f),
        vector("20 7f ff ff ff", -0.0f),
        vector("21 80 00 00 00 00 00 00 00", 0.0),
        vector("21 7f ff ff ff ff ff ff ff", -0.0),
        vector("20 ff 80 00 00", Float.POSITIVE_INFINITY),
        vector("20 00 7f ff ff", Float.NEGATIVE_INFINITY),
        vector("21 ff f0 00 00 00 00 00 00", Double.POSITIVE_INFINITY),
        vector("21 00 0f ff ff ff ff ff ff", Double.NEGATIVE_INFINITY),
        vector("20 ff ff ff ff", Float.intBitsToFloat(Integer.MAX_VALUE)),
        vector("21 ff ff ff ff ff ff ff ff", Double.longBitsToDouble(Long.MAX_VALUE)),
        vector("20 00 00 00 00", Float.intBitsToFloat(~0)),
        vector("21 00 00 00 00 00 00 00 00", Double.longBitsToDouble(~0L)),
        vector("01 00", (Object) new byte[0]),
        vector("01 01 02 03 00", (Object) new byte[] {1, 2, 3}),
        vector("01 00 ff 00 ff 00 ff 04 00", (Object) new byte[] {0, 0, 0, 4}),
        vector("01 66 6f 6f 00 ff 62 61 72 00", (Object) "foo\0bar".getBytes()),
        vector("02 00", ""),
        vector("02 68 65 6c 6c 6f 00", "hello"),
        vector("02 46 c3 94 4f 00 ff 62 61 72 00", "F\u00d4O\u0000bar"),
        vector("02 e4 b8 ad e6 96 87 00", "\u4e2d\u6587"),
        vector("02 ce bc ce ac ce b8 ce b7 ce bc ce b1 00", "\u03bc\u03ac\u03b8\u03b7\u03bc\u03b1"),
        vector("02 f0 9f 94 a5 00", "\ud83d\udd25"),
        vector("02 f4 8f bf bf 00", "\udbff\udfff"),
        vector("05 00 ff 00", Tuple.of((Object) null)),
        vector("05 00 ff 02 68 65 6c 6c 6f 00 00", Tuple.of(null, "hello")),
        vector("05 00 ff 02 68 65 6c 6c 6f 00 00", Arrays.asList(null, "hello")),
        vector("05 00 ff 02 68 65 6c 6c 00 ff 00 00", Tuple.of(null, "hell\0")),
        vector("05 00 ff 00 02 68 65 6c 6c 6f 00", Tuple.of((Object) null), "hello"),
        vector(
            "05 00 ff 00 02 68 65 6c 6c 6f 00 01 01 00 ff 00 01 00",
            Tuple.of((Object) null),
            "hello",
            new byte[] {1, 0},
            new byte[0]),
        vector(
            "05 01 66 6f 6f 00 ff 62 61 72 00 00 ff 05 00 00",
            Tuple.of("foo\0bar".getBytes(), null, Tuple.of())),
        vector(
            "30 ff ff ff ff ba 5e ba 11 00 00 00 00 5c a1 ab 1e", new UUID(0xba5eba11, 0x5ca1ab1e)),
        vector("26", false),
        vector("27", true),
        vector("00", (Object) null),
        vector("02 68 69 00 02 74 68 65 72 65 00", "hi", "there"));
  }

  @ParameterizedTest
  @MethodSource("foundationDbVectors")
  void pack_matchesFoundationDbEncoding(Tuple tuple, String hex) {
    assertThat(HexFormat.of().formatHex(tuple.pack())).as(tuple.toString()).isEqualTo(hex);
  }

  @ParameterizedTest
  @MethodSource("foundationDbVectors")
  void unpack_readsFoundationDbEncoding(Tuple tuple, String hex) {
    Tuple decoded = Tuple.unpack(HexFormat.of().parseHex(hex));
    assertThat(TupleModel.deepEquals(decoded, tuple)).as(hex + " -> " + decoded).isTrue();
    assertThat(decoded).isEqualTo(tuple);
  }

  @Test
  void of_normalizesSmallIntegersToLongAndListsToTuples() {
    Tuple t = Tuple.of(1, (short) 2, (byte) 3, List.of("x", 4));
    assertThat(t.get(0)).isEqualTo(1L);
    assertThat(t.get(1)).isEqualTo(2L);
    assertThat(t.get(2)).isEqualTo(3L);
    assertThat(t.getTuple(3)).isEqualTo(Tuple.of("x", 4L));
    assertThat(t).isEqualTo(Tuple.of(1L, 2L, 3L, Tuple.of("x", 4L)));
  }

  @Test
  void of_copiesByteArraysInAndOut() {
    byte[] b = {1, 2};
    Tuple t = Tuple.of((Object) b);
    b[0] = 9;
    assertThat(t.getBytes(0)).containsExactly(1, 2);
    t.getBytes(0)[1] = 9;
    ((byte[]) t.get(0))[1] = 9;
    assertThat(t.getBytes(0)).containsExactly(1, 2);
    assertThat(t.pack()).containsExactly(1, 1, 2, 0);
  }

  @Test
  void of_refusesUnsupportedElementsNamingIndexAndType() {
    assertThatThrownBy(() -> Tuple.of("a", new java.math.BigInteger("1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("element 1 is a java.math.BigInteger");
    assertThatThrownBy(() -> Tuple.of("ok", "bad\ud800x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unpaired surrogate at index 3");
  }

  @Test
  void equals_comparesFloatingPointByBits() {
    assertThat(Tuple.of(0.0)).isNotEqualTo(Tuple.of(-0.0));
    assertThat(Tuple.of(0.0).compareTo(Tuple.of(-0.0))).isPositive();
    assertThat(Tuple.of(Double.NaN)).isEqualTo(Tuple.of(Double.NaN));
    assertThat(Tuple.of(1.0f)).isNotEqualTo(Tuple.of(1.0)); // float and double are two types
    assertThat(Tuple.of(Double.NaN).compareTo(Tuple.of(Double.POSITIVE_INFINITY))).isPositive();
  }

  @Test
  void compareTo_ordersTypesAsFoundationDb() {
    List<Tuple> ascending =
        List.of(
            Tuple.of(),
            Tuple.of((Object) null),
            Tuple.of((Object) new byte[0]),
            Tuple.of(""),
            Tuple.of(Tuple.of()),
            Tuple.of(Long.MIN_VALUE),
            Tuple.of(Long.MAX_VALUE),
            Tuple.of(Float.NEGATIVE_INFINITY),
            Tuple.of(Double.NEGATIVE_INFINITY),
            Tuple.of(false),
            Tuple.of(true),
            Tuple.of(new UUID(0, 0)),
            Tuple.of(new UUID(-1, -1))); // unsigned: above every other UUID
    for (int i = 1; i < ascending.size(); i++) {
      assertThat(ascending.get(i - 1)).as("at " + i).isLessThan(ascending.get(i));
    }
    // code point order, not String.compareTo: U+1F600 (a surrogate pair) sorts after U+FFFF
    assertThat(Tuple.of("\ud83d\ude00")).isGreaterThan(Tuple.of("\uffff"));
    assertThat("\ud83d\ude00".compareTo("\uffff")).isNegative();
  }

  @Test
  void range_coversTuplesStartingWithThePrefixOnly() {
    Tuple p = Tuple.of("user", 42);
    var range = p.range();
    assertThat(range.contains(p.pack())).isTrue();
    assertThat(range.contains(Tuple.of("user", 42, "orders", 7).pack())).isTrue();
    assertThat(range.contains(Tuple.of("user", 42, null).pack())).isTrue();
    assertThat(range.contains(Tuple.of("user", 43).pack())).isFalse();
    assertThat(range.contains(Tuple.of("user", 420).pack())).isFalse();
    assertThat(range.contains(Tuple.of("user").pack())).isFalse();
    // a string prefix is not a tuple prefix: ("ab") does not start with ("a")
    Tuple a = Tuple.of("a");
    assertThat(a.range().contains(Tuple.of("a\0").pack())).isFalse();
    assertThat(a.range().contains(Tuple.of("ab").pack())).isFalse();
    assertThat(Tuple.of("a\0").startsWith(a)).isFalse();
    assertThat(Tuple.of("a", "b").startsWith(a)).isTrue();
    assertThat(Tuple.of().range().contains(Tuple.of(Long.MAX_VALUE).pack())).isTrue();
    assertThat(Tuple.of().range().contains(new byte[] {(byte) 0xFF})).isFalse();
  }

  @Test
  void add_appendsLikeConcatenatedEncodings() {
    Tuple t = Tuple.of("a").add(1).addAll(Tuple.of(true, null));
    assertThat(t).isEqualTo(Tuple.of("a", 1L, true, null));
    byte[] joined = new byte[0];
    for (Object item : t.items()) {
      byte[] e = Tuple.of(item).pack();
      byte[] n = Arrays.copyOf(joined, joined.length + e.length);
      System.arraycopy(e, 0, n, joined.length, e.length);
      joined = n;
    }
    assertThat(t.pack()).isEqualTo(joined);
  }

  @Test
  void typedGetters_nameTheActualTypeOnMismatch() {
    Tuple t = Tuple.of("s", null, 1.5, 2.5f, true, new UUID(1, 2), 7);
    assertThat(t.getString(0)).isEqualTo("s");
    assertThat(t.getDouble(2)).isEqualTo(1.5);
    assertThat(t.getFloat(3)).isEqualTo(2.5f);
    assertThat(t.getBoolean(4)).isTrue();
    assertThat(t.getUuid(5)).isEqualTo(new UUID(1, 2));
    assertThat(t.getLong(6)).isEqualTo(7L);
    assertThatThrownBy(() -> t.getLong(0))
        .isInstanceOf(ClassCastException.class)
        .hasMessage("element 0 is a String, not an integer");
    assertThatThrownBy(() -> t.getString(1))
        .isInstanceOf(ClassCastException.class)
        .hasMessage("element 1 is null, not a string");
    assertThat(t.toString()).isEqualTo("(\"s\", null, 1.5, 2.5f, true, " + new UUID(1, 2) + ", 7)");
  }

  static Stream<Arguments> undecodable() {
    return Stream.of(
        Arguments.of("1d 09 01 00 00 00 00 00 00 00 00", "at offset 0", "beyond 64 bits"),
        Arguments.of("1c 80 00 00 00 00 00 00 00", "at offset 0", "above Long.MAX_VALUE"),
        Arguments.of("0c 7f ff ff ff ff ff ff fe", "at offset 0", "below Long.MIN_VALUE"),
        Arguments.of("16 00 05", "at offset 0", "non-canonical integer: 5 is written in 2 bytes"),
        Arguments.of("14 15", "at offset 2", "expected 1 bytes of integer"),
        Arguments.of("21 01 02 03", "at offset 1", "expected 8 bytes of double"),
        Arguments.of("30 01", "at offset 1", "expected 8 bytes of UUID"),
        Arguments.of("02 61 62", "at offset 3", "ends the string starting at offset 0"),
        Arguments.of("14 01 61 00 ff", "at offset 5", "ends the byte string starting at offset 1"),
        Arguments.of("02 c3 28 00", "at offset 0", "expected UTF-8"),
        Arguments.of("05 14 00 ff", "at offset 4", "ends the nested tuple starting at offset 0"),
        Arguments.of("00 ff", "at offset 1", "expected a type code, found 0xff"),
        Arguments.of("14 33 00", "at offset 1", "versionstamp"),
        Arguments.of("03 04", "at offset 0", "deprecated nested tuple"),
        Arguments.of("25", "at offset 0", "deprecated true"),
        Arguments.of("40", "at offset 0", "found 0x40"));
  }

  @ParameterizedTest
  @MethodSource("undecodable")
  void unpack_refusesNamingOffsetAndExpectation(String hex, String offset, String expected) {
    assertThatThrownBy(() -> Tuple.unpack(HexFormat.of().parseHex(hex.replace(" ", ""))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid tuple encoding " + offset + ": ")
        .hasMessageContaining(expected);
  }

  @Test
  void unpack_offsetsAreThoseOfTheWholeArray() {
    byte[] b = {(byte) 0x99, (byte) 0x99, 0x15, 0x07, 0x16};
    assertThat(Tuple.unpack(b, 2, 2)).isEqualTo(Tuple.of(7));
    assertThatThrownBy(() -> Tuple.unpack(b, 2, 3))
        .hasMessageContaining("at offset 5: expected 2 bytes of integer (type code at offset 4)");
    assertThatThrownBy(() -> Tuple.unpack(b, 4, 2)).isInstanceOf(IndexOutOfBoundsException.class);
  }
}
