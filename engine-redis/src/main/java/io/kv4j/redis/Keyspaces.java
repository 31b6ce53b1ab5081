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

  /**
   * A conditional batch ({@code writeIf}): {@link #BATCH} with its conditions checked first, in the
   * same script, so no other client's write falls between the check and the apply. KEYS as {@link
   * #BATCH}, then this call's done-marker last. ARGV[1]: m spaces, then per space its name,
   * generation and mode: {@code m} and {@code c} as in {@link #BATCH}, or {@code n} (named by
   * conditions only and not listed: must still be absent, its keys are never read); then the
   * marker's lifetime in ms, the number of conditions and four arguments per condition: space j,
   * key, {@code a} (must be absent) or {@code v} (must hold the value), value; then the operations
   * as in {@link #BATCH}. Answers 1 applied, 0 a condition failed (nothing changed, no marker), -j
   * as {@link #BATCH}. A marker that exists means this very call already applied (its reply was
   * lost and the client retried): answer 1 again without writing twice.
   */
  private static final Script BATCH_IF =
      new Script(
          "if redis.call('EXISTS', KEYS[#KEYS]) == 1 then return 1 end"
              + " local m = tonumber(ARGV[1])"
              + " for j = 1, m do local n = ARGV[3*j-1] if n ~= '' then"
              + " local g = redis.call('HGET', KEYS[1], n)"
              + " if g then if g ~= ARGV[3*j] then return -j end"
              + " elseif ARGV[3*j+1] == 'm' then return -j end end end"
              + " local o = 3*m+4 local e = o + 4 * tonumber(ARGV[3*m+3])"
              + " for i = o, e - 1, 4 do local j = tonumber(ARGV[i]) local v = false"
              + " if ARGV[3*j+1] ~= 'n' then v = redis.call('HGET', KEYS[2*j], ARGV[i+1]) end"
              + " if ARGV[i+2] == 'a' then if v then return 0 end"
              + " elseif v ~= ARGV[i+3] then return 0 end end"
              + " for j = 1, m do if ARGV[3*j-1] ~= '' and ARGV[3*j+1] == 'c' then"
              + " redis.call('HSETNX', KEYS[1], ARGV[3*j-1], ARGV[3*j]) end end"
              + " for i = e, #ARGV, 4 do local j = tonumber(ARGV[i+1])"
              + " if ARGV[i] == 'p' then redis.call('HSET', KEYS[2*j], ARGV[i+2], ARGV[i+3]);"
              + " redis.call('ZADD', KEYS[2*j+1], 0, ARGV[i+2])"
              + " else redis.call('HDEL', KEYS[2*j], ARGV[i+2]);"
              + " redis.call('ZREM', KEYS[2*j+1], ARGV[i+2]) end end"
              + " redis.call('SET', KEYS[#KEYS], '1', 'PX', ARGV[3*m+2]) return 1");

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
    run(handle, batch, null);
  }

  /**
   * Writes a batch with conditions through {@code handle} if every condition holds, in one script;
   * {@code marker} is this call's done-marker (every retry of the call sends the same).
   *
   * @return whether the conditions held and the batch applied
   */
  boolean writeIf(RedisStore handle, WriteBatch batch, byte[] marker) {
    return run(handle, batch, marker);
  }

  /**
   * Runs {@link #BATCH}, or {@link #BATCH_IF} with its conditions when {@code marker} is given (the
   * done-marker every retry of this call sends), resolving the keyspaces again when another client
   * dropped or created one meanwhile.
   */
  private boolean run(RedisStore handle, WriteBatch batch, byte[] marker) {
    boolean conditional = marker != null;
    for (int attempt = 1; ; attempt++) {
      Map<String, Integer> index = new LinkedHashMap<>();
      List<byte[]> keys = new ArrayList<>();
      List<byte[]> args = new ArrayList<>();
      keys.add(ns.spacesKey);
      args.add(null); // the number of spaces, once known
      Map<String, String> generations = resolve(handle, batch, conditional);
      for (int i = 0, n = batch.size(); i < n; i++) {
        addSpace(handle, operationSpace(handle, batch, i), generations, index, keys, args);
      }
      int conditions = conditional ? batch.conditionCount() : 0;
      for (int i = 0; i < conditions; i++) {
        addSpace(handle, handle.conditionSpaceOf(batch, i), generations, index, keys, args);
      }
      args.set(0, RedisStore.bytes(Integer.toString(index.size())));
      if (conditional) {
        args.add(ns.markerTtl);
        args.add(RedisStore.bytes(Integer.toString(conditions)));
        for (int i = 0; i < conditions; i++) {
          byte[] expected = batch.conditionValue(i);
          args.add(spaceNumber(index, handle.conditionSpaceOf(batch, i)));
          args.add(batch.conditionKey(i));
          args.add(new byte[] {expected == null ? (byte) 'a' : (byte) 'v'});
          args.add(expected == null ? new byte[0] : expected);
        }
        keys.add(marker);
      }
      addOperations(handle, batch, index, args);
      Script script = conditional ? BATCH_IF : BATCH;
      String what =
          (conditional ? "conditional batch of " : "batch of ") + batch.size() + " operations";
      long r = (Long) handle.call(what, () -> script.run(ns.client, keys, args));
      if (r >= 0) {
        return r == 1;
      }
      String failed = new ArrayList<>(index.keySet()).get((int) -r - 1);
      if (failed.equals(handle.space() == null ? "" : handle.space())
          || attempt == RESOLVE_ATTEMPTS) {
        throw handle.dropped();
      }
    }
  }

  /** The keyspace operation {@code i} writes to (null: the store's own keys). */
  private static String operationSpace(RedisStore handle, WriteBatch batch, int i) {
    return batch.namesKeyspaces() ? handle.spaceOf(batch, i) : handle.space();
  }

  private static byte[] spaceNumber(Map<String, Integer> index, String space) {
    return RedisStore.bytes(Integer.toString(index.get(space == null ? "" : space)));
  }

  /** The operations as script arguments, four each: p or d, space number, key, value. */
  private static void addOperations(
      RedisStore handle, WriteBatch batch, Map<String, Integer> index, List<byte[]> args) {
    byte[] p = {'p'};
    byte[] d = {'d'};
    byte[] none = {};
    for (int i = 0, n = batch.size(); i < n; i++) {
      boolean del = batch.isDelete(i);
      args.add(del ? d : p);
      args.add(spaceNumber(index, operationSpace(handle, batch, i)));
      args.add(batch.key(i));
      args.add(del ? none : batch.value(i));
    }
  }

  /**
   * Adds a space's keys and its name, generation and mode to the script's, unless already added.
   */
  private void addSpace(
      RedisStore handle,
      String space,
      Map<String, String> generations,
      Map<String, Integer> index,
      List<byte[]> keys,
      List<byte[]> args) {
    if (index.putIfAbsent(space == null ? "" : space, index.size() + 1) != null) {
      return;
    }
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
      // Listed: as it is; "+n": absent, the batch creates it; "": absent, named by conditions only.
      byte mode = g.isEmpty() ? (byte) 'n' : g.startsWith("+") ? (byte) 'c' : (byte) 'm';
      String gen = mode == 'c' ? g.substring(1) : g;
      // An unlisted space's keys are never read; they only keep the KEYS layout (and its slot).
      keys.add(valuesKey(ns, space, mode == 'n' ? "0" : gen));
      keys.add(indexKey(ns, space, mode == 'n' ? "0" : gen));
      args.add(RedisStore.bytes(space));
      args.add(RedisStore.bytes(gen));
      args.add(new byte[] {mode});
    }
  }

  /**
   * The generations of the keyspaces a batch names besides the handle's own: listed ones as they
   * are; absent ones its operations write as {@code +<new generation>} (to be created by the
   * batch's script); absent ones only its conditions name (when {@code conditional}) as {@code ""}.
   */
  private Map<String, String> resolve(RedisStore handle, WriteBatch batch, boolean conditional) {
    Map<String, String> generations = new HashMap<>();
    List<String> names = new ArrayList<>();
    for (int i = 0, n = batch.namesKeyspaces() ? batch.size() : 0; i < n; i++) {
      addName(handle, handle.spaceOf(batch, i), names);
    }
    int written = names.size();
    for (int i = 0, n = conditional ? batch.conditionCount() : 0; i < n; i++) {
      addName(handle, handle.conditionSpaceOf(batch, i), names);
    }
    if (names.isEmpty()) {
      return generations;
    }
    byte[][] fields = new byte[names.size()][];
    for (int i = 0; i < fields.length; i++) {
      fields[i] = RedisStore.bytes(names.get(i));
    }
    List<byte[]> got = handle.call("batch", () -> ns.client.hmget(ns.spacesKey, fields));
    long absent = got.subList(0, written).stream().filter(g -> g == null).count();
    long top =
        absent == 0
            ? 0
            : handle.call(
                "batch",
                () ->
                    ns.client.hincrBy(ns.metaKey, RedisStore.bytes("keyspace-generation"), absent));
    long next = top - absent + 1;
    for (int i = 0; i < fields.length; i++) {
      byte[] g = got.get(i);
      String gen;
      if (g != null) {
        gen = new String(g, StandardCharsets.UTF_8);
      } else {
        gen = i < written ? "+" + next++ : "";
      }
      generations.put(names.get(i), gen);
    }
    return generations;
  }

  private static void addName(RedisStore handle, String space, List<String> names) {
    if (space != null && !space.equals(handle.space()) && !names.contains(space)) {
      names.add(space);
    }
  }
}
