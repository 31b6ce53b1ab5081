package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import java.nio.file.Path;

/** The memory engine, the kit's reference, must pass every rule it declares the features for. */
class MemoryTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("memory").durability(durability).build();
  }
}
