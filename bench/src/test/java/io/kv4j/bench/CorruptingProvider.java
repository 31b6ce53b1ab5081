package io.kv4j.bench;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A test-only engine ({@code corrupting}) that returns a damaged value on every 50th read, to prove
 * the runner notices wrong values instead of reporting their speed.
 */
public final class CorruptingProvider implements StoreProvider {
  private static final Set<Feature> FEATURES = EnumSet.noneOf(Feature.class);

  /** Creates the provider. */
  public CorruptingProvider() {}

  @Override
  public String id() {
    return "corrupting";
  }

  @Override
  public String description() {
    return "Test engine returning a damaged value every 50th read.";
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
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
    return new AbstractStore(
        new io.kv4j.StoreInfo(
            "corrupting", FEATURES, limits(), config.durability(), "memory:", false)) {
      private final Map<String, byte[]> map = new ConcurrentHashMap<>();
      private final java.util.concurrent.atomic.AtomicLong reads =
          new java.util.concurrent.atomic.AtomicLong();

      @Override
      protected byte[] doGet(byte[] key) {
        byte[] v = map.get(java.util.HexFormat.of().formatHex(key));
        if (v == null) {
          return null;
        }
        byte[] copy = v.clone();
        if (reads.incrementAndGet() % 50 == 0) {
          copy[copy.length - 1] ^= 1;
        }
        return copy;
      }

      @Override
      protected void doPut(byte[] key, byte[] value) {
        map.put(java.util.HexFormat.of().formatHex(key), value.clone());
      }

      @Override
      protected void doDelete(byte[] key) {
        map.remove(java.util.HexFormat.of().formatHex(key));
      }

      @Override
      protected AbstractCursor doScan(KeyRange range) {
        throw new UnsupportedOperationException();
      }

      @Override
      protected void doWrite(WriteBatch batch) {
        throw new UnsupportedOperationException();
      }

      @Override
      protected void doSync() {}

      @Override
      protected StoreStats doStats() {
        return new StoreStats(map.size(), true, 0, Map.of());
      }

      @Override
      protected void doClose() {}
    };
  }
}
