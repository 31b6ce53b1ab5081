package io.kv4j.redis;

import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.zip.CRC32;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A store whose keys spread over {@code shards} hash-tagged shards, so over every primary of a
 * Redis Cluster: key {@code k} lives in shard {@code CRC-32(k) mod shards}, whose hash {@code
 * {ns:s<j>}:v} and sorted-set index {@code {ns:s<j>}:i} are written together by the same Lua
 * scripts as engine {@code redis}. A key's operations (get, put, delete, conditional writes) are
 * one script on its shard; scans merge the shards' indexes in order; a batch would span shards on
 * different primaries, which Redis cannot apply atomically, so batches are refused.
 */
final class ShardedStore extends AbstractStore {
  /** KEYS: values. ARGV: keys. Answers their values, nil where absent. */
  private static final Script GET_ALL =
      new Script("return redis.call('HMGET', KEYS[1], unpack(ARGV))");

  /**
   * KEYS: values, index. Answers the shard's key count and the bytes of its two keys ({@code MEMORY
   * USAGE}, 0 where absent): one pipelined request per shard, so {@code stats()} costs one round
   * trip per primary instead of two more per shard.
   */
  private static final Script STATS =
      new Script(
          "local function bytes(k) return redis.call('MEMORY', 'USAGE', k) or 0 end "
              + "return {redis.call('HLEN', KEYS[1]), bytes(KEYS[1]), bytes(KEYS[2])}");

  private static final int GET_ALL_CHUNK = 1000;
  private static final byte[] NONE = {};

  private final Namespace ns;
  private final int shards;
  private final String[] tags;

  private ShardedStore(StoreInfo info, Namespace ns, int shards) {
    super(info);
    this.ns = ns;
    this.shards = shards;
    this.tags = new String[shards];
    for (int j = 0; j < shards; j++) {
      tags[j] = tag(ns.settings.namespace(), j);
    }
  }

  /** The hash tag of shard {@code j}: a different slot per shard. */
  static String tag(String namespace, int j) {
    return "{" + namespace + ":s" + j + "}";
  }

  static ShardedStore open(StoreConfig config, RedisSettings s, int shardsOption) {
    String location = Namespace.location("redis-sharded", config, s);
    String who = "engine 'redis-sharded' at " + location;
    Namespace ns = Namespace.open(config, s, who, "kv4j-redis-sharded 1");
    boolean ok = false;
    try {
      byte[] field = RedisStore.bytes("shards");
      if (!config.readOnly()) {
        ns.client.hsetnx(ns.metaKey, field, RedisStore.bytes(Integer.toString(shardsOption)));
      }
      byte[] stored = ns.client.hget(ns.metaKey, field);
      if (stored == null) {
        throw new StoreIOException(
            who + ": " + ns.tag + ":meta names no shard count (a store created read-only?)",
            (Throwable) null);
      }
      int shards = Integer.parseInt(new String(stored, StandardCharsets.UTF_8));
      StoreInfo info =
          new StoreInfo(
              "redis-sharded",
              RedisShardedProvider.FEATURES,
              RedisProvider.LIMITS,
              config.durability(),
              location + " shards=" + shards,
              config.readOnly());
      ShardedStore store = new ShardedStore(info, ns, shards);
      ok = true;
      return store;
    } catch (JedisException e) {
      throw new StoreIOException(who + ": " + RedisStore.describe(e), e);
    } finally {
      if (!ok) {
        ns.close();
      }
    }
  }

  int shards() {
    return shards;
  }

  /** The shard of a key: CRC-32 of its bytes, stable across clients, versions and platforms. */
  int shardOf(byte[] key) {
    CRC32 crc = new CRC32();
    crc.update(key);
    return (int) (crc.getValue() % shards);
  }

  byte[] valuesKey(int j) {
    return RedisStore.bytes(tags[j] + ":v");
  }

  byte[] indexKey(int j) {
    return RedisStore.bytes(tags[j] + ":i");
  }

  /**
   * The third key the shared scripts name: the keyspace list, which they read only for a named
   * keyspace (never here), but which must be declared in the shard's slot.
   */
  private byte[] unusedListKey(int j) {
    return RedisStore.bytes(tags[j] + ":spaces");
  }

  <T> T call(String op, Supplier<T> work) {
    return RedisStore.retrying(info(), ns, this::checkOpen, this::isClosed, op, work);
  }

