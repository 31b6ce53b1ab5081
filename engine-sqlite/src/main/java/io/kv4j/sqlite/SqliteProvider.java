package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.SalvageSink;
import io.kv4j.spi.StoreProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The {@code sqlite} engine: one plain SQLite database file ({@value SqliteStore#DB_FILE_NAME}) in
 * the store directory, a table with a unique BLOB key (memcmp order = unsigned byte order), WAL
 * journal, parallel readers from a bounded connection pool, one writer connection. {@link
 * io.kv4j.Durability#SYNC} runs {@code synchronous=FULL}, {@link io.kv4j.Durability#BUFFERED} runs
 * {@code synchronous=NORMAL}. The file can be opened with the {@code sqlite3} shell or any SQLite
 * driver; see the module README for the schema.
 */
public final class SqliteProvider implements StoreProvider {
  /** The engine id. */
  static final String ID = "sqlite";

  /**
   * Keys up to 64 KiB, values up to 256 MiB. SQLite allows rows up to 1,000,000,000 bytes
   * (SQLITE_MAX_LENGTH as compiled into sqlite-jdbc); the largest row, key and value plus the
   * checksum column and SQLite's record header, stays far below it.
   */
  static final Limits LIMITS = new Limits(64 << 10, 256 << 20);

  /**
   * What every store declares, read-only ones included (they refuse conditional writes as every
   * write, with {@link UnsupportedOperationException}; snapshots and backups work). {@link
   * Feature#CHECKSUMS} comes on top for a store whose table carries row checksums (every store
   * created with {@code checksums=true}, the default); the provider declares it as the engine's
   * capability.
   */
  static final Set<Feature> STORE_FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CONDITIONAL_WRITE,
          Feature.SNAPSHOT_READ,
          Feature.BACKUP,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH,
          Feature.CONDITIONAL_BATCH);

  /** The engine's capability: what a store with row checksums declares. */
  static final Set<Feature> FEATURES = withChecksums(STORE_FEATURES);

  /** SQLite's largest mmap size as compiled into sqlite-jdbc (SQLITE_MAX_MMAP_SIZE). */
  static final long MAX_MMAP = 0x7fff0000L;

  static final OptionSpec<String> TABLE =
      OptionSpec.text(
          "table",
          "kv",
          "Name of the key-value table inside the database file: letters, digits and '_', starting"
              + " with a letter or '_', at most 64 characters, not starting with 'sqlite_'. One file"
              + " may hold several tables; one store opens one.");

  static final OptionSpec<Long> PAGE_SIZE =
      OptionSpec.size(
          "page-size",
          8 << 10,
          512,
          64 << 10,
          "SQLite page size, a power of two from 512 bytes to 64KiB. Only effective when the"
              + " database file is created; an existing file keeps its page size (see stats"
              + " 'page-size-bytes'). 8KiB: the best measured balance of file size and bytes written per"
              + " put for rows of about 1 KiB.");

  static final OptionSpec<Long> PAGE_CACHE_SIZE =
      OptionSpec.size(
          "page-cache-size",
          8L << 20,
          64 << 10,
          1L << 40,
          "Page cache of EACH connection (PRAGMA cache_size, in KiB): the writer, every pooled"
              + " reader and every open cursor has one.");

  static final OptionSpec<Long> MMAP_SIZE =
      OptionSpec.size(
          "mmap-size",
          256L << 20,
          0,
          MAX_MMAP,
          "Bytes of the database file each connection reads through memory mapping (PRAGMA"
              + " mmap_size); 0 disables mmap and reads through the page cache.");

  static final OptionSpec<Integer> BUSY_TIMEOUT =
      OptionSpec.integer(
          "busy-timeout",
          5_000,
          0,
          600_000,
          "ms",
          "How long a connection waits for a lock held by another connection before failing"
              + " (PRAGMA busy_timeout).");

  static final OptionSpec<Integer> WAL_AUTOCHECKPOINT =
      OptionSpec.integer(
          "wal-autocheckpoint",
          1_000,
          0,
          1_000_000,
          "pages",
          "Checkpoint policy: copy the WAL back into the database file when a commit leaves the"
              + " WAL at least this many pages long (PRAGMA wal_autocheckpoint); 0 turns automatic"
              + " checkpoints off, leaving them to sync() (buffered durability) and close.");

  static final OptionSpec<Integer> READER_POOL_SIZE =
      OptionSpec.integer(
          "reader-pool-size",
          8,
          1,
          256,
          "connections",
          "Most point reads (get) running in parallel, each on its own pooled read-only"
              + " connection; more readers wait for a free connection. Cursors use their own"
              + " connections, not counted here.");

  static final OptionSpec<Boolean> CHECKSUMS =
      OptionSpec.bool(
          "checksums",
          true,
          "Whether a table kv4j creates (a new store, or a new table in an existing file) carries"
              + " a CRC32C of key and value in every row (column 'crc32c'), checked on every get and"
              + " every row a scan reads. An existing table keeps the format it was made with; an"
              + " explicit value that contradicts it fails the open (migrate with kv4j copy).");

  private static final List<OptionSpec<?>> OPTIONS =
      List.of(
          TABLE,
          PAGE_SIZE,
          PAGE_CACHE_SIZE,
          MMAP_SIZE,
          BUSY_TIMEOUT,
          WAL_AUTOCHECKPOINT,
          READER_POOL_SIZE,
          CHECKSUMS);

  private static Set<Feature> withChecksums(Set<Feature> features) {
    EnumSet<Feature> all = EnumSet.copyOf(features);
    all.add(Feature.CHECKSUMS);
    return all;
  }

  /** Creates the provider; called by {@link java.util.ServiceLoader}. */
  public SqliteProvider() {}

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String description() {
    return "SQLite (sqlite-jdbc): one portable database file, WAL, parallel readers, ordered"
        + " and snapshot scans, atomic batches, conditional writes, read snapshots, online"
        + " backup (VACUUM INTO), a CRC32C per row, keyspaces as tables of the same file.";
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
    refuseDatabaseFilePath(config.path());
    return StoreOpening.open(config, SqliteSettings.from(config));
  }

  /**
   * The location is the store's directory, which holds the database file and the identity; a user
   * who writes {@code sqlite:./local.db}, as for the sqlite3 tool, means a file. Rather than create
   * a directory of that name, such a path is refused unless it already is a directory.
   */
  static void refuseDatabaseFilePath(Path path) {
    if (path == null || Files.isDirectory(path)) {
      return;
    }
    String name = path.getFileName() == null ? "" : path.getFileName().toString();
    String lower = name.toLowerCase(Locale.ROOT);
    if (lower.endsWith(".db") || lower.endsWith(".sqlite") || lower.endsWith(".sqlite3")) {
      Path parent = path.getParent() == null ? Path.of(".") : path.getParent();
      Path dir = parent.resolve(name.substring(0, name.lastIndexOf('.')));
      throw new IllegalArgumentException(
          "engine 'sqlite' at "
              + path
              + ": sqlite:DIR takes a directory, not a database file; the database file inside it"
              + " is DIR/"
              + SqliteStore.DB_FILE_NAME
              + " (next to kv4j's identity file). Use a directory, e.g. sqlite:"
              + dir
              + " for "
              + dir.resolve(SqliteStore.DB_FILE_NAME));
    }
  }

  /**
   * Reads every intact row of a damaged store from a copy of its files, without SQLite (see {@link
   * Salvage} and the module README's "Salvage").
   */
  @Override
  public List<DamagedRegion> salvage(StoreConfig config, SalvageSink sink) {
    return Salvage.run(config, sink);
  }
}
