package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Child JVM for {@link RocksDbKeyspaceTest}: writes batches that span the store's own keys and two
 * keyspaces until it is killed ({@code kill -9}). Batch {@code n} puts {@code counter = n} and
 * {@code k<n>} (a value of up to 64 KiB, so a kill can land inside the native write) in each of the
 * three, and deletes {@code k<n-1>} from keyspace {@code b}; it prints {@code ACK n} once the write
 * returned.
 */
final class KeyspaceCrashWorker {
  static final String[] SPACES = {"default", "a", "b"};

  private KeyspaceCrashWorker() {}

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    Durability durability = Durability.valueOf(args[1]);
    long seed = Long.parseLong(args[2]);
    SplittableRandom rnd = new SplittableRandom(seed);
    Store s = Stores.open(StoreConfig.builder("rocksdb").path(dir).durability(durability).build());
    int start = start(s);
    for (int n = start; ; n++) {
      WriteBatch b = new WriteBatch();
      for (String ks : SPACES) {
        b.put(ks, key("counter"), num(n));
        byte[] v = new byte[rnd.nextInt(1 << 16)];
        rnd.nextBytes(v);
        b.put(ks, key("k" + n), v);
      }
      if (n > 0) {
        b.delete("b", key("k" + (n - 1)));
      }
      s.write(b);
      System.out.println("ACK " + n);
      System.out.flush();
    }
  }

  /** The batch to write next: one after the counter a previous round left. */
  private static int start(Store s) {
    byte[] c = s.get(key("counter"));
    return c == null ? 0 : Integer.parseInt(new String(c, StandardCharsets.UTF_8)) + 1;
  }

  static byte[] key(String k) {
    return k.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] num(int n) {
    return Integer.toString(n).getBytes(StandardCharsets.UTF_8);
  }
}
