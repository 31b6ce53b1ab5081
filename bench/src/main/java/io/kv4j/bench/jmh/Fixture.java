package io.kv4j.bench.jmh;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.bench.Data;
import io.kv4j.bench.Instruments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/** Opening, loading and removing the stores the benchmarks use. */
final class Fixture {
  /** The seed of keys, values and load order. */
  static final long SEED = 42;

  private Fixture() {}

  static {
    System.setProperty("chronicle.analytics.disable", "true");
  }

  static Path tempDir(String engine) {
    try {
      return Files.createTempDirectory("kv4j-jmh-" + engine + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Store open(String engine, Path dir, String durability) {
    return Stores.open(
        StoreConfig.builderFor(Instruments.provider(engine))
            .path(dir.resolve("store"))
            .durability(Durability.valueOf(durability.toUpperCase(Locale.ROOT)))
            .build());
  }

  /** Loads keys 0..n-1 in a random order, in batches of 1,000 where the engine has them. */
  static void load(Store store, Data data, long n) {
    long[] order = shuffled(n);
    boolean batches = store.info().has(Feature.ATOMIC_BATCH);
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < order.length; i++) {
      byte[] k = data.key(order[i]);
      byte[] v = data.value(order[i], (int) (order[i] * 31));
      if (batches) {
        batch.put(k, v);
        if (batch.size() == 1000) {
          store.write(batch);
          batch = new WriteBatch();
        }
      } else {
        store.put(k, v);
      }
    }
    if (!batch.isEmpty()) {
      store.write(batch);
    }
    store.sync();
  }

  static long[] shuffled(long n) {
    long[] order = new long[Math.toIntExact(n)];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    SplittableRandom r = new SplittableRandom(SEED);
    for (int i = order.length - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      long t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    return order;
  }

  static void close(Store store, Path dir) {
    if (store != null) {
      store.close();
    }
    if (dir != null) {
      try (Stream<Path> s = Files.walk(dir)) {
        s.sorted(Comparator.reverseOrder()).forEach(Fixture::deleteQuietly);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
