package io.kv4j.bench.raw;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;

/** Shared bits of the raw stores. */
final class Raw {
  /**
   * What every raw store does: ordered scans, persistence, and atomic batches (one RocksDB {@code
   * WriteBatch}, one LMDB write transaction, one SQLite transaction per {@code write}).
   */
  static final Set<Feature> FEATURES =
      EnumSet.of(Feature.ORDERED_SCAN, Feature.PERSISTENT, Feature.ATOMIC_BATCH);

  static final Limits LIMITS = new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE);

  private Raw() {}

  static Path directory(Path dir, String engine) {
    if (dir == null) {
      throw new IllegalArgumentException("engine '" + engine + "' needs a path");
    }
    try {
      return Files.createDirectories(dir);
    } catch (IOException e) {
      throw new StoreIOException("engine '" + engine + "': cannot create " + dir, e);
    }
  }

  static long du(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile)
          .mapToLong(
              p -> {
                try {
                  return Files.size(p);
                } catch (IOException e) {
                  return 0;
                }
              })
          .sum();
    } catch (IOException e) {
      return 0;
    }
  }
}
