package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;

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
}
