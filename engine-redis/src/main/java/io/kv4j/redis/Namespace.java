package io.kv4j.redis;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.spi.LockKeeper;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One open store's namespace on Redis: the client, the hash tag every key of the store (and of its
 * keyspaces) carries, the open lock and its keeper, and the figures the store and its keyspace
 * handles share.
 */
final class Namespace {
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

  final RedisSettings settings;
  final UnifiedJedis client;

  /** The hash tag, braces included: every key of the store starts with it. */
  final String tag;

  /** The keyspace list: a hash of keyspace name → generation. */
  final byte[] spacesKey;

  /** The store's marker hash (engine version, keyspace generation counter). */
  final byte[] metaKey;

  final boolean fsyncAlways;
  final AtomicLong retries = new AtomicLong();
  private final AtomicLong markers = new AtomicLong();
  private final String markerPrefix;

  /** Lifetime of a done-marker, ms, as ARGV. */
  final byte[] markerTtl;

  private final List<byte[]> lockKeys;
  private final List<byte[]> lockArgs;
  private final LockKeeper keeper;
  private volatile boolean lockLost;

  private Namespace(
      RedisSettings settings, UnifiedJedis client, byte[] token, boolean fsyncAlways) {
    this.settings = settings;
    this.client = client;
    this.tag = tag(settings);
    this.spacesKey = RedisStore.bytes(tag + ":spaces");
    this.metaKey = RedisStore.bytes(tag + ":meta");
    this.fsyncAlways = fsyncAlways;
    this.markerPrefix = tag + ":c:" + new String(token, StandardCharsets.UTF_8) + ":";
    // A retry of a conditional write can come at most this long after the write ran: the call's
    // retry budget, twice (Jedis's cluster client retries inside one attempt, too), plus socket
    // timeouts and a margin.
    long ttl = 2L * (settings.retryTimeoutMillis() + settings.socketTimeoutMillis()) + 10_000;
    this.markerTtl = RedisStore.bytes(Long.toString(ttl));
    this.lockKeys = lockKeys(settings);
    this.lockArgs = lockArgs(settings, token);
    long period = Math.max(100, settings.lockTtlMillis() / 3);
    this.keeper =
        LockKeeper.start(
            "redis lock of namespace " + tag, Duration.ofMillis(period), this::keepLock);
  }

  private static String tag(RedisSettings s) {
    return "{" + s.namespace() + "}";
  }

  private static List<byte[]> lockKeys(RedisSettings s) {
    String tag = tag(s);
    return List.of(RedisStore.bytes(tag + ":lock"), RedisStore.bytes(tag + ":shared"));
  }

  private static List<byte[]> lockArgs(RedisSettings s, byte[] token) {
    return List.of(
        token,
        RedisStore.bytes(Integer.toString(s.lockTtlMillis())),
        RedisStore.bytes(s.sharedLock() ? "s" : "x"));
  }

  /** A Redis key of the store: the tag, a colon, then {@code suffix}. */
  byte[] key(String suffix) {
    return RedisStore.bytes(tag + ":" + suffix);
  }

  /** A fresh done-marker key, unique to one call of this client. */
  byte[] newMarker() {
    return RedisStore.bytes(markerPrefix + markers.incrementAndGet());
  }

  /** A fresh done-marker key under another hash tag (a shard's), unique to one call. */
  byte[] newMarker(String otherTag) {
    return RedisStore.bytes(
        otherTag + markerPrefix.substring(tag.length()) + markers.incrementAndGet());
  }

  boolean lockLost() {
    return lockLost;
  }

  /** The location string of a store on these settings. */
  static String location(String engine, StoreConfig config, RedisSettings s) {
    return engine
        + (s.cluster() ? "-cluster://" : "://")
        + s.address()
        + (s.cluster() ? "" : "/" + s.database())
        + " {"
        + s.namespace()
        + "} (store path "
        + config.path()
        + ")";
  }

