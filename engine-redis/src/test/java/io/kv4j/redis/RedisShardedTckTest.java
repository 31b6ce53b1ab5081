package io.kv4j.redis;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ServerTck;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kv4j TCK against engine {@code redis-sharded} on the three-primary Redis Cluster, with the
 * default 64 shards (skipped, with how to start the cluster, if absent).
 */
class RedisShardedTckTest extends ServerTck {
  @BeforeAll
  static void server() {
    TestRedis.require(true);
  }

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return TestRedis.shardedBuilder().path(directory).durability(durability).build();
  }

  /** The store's keys, and its shards' under engine redis-sharded. */
  @Override
  protected void dropNamespace(Path directory) {
    TestRedis.drop(true, TestRedis.namespaceFor(directory));
  }
}
