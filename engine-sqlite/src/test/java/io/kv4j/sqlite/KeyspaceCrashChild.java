package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A second process for {@code SqliteKeyspaceTest}: writes batches spanning keyspaces with {@code
 * SYNC} durability until killed, printing {@code acked <i>} after batch {@code i} returned. Batch
 * {@code i} puts {@code k<i % 50> = <i>} into the store's own keys and keyspaces {@code a} and
 * {@code b}, and every tenth batch also creates keyspace {@code n<i>} holding {@code k = <i>}.
 */
final class KeyspaceCrashChild {
  private KeyspaceCrashChild() {}

  /**
   * Writes until killed.
   *
   * @param args the store directory
   */
  public static void main(String[] args) {
    StoreConfig c =
        StoreConfig.builder("sqlite").path(Path.of(args[0])).durability(Durability.SYNC).build();
    try (Store s = Stores.open(c)) {
      for (int i = 0; ; i++) {
        byte[] k = b("k" + (i % 50));
        byte[] v = b(Integer.toString(i));
        WriteBatch batch =
            new WriteBatch().put(k, v).put("a", k, v).put("b", k, v).delete("b", b("absent"));
        if (i % 10 == 0) {
          batch.put("n" + i, b("k"), v);
        }
        s.write(batch);
        System.out.println("acked " + i);
        System.out.flush();
      }
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
