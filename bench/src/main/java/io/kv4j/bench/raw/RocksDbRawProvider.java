package io.kv4j.bench.raw;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.OptionSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.DataBlockIndexType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * RocksDB (rocksdbjni) used directly ({@code rocksdb-raw}), with the settings of the kv4j {@code
 * rocksdb} engine at its defaults: write buffer 64 MiB, 2 background jobs, LZ4, bytes_per_sync 1
 * MiB, block-based table with an LRU block cache ({@code block-cache-size}), a 10-bit bloom filter
 * and a binary-and-hash data block index; WAL synced per write under SYNC, written under BUFFERED.
 * The engine's dedicated options of the same names change them alike ({@code --engine-option
 * rocksdb-raw:write-buffer-size=8MiB} beside {@code rocksdb:write-buffer-size=8MiB}). The one
 * setting it leaves at RocksDB's default where the engine does not is {@code wal_recovery_mode},
 * read only when a WAL is replayed at open.
 */
public final class RocksDbRawProvider extends RawProvider {
  static final OptionSpec<Long> BLOCK_CACHE_SIZE =
      OptionSpec.size("block-cache-size", 64L << 20, 0, 1L << 40, "LRU block cache");

  static final OptionSpec<Long> WRITE_BUFFER_SIZE =
      OptionSpec.size(
          "write-buffer-size", 64L << 20, 64L << 10, 4L << 30, "memtable size before a flush");

  static final OptionSpec<Integer> BLOOM_BITS_PER_KEY =
      OptionSpec.integer(
          "bloom-bits-per-key", 10, 1, 32, "bits/key", "bloom filter (always on here)");

  static final OptionSpec<String> COMPRESSION =
      OptionSpec.choice("compression", "lz4", List.of("none", "lz4", "zstd"), "block compression");

  static final OptionSpec<Integer> BACKGROUND_JOBS =
      OptionSpec.integer(
          "background-jobs", 2, 1, 64, "threads", "concurrent flushes and compactions");

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public RocksDbRawProvider() {
    super(
        "rocksdb-raw",
        "Bench baseline: RocksDB through rocksdbjni directly, the rocksdb engine's settings.");
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(
        BLOCK_CACHE_SIZE, WRITE_BUFFER_SIZE, BLOOM_BITS_PER_KEY, COMPRESSION, BACKGROUND_JOBS);
  }

  @Override
  public Store open(StoreConfig config) {
    return new RawRocks(config);
  }

  private static CompressionType compression(String name) {
    return switch (name) {
      case "none" -> CompressionType.NO_COMPRESSION;
      case "zstd" -> CompressionType.ZSTD_COMPRESSION;
      default -> CompressionType.LZ4_COMPRESSION;
    };
  }

  private static final class RawRocks implements Store {
    static {
      RocksDB.loadLibrary();
    }

    private final StoreConfig config;
    private final LRUCache cache;
    private final BloomFilter filter;
    private final Options options;
    private final RocksDB db;
    private final ReadOptions ro = new ReadOptions();
    private final WriteOptions wo;

    RawRocks(StoreConfig config) {
      this.config = config;
      cache = new LRUCache(config.get(BLOCK_CACHE_SIZE));
      filter = new BloomFilter(config.get(BLOOM_BITS_PER_KEY));
      BlockBasedTableConfig table =
          new BlockBasedTableConfig()
              .setBlockCache(cache)
              .setFilterPolicy(filter)
              .setDataBlockIndexType(DataBlockIndexType.kDataBlockBinaryAndHash)
              .setDataBlockHashTableUtilRatio(0.75);
      options =
          new Options()
              .setCreateIfMissing(true)
              .setWriteBufferSize(config.get(WRITE_BUFFER_SIZE))
              .setMaxBackgroundJobs(config.get(BACKGROUND_JOBS))
              .setCompressionType(compression(config.get(COMPRESSION)))
              .setBytesPerSync(1 << 20)
              .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
              .setKeepLogFileNum(2)
              .setMaxLogFileSize(1 << 20)
              .setTableFormatConfig(table);
      wo = new WriteOptions().setSync(config.durability() == Durability.SYNC);
      try {
        db = RocksDB.open(options, Raw.directory(config.path(), "rocksdb-raw").toString());
      } catch (RocksDBException e) {
        close();
        throw new StoreIOException("rocksdb-raw: cannot open " + config.path(), e);
      }
    }

    @Override
    public byte[] get(byte[] key) {
      try {
        return db.get(ro, key);
      } catch (RocksDBException e) {
        throw new StoreIOException("rocksdb-raw get", e);
      }
    }

    @Override
    public void put(byte[] key, byte[] value) {
      try {
        db.put(wo, key, value);
      } catch (RocksDBException e) {
        throw new StoreIOException("rocksdb-raw put", e);
      }
    }

    @Override
    public void delete(byte[] key) {
      try {
        db.delete(wo, key);
      } catch (RocksDBException e) {
        throw new StoreIOException("rocksdb-raw delete", e);
      }
    }

    @Override
    public Cursor scan(KeyRange range) {
      RocksIterator it = db.newIterator(ro);
      if (range.lower() == null) {
        it.seekToFirst();
      } else {
        it.seek(range.lower());
      }
      return new RawCursor(range) {
        @Override
        Entry fetch() {
          if (!it.isValid()) {
            return null;
          }
          Entry e = new Entry(it.key(), it.value());
          it.next();
          return e;
        }

        @Override
        void release() {
          it.close();
        }
      };
    }

    @Override
    public void write(WriteBatch batch) {
      try (org.rocksdb.WriteBatch wb = new org.rocksdb.WriteBatch()) {
        for (int i = 0; i < batch.size(); i++) {
          if (batch.isDelete(i)) {
            wb.delete(batch.key(i));
          } else {
            wb.put(batch.key(i), batch.value(i));
          }
        }
        db.write(wo, wb);
      } catch (RocksDBException e) {
        throw new StoreIOException("rocksdb-raw write", e);
      }
    }

    @Override
    public void sync() {
      try {
        db.flushWal(true);
      } catch (RocksDBException e) {
        throw new StoreIOException("rocksdb-raw sync", e);
      }
    }

    @Override
    public StoreInfo info() {
      return RawProvider.info("rocksdb-raw", config);
    }

    /**
     * The directory's size and, under the rocksdb engine's names, RocksDB's figures for background
     * work, so the bench waits for both alike before it measures a footprint.
     */
    @Override
    public StoreStats stats() {
      Map<String, Number> f = new LinkedHashMap<>();
      try {
        f.put("sst-bytes", db.getLongProperty("rocksdb.live-sst-files-size"));
        f.put("compaction-pending", db.getLongProperty("rocksdb.compaction-pending"));
        f.put("level0-files", Long.parseLong(db.getProperty("rocksdb.num-files-at-level0")));
        f.put(
            "pending-compaction-bytes",
            db.getLongProperty("rocksdb.estimate-pending-compaction-bytes"));
        f.put("running-compactions", db.getLongProperty("rocksdb.num-running-compactions"));
        f.put("running-flushes", db.getLongProperty("rocksdb.num-running-flushes"));
        f.put("flush-pending", db.getLongProperty("rocksdb.mem-table-flush-pending"));
      } catch (RocksDBException e) {
        throw new StoreIOException("rocksdb-raw stats", e);
      }
      return new StoreStats(0, false, Raw.du(config.path()), f);
    }

    @Override
    public void close() {
      if (db != null) {
        db.close();
      }
      wo.close();
      ro.close();
      options.close();
      cache.close();
      filter.close();
    }
  }
}
