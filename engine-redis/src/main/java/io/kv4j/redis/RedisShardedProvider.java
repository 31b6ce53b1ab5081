package io.kv4j.redis;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Engine {@code redis-sharded}: one store spread over a Redis Cluster. Its keys go to {@code
 * shards} hash-tagged shards (by CRC-32 of the key), each a hash and a sorted-set index in its own
 * slot, so the store grows with the cluster's primaries instead of living on one. Single-key
 * operations, conditional writes included, are one Lua script on the key's shard; scans merge the
 * shards' indexes in order (pipelined per node). Batches would span primaries, which Redis cannot
 * apply atomically, so {@code ATOMIC_BATCH} is not declared (nor keyspaces, snapshots, backups).
 */
public final class RedisShardedProvider implements StoreProvider {
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.PERSISTENT,
          Feature.CONDITIONAL_WRITE);

  /** For ServiceLoader. */
  public RedisShardedProvider() {}

  @Override
  public String id() {
    return "redis-sharded";
  }

  @Override
  public String description() {
    return "Redis Cluster via Jedis, one store's keys sharded over every primary (merged scans,"
        + " no atomic batches)";
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  @Override
  public Limits limits() {
    return RedisProvider.LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return RedisSettings.SHARDED_OPTIONS;
  }

  @Override
  public Store open(StoreConfig config) {
    return ShardedStore.open(
        config,
        RedisSettings.of(config, RedisSettings.SHARDED_MODE),
        config.get(RedisSettings.SHARDS));
  }
}
