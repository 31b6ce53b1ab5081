package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.SplittableRandom;

/**
 * A second process for {@code SalvageTest}: writes with {@code SYNC} durability until killed,
 * printing {@code acked <i>} once write {@code i} returned. Write {@code i} puts {@link #key} =
 * {@link #value} into the store's own keys or, every third write, keyspace {@code ks}; every tenth
 * write is a batch that also puts the next two keys. No automatic checkpoint runs; after writes 149
 * and 299 a plain JDBC connection runs {@code PRAGMA wal_checkpoint(RESTART)}, so the WAL starts
 * over with new salts (older frames stay behind the new ones) and every write after 299 is in the
 * WAL only.
 */
final class SalvageCrashChild {
  static final int KEYS = 40;

  private SalvageCrashChild() {}

  /** The key write {@code i} (and a batch's {@code i+1}, {@code i+2}) puts. */
  static byte[] key(int i) {
    return ("key-" + (i % KEYS)).getBytes(StandardCharsets.US_ASCII);
  }

  /** The keyspace write {@code i} goes to: null for the store's own keys. */
  static String keyspace(int i) {
    return i % 3 == 0 ? "ks" : null;
  }

  /** The value write {@code i} puts: 100–700 bytes, from a seed of {@code i}. */
  static byte[] value(int i) {
    SplittableRandom r = new SplittableRandom(i);
    byte[] v = new byte[100 + r.nextInt(600)];
    r.nextBytes(v);
    return v;
  }

  /**
   * Writes until killed.
   *
   * @param args the store directory
   */
  public static void main(String[] args) throws SQLException {
    StoreConfig c =
        StoreConfig.builder("sqlite")
            .path(Path.of(args[0]))
            .durability(Durability.SYNC)
            .option("wal-autocheckpoint", "0")
            .build();
    try (Store s = Stores.open(c);
        Connection raw =
            DriverManager.getConnection(
                "jdbc:sqlite:" + Path.of(args[0], SqliteStore.DB_FILE_NAME));
        Statement st = raw.createStatement()) {
      st.execute("PRAGMA busy_timeout=10000");
      for (int i = 0; ; i++) {
        Store target = keyspace(i) == null ? s : s.keyspace(keyspace(i));
        if (i % 10 == 0) {
          WriteBatch b = new WriteBatch();
          for (int j = i; j < i + 3; j++) {
            b.put(keyspace(i) == null ? Store.DEFAULT_KEYSPACE : keyspace(i), key(j), value(j));
          }
          s.write(b);
        } else {
          target.put(key(i), value(i));
        }
        if (i == 149 || i == 299) {
          st.execute("PRAGMA wal_checkpoint(RESTART)");
        }
        System.out.println("acked " + i);
        System.out.flush();
      }
    }
  }
}
