package io.kv4j.sqlite;

import io.kv4j.StoreStats;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code stats()}: the key count of a table (the store's or a keyspace's) and the file's figures.
 */
final class SqliteStats {
  private SqliteStats() {}

  /** The stats of {@code store} (a store or a keyspace handle) whose table is {@code sql}'s. */
  static StoreStats of(SqliteStore store, Sql sql) {
    Path file = store.file();
    long[] figures =
        store.read(
            "stats",
            c ->
                new long[] {
                  c.queryLong(sql.count),
                  c.queryLong("PRAGMA page_count"),
                  c.queryLong("PRAGMA freelist_count")
                });
    long fileBytes = SqliteFiles.sizeOf(file);
    long walBytes = SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-wal"));
    long shmBytes = SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-shm"));
    Map<String, Number> m = new LinkedHashMap<>();
    m.put("rows", figures[0]);
    m.put("file-bytes", fileBytes);
    m.put("wal-bytes", walBytes);
    m.put("shm-bytes", shmBytes);
    m.put("page-size-bytes", store.pageSize());
    m.put("page-count", figures[1]);
    m.put("freelist-pages", figures[2]);
    m.put("reader-connections", store.reads().readerCount());
    m.put("cursor-connections", store.reads().cursorCount());
    m.put("single-writes", store.writes().singleWrites());
    m.put("single-write-commits", store.writes().singleCommits());
    m.put("compact-vacuums", store.maintenance().vacuums());
    m.put("compact-vacuums-skipped", store.maintenance().vacuumsSkipped());
    m.put("row-checksums", sql.checksums ? 1 : 0);
    return new StoreStats(figures[0], true, fileBytes + walBytes + shmBytes, m);
  }
}