  /**
   * Runs one script per shard request, pipelined (Jedis groups a cluster pipeline per node: one
   * round trip per primary); a request whose reply is an error (a {@code MOVED} or {@code ASK}
   * while slots migrate, {@code TRYAGAIN}) or whose pipeline failed is run again on its own, where
   * the cluster client follows redirections and {@link #call} retries.
   */
  List<Object> runAll(String op, Script script, List<List<byte[]>> keys, List<List<byte[]>> args) {
    int n = keys.size();
    Object[] out = new Object[n];
    boolean[] done = new boolean[n];
    try {
      call(
          op,
          () -> {
            try (AbstractPipeline p = ns.client.pipelined()) {
              List<Response<Object>> rs = new ArrayList<>(n);
              for (int i = 0; i < n; i++) {
                rs.add(script.queue(p, keys.get(i), args.get(i)));
              }
              p.sync();
              for (int i = 0; i < n; i++) {
                try {
                  out[i] = rs.get(i).get();
                  done[i] = true;
                } catch (JedisException e) {
                  // run alone below
                }
              }
            }
            return null;
          });
    } catch (StoreIOException e) {
      // Every request runs alone below, with its own retries.
    }
    List<Object> result = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      if (!done[i]) {
        int k = i;
        out[i] = call(op, () -> script.run(ns.client, keys.get(k), args.get(k)));
      }
      result.add(out[i]);
    }
    return result;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    int j = shardOf(key);
    return call("get", () -> ns.client.hget(valuesKey(j), key));
  }

  private void checkLock() {
    if (ns.lockLost()) {
      throw new StoreIOException(
          info().describe()
              + ": lost the store's lock key to another client (it expired while this client was"
              + " cut off); close and reopen",
          (Throwable) null);
    }
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    checkLock();
    int j = shardOf(key);
    List<byte[]> keys = List.of(valuesKey(j), indexKey(j), unusedListKey(j));
    List<byte[]> args = List.of(key, value, NONE, NONE);
    call("put", () -> RedisStore.PUT.run(ns.client, keys, args));
  }

  @Override
  protected void doDelete(byte[] key) {
    checkLock();
    int j = shardOf(key);
    List<byte[]> keys = List.of(valuesKey(j), indexKey(j), unusedListKey(j));
    List<byte[]> args = List.of(key, NONE, NONE);
    call("delete", () -> RedisStore.DELETE.run(ns.client, keys, args));
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    checkLock();
    int j = shardOf(key);
    byte[] marker = ns.newMarker(tags[j]);
    List<byte[]> args =
        List.of(
            key,
            RedisStore.bytes(expected == null ? "a" : "v"),
            expected == null ? NONE : expected,
            RedisStore.bytes(value == null ? "d" : "p"),
            value == null ? NONE : value,
            ns.markerTtl,
            NONE,
            NONE);
    List<byte[]> keys = List.of(valuesKey(j), indexKey(j), unusedListKey(j), marker);
    Object r = call("conditional write", () -> RedisStore.CAS.run(ns.client, keys, args));
    return r instanceof Long l && l == 1;
  }

  @Override
  @SuppressWarnings("unchecked")
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    // Group by shard (in chunks), one pipelined script per group, then put answers back in order.
    List<List<Integer>> positions = new ArrayList<>();
    List<List<byte[]>> scriptKeys = new ArrayList<>();
    List<List<byte[]>> scriptArgs = new ArrayList<>();
    Map<Integer, Integer> open = new LinkedHashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      int j = shardOf(keys.get(i));
      Integer g = open.get(j);
      if (g == null || scriptArgs.get(g).size() == GET_ALL_CHUNK) {
        g = positions.size();
        open.put(j, g);
        positions.add(new ArrayList<>());
        scriptKeys.add(List.of(valuesKey(j)));
        scriptArgs.add(new ArrayList<>());
      }
      positions.get(g).add(i);
      scriptArgs.get(g).add(keys.get(i));
    }
    List<Object> replies = runAll("getAll", GET_ALL, scriptKeys, scriptArgs);
    byte[][] values = new byte[keys.size()][];
    for (int g = 0; g < replies.size(); g++) {
      List<byte[]> got = (List<byte[]>) replies.get(g);
      List<Integer> at = positions.get(g);
      for (int i = 0; i < at.size(); i++) {
        values[at.get(i)] = got.get(i);
      }
    }
    List<byte[]> result = new ArrayList<>(keys.size());
    for (byte[] v : values) {
      result.add(v);
    }
    return result;
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    throw new UnsupportedOperationException(
        "engine 'redis-sharded' does not support ATOMIC_BATCH: a batch's keys spread over shards on"
            + " different primaries, which Redis cannot write atomically");
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new ShardedCursor(this, range, ns.settings.fetchSize());
  }

  /** Pages of several shards at once, pipelined: keys and values alternating, per request. */
  @SuppressWarnings("unchecked")
  List<List<Object>> pages(int[] shard, byte[][] min, byte[][] max, int count, boolean reverse) {
    List<List<byte[]>> keys = new ArrayList<>();
    List<List<byte[]>> args = new ArrayList<>();
    byte[] c = RedisStore.bytes(Integer.toString(count));
    byte[] r = RedisStore.bytes(reverse ? "1" : "0");
    for (int i = 0; i < shard.length; i++) {
      keys.add(List.of(valuesKey(shard[i]), indexKey(shard[i])));
      args.add(List.of(min[i], max[i], c, r));
    }
    List<List<Object>> out = new ArrayList<>();
    for (Object o : runAll("scan", RedisStore.PAGE, keys, args)) {
      out.add((List<Object>) o);
    }
    return out;
  }

  @Override
  protected void doSync() {
    if (ns.fsyncAlways || !ns.settings.verifyDurability()) {
      return;
    }
    throw new StoreIOException(
        info().describe()
            + ": sync() cannot force an fsync: a node runs appendfsync everysec/no and this"
            + " engine does not use WAITAOF (Redis 7.2+); set appendfsync always or open with"
            + " verify-durability=false",
        (Throwable) null);
  }

  @Override
  @SuppressWarnings("unchecked")
  protected StoreStats doStats() {
    List<List<byte[]>> keys = new ArrayList<>();
    List<List<byte[]>> args = new ArrayList<>();
    for (int j = 0; j < shards; j++) {
      keys.add(List.of(valuesKey(j), indexKey(j)));
      args.add(List.of());
    }
    long count = 0;
    long memory = 0;
    for (Object o : runAll("stats", STATS, keys, args)) {
      List<Long> shard = (List<Long>) o;
      count += shard.get(0);
      memory += shard.get(1) + shard.get(2);
    }
    Map<String, Number> figures = new LinkedHashMap<>();
    figures.put("memory", memory);
    figures.put("shards", shards);
    figures.put("retries", ns.retries.get());
    return new StoreStats(count, true, memory, figures);
  }

  @Override
  protected void doClose() {
    ns.close();
  }
}
