package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;

/**
 * A second process for {@code SqliteLiveWriterTest}: writes as fast as it can until killed, with
 * durability=buffered and a checkpoint every 8 pages of WAL, so the database file grows, shrinks
 * and is rewritten all the time: puts of 40 to 6,000 bytes and deletes over 2,000 keys, and every
 * 500th write a {@code compact()} ({@code VACUUM}, then the WAL truncated to 0 bytes). Prints
 * "READY" once 2,000 writes are done.
 */
final class ChurnChild {
  private ChurnChild() {}

  /**
   * Writes until killed.
   *
   * @param args the store directory
   */
  public static void main(String[] args) {
    StoreConfig c =
        StoreConfig.builder("sqlite")
            .path(Path.of(args[0]))
            .durability(Durability.BUFFERED)
            .option("wal-autocheckpoint", "8")
            .build();
    try (Store s = Stores.open(c)) {
      Random r = new Random(7);
      for (long n = 0; ; n++) {
        byte[] k = ("key" + r.nextInt(2000)).getBytes(StandardCharsets.UTF_8);
        if (r.nextInt(4) == 0) {
          s.delete(k);
        } else {
          s.put(k, new byte[r.nextInt(8) == 0 ? 6000 : 40 + r.nextInt(400)]);
        }
        if (n % 500 == 499) {
          s.compact();
        }
        if (n == 2000) {
          System.out.println("READY");
          System.out.flush();
        }
      }
    }
  }
}
