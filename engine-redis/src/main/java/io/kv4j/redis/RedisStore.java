package io.kv4j.redis;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/** A store kept under one hash-tagged namespace on Redis. */
final class RedisStore extends AbstractStore {
  private static final ScheduledExecutorService KEEPER =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kv4j-redis-lock-keeper");
            t.setDaemon(true);
            return t;
          });

  private static final Script PUT =
      new Script(
          "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]);"
              + " redis.call('ZADD', KEYS[2], 0, ARGV[1]); return 1");
  private static final Script DELETE =
      new Script(
          "redis.call('HDEL', KEYS[1], ARGV[1]); redis.call('ZREM', KEYS[2], ARGV[1]); return 1");
  private static final Script BATCH =
      new Script(
          "for i = 1, #ARGV, 3 do"
              + " if ARGV[i] == 'p' then redis.call('HSET', KEYS[1], ARGV[i+1], ARGV[i+2]);"
              + " redis.call('ZADD', KEYS[2], 0, ARGV[i+1])"
              + " else redis.call('HDEL', KEYS[1], ARGV[i+1]);"
              + " redis.call('ZREM', KEYS[2], ARGV[i+1]) end end return 1");

  /**
   * Compare-and-set of one key, with the index kept in step, in one script (so atomic against every
   * other client of the server). KEYS: values, index, this call's done-marker. ARGV: key, {@code a}
   * (must be absent) or {@code v} (must hold ARGV[3]), expected, {@code p} (store ARGV[5]) or
   * {@code d} (delete), value, marker lifetime in ms. A marker that exists means this very call
   * already succeeded (its reply was lost and the client retried): answer 1 again without writing
   * twice. A failed comparison changes nothing and sets no marker, so retrying it is simply a later
   * attempt.
   */
  static final Script CAS =
      new Script(
          "if redis.call('EXISTS', KEYS[3]) == 1 then return 1 end"
              + " local v = redis.call('HGET', KEYS[1], ARGV[1])"
              + " if ARGV[2] == 'a' then if v then return 0 end"
              + " elseif v ~= ARGV[3] then return 0 end"
              + " if ARGV[4] == 'p' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[5]);"
              + " redis.call('ZADD', KEYS[2], 0, ARGV[1])"
              + " else redis.call('HDEL', KEYS[1], ARGV[1]); redis.call('ZREM', KEYS[2], ARGV[1])"
              + " end"
              + " redis.call('SET', KEYS[3], '1', 'PX', ARGV[6]) return 1");

  static final Script PAGE =
      new Script(
          "local ks; if ARGV[4] == '1' then"
              + " ks = redis.call('ZREVRANGEBYLEX', KEYS[2], ARGV[2], ARGV[1], 'LIMIT', 0, ARGV[3])"
              + " else ks = redis.call('ZRANGEBYLEX', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0,"
              + " ARGV[3]) end"
              + " if #ks == 0 then return {} end"
              + " local vs = redis.call('HMGET', KEYS[1], unpack(ks)); local out = {}"
              + " for i = 1, #ks do out[2*i-1] = ks[i]; out[2*i] = vs[i] end return out");

  /**
   * Takes or refreshes the open lock. KEYS: the exclusive lock (a string holding its owner's
   * token), the shared holders (a sorted set of tokens scored by expiry, in server milliseconds).
   * ARGV: token, lifetime in ms, {@code x} (exclusive) or {@code s} (shared). Answers 1 when held,
   * 0 when an exclusive holder is in the way, -1 when shared holders are. Expired shared holders
   * (crashed clients) are dropped first; the set itself expires with its last holder.
   */
  private static final Script HOLD =
      new Script(
          "redis.replicate_commands()"
              + " local t = redis.call('TIME')"
              + " local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)"
              + " redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)"
              + " local x = redis.call('GET', KEYS[1])"
              + " if ARGV[3] == 'x' then"
              + " if x == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end"
              + " if x then return 0 end"
              + " if redis.call('ZCARD', KEYS[2]) > 0 then return -1 end"
              + " redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end"
              + " if x then return 0 end"
              + " redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])"
              + " local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')"
              + " redis.call('PEXPIREAT', KEYS[2], top[2]) return 1");

  /** Gives up the open lock, exclusive or shared. KEYS as {@link #HOLD}; ARGV: token. */
  private static final Script RELEASE =
      new Script(
          "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end"
              + " redis.call('ZREM', KEYS[2], ARGV[1]) return 1");

  /** Keys per {@code HMGET} of {@link #doGetAll}: bounds one command's size (keys ≤ 4 KiB). */
  private static final int GET_ALL_CHUNK = 1000;

  private final RedisSettings settings;
  private final UnifiedJedis client;
  final byte[] valuesKey;
  final byte[] indexKey;
  private final List<byte[]> lockKeys;
  private final byte[] token;
  private final byte[] lockArgMode;
  private final String markerPrefix;
  private final byte[] markerTtl;
  private final AtomicLong markers = new AtomicLong();
  private final boolean fsyncAlways;
  private final ScheduledFuture<?> keeper;
  private final AtomicLong retries = new AtomicLong();
  private volatile boolean lockLost;

  private RedisStore(
      StoreInfo info,
      RedisSettings settings,
      UnifiedJedis client,
      byte[] token,
      boolean fsyncAlways) {
    super(info);
    this.settings = settings;
    this.client = client;
    String tag = "{" + settings.namespace() + "}";
    this.valuesKey = bytes(tag + ":v");
    this.indexKey = bytes(tag + ":i");
    this.lockKeys = List.of(bytes(tag + ":lock"), bytes(tag + ":shared"));
    this.token = token;
    this.lockArgMode = bytes(settings.sharedLock() ? "s" : "x");
    this.markerPrefix = tag + ":c:" + new String(token, StandardCharsets.UTF_8) + ":";
    // A retry of a conditional write can come at most this long after the write ran: the call's
    // retry budget, twice (Jedis's cluster client retries inside one attempt, too), plus socket
    // timeouts and a margin.
    long ttl = 2L * (settings.retryTimeoutMillis() + settings.socketTimeoutMillis()) + 10_000;
    this.markerTtl = bytes(Long.toString(ttl));
    this.fsyncAlways = fsyncAlways;
    long period = Math.max(100, settings.lockTtlMillis() / 3);
    this.keeper =
        KEEPER.scheduleWithFixedDelay(this::keepLock, period, period, TimeUnit.MILLISECONDS);
  }

  static RedisStore open(StoreConfig config, RedisSettings s) {
    String location =
        "redis"
            + (s.cluster() ? "-cluster://" : "://")
            + s.address()
            + (s.cluster() ? "" : "/" + s.database())
            + " {"
            + s.namespace()
            + "} (store path "
            + config.path()
            + ")";
    String who = "engine 'redis' at " + location;
    DefaultJedisClientConfig.Builder cb =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(s.connectTimeoutMillis())
            .socketTimeoutMillis(s.socketTimeoutMillis())
            .clientName("kv4j");
    if (!s.user().isEmpty()) {
      cb.user(s.user());
    }
    if (!s.password().isEmpty()) {
      cb.password(s.password());
    }
    if (!s.cluster()) {
      cb.database(s.database());
    }
    JedisClientConfig cc = cb.build();
    ConnectionPoolConfig pc = new ConnectionPoolConfig();
    pc.setMaxTotal(s.poolSize());
    pc.setMaxIdle(s.poolSize());
    pc.setMinIdle(0);
    pc.setMaxWait(Duration.ofMillis(s.connectTimeoutMillis()));
    pc.setJmxEnabled(false);
    UnifiedJedis client = null;
    boolean ok = false;
    byte[] token = bytes(UUID.randomUUID().toString());
    String tag = "{" + s.namespace() + "}";
    List<byte[]> lockKeys = List.of(bytes(tag + ":lock"), bytes(tag + ":shared"));
    List<byte[]> lockArgs =
        List.of(
            token, bytes(Integer.toString(s.lockTtlMillis())), bytes(s.sharedLock() ? "s" : "x"));
    boolean locked = false;
    try {
      if (s.cluster()) {
        client =
            RedisClusterClient.builder()
                .nodes(s.nodes())
                .clientConfig(cc)
                .poolConfig(pc)
                .maxAttempts(5)
                .maxTotalRetriesDuration(Duration.ofMillis(s.retryTimeoutMillis()))
                .build();
      } else {
        client =
            RedisClient.builder()
                .hostAndPort(s.host(), s.port())
                .clientConfig(cc)
                .poolConfig(pc)
                .build();
      }
      client.ping();
      boolean fsyncAlways = checkPersistence(client, s, cc, config.durability(), who);
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(s.lockWaitMillis());
      long held;
      while ((held = (Long) HOLD.run(client, lockKeys, lockArgs)) != 1) {
        if (System.nanoTime() - deadline > 0) {
          throw new StoreLockedException(
              who
                  + " is open in another client "
                  + (held == 0
                      ? "with an exclusive lock (lock key " + tag + ":lock held)"
                      : "with lock=shared (holders in "
                          + tag
                          + ":shared) and this open asks for"
                          + " lock=exclusive"),
              config.path());
        }
        pause(100);
      }
      locked = true;
      byte[] meta = bytes(tag + ":meta");
      if (!client.exists(meta)) {
        if (config.readOnly() || !config.createIfMissing()) {
          throw new StoreIOException(
              who
                  + ": namespace "
                  + tag
                  + " does not exist and "
                  + (config.readOnly()
                      ? "the store is opened read-only"
                      : "create-if-missing=false"),
              (Throwable) null);
        }
        client.hset(meta, bytes("engine"), bytes("kv4j-redis 1"));
      }
      StoreInfo info =
          new StoreInfo(
              "redis",
              RedisProvider.FEATURES,
              RedisProvider.LIMITS,
              config.durability(),
              location,
              config.readOnly());
      RedisStore store = new RedisStore(info, s, client, token, fsyncAlways);
      ok = true;
      return store;
    } catch (StoreException e) {
      throw e;
    } catch (JedisException | IllegalStateException e) {
      throw new StoreIOException(
          who
              + ": cannot use Redis at "
              + s.address()
              + ": "
              + describe(e)
              + " (is the server running? for tests run .ci/servers.sh)",
          e);
    } finally {
      if (!ok && client != null) {
        if (locked) {
          try {
            RELEASE.run(client, lockKeys, List.of(token));
          } catch (JedisException ignored) {
            // The lock expires on its own.
          }
        }
        client.close();
      }
    }
  }

  /** Checks AOF settings on every node; returns whether every node fsyncs on each write. */
  private static boolean checkPersistence(
      UnifiedJedis client, RedisSettings s, JedisClientConfig cc, Durability d, String who) {
    List<HostAndPort> nodes = new ArrayList<>();
    if (client instanceof RedisClusterClient jc) {
      for (String n : jc.getClusterNodes().keySet()) {
        nodes.add(HostAndPort.from(n));
      }
    } else {
      nodes.add(new HostAndPort(s.host(), s.port()));
    }
    boolean always = true;
    for (HostAndPort n : nodes) {
      String aof;
      String fsync;
      try (Jedis j = new Jedis(n, cc)) {
        aof = j.configGet("appendonly").get("appendonly");
        fsync = j.configGet("appendfsync").get("appendfsync");
      } catch (JedisDataException e) {
        if (!s.verifyDurability()) {
          return false;
        }
        throw new StoreIOException(
            who
                + ": cannot read the persistence settings of "
                + n
                + " ("
                + e.getMessage()
                + "); allow CONFIG GET or open with verify-durability=false",
            e);
      }
      always &= "yes".equals(aof) && "always".equals(fsync);
      if (!s.verifyDurability()) {
        continue;
      }
      if (!"yes".equals(aof)) {
        throw new StoreIOException(
            who
                + ": "
                + n
                + " runs with appendonly no, so a server crash loses acknowledged writes; "
                + d
                + " needs appendonly yes (or open with verify-durability=false)",
            (Throwable) null);
      }
      if (d == Durability.SYNC && !"always".equals(fsync)) {
        throw new StoreIOException(
            who
                + ": "
                + n
                + " runs with appendfsync "
                + fsync
                + ", so acknowledged writes are not on disk; SYNC needs appendfsync always (or"
                + " open with durability=buffered or verify-durability=false)",
            (Throwable) null);
      }
    }
    return always;
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
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.retryTimeoutMillis());
    int attempt = 0;
    while (true) {
      checkOpen();
      try {
        return work.get();
      } catch (JedisException e) {
        if (isClosed()) {
          checkOpen();
        }
        if (!retryable(e) || System.nanoTime() - deadline > 0) {
          throw failure(op, e);
        }
        retries.incrementAndGet();
        pause(Math.min(1000, 25L << Math.min(attempt++, 6)));
      }
    }
  }

  StoreIOException failure(String op, Exception e) {
    return new StoreIOException(
        info().describe() + ": " + op + " failed on " + settings.address() + ": " + describe(e), e);
  }

  private static String describe(Throwable e) {
    StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      sb.append("; caused by ")
          .append(c.getClass().getSimpleName())
          .append(": ")
          .append(c.getMessage());
    }
    return sb.toString();
  }

  private void checkLock() {
    if (lockLost) {
      throw new StoreIOException(
          info().describe()
              + ": lost the store's lock key to another client (it expired while this client was"
              + " cut off); close and reopen",
          (Throwable) null);
    }
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return call("get", () -> client.hget(valuesKey, key));
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    checkLock();
    call("put", () -> PUT.run(client, List.of(valuesKey, indexKey), List.of(key, value)));
  }

  @Override
  protected void doDelete(byte[] key) {
    checkLock();
    call("delete", () -> DELETE.run(client, List.of(valuesKey, indexKey), List.of(key)));
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    return compareAndSet(key, expected, value, bytes(markerPrefix + markers.incrementAndGet()));
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
            markerTtl);
    Object r =
        call(
            "conditional write", () -> CAS.run(client, List.of(valuesKey, indexKey, marker), args));
    return r instanceof Long l && l == 1;
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    List<byte[]> values = new ArrayList<>(keys.size());
    for (int from = 0; from < keys.size(); from += GET_ALL_CHUNK) {
      byte[][] chunk =
          keys.subList(from, Math.min(keys.size(), from + GET_ALL_CHUNK)).toArray(new byte[0][]);
      List<byte[]> got = call("getAll", () -> client.hmget(valuesKey, chunk));
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
    List<byte[]> args = new ArrayList<>(batch.size() * 3);
    byte[] p = {'p'};
    byte[] d = {'d'};
    byte[] none = {};
    for (int i = 0, n = batch.size(); i < n; i++) {
      boolean del = batch.isDelete(i);
      args.add(del ? d : p);
      args.add(batch.key(i));
      args.add(del ? none : batch.value(i));
    }
    call(
        "batch of " + batch.size() + " operations",
        () -> BATCH.run(client, List.of(valuesKey, indexKey), args));
  }

  /** One page of a scan, read atomically: keys and values alternating. */
  @SuppressWarnings("unchecked")
  List<Object> page(byte[] min, byte[] max, int count, boolean reverse) {
    return (List<Object>)
        call(
            "scan",
            () ->
                PAGE.run(
                    client,
                    List.of(valuesKey, indexKey),
                    List.of(min, max, bytes(Integer.toString(count)), bytes(reverse ? "1" : "0"))));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new RedisCursor(this, range, settings.fetchSize());
  }

  @Override
  protected void doSync() {
    if (fsyncAlways || !settings.verifyDurability()) {
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
          long count = client.hlen(valuesKey);
          Long v = client.memoryUsage(valuesKey);
          Long i = client.memoryUsage(indexKey);
          long vb = v == null ? 0 : v;
          long ib = i == null ? 0 : i;
          Map<String, Number> figures = new LinkedHashMap<>();
          figures.put("memory.values", vb);
          figures.put("memory.index", ib);
          figures.put("retries", retries.get());
          return new StoreStats(count, true, vb + ib, figures);
        });
  }

  @Override
  protected void doClose() {
    keeper.cancel(false);
    try {
      RELEASE.run(client, lockKeys, List.of(token));
    } catch (JedisException ignored) {
      // Unreachable server: the lock key expires after lock-ttl.
    } finally {
      client.close();
    }
  }

  /** Refreshes the lock key's lifetime; notices when another client took it. */
  private void keepLock() {
    if (isClosed() || lockLost) {
      return;
    }
    try {
      Object r =
          HOLD.run(
              client,
              lockKeys,
              List.of(token, bytes(Integer.toString(settings.lockTtlMillis())), lockArgMode));
      if (r instanceof Long l && l != 1) {
        lockLost = true;
      }
    } catch (JedisException | IllegalStateException e) {
      // Unreachable right now (restart): try again on the next tick.
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
