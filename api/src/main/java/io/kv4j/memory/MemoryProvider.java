package io.kv4j.memory;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code memory} engine: an ordered in-memory map, not persistent. It is the reference the TCK
 * is proven on and the default for unit tests. Ordered, reverse and snapshot scans, atomic batches,
 * conditional writes and read snapshots; keys up to 64 KiB, values up to 256 MiB; no options. The
 * path, if given, is ignored: every open is a new, empty store.
 */
public final class MemoryProvider implements StoreProvider {
  static final Limits LIMITS = new Limits(64 << 10, 256 << 20);
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.CONDITIONAL_WRITE,
          Feature.CONDITIONAL_BATCH,
          Feature.SNAPSHOT_READ,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH);

  /** Creates the provider; called by {@link java.util.ServiceLoader}. */
  public MemoryProvider() {}

  @Override
  public String id() {
    return "memory";
  }

  @Override
  public String description() {
    return "In-memory ordered map; not persistent. For tests and caches.";
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  @Override
  public Limits limits() {
    return LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of();
  }

  @Override
  public Store open(StoreConfig config) {
    return new MemoryStore(config.durability(), config.readOnly());
  }
}
