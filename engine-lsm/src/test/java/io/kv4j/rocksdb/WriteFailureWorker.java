package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child JVM for {@link RocksDbWriteFailureTest}: started under a file size limit ({@code ulimit
 * -f}), so RocksDB's WAL append fails with {@code EFBIG} (the JVM ignores {@code SIGXFSZ}), a real
 * native I/O error on the write path. Prints one line per step for the parent to check.
 */
final class WriteFailureWorker {
  private WriteFailureWorker() {}

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    Store s =
        Stores.open(StoreConfig.builder("rocksdb").path(dir).durability(Durability.SYNC).build());
    byte[] value = new byte[4096];
    int acked = 0;
    try {
      for (; acked < 1_000_000; acked++) {
        s.put(key(acked), value);
      }
      System.out.println("NO-FAILURE");
    } catch (RuntimeException e) {
      System.out.println("ACKED " + acked);
      System.out.println("FIRST " + e.getClass().getSimpleName() + " " + e.getMessage());
    }
    step("PUT", () -> s.put(key(0), new byte[1]));
    step("DELETE", () -> s.delete(key(0)));
    step("SYNC", s::sync);
    step("GET", () -> System.out.println("GOT " + s.get(key(0)).length));
    step("CLOSE", s::close);
    System.out.flush();
  }

  static byte[] key(int i) {
    return String.format("key%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static void step(String name, Runnable r) {
    try {
      r.run();
      System.out.println(name + " ok");
    } catch (RuntimeException e) {
      System.out.println(name + " " + e.getClass().getSimpleName() + " " + e.getMessage());
    }
  }
}
