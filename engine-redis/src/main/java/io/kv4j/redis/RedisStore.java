package io.kv4j.redis;

import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
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
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A store kept under one hash-tagged namespace on Redis, or one of its keyspaces (a handle with its
 * own hash and index keys under the same tag, so every script spans the store and all its keyspaces
 * in one slot).
 */
final class RedisStore extends AbstractStore {
  /**
   * Lua lines that stop a script writing into a keyspace that was dropped (or dropped and created
   * again) since the handle opened: KEYS[3] is the keyspace list; the keyspace's name and
   * generation are ARGV[n] and ARGV[n+1] (an empty name: the store's own keys, always there).
   */
  private static String listed(int n) {
    return "if ARGV["
        + n
        + "] ~= '' and redis.call('HGET', KEYS[3], ARGV["
        + n
        + "]) ~= ARGV["
        + (n + 1)
        + "] then return -1 end ";
  }

  /** KEYS: values, index, list. ARGV: key, value, keyspace name, generation. */
  static final Script PUT =
      new Script(
          listed(3)
              + "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]);"
              + " redis.call('ZADD', KEYS[2], 0, ARGV[1]); return 1");

  /** KEYS: values, index, list. ARGV: key, keyspace name, generation. */
  static final Script DELETE =
      new Script(
          listed(2)
              + "redis.call('HDEL', KEYS[1], ARGV[1]); redis.call('ZREM', KEYS[2], ARGV[1]);"
              + " return 1");

  /**
   * Compare-and-set of one key, with the index kept in step, in one script (so atomic against every
   * other client of the server). KEYS: values, index, list, this call's done-marker. ARGV: key,
   * {@code a} (must be absent) or {@code v} (must hold ARGV[3]), expected, {@code p} (store
   * ARGV[5]) or {@code d} (delete), value, marker lifetime in ms, keyspace name, generation. A
   * marker that exists means this very call already succeeded (its reply was lost and the client
   * retried): answer 1 again without writing twice. A failed comparison changes nothing and sets no
   * marker, so retrying it is simply a later attempt.
   */
  static final Script CAS =
      new Script(
          "if redis.call('EXISTS', KEYS[4]) == 1 then return 1 end "
              + listed(7)
              + " local v = redis.call('HGET', KEYS[1], ARGV[1])"
              + " if ARGV[2] == 'a' then if v then return 0 end"
              + " elseif v ~= ARGV[3] then return 0 end"
              + " if ARGV[4] == 'p' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[5]);"
              + " redis.call('ZADD', KEYS[2], 0, ARGV[1])"
              + " else redis.call('HDEL', KEYS[1], ARGV[1]); redis.call('ZREM', KEYS[2], ARGV[1])"
              + " end"
              + " redis.call('SET', KEYS[4], '1', 'PX', ARGV[6]) return 1");

  static final Script PAGE =
      new Script(
          "local ks; if ARGV[4] == '1' then"
              + " ks = redis.call('ZREVRANGEBYLEX', KEYS[2], ARGV[2], ARGV[1], 'LIMIT', 0, ARGV[3])"
              + " else ks = redis.call('ZRANGEBYLEX', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0,"
              + " ARGV[3]) end"
              + " if #ks == 0 then return {} end"
              + " local vs = redis.call('HMGET', KEYS[1], unpack(ks)); local out = {}"
              + " for i = 1, #ks do out[2*i-1] = ks[i]; out[2*i] = vs[i] end return out");

  /** Keys per {@code HMGET} of {@link #doGetAll}: bounds one command's size (keys ≤ 4 KiB). */
  private static final int GET_ALL_CHUNK = 1000;

  private final Namespace ns;
  private final Keyspaces spaces;
  final byte[] valuesKey;
  final byte[] indexKey;

  /** This handle's keyspace name and generation as script arguments; empty for the store. */
  private final byte[] spaceArg;

  private final byte[] genArg;

  private RedisStore(StoreInfo info, Namespace ns) {
    super(info);
    this.ns = ns;
    this.spaces = new Keyspaces(this, ns);
    this.valuesKey = ns.key("v");
    this.indexKey = ns.key("i");
    this.spaceArg = new byte[0];
    this.genArg = new byte[0];
  }

  /** A keyspace handle on {@code store}. */
  RedisStore(RedisStore store, String name, String generation) {
    super(store, name);
    this.ns = store.ns;
    this.spaces = store.spaces;
    this.valuesKey = Keyspaces.valuesKey(ns, name, generation);
    this.indexKey = Keyspaces.indexKey(ns, name, generation);
    this.spaceArg = bytes(name);
    this.genArg = bytes(generation);
  }

