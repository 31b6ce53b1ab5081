package io.kv4j.spring;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test engine, {@code fake:<name>}, whose stores a test can reach by name to set their health and
 * count their closes: what a real engine cannot show on demand.
 */
public final class FakeEngine implements StoreProvider {
  static final Map<String, FakeStore> OPENED = new ConcurrentHashMap<>();

  /** Created by the service loader. */
  public FakeEngine() {}

  @Override
  public String id() {
    return "fake";
  }

  @Override
  public String description() {
    return "a test engine";
  }

  @Override
  public Set<Feature> features() {
    return Set.of();
  }

  @Override
  public Limits limits() {
    return new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE);
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of();
  }

  @Override
  public Store open(StoreConfig config) {
    FakeStore store = new FakeStore(String.valueOf(config.path()), config.durability());
    OPENED.put(store.name, store);
    return store;
  }

  static final class FakeStore implements Store {
    final String name;
    final Durability durability;
    final AtomicInteger closes = new AtomicInteger();
    volatile StoreStats stats = new StoreStats(3, true, 0, Map.of());

    FakeStore(String name, Durability durability) {
      this.name = name;
      this.durability = durability;
    }

    private void checkOpen() {
      if (closes.get() > 0) {
        throw new StoreClosedException("fake store '" + name + "' is closed");
      }
    }

    @Override
    public byte[] get(byte[] key) {
      checkOpen();
      return null;
    }

    @Override
    public void put(byte[] key, byte[] value) {
      checkOpen();
    }

    @Override
    public void delete(byte[] key) {
      checkOpen();
    }

    @Override
    public Cursor scan(KeyRange range) {
      throw new UnsupportedOperationException("fake");
    }

    @Override
    public void write(WriteBatch batch) {
      checkOpen();
    }

    @Override
    public void sync() {
      checkOpen();
    }

    @Override
    public StoreInfo info() {
      return new StoreInfo(
          "fake", Set.of(), new FakeEngine().limits(), durability, "fake:" + name, false);
    }

    @Override
    public StoreStats stats() {
      checkOpen();
      return stats;
    }

    @Override
    public void close() {
      closes.incrementAndGet();
    }
  }
}
