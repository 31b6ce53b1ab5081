package io.kv4j.hashlog;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;

class HashLogTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("hashlog").path(directory).durability(durability).build();
  }
}
