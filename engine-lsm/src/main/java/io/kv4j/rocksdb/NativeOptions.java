package io.kv4j.rocksdb;

import static io.kv4j.rocksdb.RocksDbProvider.BACKGROUND_JOBS;
import static io.kv4j.rocksdb.RocksDbProvider.BLOCK_CACHE_SIZE;
import static io.kv4j.rocksdb.RocksDbProvider.BLOOM_BITS_PER_KEY;
import static io.kv4j.rocksdb.RocksDbProvider.COMPRESSION;
import static io.kv4j.rocksdb.RocksDbProvider.ROCKSDB_OPTIONS;
import static io.kv4j.rocksdb.RocksDbProvider.WRITE_BUFFER_SIZE;

import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.spi.OptionSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.DataBlockIndexType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Logger;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * The native objects a database is opened with: {@link Options}, the block cache and the bloom
 * filter. One owner; {@link #close()} frees them in RocksDB's order (options before the cache and
 * filter they point to), after the database itself was closed.
 */
final class NativeOptions implements AutoCloseable {
  /** Why the native library failed to load, or null once it loaded. */
  private static final Throwable LOAD_FAILURE = load();

  /** RocksDB option names the engine sets itself and never takes from {@code rocksdb-options}. */
  private static final List<String> RESERVED =
      List.of("comparator", "create_if_missing", "error_if_exists");

  /**
   * Engine defaults for the checks that decide what damage does, as RocksDB option strings: every
   * one applies unless {@code rocksdb-options} names it. See the README ("Recovery and damage").
   */
  private static final Map<String, String> CHECK_DEFAULTS =
      Map.of(
          // Fail the open on anything wrong in the MANIFEST or a table file, instead of ignoring
          // it.
          "paranoid_checks", "true",
          // A torn last record (a crash mid-write; never acknowledged as SYNC) is dropped; a bad
          // record anywhere else fails the open. The default, kPointInTimeRecovery, silently stops
          // replay at the first bad record and drops every later acknowledged write.
          "wal_recovery_mode", "kTolerateCorruptedTailRecords",
          // Open (and so checksum-check the footer, index and filter of) every table file at open.
          "max_open_files", "-1",
          // Compare every table file's size with the MANIFEST at open.
          "skip_checking_sst_file_sizes_on_db_open", "false",
          // Never open a store that is missing files as whatever subset survives.
          "best_efforts_recovery", "false");

  final Options options;
  private final LRUCache cache;
  private final BloomFilter filter;
  private final Logger logger;

  /**
   * The directory of a secondary instance ({@link ReadOnlyOpening}), outside the store; deleted by
   * {@link #close()}, after the database. Null for every other open.
   */
  java.nio.file.Path secondary;

  /** DB and column family halves of {@link #options}, made by {@link #split()} for the open. */
  DBOptions dbOptions;

  ColumnFamilyOptions cfOptions;

  /**
   * The listener of RocksDB's background errors of a read-write open ({@link #listen}), or null;
   * closed after the options, so after the database that calls it.
   */
  BackgroundErrors backgroundErrors;

  private NativeOptions(Options options, LRUCache cache, BloomFilter filter, Logger logger) {
    this.options = options;
    this.cache = cache;
    this.filter = filter;
    this.logger = logger;
  }

  /**
   * Builds the options for a config.
   *
   * @param config the validated config
   * @return the options; the caller owns them
   * @throws IllegalArgumentException if {@code rocksdb-options} is invalid or conflicts with a
   *     dedicated option
   */
  static NativeOptions build(StoreConfig config) {
    requireLibrary();
    Map<String, String> custom = split(config.get(ROCKSDB_OPTIONS));
    Map<String, String> explicit = config.options();
    conflict(explicit, custom, WRITE_BUFFER_SIZE, "write_buffer_size");
    conflict(explicit, custom, BACKGROUND_JOBS, "max_background_jobs");
    conflict(explicit, custom, COMPRESSION, "compression");
    conflict(explicit, custom, BLOCK_CACHE_SIZE, "block_based_table_factory", "table_factory");
    conflict(explicit, custom, BLOOM_BITS_PER_KEY, "block_based_table_factory", "table_factory");

    Properties dbProps = new Properties();
    Properties cfProps = new Properties();
    classify(custom, dbProps, cfProps);
    for (Map.Entry<String, String> e : CHECK_DEFAULTS.entrySet()) {
      if (!custom.containsKey(e.getKey())) {
        dbProps.setProperty(e.getKey(), e.getValue());
      }
    }
    return assemble(config, custom, dbProps, cfProps);
  }