  /**
   * Connects, checks persistence, takes the open lock and creates the namespace's marker if
   * allowed, or checks the marker names the engine's layout ({@code mark}, e.g. {@code kv4j-redis
   * 1}): the two layouts of one path share the namespace and must not read each other's keys.
   */
  static Namespace open(StoreConfig config, RedisSettings s, String who, String mark) {
    JedisClientConfig cc = clientConfig(s);
    UnifiedJedis client = null;
    boolean ok = false;
    byte[] token = RedisStore.bytes(UUID.randomUUID().toString());
    String tag = tag(s);
    List<byte[]> lockKeys = lockKeys(s);
    boolean locked = false;
    try {
      client = connect(s, cc);
      client.ping();
      boolean fsyncAlways = checkPersistence(client, s, cc, config.durability(), who);
      takeLock(client, config, s, who, lockKeys, token);
      locked = true;
      checkMarker(client, config, who, tag, mark);
      Namespace ns = new Namespace(s, client, token, fsyncAlways);
      ok = true;
      return ns;
    } catch (StoreException e) {
      throw e;
    } catch (JedisException | IllegalStateException e) {
      throw new StoreIOException(
          who
              + ": cannot use Redis at "
              + s.address()
              + ": "
              + RedisStore.describe(e)
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

  /** Waits for the open lock until {@code lock-wait}; a holder still there is StoreLocked. */
  private static void takeLock(
      UnifiedJedis client,
      StoreConfig config,
      RedisSettings s,
      String who,
      List<byte[]> lockKeys,
      byte[] token) {
    String tag = tag(s);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(s.lockWaitMillis());
    long held;
    while ((held = (Long) HOLD.run(client, lockKeys, lockArgs(s, token))) != 1) {
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
      RedisStore.pause(100);
    }
  }

  /** Creates the namespace's marker, or checks that it names this engine's layout. */
  private static void checkMarker(
      UnifiedJedis client, StoreConfig config, String who, String tag, String mark) {
    byte[] meta = RedisStore.bytes(tag + ":meta");
    if (!client.exists(meta)) {
      if (config.readOnly() || !config.createIfMissing()) {
        throw new StoreIOException(
            who
                + ": namespace "
                + tag
                + " does not exist and "
                + (config.readOnly() ? "the store is opened read-only" : "create-if-missing=false"),
            (Throwable) null);
      }
      client.hset(meta, RedisStore.bytes("engine"), RedisStore.bytes(mark));
    } else {
      byte[] was = client.hget(meta, RedisStore.bytes("engine"));
      String found = was == null ? "nothing" : new String(was, StandardCharsets.UTF_8);
      if (!mark.equals(found)) {
        throw new StoreIOException(
            who
                + ": namespace "
                + tag
                + " holds a store of another layout (its "
                + tag
                + ":meta names engine '"
                + found
                + "', this engine is '"
                + mark
                + "'): open it with its own engine id, or use another path or prefix",
            (Throwable) null);
      }
    }
  }

  static JedisClientConfig clientConfig(RedisSettings s) {
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
    return cb.build();
  }

  static UnifiedJedis connect(RedisSettings s, JedisClientConfig cc) {
    ConnectionPoolConfig pc = new ConnectionPoolConfig();
    pc.setMaxTotal(s.poolSize());
    pc.setMaxIdle(s.poolSize());
    pc.setMinIdle(0);
    pc.setMaxWait(Duration.ofMillis(s.connectTimeoutMillis()));
    pc.setJmxEnabled(false);
    if (s.cluster()) {
      return RedisClusterClient.builder()
          .nodes(s.nodes())
          .clientConfig(cc)
          .poolConfig(pc)
          .maxAttempts(5)
          .maxTotalRetriesDuration(Duration.ofMillis(s.retryTimeoutMillis()))
          .build();
    }
    return RedisClient.builder()
        .hostAndPort(s.host(), s.port())
        .clientConfig(cc)
        .poolConfig(pc)
        .build();
  }

  /** Checks AOF settings on every node; returns whether every node fsyncs on each write. */
  static boolean checkPersistence(
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

  /** Refreshes the lock key's lifetime; notices when another client took it. */
  private void keepLock() {
    if (lockLost) {
      return;
    }
    try {
      Object r = HOLD.run(client, lockKeys, lockArgs);
      if (r instanceof Long l && l != 1) {
        lockLost = true;
      }
    } catch (JedisException | IllegalStateException e) {
      // Unreachable right now (restart), or closed: try again on the next tick.
    }
  }

  /**
   * Stops the keeper, releases the lock if still ours and closes the client. The keeper's close
   * waits for a refresh in progress, so no refresh can take the lock again after the release.
   */
  void close() {
    keeper.close();
    try {
      RELEASE.run(client, lockKeys, List.of(lockArgs.get(0)));
    } catch (JedisException ignored) {
      // Unreachable server: the lock key expires after lock-ttl.
    } finally {
      client.close();
    }
  }
}
