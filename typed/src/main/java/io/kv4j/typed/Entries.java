package io.kv4j.typed;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/** Decodes a cursor's entries with a pair of codecs; shared by the store and snapshot views. */
final class Entries<K, V> {
  private final KeyCodec<K> keys;
  private final ValueCodec<V> values;

  Entries(KeyCodec<K> keys, ValueCodec<V> values) {
    this.keys = keys;
    this.values = values;
  }

  Map.Entry<K, V> decode(Entry e) {
    return new AbstractMap.SimpleImmutableEntry<>(keys.decode(e.key()), values.decode(e.value()));
  }

  V value(byte[] bytes) {
    return bytes == null ? null : values.decode(bytes);
  }

  List<Map.Entry<K, V>> list(Cursor cursor) {
    try (cursor) {
      List<Map.Entry<K, V>> out = new ArrayList<>();
      while (cursor.hasNext()) {
        out.add(decode(cursor.next()));
      }
      return out;
    }
  }

  Stream<Map.Entry<K, V>> stream(Cursor cursor) {
    return cursor.stream().map(this::decode);
  }

  void forEach(Cursor cursor, BiConsumer<? super K, ? super V> action) {
    try (cursor) {
      while (cursor.hasNext()) {
        Map.Entry<K, V> e = decode(cursor.next());
        action.accept(e.getKey(), e.getValue());
      }
    }
  }
}