  static RedisStore open(StoreConfig config, RedisSettings s) {
    String location = Namespace.location("redis", config, s);
    Namespace ns = Namespace.open(config, s, "engine 'redis' at " + location, "kv4j-redis 1");
    StoreInfo info =
        new StoreInfo(
            "redis",
            RedisProvider.FEATURES,
            RedisProvider.LIMITS,
            config.durability(),
            location,
            config.readOnly());
    return new RedisStore(info, ns);
  }

  // ------------------------------------------------------------------------------ operations

  static boolean retryable(JedisException e) {
    if (e instanceof JedisConnectionException || e instanceof JedisClusterOperationException) {
      return true;
    }
    String m = e.getMessage();
    return m != null
        && (m.startsWith("LOADING")
            || m.startsWith("CLUSTERDOWN")
            || m.startsWith("TRYAGAIN")
            || m.startsWith("MASTERDOWN"));
  }

  /** Runs a call, retrying on a lost connection until retry-timeout; every call is idempotent. */
  <T> T call(String op, Supplier<T> work) {
    return retrying(info(), ns, this::checkOpen, this::isClosed, op, work);
  }

  /**
   * The retry loop of every call to Redis, the standalone store's and the sharded one's: runs
   * {@code work}, and on a lost connection retries with a growing pause until the namespace's
   * retry-timeout; a store closed meanwhile stops it with its closed error.
   */
  static <T> T retrying(
      StoreInfo info,
      Namespace ns,
      Runnable checkOpen,
      BooleanSupplier closed,
      String op,
      Supplier<T> work) {
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ns.settings.retryTimeoutMillis());
    int attempt = 0;
    while (true) {
      checkOpen.run();
      try {
        return work.get();
      } catch (JedisException e) {
        if (closed.getAsBoolean()) {
          checkOpen.run();
        }
        if (!retryable(e) || System.nanoTime() - deadline > 0) {
          throw failure(info, ns, op, e);
        }
        ns.retries.incrementAndGet();
        pause(Math.min(1000, 25L << Math.min(attempt++, 6)));
      }
    }
  }

  StoreIOException failure(String op, Exception e) {
    return failure(info(), ns, op, e);
  }

  static StoreIOException failure(StoreInfo info, Namespace ns, String op, Exception e) {
    return new StoreIOException(
        info.describe() + ": " + op + " failed on " + ns.settings.address() + ": " + describe(e),
        e);
  }

  static String describe(Throwable e) {
    StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      sb.append("; caused by ")
          .append(c.getClass().getSimpleName())
          .append(": ")
          .append(c.getMessage());
    }
    return sb.toString();
  }

  void checkLock() {
    if (ns.lockLost()) {
      throw new StoreIOException(
          info().describe()
              + ": lost the store's lock key to another client (it expired while this client was"
              + " cut off); close and reopen",
          (Throwable) null);
    }
  }

  /** Answers a script's reply, or throws when it found this handle's keyspace dropped. */
  Object written(Object reply) {
    if (reply instanceof Long l && l == -1) {
      throw dropped();
    }
    return reply;
  }

  StoreClosedException dropped() {
    return new StoreClosedException(
        info().describe()
            + ": keyspace '"
            + keyspaceName()
            + "' was dropped (by this or another client) since this handle opened; open it again");
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return call("get", () -> ns.client.hget(valuesKey, key));
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    checkLock();
    List<byte[]> keys = List.of(valuesKey, indexKey, ns.spacesKey);
    List<byte[]> args = List.of(key, value, spaceArg, genArg);
    written(call("put", () -> PUT.run(ns.client, keys, args)));
  }

  @Override
  protected void doDelete(byte[] key) {
    checkLock();
    List<byte[]> keys = List.of(valuesKey, indexKey, ns.spacesKey);
    List<byte[]> args = List.of(key, spaceArg, genArg);
    written(call("delete", () -> DELETE.run(ns.client, keys, args)));
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    return compareAndSet(key, expected, value, ns.newMarker());
  }

  /**
   * The compare-and-set with its done-marker key given: every retry of one call sends the same
   * marker, so a retry after a lost reply answers true without applying the write a second time.
   */
  boolean compareAndSet(byte[] key, byte[] expected, byte[] value, byte[] marker) {
    checkLock();
    byte[] none = {};
    List<byte[]> args =
        List.of(
            key,
            bytes(expected == null ? "a" : "v"),
            expected == null ? none : expected,
            bytes(value == null ? "d" : "p"),
            value == null ? none : value,
            ns.markerTtl,
            spaceArg,
            genArg);
    List<byte[]> keys = List.of(valuesKey, indexKey, ns.spacesKey, marker);
    Object r = written(call("conditional write", () -> CAS.run(ns.client, keys, args)));
    return r instanceof Long l && l == 1;
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    List<byte[]> values = new ArrayList<>(keys.size());
    for (int from = 0; from < keys.size(); from += GET_ALL_CHUNK) {
      byte[][] chunk =
          keys.subList(from, Math.min(keys.size(), from + GET_ALL_CHUNK)).toArray(new byte[0][]);
      List<byte[]> got = call("getAll", () -> ns.client.hmget(valuesKey, chunk));
      if (got == null || got.size() != chunk.length) {
        throw failure(
            "getAll",
            new IllegalStateException(
                "HMGET of "
                    + chunk.length
                    + " fields answered "
                    + (got == null ? "nothing" : got.size() + " values")));
      }
      values.addAll(got);
    }
    return values;
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    checkLock();
    spaces.write(this, batch);
  }

  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    return conditionalBatch(batch, ns.newMarker());
  }

  /**
   * The conditional batch with its done-marker key given: every retry of one call sends the same
   * marker, so a retry after a lost reply answers true without applying the batch a second time.
   */
  boolean conditionalBatch(WriteBatch batch, byte[] marker) {
    checkLock();
    return spaces.writeIf(this, batch, marker);
  }

  /** This handle's keyspace name, as a script argument (empty: the store's own keys). */
  byte[] spaceArg() {
    return spaceArg;
  }

  /** This handle's keyspace name, or null for the store. */
  String space() {
    return keyspaceName();
  }

  byte[] genArg() {
    return genArg;
  }

  /** The keyspace of batch operation {@code i}, resolved (null: the store's own keys). */
  String spaceOf(WriteBatch batch, int i) {
    return keyspaceOf(batch, i);
  }

  /** The keyspace batch condition {@code i} reads, resolved (null: the store's own keys). */
  String conditionSpaceOf(WriteBatch batch, int i) {
    return conditionKeyspaceOf(batch, i);
  }

  /** One page of a scan, read atomically: keys and values alternating. */
  @SuppressWarnings("unchecked")
  List<Object> page(byte[] min, byte[] max, int count, boolean reverse) {
    return (List<Object>)
        call(
            "scan",
            () ->
                PAGE.run(
                    ns.client,
                    List.of(valuesKey, indexKey),
                    List.of(min, max, bytes(Integer.toString(count)), bytes(reverse ? "1" : "0"))));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new RedisCursor(this, range, ns.settings.fetchSize());
  }

  @Override
  protected AbstractStore doKeyspace(String name) {
    return spaces.open(name, info().readOnly());
  }

  @Override
  protected List<String> doKeyspaces() {
    return spaces.names();
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    checkLock();
    return spaces.drop(name);
  }

  @Override
  protected void doSync() {
    if (ns.fsyncAlways || !ns.settings.verifyDurability()) {
      return; // every acknowledged write was fsynced by the server (or the user waived the check)
    }
    throw new StoreIOException(
        info().describe()
            + ": sync() cannot force an fsync: the server runs appendfsync everysec/no and this"
            + " engine does not use WAITAOF (Redis 7.2+); set appendfsync always or open with"
            + " verify-durability=false",
        (Throwable) null);
  }

  @Override
  protected StoreStats doStats() {
    return call(
        "stats",
        () -> {
          long count = ns.client.hlen(valuesKey);
          Long v = ns.client.memoryUsage(valuesKey);
          Long i = ns.client.memoryUsage(indexKey);
          long vb = v == null ? 0 : v;
          long ib = i == null ? 0 : i;
          Map<String, Number> figures = new LinkedHashMap<>();
          figures.put("memory.values", vb);
          figures.put("memory.index", ib);
          figures.put("retries", ns.retries.get());
          return new StoreStats(count, true, vb + ib, figures);
        });
  }

  @Override
  protected void doClose() {
    if (keyspaceName() == null) {
      ns.close(); // a keyspace handle holds nothing of its own: the store's client serves it
    }
  }

  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreIOException("interrupted while waiting to retry", e);
    }
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
