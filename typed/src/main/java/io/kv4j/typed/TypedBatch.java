package io.kv4j.typed;

import io.kv4j.WriteBatch;
import java.util.Objects;

/**
 * Typed puts, deletes and conditions, encoded as they are added, for {@link TypedStore#write} (all
 * or nothing, on engines with {@link io.kv4j.Feature#ATOMIC_BATCH}) and {@link TypedStore#writeIf}
 * (conditions checked and operations applied as one step, on engines with {@link
 * io.kv4j.Feature#CONDITIONAL_BATCH}). Get one from {@link TypedStore#batch()}; it can be written
 * to any typed store with the same codecs. Not thread-safe.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class TypedBatch<K, V> {
  private final KeyCodec<K> keys;
  private final ValueCodec<V> values;
  private final WriteBatch batch = new WriteBatch();

  TypedBatch(KeyCodec<K> keys, ValueCodec<V> values) {
    this.keys = keys;
    this.values = values;
  }

  /**
   * Adds a put.
   *
   * @param key the key
   * @param value the value
   * @return this batch
   * @throws NullPointerException if key or value is null
   * @throws IllegalArgumentException if the key or value cannot be encoded, or the key encodes to
   *     no bytes
   */
  public TypedBatch<K, V> put(K key, V value) {
    batch.put(encodeKey(key), values.encode(Objects.requireNonNull(value, "value")));
    return this;
  }

  /**
   * Adds a delete; deleting an absent key is not an error.
   *
   * @param key the key
   * @return this batch
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException if the key cannot be encoded
   */
  public TypedBatch<K, V> delete(K key) {
    batch.delete(encodeKey(key));
    return this;
  }

  /**
   * Adds a condition for {@link TypedStore#writeIf}: the key holds a value whose encoding equals
   * that of {@code value}.
   *
   * @param key the key
   * @param value the value it must hold
   * @return this batch
   * @throws NullPointerException if key or value is null
   * @throws IllegalArgumentException if the key or value cannot be encoded
   */
  public TypedBatch<K, V> expect(K key, V value) {
    batch.expect(encodeKey(key), values.encode(Objects.requireNonNull(value, "value")));
    return this;
  }

  /**
   * Adds a condition for {@link TypedStore#writeIf}: the key is absent.
   *
   * @param key the key
   * @return this batch
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException if the key cannot be encoded
   */
  public TypedBatch<K, V> expectAbsent(K key) {
    batch.expectAbsent(encodeKey(key));
    return this;
  }

  /**
   * Number of puts and deletes.
   *
   * @return the operation count
   */
  public int size() {
    return batch.size();
  }

  /**
   * Number of conditions.
   *
   * @return the condition count
   */
  public int conditionCount() {
    return batch.conditionCount();
  }

  /** Removes every operation and condition, so the batch can be reused. */
  public void clear() {
    batch.clear();
  }

  private byte[] encodeKey(K key) {
    return keys.encode(Objects.requireNonNull(key, "key"));
  }

  /** The encoded batch, after checking it was built with the writer's codecs. */
  WriteBatch encodedFor(KeyCodec<?> k, ValueCodec<?> v) {
    if (k != keys || v != values) {
      throw new IllegalArgumentException(
          "batch was built with codecs "
              + keys
              + "/"
              + values
              + ", not those of the store it is written to ("
              + k
              + "/"
              + v
              + ")");
    }
    return batch;
  }

  @Override
  public String toString() {
    return "TypedBatch[" + size() + " operations, " + conditionCount() + " conditions]";
  }
}
