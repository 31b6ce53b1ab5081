package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child-JVM programs for {@link LmdbReadOnlyTest}, {@link LmdbFailurePolicyTest} and {@link
 * LmdbKeyspaceTest}.
 */
public final class LmdbChildMain {
  private LmdbChildMain() {}

  /**
   * {@code read <dir> <key>}: opens read-only, prints the value. {@code fill <dir>}: writes 4 KiB
   * values until a write fails, printing each acknowledged key, then the failure and what the store
   * does after it.
   *
   * @param args the command and its arguments
   */
  public static void main(String[] args) {
    Path dir = Path.of(args[1]);
    if (args[0].equals("read")) {
      StoreConfig c = StoreConfig.builder("lmdb").path(dir).readOnly(true).build();
      try (Store s = Stores.open(c)) {
        byte[] v = s.get(args[2].getBytes(StandardCharsets.UTF_8));
        System.out.println("VALUE " + (v == null ? "null" : new String(v, StandardCharsets.UTF_8)));
      }
      return;
    }
    if (args[0].equals("batches")) {
      batches(dir);
      return;
    }
    StoreConfig c =
        StoreConfig.builder("lmdb")
            .path(dir)
            .durability(Durability.SYNC)
            .option("map-size", "64MiB")
            .build();
    try (Store s = Stores.open(c)) {
      byte[] value = new byte[4096];
      int i = 0;
      RuntimeException failure = null;
      while (failure == null && i < 100_000) {
        try {
          s.put(("key" + i).getBytes(StandardCharsets.UTF_8), value);
          System.out.println("ACKED " + i);
          i++;
        } catch (RuntimeException e) {
          failure = e;
        }
      }
      System.out.println("FAILED " + failure);
      try {
        s.put("after".getBytes(StandardCharsets.UTF_8), new byte[1]);
        System.out.println("AFTER accepted");
      } catch (RuntimeException e) {
        System.out.println("AFTER " + e);
      }
      try {
        s.sync();
        System.out.println("SYNC accepted");
      } catch (RuntimeException e) {
        System.out.println("SYNC " + e);
      }
      byte[] first = s.get("key0".getBytes(StandardCharsets.UTF_8));
      System.out.println("READ " + (first == null ? "null" : first.length));
    }
    System.out.println("CLOSED");
  }

  /**
   * {@code batches <dir>}: writes batches spanning the store's own keys and keyspaces a, b and c
   * until killed; batch n sets key "n" to n in the store, a and b, and puts 100 keys "n-j" into c
   * (creating c with the first batch); prints "ACKED n" after each.
   */
  private static void batches(Path dir) {
    StoreConfig c = StoreConfig.builder("lmdb").path(dir).durability(Durability.SYNC).build();
    try (Store s = Stores.open(c)) {
      for (int n = 0; ; n++) {
        byte[] v = String.valueOf(n).getBytes(StandardCharsets.UTF_8);
        io.kv4j.WriteBatch batch =
            new io.kv4j.WriteBatch()
                .put("n".getBytes(StandardCharsets.UTF_8), v)
                .put("a", "n".getBytes(StandardCharsets.UTF_8), v)
                .put("b", "n".getBytes(StandardCharsets.UTF_8), v);
        for (int j = 0; j < 100; j++) {
          batch.put("c", (n + "-" + j).getBytes(StandardCharsets.UTF_8), new byte[200]);
        }
        s.write(batch);
        System.out.println("ACKED " + n);
        System.out.flush();
      }
    }
  }
}
