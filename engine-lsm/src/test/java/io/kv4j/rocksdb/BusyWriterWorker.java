package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child JVM for {@link RocksDbReadOnlyTest}: puts keys {@link #key(int)} with a 64 KiB write buffer
 * (a flush every few hundred puts, compactions behind them) until it is killed, printing {@code ACK
 * n} after every 100th put returned ({@code n} keys acknowledged).
 */
final class BusyWriterWorker {
  private BusyWriterWorker() {}

  public static void main(String[] args) {
    Store s =
        Stores.open(
            StoreConfig.builder("rocksdb")
                .path(Path.of(args[0]))
                .durability(Durability.BUFFERED)
                .option("write-buffer-size", "64KiB")
                .option("rocksdb-options", "disable_auto_compactions=true")
                .build());
    for (int i = 0; ; i++) {
      s.put(key(i), value(i));
      if (i % 100 == 99) {
        System.out.println("ACK " + (i + 1));
        System.out.flush();
      }
    }
  }

  static byte[] key(int i) {
    return String.format("b%09d", i).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(int i) {
    return ("value " + i).repeat(10).getBytes(StandardCharsets.UTF_8);
  }
}
