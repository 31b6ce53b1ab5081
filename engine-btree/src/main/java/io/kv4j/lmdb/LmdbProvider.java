package io.kv4j.lmdb;

import io.kv4j.DamagedRegion;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.SalvageSink;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code lmdb} engine (alias {@code btree}): LMDB, a copy-on-write B+tree in one memory-mapped
 * file, through lmdbjava. Fast point reads and ordered, reverse and snapshot scans; one writer at a
 * time. Keys up to 511 bytes (LMDB's compile-time limit), values up to 256 MiB.
 *
 * <p>The map grows by itself (initial {@code map-size}, then {@code map-growth-step}); read
 * transactions are pooled and reused, so reader slots ({@code max-readers}) stay bounded however
 * many threads come and go. No {@code --add-opens} flags are needed: the engine moves data through
 * its own {@code byte[]} buffer proxy instead of lmdbjava's {@code ByteBuffer} proxies, which need
 * them. On Java 24+ the application should start the JVM with {@code
 * --enable-native-access=ALL-UNNAMED} (jffi loads a JNI library); the {@code sun.misc.Unsafe}
 * warning jffi would print there is avoided by {@code JffiSettings}.
 */
public final class LmdbProvider implements StoreProvider {
  static {
    // As early as possible: ServiceLoader creates the provider before any store is opened, and
    // another engine or tool may load lmdbjava (and with it jffi) before this engine's first open.
    JffiSettings.apply();
  }

  static final String ID = "lmdb";

  /** LMDB's key limit (MDB_MAXKEYSIZE of the bundled native library). */
  static final int MAX_KEY_SIZE = 511;

  /** Largest value: fits one default growth step with room to spare; see the README. */
  static final int MAX_VALUE_SIZE = 256 << 20;

  static final Limits LIMITS = new Limits(MAX_KEY_SIZE, MAX_VALUE_SIZE);

  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CHECKSUMS,
          Feature.CONDITIONAL_WRITE,
          Feature.SNAPSHOT_READ,
          Feature.BACKUP,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH,
          Feature.CONDITIONAL_BATCH);

  static final OptionSpec<Boolean> CHECKSUMS =
      OptionSpec.bool(
          "checksums",
          true,
          "New stores only: store a CRC32C of key and value with every value and verify it on every"
              + " read (4 bytes more per value). An existing store keeps the format it was created"
              + " with; giving this option with the other value fails the open.");

  static final OptionSpec<Long> MAP_SIZE =
      OptionSpec.size(
          "map-size",
          1L << 30,
          1L << 20,
          1L << 44,
          "Initial size of the memory map (never less than the data already stored); it grows by"
              + " map-growth-step whenever a write finds it full. Address space only: the file"
              + " grows with the data, not with the map.");

  static final OptionSpec<Long> MAP_GROWTH_STEP =
      OptionSpec.size(
          "map-growth-step",
          1L << 30,
          1L << 20,
          1L << 44,
          "How much the map grows when a write finds it full; the write is then retried.");

  static final OptionSpec<Integer> MAX_READERS =
      OptionSpec.integer(
          "max-readers",
          1024,
          8,
          1 << 20,
          "slots",
          "Reader slots in the lock file: the most read transactions (concurrent gets plus open"
              + " cursors plus pooled idle transactions) that can exist at once.");

  static final OptionSpec<Long> MAP_GROWTH_TIMEOUT =
      OptionSpec.longInteger(
          "map-growth-timeout",
          30_000,
          0,
          Long.MAX_VALUE,
          "ms",
          "How long a write that needs a larger map waits for open cursors (read transactions) to"
              + " close, after which it fails instead of waiting forever.");

  static final OptionSpec<Long> OPEN_CHECK_LIMIT =
      OptionSpec.size(
          "open-check-limit",
          64L << 20,
          0,
          1L << 44,
          "Read-write opens walk every page of a data file up to this size (plain file reads, the"
              + " check verify() makes) before LMDB touches it, so structural damage that would"
              + " crash LMDB fails the open instead; 0 turns the walk off.");

  /** Creates the provider; called by {@link java.util.ServiceLoader}. */
  public LmdbProvider() {}

  @Override
  public String id() {
    return ID;
  }

  @Override
  public Set<String> aliases() {
    return Set.of("btree");
  }

  @Override
  public String description() {
    return "LMDB B+tree (lmdbjava): fast reads, ordered/reverse/snapshot scans, one writer;"
        + " for read-mostly data.";
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
    return List.of(
        MAP_SIZE, MAP_GROWTH_STEP, MAX_READERS, MAP_GROWTH_TIMEOUT, CHECKSUMS, OPEN_CHECK_LIMIT);
  }

  @Override
  public Store open(StoreConfig config) {
    return LmdbStore.open(config);
  }

  /**
   * Reads every intact entry of a store that may be damaged, from {@code data.mdb} with plain file
   * reads, never through LMDB (see {@link Salvage} and {@link SalvageWalk}).
   */
  @Override
  public List<DamagedRegion> salvage(StoreConfig config, SalvageSink sink) {
    return Salvage.run(config, sink);
  }
}
