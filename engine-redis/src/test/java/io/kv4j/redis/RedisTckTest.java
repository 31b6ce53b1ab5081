package io.kv4j.redis;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ServerTck;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;

/** The kv4j TCK against a standalone Redis server (skipped, with how to start one, if absent). */
class RedisTckTest extends ServerTck {
  @BeforeAll
  static void server() {
    TestRedis.require(false);
  }

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return TestRedis.builder(false).path(directory).durability(durability).build();
  }

  /** The store's keys, and its shards' under engine redis-sharded. */
  @Override
  protected void dropNamespace(Path directory) {
    TestRedis.drop(false, TestRedis.namespaceFor(directory));
  }
}
