package io.kv4j.etcd;

import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.etcd.EtcdClient.Retry;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A store kept under one key prefix {@code P} of an etcd cluster: the store's own keys under {@code
 * P d/}, keyspace {@code n}'s under {@code P k/n/}, and under {@code P m/} the store's marker, its
 * lock key (held by a lease) and one registry key per keyspace. Every write is one etcd txn whose
 * comparisons fence it: the lock key must still be the one this store created (so a store that lost
 * its lease cannot write), and each keyspace written must still be the one this store opened (so a
 * write racing a drop cannot leave keys behind).
 */
final class EtcdStore extends AbstractStore {
  private static final ScheduledExecutorService KEEPER =
      Executors.newScheduledThreadPool(
          2,
          r -> {
            Thread t = new Thread(r, "kv4j-etcd-lease-keeper");
            t.setDaemon(true);
            return t;
          });

  final EtcdSettings settings;
  final EtcdClient client;
  private final EtcdStore root;
  private final byte[] prefix; // P
  final byte[] base; // where this handle's keys live
  private final byte[] lockKey;
  private final long lease;
  private final long lockRevision;
  private final Map<String, Long> keyspaces; // name -> create revision of its registry key
  private final ScheduledFuture<?> keeper;
  private volatile boolean lockLost;

  private EtcdStore(
      StoreInfo info, EtcdSettings settings, EtcdClient client, long lease, long lockRevision) {
    super(info);
    this.settings = settings;
    this.client = client;
    this.root = this;
    this.prefix = bytes(settings.prefix());
    this.base = concat(prefix, bytes("d/"));
    this.lockKey = concat(prefix, bytes("m/lock"));
    this.lease = lease;
    this.lockRevision = lockRevision;
    this.keyspaces = new ConcurrentHashMap<>();
    long period = Math.max(500, settings.lockTtlSeconds() * 1000L / 3);
    this.keeper =
        KEEPER.scheduleWithFixedDelay(this::keepLease, period, period, TimeUnit.MILLISECONDS);
  }

  private EtcdStore(EtcdStore store, String name) {
    super(store, name);
    this.settings = store.settings;
    this.client = store.client;
    this.root = store;
    this.prefix = store.prefix;
    this.base = concat(prefix, bytes("k/" + name + "/"));
    this.lockKey = store.lockKey;
    this.lease = store.lease;
    this.lockRevision = store.lockRevision;
    this.keyspaces = store.keyspaces;
    this.keeper = null;
  }

