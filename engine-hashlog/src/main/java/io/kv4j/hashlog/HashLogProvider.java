package io.kv4j.hashlog;

import io.kv4j.DamagedRegion;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.SalvageSink;
import io.kv4j.spi.StoreProvider;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The {@code hashlog} engine: kv4j's own crash-safe hash-log store. Append-only, checksummed log
 * segments on disk; an in-memory hash index (primitive arrays, no object per key) from each key to
 * its newest record; values read through memory-mapped segments without locks or system calls;
 * ordered, reverse and point-in-time scans; atomic batches. Keys up to 64 KiB, values up to 256
 * MiB. The store path is a directory the engine owns.
 *
 * <p>Options: {@code segment-size} (bytes, default 8 MiB), {@code verify-checksums-on-read}
 * (default true), {@code initial-index-capacity} (keys, default 1024), {@code
 * compaction-garbage-threshold} (fraction, default 0.4), {@code compaction-rate-limit} (bytes/s,
 * default 0 = unlimited), {@code compaction-threads} (default 1), {@code preload} (default false),
 * {@code backup-hard-links} (default false: a backup copies every file), {@code max-open-files}
 * (default 1000: keyspaces whose active segment keeps its file open).
 */
public final class HashLogProvider implements StoreProvider {
  static final Limits LIMITS = new Limits(RecordCodec.MAX_KEY, RecordCodec.MAX_VALUE);
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CHECKSUMS,
          Feature.CONDITIONAL_WRITE,
          Feature.CONDITIONAL_BATCH,
          Feature.SNAPSHOT_READ,
          Feature.BACKUP,
          Feature.KEYSPACES);

  static final OptionSpec<Long> SEGMENT_SIZE =
      OptionSpec.size(
          "segment-size",
          8L << 20,
          4L << 10,
          1L << 30,
          "Size at which the active log segment is sealed and a new one started. A single record"
              + " or batch larger than this gets a segment of its own.");
  static final OptionSpec<Boolean> VERIFY_CHECKSUMS =
      OptionSpec.bool(
          "verify-checksums-on-read",
          true,
          "Check each value's CRC32C when it is read; a mismatch throws StoreCorruptedException.");
  static final OptionSpec<Integer> INITIAL_INDEX_CAPACITY =
      OptionSpec.integer(
          "initial-index-capacity",
          1024,
          16,
          1 << 28,
          "keys",
          "Keys the in-memory index holds before it first grows; it never shrinks below this.");

  static final OptionSpec<Boolean> PRELOAD =
      OptionSpec.bool(
          "preload",
          false,
          "After the open, map every sealed segment into the process on a background thread, so"
              + " the first reads take no page faults. Reads the segments from the disk if they are"
              + " not cached: for stores that fit in free memory.");

  static final OptionSpec<Boolean> BACKUP_HARD_LINKS =
      OptionSpec.bool(
          "backup-hard-links",
          false,
          "Make a backup's sealed segments and hints hard links to the live store's files instead"
              + " of copies, where both are on one file system: fast and no extra space, but the"
              + " backup then shares those inodes with the live store, so damage to one of the two"
              + " files (a flipped bit, a bad block, an edit) is damage to both.");

  static final OptionSpec<Double> COMPACTION_THRESHOLD =
      OptionSpec.decimal(
          "compaction-garbage-threshold",
          Compactor.Settings.DEFAULT.garbageThreshold(),
          0.05,
          0.95,
          "fraction",
          "A sealed segment is compacted once this fraction of its bytes is garbage (overwritten or"
              + " deleted records). Lower: less disk, more rewriting. Disk use stays below about"
              + " live / (1 - threshold) plus a few segments.");
  static final OptionSpec<Long> COMPACTION_RATE =
      OptionSpec.longInteger(
          "compaction-rate-limit",
          Compactor.Settings.DEFAULT.bytesPerSecond(),
          0,
          Long.MAX_VALUE,
          "bytes/s",
          "Upper bound on the bytes compaction copies per second, 0 for unlimited. Writers are"
              + " throttled if garbage outgrows what compaction can reclaim at this rate.");
  static final OptionSpec<Integer> COMPACTION_THREADS =
      OptionSpec.integer(
          "compaction-threads",
          Compactor.Settings.DEFAULT.threads(),
          0,
          16,
          "threads",
          "Background compaction threads; 0 disables background compaction (and write"
              + " throttling), leaving only explicit compaction.");

  static final OptionSpec<Integer> MAX_OPEN_FILES =
      OptionSpec.integer(
          "max-open-files",
          1000,
          1,
          1 << 20,
          "files",
          "Most keyspaces whose active segment keeps its file open at once: beyond it the file of"
              + " the least recently written one is closed and opened again by its next write."
              + " Bounds the descriptors a store with many keyspaces holds; the store's own files"
              + " and those of work in progress are not counted.");

  /** Creates the provider; called by {@link java.util.ServiceLoader}. */
  public HashLogProvider() {}

  @Override
  public String id() {
    return "hashlog";
  }

  @Override
  public String description() {
    return "Append-only checksummed log with an in-memory hash index: fastest point reads,"
        + " ordered and snapshot scans, atomic batches; the key index must fit in memory.";
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
        SEGMENT_SIZE,
        VERIFY_CHECKSUMS,
        INITIAL_INDEX_CAPACITY,
        COMPACTION_THRESHOLD,
        COMPACTION_RATE,
        COMPACTION_THREADS,
        PRELOAD,
        BACKUP_HARD_LINKS,
        MAX_OPEN_FILES);
  }

  @Override
  public Store open(StoreConfig config) {
    return open(config, seededHasher(new SplittableRandom().nextLong()));
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: every segment of the store and of each keyspace is read record by record, each
   * record's CRC32C checked, stepping over damage to the next intact record; the newest intact
   * version of each key wins, a tombstone hiding older ones. Hints are not needed. The unit of loss
   * is the damaged record (with the bytes up to the next intact one). See {@link Salvage}.
   */
  @Override
  public List<DamagedRegion> salvage(StoreConfig config, SalvageSink sink) {
    return Salvage.run(config, sink);
  }

  static HashLogStore open(StoreConfig config, KeyDir.Hasher hasher) {
    return open(config, hasher, Storage.NIO);
  }

  /** Opens with file operations going to {@code storage} (tests pass a fault-injecting one). */
  static HashLogStore open(StoreConfig config, KeyDir.Hasher hasher, Storage storage) {
    return open(config, hasher, storage, HintReplay.Sizes.BY_HEAP);
  }

  /** Opens with the given storage and hint replay sizes (tests pass small ones). */
  static HashLogStore open(
      StoreConfig config, KeyDir.Hasher hasher, Storage storage, HintReplay.Sizes replay) {
    Path path = config.path();
    Objects.requireNonNull(path, "engine 'hashlog' needs a path (a directory)");
    return HashLogStore.open(
        config,
        FEATURES,
        LIMITS,
        new HashLogStore.Options(
            config.get(VERIFY_CHECKSUMS),
            (int) (long) config.get(SEGMENT_SIZE),
            config.get(INITIAL_INDEX_CAPACITY),
            hasher,
            new Compactor.Settings(
                config.get(COMPACTION_THRESHOLD),
                config.get(COMPACTION_RATE),
                config.get(COMPACTION_THREADS)),
            config.get(PRELOAD),
            config.get(BACKUP_HARD_LINKS),
            config.get(MAX_OPEN_FILES),
            storage,
            replay));
  }

  /** A seeded 64-bit hash of the key bytes (8 bytes at a time, murmur-style finaliser). */
  static KeyDir.Hasher seededHasher(long seed) {
    return key -> KeyHash.hash(key, seed);
  }
}
