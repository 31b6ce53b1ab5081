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
 * Engine {@code redis}: a store on a Redis server (option {@code mode=standalone}) or a Redis
 * Cluster ({@code mode=cluster}), reached through Jedis. A store's keys share one hash tag, so in a
 * cluster each store lives in one slot on one primary (stores, not the keys of one store, spread
 * over the nodes); that is what makes its batches atomic (one Lua script) and its scans ordered (a
 * sorted-set index read with {@code ZRANGEBYLEX}) in both modes, and its conditional writes and
 * conditional batches ({@code writeIf}) one Lua script each (atomic against every client of the
 * server; option {@code lock=shared} lets several application instances open one store). Scans are
 * not snapshots, and there are no read snapshots or backups: Redis keeps one version of each key,
 * and backs up with its own tools. Durability is the server's persistence, checked at open: {@code
 * SYNC} needs {@code appendonly yes} with {@code appendfsync always}, {@code BUFFERED} needs {@code
 * appendonly yes}.
 */
public final class RedisProvider implements StoreProvider {
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CONDITIONAL_WRITE,
          Feature.CONDITIONAL_BATCH,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH);
  static final Limits LIMITS = new Limits(4096, 64 << 20);

  /** For ServiceLoader. */
  public RedisProvider() {}

  @Override
  public String id() {
    return "redis";
  }

  @Override
  public String description() {
    return "Redis standalone or Cluster via Jedis (hash + sorted-set index per store, Lua batches)";
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  @Override
  public Limits limits() {
    return LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return RedisSettings.OPTIONS;
  }

  @Override
  public Store open(StoreConfig config) {
    return RedisStore.open(config, RedisSettings.of(config));
  }
}
