package io.kv4j.server;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * A store for tests that delegates to another and plays "another server" at the worst moment: just
 * before each {@link #writeIf}, {@link #beforeWriteIf} runs with the call's number (1, 2, ...) and
 * may write the delegate directly. It can also hide CONDITIONAL_BATCH (a server engine without it).
 * Closing it does not close the delegate.
 */
final class InterferingStore implements Store {
  final Store delegate;
  final boolean conditionalBatch;
  final AtomicInteger writeIfCalls = new AtomicInteger();
  volatile IntConsumer beforeWriteIf = call -> {};

  InterferingStore(Store delegate, boolean conditionalBatch) {
    this.delegate = delegate;
    this.conditionalBatch = conditionalBatch;
  }

  @Override
  public boolean writeIf(WriteBatch batch) {
    beforeWriteIf.accept(writeIfCalls.incrementAndGet());
    return delegate.writeIf(batch);
  }

  @Override
  public byte[] get(byte[] key) {
    return delegate.get(key);
  }

  @Override
  public void put(byte[] key, byte[] value) {
    delegate.put(key, value);
  }

  @Override
  public void delete(byte[] key) {
    delegate.delete(key);
  }

  @Override
  public boolean putIfAbsent(byte[] key, byte[] value) {
    return delegate.putIfAbsent(key, value);
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    return delegate.replace(key, expected, value);
  }

  @Override
  public boolean delete(byte[] key, byte[] expected) {
    return delegate.delete(key, expected);
  }

  @Override
  public Cursor scan(KeyRange range) {
    return delegate.scan(range);
  }

  @Override
  public void write(WriteBatch batch) {
    delegate.write(batch);
  }

  @Override
  public void sync() {
    delegate.sync();
  }

  @Override
  public StoreInfo info() {
    // Only the delegate's own keys go through this wrapper: no keyspaces.
    StoreInfo i = delegate.info();
    Set<Feature> features = EnumSet.noneOf(Feature.class);
    features.addAll(i.features());
    features.remove(Feature.KEYSPACES);
    features.remove(Feature.KEYSPACE_BATCH);
    if (!conditionalBatch) {
      features.remove(Feature.CONDITIONAL_BATCH);
    }
    return new StoreInfo(
        i.engine(), features, i.limits(), i.durability(), i.location(), i.readOnly());
  }

  @Override
  public StoreStats stats() {
    return delegate.stats();
  }

  @Override
  public void close() {
    // The delegate outlives this store: the test closes it.
  }
}
