package io.kv4j.micrometer;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store that answers with whatever the test sets: every data call throws {@link #failure} when
 * set, {@link #stats()} returns {@link #stats} and counts its calls. For the cases a real engine
 * cannot be made to show on demand (a corrupted verify, an I/O error, a FAILED health).
 */
final class FakeStore implements Store {
  volatile RuntimeException failure;
  volatile StoreStats stats = new StoreStats(0, true, 0, Map.of());
  final AtomicInteger statsCalls = new AtomicInteger();

  private void call() {
    RuntimeException f = failure;
    if (f != null) {
      throw f;
    }
  }

  @Override
  public byte[] get(byte[] key) {
    call();
    return null;
  }

  @Override
  public void put(byte[] key, byte[] value) {
    call();
  }

  @Override
  public void delete(byte[] key) {
    call();
  }

  @Override
  public Cursor scan(KeyRange range) {
    call();
    throw new UnsupportedOperationException("the fake has no keys to scan");
  }

  @Override
  public void write(WriteBatch batch) {
    call();
  }

  @Override
  public void sync() {
    call();
  }

  @Override
  public void verify() {
    call();
  }

  @Override
  public StoreInfo info() {
    return new StoreInfo(
        "fake",
        EnumSet.noneOf(Feature.class),
        new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE),
        Durability.SYNC,
        "fake:",
        false);
  }

  @Override
  public StoreStats stats() {
    statsCalls.incrementAndGet();
    call();
    return stats;
  }

  @Override
  public void close() {}
}
