package io.kv4j.typed;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A store that hides some features of the store it wraps, as an engine without them would: the
 * hidden operations fall back to {@link Store}'s defaults, which throw {@link
 * UnsupportedOperationException}.
 */
final class MaskedStore implements Store {
  private final Store store;
  private final Set<Feature> hidden;

  MaskedStore(Store store, Feature... hidden) {
    this.store = store;
    this.hidden = EnumSet.copyOf(List.of(hidden));
  }

  @Override
  public byte[] get(byte[] key) {
    return store.get(key);
  }

  @Override
  public void put(byte[] key, byte[] value) {
    store.put(key, value);
  }

  @Override
  public void delete(byte[] key) {
    store.delete(key);
  }

  @Override
  public boolean putIfAbsent(byte[] key, byte[] value) {
    return hidden.contains(Feature.CONDITIONAL_WRITE)
        ? Store.super.putIfAbsent(key, value)
        : store.putIfAbsent(key, value);
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    return hidden.contains(Feature.CONDITIONAL_WRITE)
        ? Store.super.replace(key, expected, value)
        : store.replace(key, expected, value);
  }

  @Override
  public boolean delete(byte[] key, byte[] expected) {
    return hidden.contains(Feature.CONDITIONAL_WRITE)
        ? Store.super.delete(key, expected)
        : store.delete(key, expected);
  }

  @Override
  public Snapshot snapshot() {
    return hidden.contains(Feature.SNAPSHOT_READ) ? Store.super.snapshot() : store.snapshot();
  }

  @Override
  public Cursor scan(KeyRange range) {
    if (hidden.contains(Feature.ORDERED_SCAN)) {
      throw new UnsupportedOperationException("does not support ORDERED_SCAN");
    }
    return store.scan(range);
  }

  @Override
  public void write(WriteBatch batch) {
    if (hidden.contains(Feature.ATOMIC_BATCH)) {
      throw new UnsupportedOperationException("does not support ATOMIC_BATCH");
    }
    store.write(batch);
  }

  @Override
  public void sync() {
    store.sync();
  }

  @Override
  public StoreInfo info() {
    StoreInfo i = store.info();
    EnumSet<Feature> f = EnumSet.noneOf(Feature.class);
    f.addAll(i.features());
    f.removeAll(hidden);
    return new StoreInfo(i.engine(), f, i.limits(), i.durability(), i.location(), i.readOnly());
  }

  @Override
  public StoreStats stats() {
    return store.stats();
  }

  @Override
  public void close() {
    store.close();
  }
}
