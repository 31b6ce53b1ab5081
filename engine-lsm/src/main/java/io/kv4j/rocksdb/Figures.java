package io.kv4j.rocksdb;

import io.kv4j.StoreStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * Stats: a column family's RocksDB properties (the store's own keys, or a keyspace's) and the
 * directory's sizes.
 */
final class Figures {
  private Figures() {}

  /**
   * The stats of a store or keyspace handle: its column family's figures, read inside the gate, and
   * the directory's sizes.
   */
  static StoreStats of(RocksDbStore s) {
    Map<String, Number> figures = new LinkedHashMap<>();
    long keys;
    int l = s.enter();
    try {
      keys = property(s, "rocksdb.estimate-num-keys");
      figures.put("sst-bytes", property(s, "rocksdb.live-sst-files-size"));
      figures.put("sst-bytes-all-versions", property(s, "rocksdb.total-sst-files-size"));
      figures.put("memtable-bytes", property(s, "rocksdb.cur-size-all-mem-tables"));
      figures.put(
          "level0-files",
          (long) number(s.db.getProperty(s.column.handle, "rocksdb.num-files-at-level0")));
      figures.put("compaction-pending", property(s, "rocksdb.compaction-pending"));
      figures.put(
          "pending-compaction-bytes", property(s, "rocksdb.estimate-pending-compaction-bytes"));
      figures.put("running-compactions", property(s, "rocksdb.num-running-compactions"));
      figures.put("running-flushes", property(s, "rocksdb.num-running-flushes"));
      figures.put("flush-pending", property(s, "rocksdb.mem-table-flush-pending"));
      addCompactionTotals(s.db, s.column.handle, figures);
      figures.put("block-cache-usage-bytes", blockCacheUsage(s.db, s.column.handle));
      figures.put("table-readers-bytes", property(s, "rocksdb.estimate-table-readers-mem"));
      figures.put("live-snapshots", property(s, "rocksdb.num-snapshots"));
      figures.put("open-cursors", s.liveCursors.size());
    } catch (RocksDBException e) {
      throw Failures.translate(s.dir, "stats", e);
    } finally {
      s.gate.exit(l);
    }
    long[] disk = diskUsage(s.dir);
    figures.put("wal-bytes", disk[1]);
    return new StoreStats(keys, false, disk[0], figures);
  }

  /** A long-valued RocksDB property of the store object's column family. */
  private static long property(RocksDbStore s, String name) throws RocksDBException {
    return s.db.getLongProperty(s.column.handle, name);
  }

  /**
   * Cumulative compaction figures since open, from the {@code rocksdb.cfstats} map property. As in
   * RocksDB's own report, level 0 counts memtable flushes: {@code compaction-write-bytes} and
   * {@code compaction-count} include them.
   */
  private static void addCompactionTotals(
      RocksDB db, ColumnFamilyHandle family, Map<String, Number> figures) throws RocksDBException {
    Map<String, String> cf = db.getMapProperty(family, "rocksdb.cfstats");
    double readGb = number(cf.get("compaction.Sum.ReadGB"));
    double writeGb = number(cf.get("compaction.Sum.WriteGB"));
    figures.put("compaction-read-bytes", (long) (readGb * (1L << 30)));
    figures.put("compaction-write-bytes", (long) (writeGb * (1L << 30)));
    figures.put("compaction-count", (long) number(cf.get("compaction.Sum.CompCount")));
    figures.put("write-amplification", number(cf.get("compaction.Sum.WriteAmp")));
    figures.put(
        "write-stall-count",
        (long) (number(cf.get("total-stops")) + number(cf.get("total-delays"))));
  }

  private static double number(String s) {
    if (s == null) {
      return 0;
    }
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static long blockCacheUsage(RocksDB db, ColumnFamilyHandle family) {
    try {
      return db.getLongProperty(family, "rocksdb.block-cache-usage");
    } catch (RocksDBException e) {
      return 0; // no block cache configured
    }
  }

  /**
   * Total bytes of the directory and bytes of write-ahead logs ({@code *.log}). RocksDB deletes
   * obsolete files in the background: a file gone before its size is read no longer counts, and a
   * walk that met an entry vanishing under it (it would report a partial sum, less than the files
   * RocksDB itself counts) is done again, a few times at most.
   */
  private static long[] diskUsage(Path dir) {
    for (int attempt = 1; ; attempt++) {
      long[] r = new long[2];
      try (Stream<Path> files = Files.walk(dir)) {
        files.forEach(
            p -> {
              try {
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                  long size = Files.size(p);
                  r[0] += size;
                  if (p.getFileName().toString().endsWith(".log")) {
                    r[1] += size;
                  }
                }
              } catch (IOException e) {
                // Deleted since it was listed: it no longer counts.
              }
            });
        return r;
      } catch (IOException | UncheckedIOException e) {
        if (attempt == 10) {
          return r; // the directory keeps changing: what was counted
        }
      }
    }
  }
}
