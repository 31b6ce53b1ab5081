package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.Stores;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TypedStoreTest {
  private Store store;
  private TypedStore<Tuple, String> typed;

  @BeforeEach
  void open() {
    store = Stores.open("memory:");
    typed = TypedStore.of(store, KeyCodec.tuple(), ValueCodec.utf8());
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void putGetDelete_roundTripTypedKeysAndValues() {
    Tuple k = Tuple.of("user", 42, "name");
    assertThat(typed.get(k)).isNull();
    typed.put(k, "Ada");
    assertThat(typed.get(k)).isEqualTo("Ada");
    assertThat(typed.contains(k)).isTrue();
    assertThat(store.get(k.pack()))
        .isEqualTo("Ada".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(typed.getAll(List.of(k, Tuple.of("nobody")))).containsExactly("Ada", null);
    typed.delete(k);
    assertThat(typed.get(k)).isNull();
    assertThat(typed.contains(k)).isFalse();
  }

  @Test
  void put_refusesNullsAndTheEmptyTuple() {
    assertThatThrownBy(() -> typed.put(null, "x")).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> typed.put(Tuple.of("k"), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("value");
    assertThatThrownBy(() -> typed.put(Tuple.of(), "x"))
        .isInstanceOf(IllegalArgumentException.class); // the store refuses an empty key
  }

  @Test
  void scan_returnsTypedEntriesOfARangeInTupleOrder() {
    TreeMap<Tuple, String> model = new TreeMap<>();
    for (long user = -3; user <= 3; user++) {
      for (String what : List.of("", "a", "a\0", "b", "\ud83d\ude00", "\uffff")) {
        Tuple k = Tuple.of("user", user, what);
        typed.put(k, user + what);
        model.put(k, user + what);
      }
      typed.put(Tuple.of("user", user), "self");
      model.put(Tuple.of("user", user), "self");
    }
    typed.put(Tuple.of("zzz"), "other");
    model.put(Tuple.of("zzz"), "other");

    Tuple p = Tuple.of("user", -1);
    assertThat(typed.scan(TypedRange.prefix(p)))
        .containsExactlyElementsOf(
            new ArrayList<>(model.subMap(p, true, Tuple.of("user", 0), false).entrySet()));
    assertThat(typed.scan(TypedRange.prefix(p).reverse().limit(2)))
        .containsExactlyElementsOf(
            model.headMap(Tuple.of("user", 0), false).descendingMap().entrySet().stream()
                .limit(2)
                .toList());
    Tuple from = Tuple.of("user", -2, "a");
    Tuple to = Tuple.of("user", 2);
    assertThat(typed.scan(TypedRange.between(from, to)))
        .containsExactlyElementsOf(new ArrayList<>(model.subMap(from, to).entrySet()));
    assertThat(typed.scan(TypedRange.prefix(Tuple.of("user")).gt(from).lte(to)))
        .containsExactlyElementsOf(new ArrayList<>(model.subMap(from, false, to, true).entrySet()));
    assertThat(typed.scan(TypedRange.all()))
        .containsExactlyElementsOf(new ArrayList<>(model.entrySet()));
    List<String> seen = new ArrayList<>();
    typed.forEach(TypedRange.prefix(Tuple.of("user", 3)), (k, v) -> seen.add(v));
    assertThat(seen).containsExactly("self", "3", "3a", "3a\0", "3b", "3\uffff", "3\ud83d\ude00");
    try (Stream<Map.Entry<Tuple, String>> s = typed.stream(TypedRange.prefix(Tuple.of("zzz")))) {
      assertThat(s.map(Map.Entry::getValue)).containsExactly("other");
    }
  }

  @Test
  void longKeys_scanInNumericOrderIncludingNegatives() {
    TypedStore<Long, Long> longs = TypedStore.of(store, KeyCodec.longs(), ValueCodec.longs());
    long[] keys = {Long.MAX_VALUE, -1, 0, Long.MIN_VALUE, 1, -256, 255, 1L << 40, -(1L << 40)};
    for (long k : keys) {
      longs.put(k, -k);
    }
    long[] sorted = keys.clone();
    Arrays.sort(sorted);
    assertThat(longs.scan(TypedRange.all()).stream().map(Map.Entry::getKey))
        .containsExactly(Arrays.stream(sorted).boxed().toArray(Long[]::new));
    assertThat(longs.scan(TypedRange.between(-256L, 256L)).stream().map(Map.Entry::getKey))
        .containsExactly(-256L, -1L, 0L, 1L, 255L);
  }

  @Test
  void batch_writesAtomicallyAndWriteIfChecksConditions() {
    Tuple a = Tuple.of("a");
    Tuple b = Tuple.of("b");
    typed.write(typed.batch().put(a, "1").put(b, "2").delete(Tuple.of("none")));
    assertThat(typed.getAll(List.of(a, b))).containsExactly("1", "2");

    assertThat(typed.writeIf(typed.batch().expect(a, "1").expectAbsent(b).put(a, "x"))).isFalse();
    assertThat(typed.get(a)).isEqualTo("1");
    assertThat(typed.writeIf(typed.batch().expect(a, "1").expect(b, "2").put(a, "3").delete(b)))
        .isTrue();
    assertThat(typed.get(a)).isEqualTo("3");
    assertThat(typed.get(b)).isNull();

    TypedBatch<Tuple, String> withConditions = typed.batch().expectAbsent(a).put(a, "y");
    assertThatThrownBy(() -> typed.write(withConditions))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void write_refusesABatchBuiltWithOtherCodecs() {
    TypedStore<Tuple, byte[]> raw = TypedStore.of(store, KeyCodec.tuple(), ValueCodec.bytes());
    @SuppressWarnings({"unchecked", "rawtypes"})
    TypedBatch<Tuple, String> foreign = (TypedBatch) raw.batch().put(Tuple.of("k"), new byte[] {1});
    assertThatThrownBy(() -> typed.write(foreign))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not those of the store");
    assertThat(typed.get(Tuple.of("k"))).isNull();
  }

  @Test
  void conditionalWrites_delegateToTheStoreComparingEncodings() {
    Tuple k = Tuple.of("counter");
    assertThat(typed.putIfAbsent(k, "1")).isTrue();
    assertThat(typed.putIfAbsent(k, "2")).isFalse();
    assertThat(typed.replace(k, "2", "3")).isFalse();
    assertThat(typed.replace(k, "1", "3")).isTrue();
    assertThat(typed.delete(k, "1")).isFalse();
    assertThat(typed.delete(k, "3")).isTrue();
    assertThat(typed.get(k)).isNull();
  }

  @Test
  void conditionalWrites_throwWhereTheStoreHasNone() {
    TypedStore<Tuple, String> plain =
        TypedStore.of(
            new MaskedStore(store, Feature.CONDITIONAL_WRITE), KeyCodec.tuple(), ValueCodec.utf8());
    assertThatThrownBy(() -> plain.putIfAbsent(Tuple.of("k"), "v"))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("CONDITIONAL_WRITE");
    assertThat(typed.get(Tuple.of("k"))).isNull();
  }

  @Test
  void snapshot_readsOnePointInTime() {
    typed.put(Tuple.of("a", 1), "before");
    try (TypedSnapshot<Tuple, String> s = typed.snapshot()) {
      typed.put(Tuple.of("a", 1), "after");
      typed.put(Tuple.of("a", 2), "new");
      assertThat(s.get(Tuple.of("a", 1))).isEqualTo("before");
      assertThat(s.contains(Tuple.of("a", 2))).isFalse();
      assertThat(s.getAll(List.of(Tuple.of("a", 1), Tuple.of("a", 2))))
          .containsExactly("before", null);
      assertThat(s.scan(TypedRange.prefix(Tuple.of("a"))))
          .containsExactly(Map.entry(Tuple.of("a", 1), "before"));
      List<String> seen = new ArrayList<>();
      s.forEach(TypedRange.all(), (k, v) -> seen.add(v));
      assertThat(seen).containsExactly("before");
    }
    assertThat(typed.scan(TypedRange.prefix(Tuple.of("a")))).hasSize(2);
  }

  @Test
  void scan_reportsAKeyThatIsNotATupleWithItsOffset() {
    store.put(new byte[] {0x15, 0x01, (byte) 0xFF}, new byte[0]);
    assertThatThrownBy(() -> typed.scan(TypedRange.all()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid tuple encoding at offset 2");
  }

  record OrderId(String user, long id) {}

  @Test
  void mappedTupleKeys_sortByTheirTuples() {
    KeyCodec<OrderId> codec =
        KeyCodec.tuple(
            o -> Tuple.of(o.user(), o.id()), t -> new OrderId(t.getString(0), t.getLong(1)));
    TypedStore<OrderId, Long> orders = TypedStore.of(store, codec, ValueCodec.longs());
    orders.put(new OrderId("bob", 2), 20L);
    orders.put(new OrderId("ann", 7), 70L);
    orders.put(new OrderId("bob", -5), -50L);
    orders.put(new OrderId("bo", 1), 10L);
    assertThat(orders.scan(TypedRange.all()).stream().map(Map.Entry::getKey))
        .containsExactly(
            new OrderId("ann", 7),
            new OrderId("bo", 1),
            new OrderId("bob", -5),
            new OrderId("bob", 2));
    assertThat(codec.comparator().compare(new OrderId("bob", -5), new OrderId("bob", 2)))
        .isNegative();
  }
}
