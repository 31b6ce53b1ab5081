package io.kv4j;

import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.SalvageSink;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A test engine whose only ability is salvage: it hands the sink whatever the running test put in
 * {@link #script} and returns {@link #damage}, and records the config it was called with.
 */
public final class SalvageProbeProvider implements StoreProvider {
  static volatile Consumer<SalvageSink> script = sink -> {};
  static volatile List<DamagedRegion> damage = List.of();
  static final List<StoreConfig> calls = new ArrayList<>();

  /** Used by {@link java.util.ServiceLoader}. */
  public SalvageProbeProvider() {}

  @Override
  public String id() {
    return "salvage-probe";
  }

  @Override
  public String description() {
    return "test engine: salvage only";
  }

  @Override
  public Set<Feature> features() {
    return EnumSet.of(Feature.PERSISTENT);
  }

  @Override
  public Limits limits() {
    return Stores.provider("memory").limits();
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of();
  }

  @Override
  public Store open(StoreConfig config) {
    throw new StoreCorruptedException("the probe never opens", config.path(), 0);
  }

  @Override
  public List<DamagedRegion> salvage(StoreConfig config, SalvageSink sink) {
    synchronized (calls) {
      calls.add(config);
    }
    script.accept(sink);
    return damage;
  }
}
