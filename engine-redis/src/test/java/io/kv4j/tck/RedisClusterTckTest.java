package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.redis.TestRedis;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kv4j TCK against a three-primary Redis Cluster (skipped, with how to start one, if absent).
 */
class RedisClusterTckTest extends ServerTck {
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
    return TestRedis.builder(true).path(directory).durability(durability).build();
  }
}
