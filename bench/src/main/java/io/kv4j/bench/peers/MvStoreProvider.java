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
 * H2 MVStore 2.5.252 as a kv4j engine ({@code mvstore}), for comparison. Settings: one file {@code
 * mvstore.db} in the store directory, an {@code MVMap} with {@code ByteArrayDataType} keys and
 * values (unsigned order, no ObjectDataType overhead), {@code autoCommitDisabled()}, a page cache
 * of {@code cache-size} MiB (default 128). Retention time and versions to keep stay at their
 * defaults: {@code setRetentionTime(0)} makes concurrent readers fail with "Chunk not found", so
 * files grow under updates until the background compaction catches up (visible in the footprint
 * table).
 *
 * <p>Durability. SYNC: {@code commit()} and {@code sync()} after every write. BUFFERED: by default
 * ({@code crash-safe=false}) MVStore's own background auto-commit (about once a second), its normal
 * mode; this does NOT meet kv4j's BUFFERED contract: a kill -9 loses up to a second of acknowledged
 * writes. With {@code crash-safe=true} every write is followed by {@code commit()} (written, not
 * forced), which meets it but was measured here at about 300 puts/s, loading 100,000 keys in over 5
 * minutes, with files 9x the live data. No ATOMIC_BATCH: the background commit can persist half a
 * batch. Writers serialize on one lock; reads run in parallel. Scans are ordered and reversible.
 */
public final class MvStoreProvider implements StoreProvider {
  static final Set<Feature> FEATURES =
      EnumSet.of(Feature.ORDERED_SCAN, Feature.REVERSE_SCAN, Feature.PERSISTENT);
  static final Limits LIMITS = new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE);

  /** The page cache size. */
  static final OptionSpec<Integer> CACHE_SIZE =
      OptionSpec.integer("cache-size", 128, 1, 65536, "MiB", "MVStore page cache size");

  /** Whether BUFFERED commits after every write (crash-safe, very slow). */
  static final OptionSpec<Boolean> CRASH_SAFE =
      OptionSpec.bool(
          "crash-safe",
          false,
          "BUFFERED with a commit after every write: survives kill -9, very slow");

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public MvStoreProvider() {}

  @Override
  public String id() {
    return "mvstore";
  }

  @Override
  public String description() {
    return "Peer for comparison: H2 MVStore 2.5.252 (log-structured copy-on-write B-tree).";
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
    return List.of(CACHE_SIZE, CRASH_SAFE);
  }

  @Override
  public Store open(StoreConfig config) {
    return new MvStoreStore(config);
  }
}
