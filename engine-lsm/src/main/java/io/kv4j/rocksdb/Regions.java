package io.kv4j.rocksdb;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.RocksDBException;

/**
 * The damaged regions a salvage found ({@link Salvage}, {@link TablesOnly}), one per damaged spot
 * (file and offset), in the order found.
 */
final class Regions {
  private final Map<String, Region> byPlace = new LinkedHashMap<>();
  private final String copy;
  private final String dir;
  private int unplaced;

  /** Regions of the store in {@code dir}, read from its copy in {@code copy}. */
  Regions(Path copy, Path dir) {
    this.copy = copy.toString();
    this.dir = dir.toString();
  }

  void add(Region r) {
    String place = r.file + "@" + r.offset + "/" + r.keyspace;
    if (r.offset < 0) {
      place += "#" + unplaced++;
    }
    Region had = byPlace.putIfAbsent(place, r);
    if (had != null && r.lostKeys != null) {
      had.lostKeys = had.lostKeys == null ? r.lostKeys : union(had.lostKeys, r.lostKeys);
    }
  }

  /** The smallest range holding both (bounds compared as unsigned bytes; null is unbounded). */
  static KeyRange union(KeyRange a, KeyRange b) {
    KeyRange r = KeyRange.all();
    if (a.lower() != null && b.lower() != null) {
      int c = Arrays.compareUnsigned(a.lower(), b.lower());
      KeyRange low = c < 0 || (c == 0 && a.lowerInclusive()) ? a : b;
      r = low.lowerInclusive() ? r.gte(low.lower()) : r.gt(low.lower());
    }
    if (a.upper() != null && b.upper() != null) {
      int c = Arrays.compareUnsigned(a.upper(), b.upper());
      KeyRange high = c > 0 || (c == 0 && a.upperInclusive()) ? a : b;
      r = high.upperInclusive() ? r.lte(high.upper()) : r.lt(high.upper());
    }
    return r;
  }

  /**
   * A lookup failed: the key is lost, in the region of the block the error names (widened to hold
   * the key) or in a new region for it.
   */
  void lostAt(
      Path copy,
      RocksDBException e,
      byte[] key,
      String keyspace,
      java.util.function.Function<String, Path> source) {
    String m = String.valueOf(e.getMessage());
    Path inCopy = Failures.fileIn(copy, m);
    Path file = inCopy.equals(copy) ? copy : source.apply(inCopy.getFileName().toString());
    long[] at = TableScan.blockAt(m);
    String place = file + "@" + at[0] + "/" + keyspace;
    Region r = at[0] >= 0 ? byPlace.get(place) : null;
    if (r == null) {
      r =
          new Region(
              file,
              at[0],
              at[1],
              keyspace,
              -1,
              null,
              m + " (a lookup of a key failed: its newest version is unreadable)");
      add(r);
    }
    r.cover(key);
  }

  List<DamagedRegion> list() {
    List<DamagedRegion> out = new ArrayList<>();
    for (Region r : byPlace.values()) {
      // RocksDB's messages name the file in the copy, which is gone by now: name the store's.
      out.add(r.toRegion(r.problem.replace(copy, dir)));
    }
    return List.copyOf(out);
  }
}
