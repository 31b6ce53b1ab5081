package io.kv4j.redis;

import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The keyspaces of one store: a hash {@code {ns}:spaces} of name → generation, and per keyspace a
 * values hash {@code {ns}:k:<name>:<generation>:v} and index {@code {ns}:k:<name>:<generation>:i}
 * under the store's hash tag, so one script spans the store and every keyspace (one slot in a
 * cluster). The generation is new each time a name is created, so a call still in flight on a
 * handle of a dropped keyspace cannot write into a keyspace of the same name created after the
 * drop: every write script checks the handle's generation is still the listed one.
 */
final class Keyspaces {
  /**
   * Creates a keyspace unless listed; answers its generation. KEYS: list, meta. ARGV: name.
   * Idempotent, so a retry after a lost reply answers the generation the first run made.
   */
  private static final Script CREATE =
      new Script(
          "local g = redis.call('HGET', KEYS[1], ARGV[1]) if g then return g end"
              + " g = tostring(redis.call('HINCRBY', KEYS[2], 'keyspace-generation', 1))"
              + " redis.call('HSET', KEYS[1], ARGV[1], g) return g");

  /**
   * Drops one generation of a keyspace: unlists it and {@code UNLINK}s its two keys in one script
   * (so a crash never leaves it half-dropped and listed), which frees their memory in a background
   * thread of the server instead of blocking it for the size of the keyspace. KEYS: list, values,
   * index, done-marker. ARGV: name, generation, marker lifetime. Answers 1 dropped, 0 not listed,
   * -1 listed with another generation (created again meanwhile: read it again).
   */
  private static final Script DROP =
      new Script(
          "if redis.call('EXISTS', KEYS[4]) == 1 then return 1 end"
              + " local g = redis.call('HGET', KEYS[1], ARGV[1]) if not g then return 0 end"
              + " if g ~= ARGV[2] then return -1 end"
              + " redis.call('HDEL', KEYS[1], ARGV[1]); redis.call('UNLINK', KEYS[2], KEYS[3])"
              + " redis.call('SET', KEYS[4], '1', 'PX', ARGV[3]) return 1");

  /**
   * An atomic batch over the store's own keys and any of its keyspaces. KEYS[1]: list; KEYS[2j],
   * KEYS[2j+1]: values and index of space j. ARGV[1]: m spaces, then per space its name (empty: the
   * store's own keys), generation and {@code m} (must be listed with it) or {@code c} (may be
   * absent: create it with it); then the operations, four arguments each: {@code p} or {@code d},
   * space j, key, value. Every check runs before any write, so a failed check (answered as -j)
   * changes nothing.
   */
  private static final Script BATCH =
      new Script(
          "local m = tonumber(ARGV[1])"
              + " for j = 1, m do local n = ARGV[3*j-1] if n ~= '' then"
              + " local g = redis.call('HGET', KEYS[1], n)"
              + " if g then if g ~= ARGV[3*j] then return -j end"
              + " elseif ARGV[3*j+1] ~= 'c' then return -j end end end"
              + " for j = 1, m do if ARGV[3*j-1] ~= '' and ARGV[3*j+1] == 'c' then"
              + " redis.call('HSETNX', KEYS[1], ARGV[3*j-1], ARGV[3*j]) end end"
              + " for i = 3*m+2, #ARGV, 4 do local j = tonumber(ARGV[i+1])"
              + " if ARGV[i] == 'p' then redis.call('HSET', KEYS[2*j], ARGV[i+2], ARGV[i+3]);"
              + " redis.call('ZADD', KEYS[2*j+1], 0, ARGV[i+2])"
              + " else redis.call('HDEL', KEYS[2*j], ARGV[i+2]);"
              + " redis.call('ZREM', KEYS[2*j+1], ARGV[i+2]) end end return 1");

  /** How often a batch resolves its keyspaces again after another client changed them. */
  private static final int RESOLVE_ATTEMPTS = 10;

  private final RedisStore store;
  private final Namespace ns;

  Keyspaces(RedisStore store, Namespace ns) {
    this.store = store;
    this.ns = ns;
  }

  static byte[] valuesKey(Namespace ns, String name, String generation) {
    return ns.key("k:" + name + ":" + generation + ":v");
  }

  static byte[] indexKey(Namespace ns, String name, String generation) {
    return ns.key("k:" + name + ":" + generation + ":i");
  }

  RedisStore open(String name, boolean readOnly) {
    byte[] n = RedisStore.bytes(name);
    byte[] g;
    if (readOnly) {
      g = store.call("keyspace", () -> ns.client.hget(ns.spacesKey, n));
      if (g == null) {
        throw new UnsupportedOperationException(
            store.info().describe() + " is open read-only and has no keyspace '" + name + "'");
      }
    } else {
      store.checkLock();
      g =
          (byte[])
              store.call(
                  "create keyspace",
                  () -> CREATE.run(ns.client, List.of(ns.spacesKey, ns.metaKey), List.of(n)));
    }
    return new RedisStore(store, name, new String(g, StandardCharsets.UTF_8));
  }

  List<String> names() {
    List<String> names = new ArrayList<>();
    for (byte[] n : store.call("keyspaces", () -> ns.client.hkeys(ns.spacesKey))) {
      names.add(new String(n, StandardCharsets.UTF_8));
    }
    return names;
  }

