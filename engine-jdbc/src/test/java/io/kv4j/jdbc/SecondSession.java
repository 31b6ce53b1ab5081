package io.kv4j.jdbc;

import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import java.nio.ByteBuffer;

/**
 * A second store object on a table another store holds open: what another application instance, or
 * any other SQL client, writing the same table looks like to the server. It skips the table lock
 * that kv4j's one-open-per-location rule takes, which is the only way two kv4j store objects reach
 * one table. Also a child JVM's entry point: {@code main(configUri, key, increments)} adds {@code
 * increments} to the counter at {@code key} through replace loops and prints {@code done}.
 */
final class SecondSession {
  private SecondSession() {}

  static Store open(StoreConfig c) {
    Dialect d = c.engine().equals("postgres") ? PostgresDialect.INSTANCE : MysqlDialect.INSTANCE;
    JdbcSettings s = JdbcSettings.of(c, JdbcSettings.portOption(d.defaultPort()));
    return JdbcStore.open(d, c, s, new Limits(d.maxKeySize(), d.maxValueSize()), false);
  }

  /** Adds one to the 8-byte counter at key through get + replace (putIfAbsent when absent). */
  static void increment(Store store, byte[] key) {
    while (true) {
      byte[] old = store.get(key);
      if (old == null) {
        if (store.putIfAbsent(key, encode(1))) {
          return;
        }
      } else if (store.replace(key, old, encode(ByteBuffer.wrap(old).getLong() + 1))) {
        return;
      }
    }
  }

  static byte[] encode(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  public static void main(String[] args) {
    StoreConfig config = StoreConfig.parse(args[0]);
    byte[] key = args[1].getBytes(java.nio.charset.StandardCharsets.UTF_8);
    int n = Integer.parseInt(args[2]);
    try (Store store = open(config)) {
      for (int i = 0; i < n; i++) {
        increment(store, key);
      }
    }
    System.out.println("done");
  }
}
