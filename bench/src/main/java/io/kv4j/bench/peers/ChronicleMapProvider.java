package io.kv4j.bench.peers;

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
 * Chronicle Map 3.27ea0 as a kv4j engine ({@code chronicle-map}), for comparison. Settings: one
 * memory-mapped file {@code chronicle.map} in the store directory, {@code entries} (default
 * 1,000,000; a hard capacity) sized with {@code average-key-size} and {@code average-value-size}
 * (defaults 16 and 1024 bytes, the benchmark's shape), {@code putReturnsNull(true)} and {@code
 * removeReturnsNull(true)} so writes never decode the old value.
 *
 * <p>What it is not: it has no ordered scans (a hash map), no atomic batches, and nothing that
 * forces the mapping to disk, so it refuses durability SYNC. In BUFFERED, writes land in the shared
 * mapping (the page cache) before they return, but values are overwritten in place: a kill -9 in
 * the middle of an overwrite leaves a torn entry, which {@code recoverPersistedTo} (used to reopen
 * a store not closed cleanly; it scans the whole file) purges, so the key's last acknowledged value
 * is lost too (TCK rule 7.5). Values much larger than the average size may be refused by Chronicle
 * Map even though the declared limit is kv4j's minimum of 16 MiB. Needs the JVM flags of the bench
 * module (add-exports/add-opens, a JDK not a JRE) and {@code -Dchronicle.analytics.disable=true};
 * the {@code chronicle-analytics} dependency is excluded.
 */
public final class ChronicleMapProvider implements StoreProvider {
  static final Set<Feature> FEATURES = EnumSet.of(Feature.PERSISTENT);
  static final Limits LIMITS = new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE);

  /** Maximum number of entries, fixed when the file is created. */
  static final OptionSpec<Long> ENTRIES =
      OptionSpec.longInteger(
          "entries", 1_000_000L, 1, 1L << 40, "entries", "capacity, fixed at creation");

  /** Average key size used to size the file. */
  static final OptionSpec<Integer> AVERAGE_KEY_SIZE =
      OptionSpec.integer("average-key-size", 16, 1, 1 << 16, "bytes", "average key size");

  /** Average value size used to size the file. */
  static final OptionSpec<Integer> AVERAGE_VALUE_SIZE =
      OptionSpec.integer("average-value-size", 1024, 1, 1 << 24, "bytes", "average value size");

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public ChronicleMapProvider() {}

  @Override
  public String id() {
    return "chronicle-map";
  }

  @Override
  public String description() {
    return "Peer for comparison: Chronicle Map 3.27ea0 (off-heap memory-mapped hash map).";
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
    return List.of(ENTRIES, AVERAGE_KEY_SIZE, AVERAGE_VALUE_SIZE);
  }

  @Override
  public Store open(StoreConfig config) {
    return new ChronicleMapStore(config);
  }
}