  static EtcdStore open(StoreConfig config, EtcdSettings s) {
    String location =
        "etcd://" + s.address() + "/" + s.prefix() + " (store path " + config.path() + ")";
    String who = "engine 'etcd' at " + location;
    EtcdClient client = new EtcdClient(s, who);
    byte[] prefix = bytes(s.prefix());
    byte[] lockKey = concat(prefix, bytes("m/lock"));
    byte[] metaKey = concat(prefix, bytes("m/meta"));
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
      byte[] token = bytes(UUID.randomUUID().toString());
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(s.lockWaitMillis());
      long lockRevision;
      long renewed = System.nanoTime();
      while (true) {
        Txn take = new Txn().requireCreated(lockKey, 0).put(lockKey, token, lease);
        take.getOnFailure(lockKey);
        Map<String, Object> r = client.call("lock", "/v3/kv/txn", take.json(), Retry.ALWAYS);
        if (Boolean.TRUE.equals(r.get("succeeded"))) {
          lockRevision = Json.number(Json.object(r.get("header")), "revision");
          break;
        }
        List<Object> kvs = rangeKvs(Json.list(r, "responses"), 0);
        if (!kvs.isEmpty() && token(kvs.get(0)).equals(new String(token, StandardCharsets.UTF_8))) {
          // An earlier attempt took it and its answer was lost.
          lockRevision = Json.number(Json.object(kvs.get(0)), "create_revision");
          break;
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
              "lease keep-alive",
              "/v3/lease/keepalive",
              "{\"ID\":\"" + lease + "\"}",
              Retry.ALWAYS);
          renewed = System.nanoTime();
        }
      }
      Map<String, Object> meta =
          client.call(
              "open", "/v3/kv/range", rangeJson(metaKey, null, 0, 0, false, false), Retry.ALWAYS);
      if (Json.list(meta, "kvs").isEmpty()) {
        if (config.readOnly() || !config.createIfMissing()) {
          throw new StoreIOException(
              who
                  + ": prefix "
                  + s.prefix()
                  + " holds no store and "
                  + (config.readOnly()
                      ? "the store is opened read-only"
                      : "create-if-missing=false"),
              (Throwable) null);
        }
        Txn create =
            new Txn().requireCreated(lockKey, lockRevision).put(metaKey, bytes("kv4j-etcd 1"));
        if (!Boolean.TRUE.equals(
            client.call("create", "/v3/kv/txn", create.json(), Retry.ALWAYS).get("succeeded"))) {
          throw new StoreIOException(
              who + ": lost the lock key while creating the store", (Throwable) null);
        }
      }
      StoreInfo info =
          new StoreInfo(
              "etcd",
              EtcdProvider.FEATURES,
              EtcdProvider.LIMITS,
              config.durability(),
              location,
              config.readOnly());
      EtcdStore store = new EtcdStore(info, s, client, lease, lockRevision);
      ok = true;
      return store;
    } finally {
      if (!ok) {
        revoke(client, lease);
      }
    }
  }

  private static String token(Object kv) {
    Object v = Json.object(kv).get("value");
    return v == null
        ? ""
        : new String(Base64.getDecoder().decode(v.toString()), StandardCharsets.UTF_8);
  }

  private static void revoke(EtcdClient client, long lease) {
    try {
      client.call("lease revoke", "/v3/lease/revoke", "{\"ID\":\"" + lease + "\"}", Retry.UNSENT);
    } catch (StoreException ignored) {
      // The lease expires after its TTL.
    }
  }

  /** Keeps the lock's lease alive; notices when etcd no longer knows it. */
  private void keepLease() {
    if (isClosed() || lockLost) {
      return;
    }
    try {
      Map<String, Object> r =
          client.call(
              "lease keep-alive",
              "/v3/lease/keepalive",
              "{\"ID\":\"" + lease + "\"}",
              Retry.ALWAYS);
      if (Json.number(Json.object(r.get("result")), "TTL") <= 0) {
        lockLost = true;
      }
    } catch (StoreException | IllegalArgumentException e) {
      // Unreachable right now (election, member down): the next tick tries again.
    }
  }

  // ----------------------------------------------------------------------------- key layout

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] c = new byte[a.length + b.length];
    System.arraycopy(a, 0, c, 0, a.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /** The first key after every key starting with {@code p} (p ends with '/', never 0xff). */
  static byte[] prefixEnd(byte[] p) {
    byte[] e = p.clone();
    e[e.length - 1]++;
    return e;
  }

  private byte[] registryKey(String name) {
    return concat(prefix, bytes("m/ks/" + name));
  }

  private byte[] baseOf(String keyspace) {
    return keyspace == null ? root.base : concat(prefix, bytes("k/" + keyspace + "/"));
  }

  static String rangeJson(
      byte[] key, byte[] end, long limit, long revision, boolean reverse, boolean countOnly) {
    StringBuilder b = new StringBuilder("{\"key\":\"").append(Txn.b64(key)).append('"');
    if (end != null) {
      b.append(",\"range_end\":\"").append(Txn.b64(end)).append('"');
    }
    if (limit > 0) {
      b.append(",\"limit\":\"").append(limit).append('"');
    }
    if (revision > 0) {
      b.append(",\"revision\":\"").append(revision).append('"');
    }
    if (reverse) {
      b.append(",\"sort_order\":\"DESCEND\",\"sort_target\":\"KEY\"");
    }
    if (countOnly) {
      b.append(",\"count_only\":true");
    }
    return b.append('}').toString();
  }

  static List<Object> rangeKvs(List<Object> responses, int i) {
    return Json.list(Json.object(Json.object(responses.get(i)).get("response_range")), "kvs");
  }

  static byte[] value(Object kv) {
    Object v = Json.object(kv).get("value");
    return v == null ? new byte[0] : Base64.getDecoder().decode(v.toString());
  }

  static byte[] key(Object kv) {
    Object k = Json.object(kv).get("key");
    return k == null ? new byte[0] : Base64.getDecoder().decode(k.toString());
  }

  // ------------------------------------------------------------------------------- writing

  private void checkLock() {
    if (root.lockLost) {
      throw failWrites(
          "lost the lease holding the store's lock key (it expired while this client was cut off,"
              + " or it was revoked); close and reopen",
          null);
    }
  }

  /** Creates the keyspace's registry key if absent; answers its create revision. */
  private long ensureKeyspace(String name) {
    Long known = keyspaces.get(name);
    if (known != null) {
      return known;
    }
    byte[] reg = registryKey(name);
    Map<String, Object> r =
        client.call(
            "keyspace", "/v3/kv/range", rangeJson(reg, null, 0, 0, false, false), Retry.ALWAYS);
    List<Object> kvs = Json.list(r, "kvs");
    long rev;
    if (!kvs.isEmpty()) {
      rev = Json.number(Json.object(kvs.get(0)), "create_revision");
    } else {
      if (info().readOnly()) {
        throw new UnsupportedOperationException(
            info().describe() + " is open read-only and has no keyspace '" + name + "'");
      }
      checkLock();
      Txn t = new Txn().requireCreated(reg, 0).put(reg, bytes(name));
      t.getOnFailure(reg);
      Map<String, Object> w = commit("create keyspace '" + name + "'", t, Set.of(), Retry.ALWAYS);
      if (Boolean.TRUE.equals(w.get("succeeded"))) {
        rev = Json.number(Json.object(w.get("header")), "revision");
      } else {
        List<Object> got = rangeKvs(Json.list(w, "responses"), 0);
        rev = Json.number(Json.object(got.get(0)), "create_revision");
      }
    }
    keyspaces.put(name, rev);
    return rev;
  }

  /**
   * Sends a write txn fenced by the lock key and the registry keys of {@code spaces} (appended to
   * its comparisons, their reads to its failure branch after the caller's). Throws when a fence
   * failed; otherwise answers etcd's reply ({@code succeeded} false: a comparison of the caller's
   * failed).
   */
  private Map<String, Object> commit(String op, Txn t, Set<String> spaces, Retry retry) {
    t.requireCreated(lockKey, lockRevision).getOnFailure(lockKey);
    List<String> names = new ArrayList<>(spaces);
    List<Long> revs = new ArrayList<>();
    for (String n : names) {
      long rev = ensureKeyspace(n);
      revs.add(rev);
      t.requireCreated(registryKey(n), rev).getOnFailure(registryKey(n));
    }
    checkSize(op, t);
    Map<String, Object> r = client.call(op, "/v3/kv/txn", t.json(), retry);
    if (Boolean.TRUE.equals(r.get("succeeded"))) {
      return r;
    }
    List<Object> responses = Json.list(r, "responses");
    int first = responses.size() - 1 - names.size(); // the lock key's read
    List<Object> lock = rangeKvs(responses, first);
    if (lock.isEmpty()
        || Json.number(Json.object(lock.get(0)), "create_revision") != lockRevision) {
      root.lockLost = true;
      checkLock();
    }
    for (int i = 0; i < names.size(); i++) {
      List<Object> reg = rangeKvs(responses, first + 1 + i);
      if (reg.isEmpty() || Json.number(Json.object(reg.get(0)), "create_revision") != revs.get(i)) {
        keyspaces.remove(names.get(i), revs.get(i));
        throw new IllegalStateException(
            info().describe()
                + ": keyspace '"
                + names.get(i)
                + "' was dropped while "
                + op
                + " ran");
      }
    }
    return r;
  }

  private void checkSize(String op, Txn t) {
    if (t.width() > settings.maxTxnOps()) {
      throw new IllegalArgumentException(
          op
              + " needs "
              + t.width()
              + " operations in one etcd transaction, more than max-txn-ops="
              + settings.maxTxnOps()
              + " ("
              + info().describe()
              + "; raise the cluster's --max-txn-ops and this option together, or split the batch)");
    }
    if (t.bytes() > settings.maxRequestBytes()) {
      throw new IllegalArgumentException(
          op
              + " needs a request of about "
              + t.bytes()
              + " bytes, more than max-request-bytes="
              + settings.maxRequestBytes()
              + " ("
              + info().describe()
              + "; raise the cluster's --max-request-bytes and this option together, or split the"
              + " batch)");
    }
  }

  private Set<String> own() {
    String k = keyspaceName();
    return k == null ? Set.of() : Set.of(k);
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    checkLock();
    commit("put", new Txn().put(concat(base, key), value), own(), Retry.ALWAYS);
  }

  @Override
  protected void doDelete(byte[] key) {
    checkLock();
    commit("delete", new Txn().delete(concat(base, key)), own(), Retry.ALWAYS);
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    checkLock();
    // etcd refuses a txn writing one key twice: keep each key's last operation, which is what the
    // batch, applied in order, leaves behind.
    Map<ByteBuffer, Integer> last = new LinkedHashMap<>();
    Set<String> spaces = new LinkedHashSet<>();
    List<byte[]> keys = new ArrayList<>(batch.size());
    for (int i = 0, n = batch.size(); i < n; i++) {
      String ks = keyspaceOf(batch, i);
      if (ks != null) {
        spaces.add(ks);
      }
      byte[] k = concat(baseOf(ks), batch.key(i));
      keys.add(k);
      last.put(ByteBuffer.wrap(k), i);
    }
    Txn t = new Txn();
    for (int i : last.values()) {
      if (batch.isDelete(i)) {
        t.delete(keys.get(i));
      } else {
        t.put(keys.get(i), batch.value(i));
      }
    }
    commit("batch of " + batch.size() + " operations", t, spaces, Retry.ALWAYS);
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    checkLock();
    byte[] k = concat(base, key);
    Txn t = new Txn();
    if (expected == null) {
      t.requireCreated(k, 0);
    } else {
      t.requireValue(k, expected);
    }
    if (value == null) {
      t.delete(k);
    } else {
      t.put(k, value);
    }
    // Not idempotent: sent again only when it surely never reached a member.
    Map<String, Object> r = commit("conditional write", t, own(), Retry.UNSENT);
    return Boolean.TRUE.equals(r.get("succeeded"));
  }

  // ------------------------------------------------------------------------------- reading

  byte[] read(String op, byte[] key, long revision) {
    Map<String, Object> r =
        client.call(
            op,
            "/v3/kv/range",
            rangeJson(concat(base, key), null, 0, revision, false, false),
            Retry.ALWAYS);
    List<Object> kvs = Json.list(r, "kvs");
    return kvs.isEmpty() ? null : value(kvs.get(0));
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return read("get", key, 0);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return readAll(keys, 0);
  }

  /** Reads keys in txns of at most max-txn-ops ranges, every one at the first one's revision. */
  List<byte[]> readAll(List<byte[]> keys, long revision) {
    List<byte[]> values = new ArrayList<>(keys.size());
    int chunk = settings.maxTxnOps();
    for (int from = 0; from < keys.size(); from += chunk) {
      Txn t = new Txn();
      List<byte[]> part = keys.subList(from, Math.min(keys.size(), from + chunk));
      for (byte[] k : part) {
        t.get(concat(base, k), revision);
      }
      Map<String, Object> r = client.call("getAll", "/v3/kv/txn", t.json(), Retry.ALWAYS);
      if (revision == 0) {
        revision = Json.number(Json.object(r.get("header")), "revision");
      }
      List<Object> responses = Json.list(r, "responses");
      if (responses.size() != part.size()) {
        throw new StoreIOException(
            info().describe()
                + ": getAll read "
                + part.size()
                + " keys and etcd answered "
                + responses.size(),
            (Throwable) null);
      }
      for (int i = 0; i < part.size(); i++) {
        List<Object> kvs = rangeKvs(responses, i);
        values.add(kvs.isEmpty() ? null : value(kvs.get(0)));
      }
    }
    return values;
  }

  /** One page of a range read: the answer's kvs and the revision it was read at. */
  record Page(List<Object> kvs, long revision, boolean more) {}

  Page page(byte[] key, byte[] end, int limit, long revision, boolean reverse) {
    Map<String, Object> r =
        client.call(
            "scan",
            "/v3/kv/range",
            rangeJson(key, end, limit, revision, reverse, false),
            Retry.ALWAYS);
    return new Page(
        Json.list(r, "kvs"),
        Json.number(Json.object(r.get("header")), "revision"),
        Boolean.TRUE.equals(r.get("more")));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new EtcdCursor(this, range, 0);
  }

  /** The cluster's revision now, read linearizably. */
  long revisionNow() {
    Map<String, Object> r =
        client.call(
            "snapshot", "/v3/kv/range", rangeJson(lockKey, null, 1, 0, false, true), Retry.ALWAYS);
    return Json.number(Json.object(r.get("header")), "revision");
  }

  @Override
  protected AbstractSnapshot doSnapshot() {
    return new EtcdSnapshot(this, revisionNow());
  }

  @Override
  protected void doSync() {
    // Every acknowledged write is in the Raft log of a majority of members, fsynced there.
  }

  @Override
  protected StoreStats doStats() {
    Map<String, Object> r =
        client.call(
            "stats",
            "/v3/kv/range",
            rangeJson(base, prefixEnd(base), 0, 0, false, true),
            Retry.ALWAYS);
    // diskBytes: the database file of the member that answered, which every store on the cluster
    // (and its history until compaction) shares; etcd keeps no per-prefix size.
    long db =
        Json.number(client.call("stats", "/v3/maintenance/status", "{}", Retry.ALWAYS), "dbSize");
    Map<String, Number> figures = new LinkedHashMap<>();
    figures.put("revision", Json.number(Json.object(r.get("header")), "revision"));
    figures.put("cluster.db-size", db);
    figures.put("retries", client.retries());
    return new StoreStats(Json.number(r, "count"), true, db, figures);
  }

  // ----------------------------------------------------------------------------- keyspaces

  @Override
  protected AbstractStore doKeyspace(String name) {
    ensureKeyspace(name);
    return new EtcdStore(this, name);
  }

  @Override
  protected List<String> doKeyspaces() {
    byte[] p = concat(prefix, bytes("m/ks/"));
    Map<String, Object> r =
        client.call(
            "keyspaces",
            "/v3/kv/range",
            rangeJson(p, prefixEnd(p), 0, 0, false, false),
            Retry.ALWAYS);
    List<String> names = new ArrayList<>();
    for (Object kv : Json.list(r, "kvs")) {
      byte[] k = key(kv);
      names.add(new String(k, p.length, k.length - p.length, StandardCharsets.UTF_8));
    }
    return names;
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    checkLock();
    byte[] b = baseOf(name);
    Txn t = new Txn().delete(registryKey(name)).deleteRange(b, prefixEnd(b));
    Map<String, Object> r = commit("drop keyspace '" + name + "'", t, Set.of(), Retry.ALWAYS);
    keyspaces.remove(name);
    Object first = Json.object(Json.list(r, "responses").get(0)).get("response_delete_range");
    return Json.number(Json.object(first), "deleted") > 0;
  }

  @Override
  protected void doClose() {
    if (root != this) {
      return;
    }
    keeper.cancel(false);
    revoke(client, lease); // deletes the lock key with the lease
  }
}
