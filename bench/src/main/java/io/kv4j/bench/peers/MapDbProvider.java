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
 * MapDB 3.1.0 as a kv4j engine ({@code mapdb}), for comparison. Settings: one file {@code mapdb.db}
 * in the store directory, {@code fileMmapEnable().fileMmapPreclearDisable() .cleanerHackEnable()}
 * (memory-mapped, the fastest file mode), a {@code treeMap} with {@code Serializer.BYTE_ARRAY} keys
 * and values (unsigned order) and {@code valuesOutsideNodesEnable()} (1 KiB values would otherwise
 * be rewritten with their whole B-tree node on every update).
 *
 * <p>Durability. SYNC: {@code transactionEnable()} (a write-ahead log) and one {@code commit()}
 * (fsync) per write or batch. BUFFERED: by default ({@code crash-safe=false}) no write-ahead log:
 * writes land in the shared mapping, and {@link Store#sync()} fsyncs the files; this is the only
 * setting fast enough to load 100,000 keys in the runner's time budget, but it does NOT meet kv4j's
 * BUFFERED contract: a kill -9 in the middle of a write can leave a file MapDB refuses to open.
 * With {@code crash-safe=true} BUFFERED uses the write-ahead log with {@code fileSyncDisable()} and
 * a commit per write, which is crash-safe but was measured here at well under 200 puts/s (each
 * commit starts a new log file). No ATOMIC_BATCH: without the log a crash can leave half a batch.
 * Writers serialize on one lock (MapDB commits globally); reads run in parallel. Scans are ordered
 * and reversible, not snapshots.
 */
public final class MapDbProvider implements StoreProvider {
  static final Set<Feature> FEATURES =
      EnumSet.of(Feature.ORDERED_SCAN, Feature.REVERSE_SCAN, Feature.PERSISTENT);
  static final Limits LIMITS = new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE);

  /** Whether BUFFERED uses the write-ahead log (crash-safe, very slow). */
  static final OptionSpec<Boolean> CRASH_SAFE =
      OptionSpec.bool(
          "crash-safe",
          false,
          "BUFFERED with the write-ahead log and a commit per write: survives kill -9, very slow");

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public MapDbProvider() {}

  @Override
  public String id() {
    return "mapdb";
  }

  @Override
  public String description() {
    return "Peer for comparison: MapDB 3.1.0 B-tree (memory-mapped file; write-ahead log only for SYNC).";
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
    return List.of(CRASH_SAFE);
  }

  @Override
  public Store open(StoreConfig config) {
    return new MapDbStore(config);
  }
}
