package io.kv4j.lmdb;

import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Run in a child JVM without any --add-opens flag by {@link LmdbJvmFlagsTest}. */
public final class LmdbNoFlagsMain {
  private LmdbNoFlagsMain() {}

  /**
   * Opens the engine, writes, reads and scans, and prints the results.
   *
   * @param args the store directory
   */
  public static void main(String[] args) {
    boolean nioOpen =
        Object.class.getModule().isOpen("java.nio", LmdbNoFlagsMain.class.getModule());
    System.out.println("java.nio open: " + nioOpen);
    try (Store s = Stores.open(StoreConfig.builder("lmdb").path(Path.of(args[0])).build())) {
      s.put("k1".getBytes(StandardCharsets.UTF_8), "v1".getBytes(StandardCharsets.UTF_8));
      s.put("k2".getBytes(StandardCharsets.UTF_8), "v2".getBytes(StandardCharsets.UTF_8));
      System.out.println(
          "get: "
              + new String(s.get("k1".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8));
      StringBuilder sb = new StringBuilder();
      s.forEach(
          KeyRange.all().reverse(),
          e -> sb.append(new String(e.key(), StandardCharsets.UTF_8)).append(' '));
      System.out.println("scan: " + sb.toString().trim());
    }
  }
}