  private static void requireLibrary() {
    if (LOAD_FAILURE != null) {
      throw new StoreIOException(
          "engine '"
              + RocksDbProvider.ID
              + "': cannot load the RocksDB native library from rocksdbjni for "
              + System.getProperty("os.name")
              + "/"
              + System.getProperty("os.arch")
              + " (it is extracted to java.io.tmpdir, which must allow executing files): "
              + LOAD_FAILURE,
          LOAD_FAILURE);
    }
  }

  /**
   * Makes the native objects from the checked pieces: the options parsed from {@code dbProps} and
   * {@code cfProps}, the engine's defaults, a logger for a read-only store, and the table settings
   * with their block cache and bloom filter. Frees what it made when one of them fails.
   */
  private static NativeOptions assemble(
      StoreConfig config, Map<String, String> custom, Properties dbProps, Properties cfProps) {
    Options options = null;
    LRUCache cache = null;
    BloomFilter filter = null;
    Logger logger = null;
    boolean ok = false;
    try {
      try (DBOptions db = parseDb(dbProps);
          ColumnFamilyOptions cf = parseCf(cfProps)) {
        options = new Options(db, cf);
      }
      options.setCreateIfMissing(false); // the store decides once it has seen the directory
      options.setErrorIfExists(false);
      applyDefaults(options, config, custom);
      if (config.readOnly()) {
        logger = readOnlyLogger(options, custom);
        options.setLogger(logger);
      }
      if (!custom.containsKey("block_based_table_factory")
          && !custom.containsKey("table_factory")) {
        long cacheSize = config.get(BLOCK_CACHE_SIZE);
        if (cacheSize != 0) {
          cache = new LRUCache(cacheSize);
        }
        int bits = config.get(BLOOM_BITS_PER_KEY);
        if (bits > 0) {
          filter = new BloomFilter(bits);
        }
        options.setTableFormatConfig(table(cache, filter));
      }
      ok = true;
      return new NativeOptions(options, cache, filter, logger);
    } finally {
      if (!ok) {
        closeAll(options, cache, filter, logger);
      }
    }
  }

  /**
   * RocksDB would create (and rotate) its info LOG in the store directory even when opened
   * read-only; a logger of our own keeps a read-only open from writing anything there. Its level is
   * ERROR unless rocksdb-options names info_log_level.
   */
  private static Logger readOnlyLogger(Options options, Map<String, String> custom) {
    return new ReadOnlyLogger(
        custom.containsKey("info_log_level") ? options.infoLogLevel() : InfoLogLevel.ERROR_LEVEL);
  }

  /** The engine's table settings: the block cache (none when null), the filter (if any). */
  private static BlockBasedTableConfig table(LRUCache cache, BloomFilter filter) {
    BlockBasedTableConfig table = new BlockBasedTableConfig();
    if (cache == null) {
      table.setNoBlockCache(true);
    } else {
      table.setBlockCache(cache);
    }
    if (filter != null) {
      table.setFilterPolicy(filter);
    }
    // Point lookups: a hash index inside each data block skips the binary search.
    table.setDataBlockIndexType(DataBlockIndexType.kDataBlockBinaryAndHash);
    table.setDataBlockHashTableUtilRatio(0.75);
    return table;
  }

  /**
   * The engine's settings that differ from RocksDB's, each unless {@code rocksdb-options} names it.
   */
  private static void applyDefaults(
      Options options, StoreConfig config, Map<String, String> custom) {
    if (!custom.containsKey("write_buffer_size")) {
      options.setWriteBufferSize(config.get(WRITE_BUFFER_SIZE));
    }
    if (!custom.containsKey("max_background_jobs")) {
      options.setMaxBackgroundJobs(config.get(BACKGROUND_JOBS));
    }
    if (!custom.containsKey("compression")) {
      options.setCompressionType(compression(config.get(COMPRESSION)));
    }
    if (!custom.containsKey("bytes_per_sync")) {
      options.setBytesPerSync(1 << 20); // smooth out fsync of table files
    }
    if (!custom.containsKey("info_log_level")) {
      options.setInfoLogLevel(InfoLogLevel.WARN_LEVEL);
    }
    if (!custom.containsKey("keep_log_file_num")) {
      options.setKeepLogFileNum(2);
    }
    if (!custom.containsKey("max_log_file_size")) {
      options.setMaxLogFileSize(1 << 20);
    }
  }

