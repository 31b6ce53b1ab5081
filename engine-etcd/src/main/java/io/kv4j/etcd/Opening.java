package io.kv4j.etcd;

import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.etcd.EtcdClient.Retry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Opening a store: a lease, the lock key under it (waiting {@code lock-wait} for a held one), then
 * the store's meta key (created, or checked to be of this format). Anything failing revokes the
 * lease, which deletes the lock key with it.
 */
final class Opening {
  private final StoreConfig config;
  private final EtcdSettings s;
  private final String location;
  private final String who;
  private final EtcdClient client;
  private final byte[] lockKey;
  private final byte[] metaKey;

  private Opening(StoreConfig config, EtcdSettings s) {
    this.config = config;
    this.s = s;
    this.location =
        "etcd://" + s.address() + "/" + s.prefix() + " (store path " + config.path() + ")";
    this.who = "engine 'etcd' at " + location;
    this.client = new EtcdClient(s, who);
    byte[] prefix = ValueCodec.bytes(s.prefix());
    this.lockKey = ValueCodec.concat(prefix, ValueCodec.bytes("m/lock"));
    this.metaKey = ValueCodec.concat(prefix, ValueCodec.bytes("m/meta"));
  }

  static EtcdStore open(StoreConfig config, EtcdSettings s) {
    Opening o = new Opening(config, s);
    boolean ok = false;
    try {
      EtcdStore store = o.open();
      ok = true;
      return store;
    } finally {
      if (!ok) {
        o.client.close(); // the store owns it once open
      }
    }
  }

  private EtcdStore open() {
    client.authenticate();
    long lease =
        Json.number(
            client.call(
                "lease grant",
                "/v3/lease/grant",
                "{\"TTL\":\"" + s.lockTtlSeconds() + "\"}",
                Retry.ALWAYS),
            "ID");
    boolean ok = false;
    try {
      long lockRevision = lock(lease);
      checkOrCreateMeta(lockRevision);
      byte[] chunksKey =
          ValueCodec.concat(ValueCodec.bytes(s.prefix()), ValueCodec.bytes("m/chunks"));
      String probe = Range.key(chunksKey).countOnly().json();
      boolean chunksUsed =
          Json.number(client.call("open", "/v3/kv/range", probe, Retry.ALWAYS), "count") > 0;
      StoreInfo info =
          new StoreInfo(
              "etcd",
              EtcdProvider.FEATURES,
              EtcdProvider.LIMITS,
              config.durability(),
              location,
              config.readOnly());
      EtcdStore store = new EtcdStore(info, s, client, lease, lockRevision, chunksUsed);
      ok = true;
      return store;
    } finally {
      if (!ok) {
        revoke(client, lease);
      }
    }
  }

  /** Takes the lock key under {@code lease}; answers its create revision. */
  private long lock(long lease) {
    byte[] token = ValueCodec.bytes(UUID.randomUUID().toString());
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(s.lockWaitMillis());
    long renewed = System.nanoTime();
    while (true) {
      Txn take = new Txn().requireCreated(lockKey, 0).put(lockKey, token, lease);
      take.getOnFailure(lockKey);
      Map<String, Object> r = client.call("lock", "/v3/kv/txn", take.json(), Retry.ALWAYS);
      if (Boolean.TRUE.equals(r.get("succeeded"))) {
        return Json.number(Json.object(r.get("header")), "revision");
      }
      List<Object> kvs = Answers.rangeKvs(Json.list(r, "responses"), 0);
      if (!kvs.isEmpty() && token(kvs.get(0)).equals(new String(token, StandardCharsets.UTF_8))) {
        // An earlier attempt took it and its answer was lost.
        return Json.number(Json.object(kvs.get(0)), "create_revision");
      }
      if (System.nanoTime() - deadline > 0) {
        throw new StoreLockedException(
            who
                + " is open in another client (lock key "
                + s.prefix()
                + "m/lock is held by lease "
                + (kvs.isEmpty() ? "?" : Json.object(kvs.get(0)).get("lease"))
                + "; a crashed client's lock goes after its lease's TTL)",
            config.path());
      }
      EtcdClient.pause(100);
      if (System.nanoTime() - renewed > TimeUnit.SECONDS.toNanos(1)) {
        // Waiting can outlast our own lease's TTL (a crashed client's lock takes that long).
        client.call(
            "lease keep-alive", "/v3/lease/keepalive", "{\"ID\":\"" + lease + "\"}", Retry.ALWAYS);
        renewed = System.nanoTime();
      }
    }
  }

  /** Creates the meta key of a new store (as allowed), or checks an existing one's format. */
  private void checkOrCreateMeta(long lockRevision) {
    Map<String, Object> meta =
        client.call("open", "/v3/kv/range", Range.key(metaKey).json(), Retry.ALWAYS);
    List<Object> kvs = Json.list(meta, "kvs");
    if (!kvs.isEmpty()) {
      String format = new String(Answers.value(kvs.get(0)), StandardCharsets.UTF_8);
      if (!ValueCodec.FORMAT.equals(format)) {
        throw new StoreCorruptedException(
            who
                + ": prefix "
                + s.prefix()
                + " holds a store of format '"
                + format
                + "', not '"
                + ValueCodec.FORMAT
                + "' (format 1, before values were tagged inline or chunked, is not read by this"
                + " version: copy its data with the kv4j that wrote it, or drop the prefix)",
            null,
            -1);
      }
      return;
    }
    if (config.readOnly() || !config.createIfMissing()) {
      throw new StoreIOException(
          who
              + ": prefix "
              + s.prefix()
              + " holds no store and "
              + (config.readOnly() ? "the store is opened read-only" : "create-if-missing=false"),
          (Throwable) null);
    }
    Txn create =
        new Txn()
            .requireCreated(lockKey, lockRevision)
            .put(metaKey, ValueCodec.bytes(ValueCodec.FORMAT));
    if (!Boolean.TRUE.equals(
        client.call("create", "/v3/kv/txn", create.json(), Retry.ALWAYS).get("succeeded"))) {
      throw new StoreIOException(
          who + ": lost the lock key while creating the store", (Throwable) null);
    }
  }

  private static String token(Object kv) {
    return new String(Answers.value(kv), StandardCharsets.UTF_8);
  }

  /** Revokes a lease (deleting the keys under it); best effort: it expires after its TTL anyway. */
  static void revoke(EtcdClient client, long lease) {
    try {
      client.call("lease revoke", "/v3/lease/revoke", "{\"ID\":\"" + lease + "\"}", Retry.UNSENT);
    } catch (StoreException ignored) {
      // The lease expires after its TTL.
    }
  }
}