  boolean drop(String name) {
    byte[] n = RedisStore.bytes(name);
    byte[] marker = ns.newMarker();
    while (true) {
      byte[] g = store.call("drop keyspace", () -> ns.client.hget(ns.spacesKey, n));
      if (g == null) {
        return false;
      }
      String gen = new String(g, StandardCharsets.UTF_8);
      List<byte[]> keys =
          List.of(ns.spacesKey, valuesKey(ns, name, gen), indexKey(ns, name, gen), marker);
      List<byte[]> args = List.of(n, g, ns.markerTtl);
      long r = (Long) store.call("drop keyspace", () -> DROP.run(ns.client, keys, args));
      if (r >= 0) {
        return r == 1;
      }
    }
  }

  /** Writes a batch through {@code handle}, the store or one of its keyspace handles. */
  void write(RedisStore handle, WriteBatch batch) {
    for (int attempt = 1; ; attempt++) {
      Map<String, Integer> index = new LinkedHashMap<>();
      List<byte[]> keys = new ArrayList<>();
      List<byte[]> args = new ArrayList<>();
      keys.add(ns.spacesKey);
      args.add(null); // the number of spaces, once known
      Map<String, String> generations = resolve(handle, batch);
      for (int i = 0, n = batch.size(); i < n; i++) {
        String space = batch.namesKeyspaces() ? handle.spaceOf(batch, i) : handle.space();
        String k = space == null ? "" : space;
        if (!index.containsKey(k)) {
          index.put(k, index.size() + 1);
          addSpace(handle, space, generations, keys, args);
        }
      }
      args.set(0, RedisStore.bytes(Integer.toString(index.size())));
      byte[] p = {'p'};
      byte[] d = {'d'};
      byte[] none = {};
      for (int i = 0, n = batch.size(); i < n; i++) {
        String space = batch.namesKeyspaces() ? handle.spaceOf(batch, i) : handle.space();
        boolean del = batch.isDelete(i);
        args.add(del ? d : p);
        args.add(RedisStore.bytes(Integer.toString(index.get(space == null ? "" : space))));
        args.add(batch.key(i));
        args.add(del ? none : batch.value(i));
      }
      long r =
          (Long)
              handle.call(
                  "batch of " + batch.size() + " operations",
                  () -> BATCH.run(ns.client, keys, args));
      if (r == 1) {
        return;
      }
      String failed = new ArrayList<>(index.keySet()).get((int) -r - 1);
      if (failed.equals(handle.space()) || attempt == RESOLVE_ATTEMPTS) {
        throw handle.dropped();
      }
    }
  }

  private void addSpace(
      RedisStore handle,
      String space,
      Map<String, String> generations,
      List<byte[]> keys,
      List<byte[]> args) {
    if (space == null) {
      keys.add(store.valuesKey);
      keys.add(store.indexKey);
      args.add(new byte[0]);
      args.add(new byte[0]);
      args.add(new byte[] {'m'});
    } else if (space.equals(handle.space())) {
      keys.add(handle.valuesKey);
      keys.add(handle.indexKey);
      args.add(handle.spaceArg());
      args.add(handle.genArg());
      args.add(new byte[] {'m'});
    } else {
      String g = generations.get(space);
      boolean listed = !g.startsWith("+");
      String gen = listed ? g : g.substring(1);
      keys.add(valuesKey(ns, space, gen));
      keys.add(indexKey(ns, space, gen));
      args.add(RedisStore.bytes(space));
      args.add(RedisStore.bytes(gen));
      args.add(new byte[] {listed ? (byte) 'm' : (byte) 'c'});
    }
  }

  /**
   * The generations of the keyspaces a batch names besides the handle's own: listed ones as they
   * are, absent ones as {@code +<new generation>} (to be created by the batch's script).
   */
  private Map<String, String> resolve(RedisStore handle, WriteBatch batch) {
    Map<String, String> generations = new HashMap<>();
    if (!batch.namesKeyspaces()) {
      return generations;
    }
    List<String> names = new ArrayList<>();
    for (int i = 0, n = batch.size(); i < n; i++) {
      String space = handle.spaceOf(batch, i);
      if (space != null && !space.equals(handle.space()) && !names.contains(space)) {
        names.add(space);
      }
    }
    if (names.isEmpty()) {
      return generations;
    }
    byte[][] fields = new byte[names.size()][];
    for (int i = 0; i < fields.length; i++) {
      fields[i] = RedisStore.bytes(names.get(i));
    }
    List<byte[]> got = handle.call("batch", () -> ns.client.hmget(ns.spacesKey, fields));
    int absent = 0;
    for (byte[] g : got) {
      absent += g == null ? 1 : 0;
    }
    long top =
        absent == 0
            ? 0
            : handle.call(
                "batch",
                () ->
                    ns.client.hincrBy(
                        ns.metaKey, RedisStore.bytes("keyspace-generation"), absentCount(got)));
    long next = top - absent + 1;
    for (int i = 0; i < fields.length; i++) {
      byte[] g = got.get(i);
      generations.put(
          names.get(i), g == null ? "+" + next++ : new String(g, StandardCharsets.UTF_8));
    }
    return generations;
  }

  private static long absentCount(List<byte[]> got) {
    return got.stream().filter(g -> g == null).count();
  }
}