  private static Throwable load() {
    try {
      RocksDB.loadLibrary();
      return null;
    } catch (UnsatisfiedLinkError | RuntimeException e) {
      return e;
    }
  }

  /**
   * Copies {@link #options} into its DB half and its column family half, which opening with column
   * families needs; every column family, {@code default} included, gets the same column family
   * options (table factory, block cache and filter shared). Call once, after the last change to
   * {@link #options}.
   */
  void split() {
    dbOptions = new DBOptions(options);
    cfOptions = new ColumnFamilyOptions(options);
  }

  /**
   * Registers a {@link BackgroundErrors} listener in {@link #dbOptions} (after {@link #split()}),
   * for a read-write open: RocksDB's own background errors become the store's health.
   */
  void listen() {
    backgroundErrors = new BackgroundErrors(dbOptions.paranoidChecks());
    dbOptions.setListeners(List.of(backgroundErrors));
  }

  /**
   * Frees the options, then the cache, the filter and the listener they referenced; called once,
   * after the database was closed (no RocksDB thread calls the listener any more).
   */
  @Override
  public void close() {
    if (cfOptions != null) {
      cfOptions.close();
    }
    if (dbOptions != null) {
      dbOptions.close();
    }
    closeAll(options, cache, filter, logger);
    if (backgroundErrors != null) {
      backgroundErrors.close();
    }
    if (secondary != null) {
      Salvage.deleteTree(secondary);
    }
  }

  /**
   * Whether table files carry block checksums that reads verify: always, unless {@code
   * rocksdb-options} turned them off with {@code checksum=kNoChecksum} in a table factory.
   */
  static boolean checksums(StoreConfig config) {
    Map<String, String> custom = split(config.get(ROCKSDB_OPTIONS));
    for (String k : List.of("block_based_table_factory", "table_factory")) {
      if (custom.getOrDefault(k, "").replace(" ", "").contains("checksum=kNoChecksum")) {
        return false;
      }
    }
    return true;
  }

  /** The native objects in the order they are freed, for lifecycle tests. */
  List<AutoCloseable> owned() {
    List<AutoCloseable> out = new ArrayList<>();
    if (cfOptions != null) {
      out.add(cfOptions);
      out.add(dbOptions);
    }
    out.add(options);
    if (cache != null) {
      out.add(cache);
    }
    if (filter != null) {
      out.add(filter);
    }
    if (logger != null) {
      out.add(logger);
    }
    if (backgroundErrors != null) {
      out.add(backgroundErrors);
    }
    return out;
  }

  private static void closeAll(Options options, LRUCache cache, BloomFilter filter, Logger logger) {
    if (options != null) {
      options.close();
    }
    if (logger != null) {
      logger.close();
    }
    if (cache != null) {
      cache.close();
    }
    if (filter != null) {
      filter.close();
    }
  }

  /**
   * The info log of a read-only store: messages at its level and above go to the {@code
   * io.kv4j.rocksdb} {@link System.Logger} (DEBUG, INFO, WARN as those, HEADER as INFO, ERROR and
   * FATAL as ERROR); nothing is written to the store directory. The level is ERROR unless {@code
   * rocksdb-options} names {@code info_log_level}.
   */
  private static final class ReadOnlyLogger extends Logger {
    private static final io.kv4j.spi.EngineLog LOG = new io.kv4j.spi.EngineLog("io.kv4j.rocksdb");

    ReadOnlyLogger(InfoLogLevel level) {
      super(level);
    }

    @Override
    protected void log(InfoLogLevel level, String message) {
      if (message.startsWith("Error when reading LOG file") && message.contains("No such file")) {
        // A secondary instance beside a writer that deleted a WAL after a flush: the engine checks
        // for it and catches up (ReadOnlyOpening), so it is no error of the store.
        level = InfoLogLevel.DEBUG_LEVEL;
      }
      System.Logger.Level to =
          switch (level) {
            case DEBUG_LEVEL -> System.Logger.Level.DEBUG;
            case INFO_LEVEL, HEADER_LEVEL -> System.Logger.Level.INFO;
            case WARN_LEVEL -> System.Logger.Level.WARNING;
            default -> System.Logger.Level.ERROR;
          };
      LOG.log(to, "rocksdb (read-only): " + message);
    }
  }

