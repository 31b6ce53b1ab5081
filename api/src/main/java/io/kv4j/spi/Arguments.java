package io.kv4j.spi;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The argument checks of one store (or keyspace handle), against its limits and features: every
 * message names the problem, the engine and the location, and nothing reaches the engine before the
 * whole call was checked (a batch is checked whole before any operation applies).
 */
final class Arguments {
  private final StoreInfo info;
  private final String ownKeyspace; // the name operations without one apply to

  Arguments(StoreInfo info, String keyspace) {
    this.info = info;
    this.ownKeyspace = keyspace == null ? Store.DEFAULT_KEYSPACE : keyspace;
  }

  void feature(Feature f) {
    if (!info.has(f)) {
      throw new UnsupportedOperationException(
          "engine '" + info.engine() + "' does not support " + f);
    }
  }

  void key(byte[] key) {
    Objects.requireNonNull(key, "key");
    if (key.length == 0) {
      throw new IllegalArgumentException(
          "key is empty; keys are 1 or more bytes (" + info.describe() + ")");
    }
    int max = info.limits().maxKeySize();
    if (key.length > max) {
      throw tooLong("key", key.length, max);
    }
  }

  void value(byte[] value) {
    Objects.requireNonNull(value, "value");
    int max = info.limits().maxValueSize();
    if (value.length > max) {
      throw tooLong("value", value.length, max);
    }
  }

  private IllegalArgumentException tooLong(String what, int length, int max) {
    return new IllegalArgumentException(
        what
            + " is "
            + length
            + " bytes, longer than the limit of "
            + max
            + " bytes ("
            + info.describe()
            + ")");
  }

  /** The features a scan of {@code range} needs. */
  void scan(KeyRange range) {
    feature(Feature.ORDERED_SCAN);
    if (range.isReverse()) {
      feature(Feature.REVERSE_SCAN);
    }
  }

  /** A batch for {@code write}, which would ignore its conditions: it must have none. */
  void noConditions(WriteBatch batch) {
    if (batch.hasConditions()) {
      throw new IllegalArgumentException(
          "the batch has "
              + batch.conditionCount()
              + " conditions, which write(batch) would ignore; write it with writeIf(batch) ("
              + info.describe()
              + ")");
    }
  }

  /** Whether a value some key must hold fits the limit; one that does not is held by no key. */
  boolean holdable(byte[] expected) {
    return expected.length <= info.limits().maxValueSize();
  }

  void keys(List<byte[]> keys) {
    Objects.requireNonNull(keys, "keys");
    for (byte[] key : keys) {
      key(key);
    }
  }

  /** Every operation of a batch: keys, values, and the keyspace feature for other keyspaces. */
  void operations(WriteBatch batch) {
    if (batch.namesKeyspaces()) {
      for (int i = 0, n = batch.size(); i < n; i++) {
        if (otherKeyspace(batch.keyspace(i))) {
          feature(Feature.KEYSPACE_BATCH);
          break;
        }
      }
    }
    for (int i = 0, n = batch.size(); i < n; i++) {
      key(batch.key(i));
      if (!batch.isDelete(i)) {
        value(batch.value(i));
      }
    }
  }

  /**
   * Every condition of a batch: keys, and the keyspace feature for other keyspaces.
   *
   * @return false if a condition expects a value longer than the limit (no key can hold it)
   */
  boolean conditions(WriteBatch batch) {
    boolean satisfiable = true;
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      key(batch.conditionKey(i));
      if (otherKeyspace(batch.conditionKeyspace(i))) {
        feature(Feature.KEYSPACE_BATCH);
      }
      byte[] v = batch.conditionValue(i);
      if (v != null && !holdable(v)) {
        satisfiable = false;
      }
    }
    return satisfiable;
  }

  private boolean otherKeyspace(String name) {
    return name != null && !name.equals(ownKeyspace);
  }

  /** The values an engine's getAll returned, checked for an engine bug and made unmodifiable. */
  List<byte[]> values(List<byte[]> keys, List<byte[]> values) {
    if (values == null || values.size() != keys.size()) {
      throw new IllegalStateException(
          info.describe()
              + " returned "
              + (values == null ? "null" : values.size() + " values")
              + " for "
              + keys.size()
              + " keys from getAll (an engine bug)");
    }
    return Collections.unmodifiableList(Arrays.asList(values.toArray(new byte[0][])));
  }

  /** A keyspace name to open or drop: valid, and not the store's own keys. */
  static String keyspaceName(String name) {
    Store.checkKeyspaceName(name);
    if (Store.DEFAULT_KEYSPACE.equals(name)) {
      throw new IllegalArgumentException(
          "'"
              + Store.DEFAULT_KEYSPACE
              + "' names the store's own keys, not a keyspace to open or drop");
    }
    return name;
  }

  /** The exception of a {@code do*} hook the engine declared a feature for but did not write. */
  UnsupportedOperationException notImplemented(Feature f) {
    return new UnsupportedOperationException(
        info.describe() + " declares " + f + " but does not implement it");
  }
}
