package io.kv4j.typed;

import io.kv4j.Feature;
import io.kv4j.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * A {@link Store} seen through a {@link KeyCodec} and a {@link ValueCodec}: typed keys and values
 * in, typed keys and values out, every call delegated to the store after encoding. It adds no state
 * and no locking: atomicity, durability, features and thread-safety are the store's. Closing the
 * store closes this view.
 *
 * <pre>{@code
 * TypedStore<Tuple, String> users = TypedStore.of(store, KeyCodec.tuple(), ValueCodec.utf8());
 * users.put(Tuple.of("user", 42, "name"), "Ada");
 * users.scan(TypedRange.prefix(Tuple.of("user", 42)));        // every key of user 42, in order
 * users.write(users.batch().put(k1, "a").delete(k2));         // atomic (ATOMIC_BATCH)
 * users.putIfAbsent(k, "x");                                  // CONDITIONAL_WRITE
 * }</pre>
 *
 * Conditional writes compare encoded values, byte for byte. Null keys and values are refused with
 * {@link NullPointerException}; what the store refuses (a key beyond its limit, a feature it lacks)
 * it refuses as documented on {@link Store}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class TypedStore<K, V> {
  private final Store store;
  private final KeyCodec<K> keys;
  private final ValueCodec<V> values;
  private final Entries<K, V> entries;

  private TypedStore(Store store, KeyCodec<K> keys, ValueCodec<V> values) {
    this.store = store;
    this.keys = keys;
    this.values = values;
    this.entries = new Entries<>(keys, values);
  }

  /**
   * A typed view of a store.
   *
   * @param store the store (or one of its keyspaces)
   * @param keys the key codec
   * @param values the value codec
   * @param <K> the key type
   * @param <V> the value type
   * @return the view
   * @throws NullPointerException if an argument is null
   */
  public static <K, V> TypedStore<K, V> of(Store store, KeyCodec<K> keys, ValueCodec<V> values) {
    return new TypedStore<>(
        Objects.requireNonNull(store, "store"),
        Objects.requireNonNull(keys, "keys"),
        Objects.requireNonNull(values, "values"));
  }

  /**
   * The store underneath.
   *
   * @return the store
   */
  public Store store() {
    return store;
  }

  /**
   * The key codec.
   *
   * @return the codec
   */
  public KeyCodec<K> keyCodec() {
    return keys;
  }

  /**
   * The value codec.
   *
   * @return the codec
   */
  public ValueCodec<V> valueCodec() {
    return values;
  }

  /**
   * Reads a value.
   *
   * @param key the key
   * @return the value, or null when the key is absent
   */
  public V get(K key) {
    return entries.value(store.get(encodeKey(key)));
  }

  /**
   * Reads several values (see {@link Store#getAll}: not at one point in time unless the engine says
   * so; use {@link #snapshot()} for that).
   *
   * @param keys the keys
   * @return the values in the order of {@code keys}, null where a key is absent
   */
  public List<V> getAll(List<? extends K> keys) {
    Objects.requireNonNull(keys, "keys");
    List<byte[]> encoded = new ArrayList<>(keys.size());
    for (K k : keys) {
      encoded.add(encodeKey(k));
    }
    List<V> out = new ArrayList<>(keys.size());
    for (byte[] v : store.getAll(encoded)) {
      out.add(entries.value(v));
    }
    return out;
  }

  /**
   * Whether a key is present.
   *
   * @param key the key
   * @return true if present
   */
  public boolean contains(K key) {
    return store.contains(encodeKey(key));
  }

  /**
   * Inserts or replaces a value.
   *
   * @param key the key
   * @param value the value
   */
  public void put(K key, V value) {
    store.put(encodeKey(key), encodeValue(value));
  }

  /**
   * Removes a key; removing an absent key is not an error.
   *
   * @param key the key
   */
  public void delete(K key) {
    store.delete(encodeKey(key));
  }

  /**
   * Stores a value only if the key is absent, atomically ({@link Store#putIfAbsent}).
   *
   * @param key the key
   * @param value the value
   * @return true if stored, false if the key was present
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   */
  public boolean putIfAbsent(K key, V value) {
    return store.putIfAbsent(encodeKey(key), encodeValue(value));
  }

  /**
   * Replaces a value only if the key holds {@code expected} (compared encoded), atomically ({@link
   * Store#replace}).
   *
   * @param key the key
   * @param expected the value the key must hold
   * @param value the new value
   * @return true if replaced
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   */
  public boolean replace(K key, V expected, V value) {
    return store.replace(encodeKey(key), encodeValue(expected), encodeValue(value));
  }

  /**
   * Removes a key only if it holds {@code expected} (compared encoded), atomically ({@link
   * Store#delete(byte[], byte[])}).
   *
   * @param key the key
   * @param expected the value the key must hold
   * @return true if removed
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   */
  public boolean delete(K key, V expected) {
    return store.delete(encodeKey(key), encodeValue(expected));
  }

  /**
   * Reads the entries of a range into a list. Use a limit, {@link #stream} or {@link #forEach} for
   * ranges too large to hold.
   *
   * @param range which keys, in which direction, how many
   * @return the entries in scan order
   * @throws UnsupportedOperationException if the store lacks {@link Feature#ORDERED_SCAN} (or
   *     {@link Feature#REVERSE_SCAN} for a reversed range)
   */
  public List<Map.Entry<K, V>> scan(TypedRange<K> range) {
    return entries.list(store.scan(range.toKeyRange(keys)));
  }

  /**
   * The entries of a range as a stream that owns a cursor: close it (try with resources) unless it
   * is consumed to the end.
   *
   * @param range which keys, in which direction, how many
   * @return the entries in scan order
   * @throws UnsupportedOperationException if the store lacks a feature the range needs
   */
  public Stream<Map.Entry<K, V>> stream(TypedRange<K> range) {
    return entries.stream(store.scan(range.toKeyRange(keys)));
  }

  /**
   * Calls {@code action} for each entry of a range, closing the cursor also when it throws.
   *
   * @param range which keys, in which direction, how many
   * @param action what to do with each key and value
   * @throws UnsupportedOperationException if the store lacks a feature the range needs
   */
  public void forEach(TypedRange<K> range, BiConsumer<? super K, ? super V> action) {
    Objects.requireNonNull(action, "action");
    entries.forEach(store.scan(range.toKeyRange(keys)), action);
  }

  /**
   * A new, empty batch with this view's codecs.
   *
   * @return the batch
   */
  public TypedBatch<K, V> batch() {
    return new TypedBatch<>(keys, values);
  }

  /**
   * Applies a batch, all of it or none ({@link Store#write}).
   *
   * @param batch the operations, built by {@link #batch()} of a view with the same codecs
   * @throws UnsupportedOperationException if the store lacks {@link Feature#ATOMIC_BATCH}
   * @throws IllegalArgumentException if the batch has conditions (use {@link #writeIf}) or other
   *     codecs
   */
  public void write(TypedBatch<K, V> batch) {
    store.write(Objects.requireNonNull(batch, "batch").encodedFor(keys, values));
  }

  /**
   * Applies a batch only if its conditions hold, atomically ({@link Store#writeIf}).
   *
   * @param batch the conditions and operations, built by {@link #batch()}
   * @return true if applied, false if a condition failed (nothing changed)
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_BATCH}
   * @throws IllegalArgumentException if the batch was built with other codecs
   */
  public boolean writeIf(TypedBatch<K, V> batch) {
    return store.writeIf(Objects.requireNonNull(batch, "batch").encodedFor(keys, values));
  }

  /**
   * Opens a snapshot: typed reads at one point in time ({@link Store#snapshot()}). Close it.
   *
   * @return an open snapshot
   * @throws UnsupportedOperationException if the store lacks {@link Feature#SNAPSHOT_READ}
   */
  public TypedSnapshot<K, V> snapshot() {
    return new TypedSnapshot<>(store.snapshot(), keys, entries);
  }

  /**
   * This store as a {@link java.util.concurrent.ConcurrentNavigableMap} (see {@link StoreMap}).
   *
   * @return the map view
   * @throws UnsupportedOperationException if the store lacks {@link Feature#ORDERED_SCAN}
   */
  public StoreMap<K, V> asMap() {
    return StoreMap.of(store, keys, values);
  }

  private byte[] encodeKey(K key) {
    return keys.encode(Objects.requireNonNull(key, "key"));
  }

  private byte[] encodeValue(V value) {
    return values.encode(Objects.requireNonNull(value, "value"));
  }

  @Override
  public String toString() {
    return "TypedStore[" + keys + " -> " + values + "]"; // no store call: safe after close
  }
}