  private static CompressionType compression(String name) {
    return switch (name) {
      case "none" -> CompressionType.NO_COMPRESSION;
      case "lz4" -> CompressionType.LZ4_COMPRESSION;
      case "zstd" -> CompressionType.ZSTD_COMPRESSION;
      default -> throw new IllegalArgumentException("unknown compression '" + name + "'");
    };
  }

  private static void conflict(
      Map<String, String> explicit,
      Map<String, String> custom,
      OptionSpec<?> spec,
      String... rocksNames) {
    if (!explicit.containsKey(spec.name())) {
      return;
    }
    for (String n : rocksNames) {
      if (custom.containsKey(n)) {
        throw new IllegalArgumentException(
            "option '"
                + spec.name()
                + "' and '"
                + n
                + "' in option '"
                + ROCKSDB_OPTIONS.name()
                + "' set the same thing; set only one of them");
      }
    }
  }

  /**
   * Splits a RocksDB option string into its top-level {@code name=value} pairs, keeping nested
   * {@code {...}} values whole.
   */
  static Map<String, String> split(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i <= text.length(); i++) {
      char c = i < text.length() ? text.charAt(i) : ';';
      if (c == '{') {
        depth++;
      } else if (c == '}') {
        depth--;
        if (depth < 0) {
          throw invalid(text, "unbalanced '}'");
        }
      } else if (c == ';' && depth == 0) {
        addPair(out, text, text.substring(start, i).trim());
        start = i + 1;
      }
    }
    if (depth != 0) {
      throw invalid(text, "unbalanced '{'");
    }
    return out;
  }

  private static void addPair(Map<String, String> out, String text, String pair) {
    if (pair.isEmpty()) {
      return;
    }
    int eq = pair.indexOf('=');
    if (eq <= 0) {
      throw invalid(text, "'" + pair + "' is not name=value");
    }
    String name = pair.substring(0, eq).trim();
    String value = pair.substring(eq + 1).trim();
    if (RESERVED.contains(name)) {
      throw invalid(text, "'" + name + "' is set by kv4j and cannot be changed");
    }
    if (out.put(name, value) != null) {
      throw invalid(text, "'" + name + "' is given twice");
    }
  }

  /** Sorts each pair into DB or column-family options by asking RocksDB which one accepts it. */
  private static void classify(Map<String, String> custom, Properties db, Properties cf) {
    for (Map.Entry<String, String> e : custom.entrySet()) {
      Properties one = new Properties();
      one.setProperty(e.getKey(), e.getValue());
      if (accepts(one, true)) {
        db.setProperty(e.getKey(), e.getValue());
      } else if (accepts(one, false)) {
        cf.setProperty(e.getKey(), e.getValue());
      } else {
        throw new IllegalArgumentException(
            "option '"
                + ROCKSDB_OPTIONS.name()
                + "': '"
                + e.getKey()
                + "="
                + e.getValue()
                + "' is not a valid RocksDB DB or column family option (unknown name or bad value)");
      }
    }
  }

  private static boolean accepts(Properties one, boolean dbOption) {
    try (ConfigOptions cfg = new ConfigOptions()) {
      if (dbOption) {
        DBOptions o = DBOptions.getDBOptionsFromProps(cfg, one);
        if (o != null) {
          o.close();
          return true;
        }
      } else {
        ColumnFamilyOptions o = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(cfg, one);
        if (o != null) {
          o.close();
          return true;
        }
      }
      return false;
    }
  }

  private static DBOptions parseDb(Properties props) {
    if (props.isEmpty()) {
      return new DBOptions();
    }
    try (ConfigOptions cfg = new ConfigOptions()) {
      DBOptions o = DBOptions.getDBOptionsFromProps(cfg, props);
      if (o == null) {
        throw invalid(props.toString(), "RocksDB rejected the DB options together");
      }
      return o;
    }
  }

  private static ColumnFamilyOptions parseCf(Properties props) {
    if (props.isEmpty()) {
      return new ColumnFamilyOptions();
    }
    try (ConfigOptions cfg = new ConfigOptions()) {
      ColumnFamilyOptions o = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(cfg, props);
      if (o == null) {
        throw invalid(props.toString(), "RocksDB rejected the column family options together");
      }
      return o;
    }
  }

  private static IllegalArgumentException invalid(String text, String why) {
    return new IllegalArgumentException(
        "option '" + ROCKSDB_OPTIONS.name() + "' has invalid value '" + text + "': " + why);
  }
}
