package io.kv4j;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * An ordered list of puts and deletes that {@link Store#write(WriteBatch)} applies atomically: all
 * of them or none. Operations on the same key apply in the order they were added, so a put followed
 * by a delete of one key leaves the key absent.
 *
 * <p>Arguments are copied when added: changing an array afterwards changes nothing in the batch.
 * Keys and values are checked against the engine's limits when the batch is written, before
 * anything is applied. A batch is not thread-safe; it may be written several times and to several
 * stores.
 *
 * <p>An operation may name a keyspace ({@link #put(String, byte[], byte[])}): it then applies to
 * that keyspace of the store the batch is written to ({@link Store#DEFAULT_KEYSPACE} for the
 * store's own keys), which is created if absent. Such a batch needs {@link Feature#KEYSPACE_BATCH};
 * operations without a name apply to the store (or keyspace) the batch is written to.
 *
 * <p>A batch may also hold conditions ({@link #expect(byte[], byte[])}, {@link
 * #expectAbsent(byte[])}): what keys must hold for the batch to apply. Only {@link
 * Store#writeIf(WriteBatch)} writes such a batch, checking every condition and applying every
 * operation as one atomic step; {@link Store#write(WriteBatch)} refuses it rather than ignore them.
 */
public final class WriteBatch {
  private final List<byte[]> keys = new ArrayList<>();
  private final List<byte[]> values = new ArrayList<>(); // null marks a delete
  private List<String> keyspaces; // null until an operation names a keyspace; then one per op
  private long bytes;
  private final List<byte[]> conditionKeys = new ArrayList<>();
  private final List<byte[]> conditionValues = new ArrayList<>(); // null: the key must be absent
  private final List<String> conditionKeyspaces = new ArrayList<>(); // null: no name

  /** Creates an empty batch. */
  public WriteBatch() {}

  /**
   * Adds a put.
   *
   * @param key the key, not empty
   * @param value the value, may be empty
   * @return this batch
   * @throws NullPointerException if key or value is null
   * @throws IllegalArgumentException if key is empty
   */
  public WriteBatch put(byte[] key, byte[] value) {
    return add(null, key, Objects.requireNonNull(value, "value"));
  }

  /**
   * Adds a put into a named keyspace.
   *
   * @param keyspace a keyspace name ({@link Store#checkKeyspaceName(String)}) or {@link
   *     Store#DEFAULT_KEYSPACE}
   * @param key the key, not empty
   * @param value the value, may be empty
   * @return this batch
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if key is empty or the name is not valid
   */
  public WriteBatch put(String keyspace, byte[] key, byte[] value) {
    return add(Store.checkKeyspaceName(keyspace), key, Objects.requireNonNull(value, "value"));
  }

  /**
   * Adds a delete. Deleting an absent key is not an error.
   *
   * @param key the key, not empty
   * @return this batch
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException if key is empty
   */
  public WriteBatch delete(byte[] key) {
    return add(null, key, null);
  }

  /**
   * Adds a delete in a named keyspace. Deleting an absent key is not an error.
   *
   * @param keyspace a keyspace name ({@link Store#checkKeyspaceName(String)}) or {@link
   *     Store#DEFAULT_KEYSPACE}
   * @param key the key, not empty
   * @return this batch
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if key is empty or the name is not valid
   */
  public WriteBatch delete(String keyspace, byte[] key) {
    return add(Store.checkKeyspaceName(keyspace), key, null);
  }

  /**
   * Adds a condition: when the batch is written with {@link Store#writeIf(WriteBatch)}, {@code key}
   * must hold exactly {@code value} (byte for byte; an empty value is a value, not absence), as it
   * is before any operation of this batch applies.
   *
   * @param key the key, not empty
   * @param value the value the key must hold
   * @return this batch
   * @throws NullPointerException if key or value is null
   * @throws IllegalArgumentException if key is empty
   */
  public WriteBatch expect(byte[] key, byte[] value) {
    return addCondition(null, key, Objects.requireNonNull(value, "value"));
  }

  /**
   * Adds a condition on a key of a named keyspace (see {@link #expect(byte[], byte[])}); needs
   * {@link Feature#KEYSPACE_BATCH} like a named operation.
   *
   * @param keyspace a keyspace name ({@link Store#checkKeyspaceName(String)}) or {@link
   *     Store#DEFAULT_KEYSPACE}
   * @param key the key, not empty
   * @param value the value the key must hold
   * @return this batch
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if key is empty or the name is not valid
   */
  public WriteBatch expect(String keyspace, byte[] key, byte[] value) {
    return addCondition(
        Store.checkKeyspaceName(keyspace), key, Objects.requireNonNull(value, "value"));
  }

  /**
   * Adds a condition: when the batch is written with {@link Store#writeIf(WriteBatch)}, {@code key}
   * must be absent, as it is before any operation of this batch applies.
   *
   * @param key the key, not empty
   * @return this batch
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException if key is empty
   */
  public WriteBatch expectAbsent(byte[] key) {
    return addCondition(null, key, null);
  }

  /**
   * Adds a condition that a key of a named keyspace is absent (see {@link #expectAbsent(byte[])}).
   *
   * @param keyspace a keyspace name ({@link Store#checkKeyspaceName(String)}) or {@link
   *     Store#DEFAULT_KEYSPACE}
   * @param key the key, not empty
   * @return this batch
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if key is empty or the name is not valid
   */
  public WriteBatch expectAbsent(String keyspace, byte[] key) {
    return addCondition(Store.checkKeyspaceName(keyspace), key, null);
  }

  private WriteBatch addCondition(String keyspace, byte[] key, byte[] value) {
    byte[] k = checkKey(key);
    conditionKeys.add(k);
    conditionValues.add(value == null ? null : value.clone());
    conditionKeyspaces.add(keyspace);
    return this;
  }

  private WriteBatch add(String keyspace, byte[] key, byte[] value) {
    byte[] k = checkKey(key);
    byte[] v = value == null ? null : value.clone();
    if (keyspace != null && keyspaces == null) {
      keyspaces = new ArrayList<>(Collections.nCopies(keys.size(), (String) null));
    }
    keys.add(k);
    values.add(v);
    if (keyspaces != null) {
      keyspaces.add(keyspace);
    }
    bytes += k.length + (v == null ? 0 : v.length);
    return this;
  }

  /**
   * Number of operations.
   *
   * @return the operation count
   */
  public int size() {
    return keys.size();
  }

  /**
   * Whether the batch holds no operation.
   *
   * @return true if empty
   */
  public boolean isEmpty() {
    return keys.isEmpty();
  }

  /**
   * Sum of key and value lengths of all operations.
   *
   * @return payload bytes
   */
  public long byteSize() {
    return bytes;
  }

  /** Removes every operation and every condition so the batch can be reused. */
  public void clear() {
    keys.clear();
    values.clear();
    keyspaces = null;
    bytes = 0;
    conditionKeys.clear();
    conditionValues.clear();
    conditionKeyspaces.clear();
  }

  /**
   * Number of conditions.
   *
   * @return the condition count
   */
  public int conditionCount() {
    return conditionKeys.size();
  }

  /**
   * Whether the batch holds a condition (then only {@link Store#writeIf(WriteBatch)} writes it).
   *
   * @return true if {@link #conditionCount()} is not zero
   */
  public boolean hasConditions() {
    return !conditionKeys.isEmpty();
  }

  /**
   * The key of condition {@code i}. Engines read it without copying and must not modify it.
   *
   * @param i index, {@code 0 <= i < conditionCount()}
   * @return the key array held by the batch
   */
  public byte[] conditionKey(int i) {
    return conditionKeys.get(i);
  }

  /**
   * The value condition {@code i} requires, or null when it requires the key to be absent. Engines
   * read it without copying and must not modify it.
   *
   * @param i index, {@code 0 <= i < conditionCount()}
   * @return the value array held by the batch, or null
   */
  public byte[] conditionValue(int i) {
    return conditionValues.get(i);
  }

  /**
   * The keyspace condition {@code i} names, or null when it names none (it applies to the store or
   * keyspace the batch is written to).
   *
   * @param i index, {@code 0 <= i < conditionCount()}
   * @return the name, or null
   */
  public String conditionKeyspace(int i) {
    return conditionKeyspaces.get(i);
  }

  /**
   * The key of operation {@code i}. Engines read it without copying and must not modify it.
   *
   * @param i index, {@code 0 <= i < size()}
   * @return the key array held by the batch
   */
  public byte[] key(int i) {
    return keys.get(i);
  }

  /**
   * The value of operation {@code i}, or null when operation {@code i} is a delete. Engines read it
   * without copying and must not modify it.
   *
   * @param i index, {@code 0 <= i < size()}
   * @return the value array held by the batch, or null for a delete
   */
  public byte[] value(int i) {
    return values.get(i);
  }

  /**
   * The keyspace operation {@code i} names, or null when it names none (it applies to the store or
   * keyspace the batch is written to).
   *
   * @param i index, {@code 0 <= i < size()}
   * @return the name, or null
   */
  public String keyspace(int i) {
    Objects.checkIndex(i, keys.size());
    return keyspaces == null ? null : keyspaces.get(i);
  }

  /**
   * Whether any operation names a keyspace.
   *
   * @return true if {@link #keyspace(int)} is non-null for some operation
   */
  public boolean namesKeyspaces() {
    return keyspaces != null;
  }

  /**
   * Whether operation {@code i} is a delete.
   *
   * @param i index, {@code 0 <= i < size()}
   * @return true for a delete, false for a put
   */
  public boolean isDelete(int i) {
    return values.get(i) == null;
  }

  private static byte[] checkKey(byte[] key) {
    Objects.requireNonNull(key, "key");
    if (key.length == 0) {
      throw new IllegalArgumentException("key is empty; keys are 1 or more bytes");
    }
    return key.clone();
  }

  @Override
  public String toString() {
    return "WriteBatch["
        + size()
        + " operations, "
        + bytes
        + " bytes"
        + (hasConditions() ? ", " + conditionCount() + " conditions" : "")
        + "]";
  }
}
