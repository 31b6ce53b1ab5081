package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Test helpers. */
final class Lmdb {
  private Lmdb() {}

  static StoreConfig.Builder config(Path dir, String... options) {
    StoreConfig.Builder b = StoreConfig.builder("lmdb").path(dir).durability(Durability.BUFFERED);
    for (int i = 0; i < options.length; i += 2) {
      b.option(options[i], options[i + 1]);
    }
    return b;
  }

  static Store open(Path dir, String... options) {
    return Stores.open(config(dir, options).build());
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String s(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  static long figure(Store store, String name) {
    Number n = store.stats().figures().get(name);
    if (n == null) {
      throw new AssertionError("no figure " + name + " in " + store.stats().figures());
    }
    return n.longValue();
  }
}
