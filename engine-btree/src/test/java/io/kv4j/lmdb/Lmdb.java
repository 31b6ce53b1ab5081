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

  /**
   * Makes a store as kv4j made it before identities and keyspaces: only {@code data.mdb} (and
   * {@code lock.mdb}), the keys in LMDB's unnamed main database, values framed or raw.
   */
  static void legacy(Path dir, boolean framed, java.util.Map<String, String> entries)
      throws java.io.IOException {
    java.nio.file.Files.createDirectories(dir);
    try (org.lmdbjava.Env<byte[]> env =
        org.lmdbjava.Env.create(ArrayProxy.INSTANCE)
            .setMapSize(16 << 20)
            .setMaxDbs(1)
            .open(dir.toFile(), org.lmdbjava.EnvFlags.MDB_NOTLS)) {
      org.lmdbjava.Dbi<byte[]> db = env.openDbi((byte[]) null, org.lmdbjava.DbiFlags.MDB_CREATE);
      try (org.lmdbjava.Txn<byte[]> txn = env.txnWrite()) {
        for (java.util.Map.Entry<String, String> e : entries.entrySet()) {
          byte[] k = b(e.getKey());
          byte[] v = b(e.getValue());
          db.put(txn, k, framed ? ValueFrame.encode(k, v) : v);
          ArrayProxy.release();
        }
        txn.commit();
      } finally {
        ArrayProxy.release();
      }
    }
  }

  static long figure(Store store, String name) {
    Number n = store.stats().figures().get(name);
    if (n == null) {
      throw new AssertionError("no figure " + name + " in " + store.stats().figures());
    }
    return n.longValue();
  }
}
