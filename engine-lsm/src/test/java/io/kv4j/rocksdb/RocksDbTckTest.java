package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.tck.StoreTck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.rocksdb.LiveFileMetaData;

/** The whole kv4j compatibility kit against the rocksdb engine with its default options. */
class RocksDbTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("rocksdb").path(directory).durability(durability).build();
  }

  /** RocksDB's info log: rewritten and rotated freely, never data. */
  @Override
  protected boolean isDiagnosticFile(String fileName) {
    return fileName.equals("LOG") || fileName.startsWith("LOG.old.");
  }

  /**
   * Makes RocksDB's own compaction fail on real damage, as {@code RocksDbBackgroundErrorTest} does,
   * away from the kit's keys: 2,000 keys written to a keyspace of their own are compacted into a
   * table file of that keyspace alone, 16 bytes of its data blocks are inverted, and a second
   * compaction reads them and fails on the block checksum (RocksDB reports it as a background
   * error; the {@code compact()} call's own exception is expected and dropped). The kit's keys live
   * in the store's own column family, never read from the damaged file.
   */
  @Override
  protected boolean failBackgroundWork(Store store) {
    RocksDbStore s = (RocksDbStore) store;
    try {
      Store ks = store.keyspace("tck-background-damage");
      Random r = new Random(1015);
      byte[] v = new byte[200];
      for (int i = 0; i < 2_000; i++) {
        r.nextBytes(v);
        ks.put(("d" + i).getBytes(StandardCharsets.UTF_8), v);
      }
      ks.compact(); // flushes the keyspace's memtable into a table file of its own
      // The keyspace's own table files, by RocksDB's metadata: a directory diff would also take
      // a table a background flush of the kit's own data made meanwhile, and damage it.
      byte[] family = Column.familyName("tck-background-damage");
      Set<Path> made = new HashSet<>();
      for (LiveFileMetaData f : s.db.getLiveFilesMetaData()) {
        if (Arrays.equals(f.columnFamilyName(), family)) {
          made.add(s.dir.resolve(Salvage.fileName(f)));
        }
      }
      if (made.isEmpty()) {
        throw new AssertionError("compact() made no table file of the keyspace in " + s.dir);
      }
      for (Path table : made) {
        TableFiles.invertDataBytes(table);
      }
      try {
        ks.compact(); // rewrites the bottommost file: reads the damaged block
      } catch (StoreException expected) {
        // the same failure, seen by the caller of compact(); the rule checks the health
      }
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
