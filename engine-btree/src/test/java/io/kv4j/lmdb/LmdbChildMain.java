package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child-JVM programs for {@link LmdbReadOnlyTest}, {@link LmdbFailurePolicyTest}, {@link
 * LmdbKeyspaceTest}, {@link LmdbLiveWriterTest} and {@link LmdbSalvageTest}.
 */
public final class LmdbChildMain {
  private LmdbChildMain() {}

  /**
   * {@code read <dir> <key>}: opens read-only, prints the value. {@code open <dir>}: opens
   * read-write and prints OPENED, or LOCKED and why when another process holds it. {@code fill
   * <dir>}: writes 4 KiB values until a write fails, printing each acknowledged key, then the
   * failure and what the store does after it.
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
    if (args[0].equals("churn")) {
      churn(dir);
      return;
    }
    if (args[0].equals("open")) {
      try (Store s = Stores.open(StoreConfig.builder("lmdb").path(dir).build())) {
        System.out.println("OPENED " + s.info().describe());
      } catch (io.kv4j.StoreLockedException e) {
        System.out.println("LOCKED " + e.getMessage());
      }
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

  /**
   * {@code churn <dir>}: commits as fast as it can until killed, with durability=buffered (no
   * fsync): puts of 40 to 6,000 bytes (some in overflow pages) and deletes over 2,000 keys, so the
   * file grows, pages are freed and reused and both meta pages change all the time. Prints "READY"
   * once 2,000 commits are done.
   */
  private static void churn(Path dir) {
    StoreConfig c = StoreConfig.builder("lmdb").path(dir).durability(Durability.BUFFERED).build();
    try (Store s = Stores.open(c)) {
      java.util.Random r = new java.util.Random(7);
      for (long n = 0; ; n++) {
        byte[] k = ("key" + r.nextInt(2000)).getBytes(StandardCharsets.UTF_8);
        if (r.nextInt(4) == 0) {
          s.delete(k);
        } else {
          s.put(k, new byte[r.nextInt(8) == 0 ? 6000 : 40 + r.nextInt(400)]);
        }
        if (n == 2000) {
          System.out.println("READY");
          System.out.flush();
        }
      }
    }
  }
}
