package io.kv4j.sqlite;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A second process for {@code SqliteTrustTest}: opens a store read-only and prints the value of a
 * key and the key count, one per line, while the test's own JVM holds the store read-write.
 */
final class ReadOnlyChild {
  private ReadOnlyChild() {}

  /**
   * Reads a store.
   *
   * @param args the store directory and a key
   */
  public static void main(String[] args) {
    StoreConfig c = StoreConfig.builder("sqlite").path(Path.of(args[0])).readOnly(true).build();
    try (Store s = Stores.open(c)) {
      byte[] v = s.get(args[1].getBytes(StandardCharsets.UTF_8));
      System.out.println("value=" + (v == null ? "null" : new String(v, StandardCharsets.UTF_8)));
      System.out.println("keys=" + s.stats().keyCount());
    }
  }
}
