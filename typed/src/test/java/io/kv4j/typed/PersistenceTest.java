package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tuple keys of every type written to a persistent engine come back after a reopen in the model's
 * order, decoding to the same elements, and a map view over the reopened store sees them.
 */
class PersistenceTest {
  @TempDir Path dir;

  private Store open(String engine) {
    return Stores.open(
        StoreConfig.builder(engine).path(dir).durability(Durability.BUFFERED).build());
  }

  @ParameterizedTest
  @ValueSource(strings = {"hashlog", "sqlite"})
  void tupleKeys_surviveReopenInOrder(String engine) {
    long seed = 2024;
    Random r = new Random(seed);
    TreeMap<Tuple, String> model = new TreeMap<>(TupleModel::compare);
    try (Store store = open(engine)) {
      TypedStore<Tuple, String> typed = TypedStore.of(store, KeyCodec.tuple(), ValueCodec.utf8());
      for (int i = 0; i < 500; i++) {
        Tuple k = Tuple.of("t", i % 3).addAll(TupleModel.randomTuple(r, 0));
        model.put(k, "v" + i);
        typed.put(k, "v" + i);
      }
      StoreMap<Tuple, String> map = typed.asMap();
      map.put(Tuple.of("map", Long.MIN_VALUE), "min");
      map.put(Tuple.of("map", -0.0), "negative zero");
      model.put(Tuple.of("map", Long.MIN_VALUE), "min");
      model.put(Tuple.of("map", -0.0), "negative zero");
    }
    try (Store store = open(engine)) {
      TypedStore<Tuple, String> typed = TypedStore.of(store, KeyCodec.tuple(), ValueCodec.utf8());
      List<Map.Entry<Tuple, String>> all = typed.scan(TypedRange.all());
      List<Map.Entry<Tuple, String>> expected = new ArrayList<>(model.entrySet());
      assertThat(all).as("seed " + seed).hasSameSizeAs(expected);
      for (int i = 0; i < all.size(); i++) {
        assertThat(TupleModel.deepEquals(all.get(i).getKey(), expected.get(i).getKey()))
            .as("seed %d, position %d: %s vs %s", seed, i, all.get(i), expected.get(i))
            .isTrue();
        assertThat(all.get(i).getValue()).isEqualTo(expected.get(i).getValue());
      }
      Tuple p = Tuple.of("t", 1);
      assertThat(typed.scan(TypedRange.prefix(p)))
          .containsExactlyElementsOf(
              model.entrySet().stream().filter(e -> e.getKey().startsWith(p)).toList());
      StoreMap<Tuple, String> map = typed.asMap();
      assertThat(map.tailMap(Tuple.of("map")).firstEntry())
          .isEqualTo(Map.entry(Tuple.of("map", Long.MIN_VALUE), "min"));
      assertThat(map.lastEntry()).isEqualTo(model.lastEntry());
      assertThat(map.size()).isEqualTo(model.size());
    }
  }
}
