package io.kv4j.hashlog;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import java.nio.file.Path;
import java.util.List;

/**
 * The damaged regions a {@link Salvage} of one directory (the store's, or a keyspace's) finds,
 * added to the list of the whole salvage in the order found, each naming the keyspace.
 */
final class DamageReport {
  private final List<DamagedRegion> damage;
  private final String keyspace;

  /**
   * @param damage the whole salvage's regions, appended to
   * @param keyspace the keyspace the directory holds, or null for the store's own
   */
  DamageReport(List<DamagedRegion> damage, String keyspace) {
    this.damage = damage;
    this.keyspace = keyspace;
  }

  /** The keyspace whose directory this reports on, or null for the store's own. */
  String keyspace() {
    return keyspace;
  }

  /** A region of {@code file}; its lost keys unknown. */
  void lost(Path file, long offset, long length, long lostEntries, String problem) {
    lost(file, offset, length, lostEntries, null, problem);
  }

  /** A region of {@code file} whose lost records held keys in {@code keys} (or null: unknown). */
  void lost(Path file, long offset, long length, long lostEntries, KeyRange keys, String problem) {
    damage.add(new DamagedRegion(file, offset, length, keyspace, lostEntries, keys, problem));
  }
}
