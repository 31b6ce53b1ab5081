package io.kv4j.rocksdb;

import io.kv4j.KeyRange;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.rocksdb.LiveFileMetaData;

/** A table file of a salvage's copy that RocksDB cannot open ({@link Salvage}). */
final class DeadTable {
  final String name;
  final LiveFileMetaData meta;
  final String family;
  final String problem;
  boolean replaced;

  DeadTable(String name, LiveFileMetaData meta, String problem) {
    this.name = name;
    this.meta = meta;
    this.family = new String(meta.columnFamilyName(), StandardCharsets.UTF_8);
    this.problem = problem;
  }

  boolean covers(byte[] key) {
    return Arrays.compareUnsigned(key, meta.smallestKey()) >= 0
        && Arrays.compareUnsigned(key, meta.largestKey()) <= 0;
  }

  Region region(Path file, String keyspace) {
    long[] at = TableScan.blockAt(problem);
    return new Region(
        file,
        at[0],
        at[0] >= 0 ? at[1] : meta.size(),
        keyspace,
        -1,
        KeyRange.all().gte(meta.smallestKey()).lte(meta.largestKey()),
        "table file unreadable ("
            + problem
            + "): every key in its range is lost unless a newer file or the WAL holds it"
            + (replaced
                ? ""
                : "; no stand-in of its size could be made, so lookups of other keys of its"
                    + " column family may fail and count as lost too"));
  }
}
