package io.kv4j.typed;

import io.kv4j.Feature;
import io.kv4j.Snapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * Typed reads at one point in time: a {@link Snapshot} seen through the codecs of the {@link
 * TypedStore} that opened it. Close it promptly (try with resources); closing the store closes it.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class TypedSnapshot<K, V> implements AutoCloseable {
  private final Snapshot snapshot;
  private final KeyCodec<K> keys;
  private final Entries<K, V> entries;

  TypedSnapshot(Snapshot snapshot, KeyCodec<K> keys, Entries<K, V> entries) {
    this.snapshot = snapshot;
    this.keys = keys;
    this.entries = entries;
  }

  /**
   * Reads a value as of the snapshot.
   *
   * @param key the key
   * @return the value, or null when the key was absent
   */
  public V get(K key) {
    return entries.value(snapshot.get(encodeKey(key)));
  }

  /**
   * Reads several values as of the snapshot.
   *
   * @param keys the keys
   * @return the values in the order of {@code keys}, null where a key was absent
   */
  public List<V> getAll(List<? extends K> keys) {
    Objects.requireNonNull(keys, "keys");
    List<byte[]> encoded = new ArrayList<>(keys.size());
    for (K k : keys) {
      encoded.add(encodeKey(k));
    }
    List<V> out = new ArrayList<>(keys.size());
    for (byte[] v : snapshot.getAll(encoded)) {
      out.add(entries.value(v));
    }
    return out;
  }

  /**
   * Whether a key was present.
   *
   * @param key the key
   * @return true if present as of the snapshot
   */
  public boolean contains(K key) {
    return snapshot.contains(encodeKey(key));
  }

  /**
   * Reads the entries of a range as of the snapshot into a list.
   *
   * @param range which keys, in which direction, how many
   * @return the entries in scan order
   * @throws UnsupportedOperationException if the store lacks {@link Feature#ORDERED_SCAN} (or
   *     {@link Feature#REVERSE_SCAN} for a reversed range)
   */
  public List<Map.Entry<K, V>> scan(TypedRange<K> range) {
    return entries.list(snapshot.scan(range.toKeyRange(keys)));
  }

  /**
   * The entries of a range as of the snapshot, as a stream that owns a cursor.
   *
   * @param range which keys, in which direction, how many
   * @return the entries in scan order
   * @throws UnsupportedOperationException if the store lacks a feature the range needs
   */
  public Stream<Map.Entry<K, V>> stream(TypedRange<K> range) {
    return entries.stream(snapshot.scan(range.toKeyRange(keys)));
  }

  /**
   * Calls {@code action} for each entry of a range as of the snapshot.
   *
   * @param range which keys, in which direction, how many
   * @param action what to do with each key and value
   * @throws UnsupportedOperationException if the store lacks a feature the range needs
   */
  public void forEach(TypedRange<K> range, BiConsumer<? super K, ? super V> action) {
    Objects.requireNonNull(action, "action");
    entries.forEach(snapshot.scan(range.toKeyRange(keys)), action);
  }

  /** Releases the snapshot. Idempotent. */
  @Override
  public void close() {
    snapshot.close();
  }

  private byte[] encodeKey(K key) {
    return keys.encode(Objects.requireNonNull(key, "key"));
  }
}
