package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child JVM for {@link RocksDbSyncedWalTest}: writes batches of {@value #BATCH} keys ({@link #key},
 * {@link #value}) until it is killed ({@code kill -9}), printing {@code ACK <keys>} after each
 * write returned. With {@code BUFFERED} it calls {@code sync()} after every tenth batch.
 */
final class SyncedWalCrashWorker {
  static final int BATCH = 100;

  private SyncedWalCrashWorker() {}

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    Durability durability = Durability.valueOf(args[1]);
    Store s = Stores.open(StoreConfig.builder("rocksdb").path(dir).durability(durability).build());
    for (int n = 0; ; n++) {
      WriteBatch b = new WriteBatch();
      for (int i = n * BATCH; i < (n + 1) * BATCH; i++) {
        b.put(key(i), value(i));
      }
      s.write(b);
      if (durability == Durability.BUFFERED && n % 10 == 9) {
        s.sync();
      }
      System.out.println("ACK " + (n + 1) * BATCH);
      System.out.flush();
    }
  }

  static byte[] key(int i) {
    return String.format("key%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(int i) {
    return ("value of key " + i + " ").repeat(5).getBytes(StandardCharsets.UTF_8);
  }
}
