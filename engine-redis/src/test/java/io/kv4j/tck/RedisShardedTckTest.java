package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.redis.TestRedis;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
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

  @AfterAll
  static void dropNamespaces() {
    for (String ns : NAMESPACES) {
      TestRedis.drop(true, ns);
    }
    NAMESPACES.clear();
  }

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    NAMESPACES.add(TestRedis.namespaceFor(directory));
    return TestRedis.shardedBuilder().path(directory).durability(durability).build();
  }
}
