package io.kv4j.rocksdb;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import java.nio.file.Path;

/**
 * A damaged region a salvage is assembling ({@link Regions}); its key range can widen as failed
 * lookups land in it.
 */
final class Region {
  final Path file;
  final long offset;
  final long length;
  final String keyspace;
  final long lostEntries;
  final String problem;
  KeyRange lostKeys;

  Region(
      Path file,
      long offset,
      long length,
      String keyspace,
      long lostEntries,
      KeyRange lostKeys,
      String problem) {
    this.file = file;
    this.offset = offset;
    this.length = length;
    this.keyspace = keyspace;
    this.lostEntries = lostEntries;
    this.lostKeys = lostKeys;
    this.problem = problem;
  }

  /** Widens the lost range to hold {@code key}. */
  void cover(byte[] key) {
    KeyRange one = KeyRange.all().gte(key).lte(key);
    if (lostKeys == null) {
      lostKeys = one;
    } else if (!lostKeys.contains(key)) {
      lostKeys = Regions.union(lostKeys, one);
    }
  }

  DamagedRegion toRegion(String problem) {
    return new DamagedRegion(
        file.toAbsolutePath(),
        Math.max(-1, offset),
        Math.max(-1, length),
        keyspace,
        Math.max(-1, lostEntries),
        lostKeys,
        problem);
  }
}
