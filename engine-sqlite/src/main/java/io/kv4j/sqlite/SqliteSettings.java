package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/** A store's validated settings, read once from its {@link StoreConfig}. */
record SqliteSettings(
    Path directory,
    Durability durability,
    boolean createIfMissing,
    boolean readOnly,
    String table,
    int pageSize,
    long pageCacheBytes,
    long mmapBytes,
    int busyTimeoutMs,
    int walAutocheckpointPages,
    int readerPoolSize,
    boolean checksums,
    boolean checksumsGiven) {

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

  SqliteSettings {
    Objects.requireNonNull(directory, "path");
    Objects.requireNonNull(durability, "durability");
    if (!IDENTIFIER.matcher(table).matches()
        || table.toLowerCase(Locale.ROOT).startsWith("sqlite_")) {
      throw new IllegalArgumentException(
          "option '"
              + SqliteProvider.TABLE.name()
              + "' has invalid value '"
              + table
              + "': expected letters, digits and '_', starting with a letter or '_', at most 64"
              + " characters, not starting with 'sqlite_'");
    }
    String lower = table.toLowerCase(Locale.ROOT);
    if (lower.equals(KeyspaceCatalog.TABLE) || lower.startsWith(KeyspaceCatalog.TABLE_PREFIX)) {
      throw new IllegalArgumentException(
          "option '"
              + SqliteProvider.TABLE.name()
              + "' has invalid value '"
              + table
              + "': '"
              + KeyspaceCatalog.TABLE
              + "' and names starting with '"
              + KeyspaceCatalog.TABLE_PREFIX
              + "' are kv4j's keyspace catalog and keyspace tables");
    }
    if (Integer.bitCount(pageSize) != 1) {
      throw new IllegalArgumentException(
          "option '"
              + SqliteProvider.PAGE_SIZE.name()
              + "' has invalid value '"
              + pageSize
              + "': expected a power of two from 512 to 65536");
    }
  }

  static SqliteSettings from(StoreConfig c) {
    if (c.path() == null) {
      throw new IllegalArgumentException("engine 'sqlite' stores data on disk and needs a path");
    }
    return new SqliteSettings(
        c.path(),
        c.durability(),
        c.createIfMissing(),
        c.readOnly(),
        c.get(SqliteProvider.TABLE),
        Math.toIntExact(c.get(SqliteProvider.PAGE_SIZE)),
        c.get(SqliteProvider.PAGE_CACHE_SIZE),
        c.get(SqliteProvider.MMAP_SIZE),
        c.get(SqliteProvider.BUSY_TIMEOUT),
        c.get(SqliteProvider.WAL_AUTOCHECKPOINT),
        c.get(SqliteProvider.READER_POOL_SIZE),
        c.get(SqliteProvider.CHECKSUMS),
        c.options().containsKey(SqliteProvider.CHECKSUMS.name()));
  }

  /** The table name as an SQL identifier, quoted. */
  String quotedTable() {
    return "\"" + table + "\"";
  }

  /** PRAGMA synchronous for the durability: FULL (2) or NORMAL (1). */
  int synchronous() {
    return durability == Durability.SYNC ? 2 : 1;
  }

  /** PRAGMA cache_size in the negative (KiB) form, at least 1 KiB. */
  long cacheSizePragma() {
    return -Math.max(1, pageCacheBytes >> 10);
  }
}
