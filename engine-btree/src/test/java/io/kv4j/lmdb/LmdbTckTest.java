package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;

class LmdbTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("lmdb").path(directory).durability(durability).build();
  }
}
