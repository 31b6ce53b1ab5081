package io.kv4j.lmdb;

import io.kv4j.StoreStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.lmdbjava.EnvInfo;
import org.lmdbjava.Stat;

/** The figures of {@code stats()}: a database's (the store's or a keyspace's) and the map's. */
final class StoreFigures {
  private StoreFigures() {}

  static StoreStats of(Path directory, Stat stat, EnvInfo envInfo, long growths, long liveReaders) {
    long disk = 0;
    for (String f : new String[] {LmdbStore.DATA_FILE, LmdbStore.LOCK_FILE}) {
      try {
        disk += Files.size(directory.resolve(f));
      } catch (IOException ignored) {
        // A missing lock file (read-only media) counts as 0.
      }
    }
    long usedPages = envInfo.lastPageNumber + 1;
    Map<String, Number> figures = new LinkedHashMap<>();
    figures.put("map-size-bytes", envInfo.mapSize);
    figures.put("map-used-bytes", usedPages * stat.pageSize);
    figures.put("map-used-pages", usedPages);
    figures.put("page-size-bytes", stat.pageSize);
    figures.put("tree-depth", stat.depth);
    figures.put("branch-pages", stat.branchPages);
    figures.put("leaf-pages", stat.leafPages);
    figures.put("overflow-pages", stat.overflowPages);
    figures.put("map-growths", growths);
    figures.put("reader-slots-in-use", liveReaders);
    figures.put("reader-slots-high-water", envInfo.numReaders);
    figures.put("max-readers", envInfo.maxReaders);
    figures.put("last-txn-id", envInfo.lastTransactionId);
    return new StoreStats(stat.entries, true, disk, figures);
  }
}
