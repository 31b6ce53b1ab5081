package io.kv4j.rocksdb;

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
 * The {@code rocksdb} engine (alias {@code lsm}): RocksDB through rocksdbjni, an LSM tree for
 * write-heavy work and data larger than memory.
 *
 * <p>Features: ordered, reverse and snapshot scans, atomic batches, persistence, checksums (every
 * table block read is checked against its CRC32C; WAL and MANIFEST records carry CRC32C too),
 * conditional writes (compare and write under a per-key lock every write of the store takes), read
 * snapshots (RocksDB snapshots), and online backup (RocksDB checkpoints: table files hard-linked).
 * {@code getAll} is a native multi-get. Limits: keys up to 64 KiB, values up to 256 MiB. {@link
 * io.kv4j.Durability#SYNC SYNC} syncs the write-ahead log on every write (concurrent writers share
 * one sync); {@link io.kv4j.Durability#BUFFERED BUFFERED} writes the log without syncing it.
 *
 * <p>Options (all optional):
 *
 * <ul>
 *   <li>{@code block-cache-size} (size, default 64 MiB, 0 disables the cache): the LRU cache of
 *       uncompressed data blocks, per store.
 *   <li>{@code bloom-bits-per-key} (int, default 10, 0..32 bits per key, 0 disables the filter):
 *       bloom filter size; 10 bits give about 1% false positives on lookups of absent keys.
 *   <li>{@code compression} ({@code none|lz4|zstd}, default {@code lz4}): block compression.
 *   <li>{@code write-buffer-size} (size, default 64 MiB, 64 KiB..4 GiB): memtable size before a
 *       flush to disk.
 *   <li>{@code background-jobs} (int, default 2, 1..64 threads): flush and compaction threads.
 *   <li>{@code rocksdb-options} (text, default empty): RocksDB option string for power users, such
 *       as {@code max_open_files=512;level0_file_num_compaction_trigger=8}; DB and column-family
 *       options are both accepted. A setting named here replaces the engine default for it; setting
 *       the same thing through a dedicated option as well is an error. {@code comparator} and
 *       {@code create_if_missing} are reserved.
 * </ul>
 */
public final class RocksDbProvider implements StoreProvider {
  /** Engine id. */
  static final String ID = "rocksdb";

  /**
   * Keys up to 64 KiB: every key is repeated in index blocks and filters, and RocksDB's 4 GiB
   * internal limit is far from anything useful. Values up to 256 MiB: a value travels whole through
   * the write-ahead log, the memtable and one data block, so each write of one needs a few times
   * its size in transient memory; 256 MiB keeps that bounded on ordinary heaps.
   */
  static final Limits LIMITS = new Limits(64 << 10, 256 << 20);

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

  static final OptionSpec<Long> BLOCK_CACHE_SIZE =
      OptionSpec.size(
          "block-cache-size",
          64L << 20,
          0,
          1L << 40,
          "LRU cache of uncompressed data blocks for this store; 0 disables it");

  static final OptionSpec<Integer> BLOOM_BITS_PER_KEY =
      OptionSpec.integer(
          "bloom-bits-per-key",
          10,
          0,
          32,
          "bits/key",
          "bloom filter size; 10 gives ~1% false positives, 0 disables the filter");

  static final OptionSpec<String> COMPRESSION =
      OptionSpec.choice(
          "compression", "lz4", List.of("none", "lz4", "zstd"), "block compression of table files");

  static final OptionSpec<Long> WRITE_BUFFER_SIZE =
      OptionSpec.size(
          "write-buffer-size",
          64L << 20,
          64L << 10,
          4L << 30,
          "memtable size before it is flushed to a table file");

  static final OptionSpec<Integer> BACKGROUND_JOBS =
      OptionSpec.integer(
          "background-jobs", 2, 1, 64, "threads", "concurrent background flushes and compactions");

  static final OptionSpec<String> ROCKSDB_OPTIONS =
      OptionSpec.text(
          "rocksdb-options",
          "",
          "RocksDB option string (DB and column-family options), e.g."
              + " 'max_open_files=512;level0_file_num_compaction_trigger=8'");

  static final List<OptionSpec<?>> OPTIONS =
      List.of(
          BLOCK_CACHE_SIZE,
          BLOOM_BITS_PER_KEY,
          COMPRESSION,
          WRITE_BUFFER_SIZE,
          BACKGROUND_JOBS,
          ROCKSDB_OPTIONS);

  /** Creates the provider; called by {@link java.util.ServiceLoader}. */
  public RocksDbProvider() {}

  @Override
  public String id() {
    return ID;
  }

  @Override
  public Set<String> aliases() {
    return Set.of("lsm");
  }

  @Override
  public String description() {
    return "RocksDB LSM tree: high write throughput with group commit, data larger than memory.";
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
    return OPTIONS;
  }

  @Override
  public Store open(StoreConfig config) {
    return Opening.open(config);
  }

  /**
   * Reads every intact entry of a damaged store from a copy of its files (see {@link Salvage}):
   * table files past their damaged data blocks, WALs past their damaged records, every lookup
   * checked, each key's newest version or nothing.
   */
  @Override
  public List<DamagedRegion> salvage(StoreConfig config, SalvageSink sink) {
    return Salvage.run(config, sink);
  }
}
