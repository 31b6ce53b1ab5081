package io.kv4j.server;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store for tests that delegates to another and can inject faults: a GET of the key {@code block}
 * (or every delete, when {@link #blockDeletes} is set) waits for {@link #release}; writes fail with
 * a disk-full {@link StoreIOException} while {@link #diskFull} is set. Closing it does not close
 * the delegate, so a "reopened" store sees the same data.
 */
final class BlockingStore implements Store {
  static final byte[] BLOCK = "block".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  final Store delegate;
  final CountDownLatch release;
  final FaultSwitch faults;
  volatile boolean blockDeletes;
  final CountDownLatch blocked = new CountDownLatch(1);
  final AtomicInteger writeCalls = new AtomicInteger();

  /** Shared between a store and the stores that replace it on reopen. */
  static final class FaultSwitch {
    volatile boolean diskFull;
    volatile String degradedBecause; // stats() says DEGRADED with this problem while set
  }

  BlockingStore(Store delegate, CountDownLatch release, FaultSwitch faults) {
    this.delegate = delegate;
    this.release = release;
    this.faults = faults;
  }

  private void await() {
    blocked.countDown();
    try {
      if (!release.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("test never released the blocked call");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void writing() {
    writeCalls.incrementAndGet();
    if (faults.diskFull) {
      throw new StoreIOException(
          "memory: failed until reopened: append: No space left on device (injected)",
          new IOException("No space left on device"));
    }
  }

  @Override
  public byte[] get(byte[] key) {
    if (Arrays.equals(key, BLOCK)) {
      await();
    }
    return delegate.get(key);
  }

  @Override
  public void put(byte[] key, byte[] value) {
    writing();
    delegate.put(key, value);
  }

  @Override
  public void delete(byte[] key) {
    if (blockDeletes) {
      await();
    }
    writing();
    delegate.delete(key);
  }

  @Override
  public Cursor scan(KeyRange range) {
    return delegate.scan(range);
  }

  @Override
  public void write(WriteBatch batch) {
    writing();
    delegate.write(batch);
  }

  @Override
  public boolean writeIf(WriteBatch batch) {
    writing();
    return delegate.writeIf(batch);
  }

  @Override
  public boolean putIfAbsent(byte[] key, byte[] value) {
    writing();
    return delegate.putIfAbsent(key, value);
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    writing();
    return delegate.replace(key, expected, value);
  }

  @Override
  public boolean delete(byte[] key, byte[] expected) {
    writing();
    return delegate.delete(key, expected);
  }

  @Override
  public void sync() {
    delegate.sync();
  }

  @Override
  public StoreInfo info() {
    // Faults are injected into the delegate's own keys only: no keyspaces through this wrapper.
    StoreInfo i = delegate.info();
    java.util.Set<io.kv4j.Feature> features = java.util.EnumSet.noneOf(io.kv4j.Feature.class);
    features.addAll(i.features());
    features.remove(io.kv4j.Feature.KEYSPACES);
    features.remove(io.kv4j.Feature.KEYSPACE_BATCH);
    return new StoreInfo(
        i.engine(), features, i.limits(), i.durability(), i.location(), i.readOnly());
  }

  @Override
  public StoreStats stats() {
    StoreStats s = delegate.stats();
    String problem = faults.degradedBecause;
    return problem == null
        ? s
        : new StoreStats(
            s.keyCount(),
            s.keyCountExact(),
            s.diskBytes(),
            s.figures(),
            StoreStats.Health.DEGRADED,
            problem);
  }

  @Override
  public void close() {
    // The delegate outlives this store: the test closes it.
  }
}
