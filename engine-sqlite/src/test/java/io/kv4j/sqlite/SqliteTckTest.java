package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;

/** The whole kv4j compatibility kit against the sqlite engine with its default options. */
class SqliteTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("sqlite").path(directory).durability(durability).build();
  }
}
