package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Child-JVM programs for {@link LmdbReadOnlyTest} and {@link LmdbFailurePolicyTest}. */
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
}
