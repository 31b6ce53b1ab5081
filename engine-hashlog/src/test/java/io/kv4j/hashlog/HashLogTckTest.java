package io.kv4j.hashlog;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

class HashLogTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("hashlog").path(directory).durability(durability).build();
  }

  /**
   * Every background compaction run fails from now on, through the compactor's own test seam
   * ({@code Compactor.hook}, per store): its first step throws an I/O failure, as a full or failing
   * disk would. Only on the compactor's threads: a foreground {@code compact()} still works (and,
   * working, would rightly report compaction recovered).
   */
  @Override
  protected boolean failBackgroundWork(Store store) {
    HashLogStore s = (HashLogStore) store;
    s.compactor.hook =
        step -> {
          if (Thread.currentThread().getName().startsWith("kv4j-hashlog-compactor-")) {
            throw new UncheckedIOException(
                new IOException("injected by the TCK: background compaction failed at " + step));
          }
        };
    return true;
  }
}
