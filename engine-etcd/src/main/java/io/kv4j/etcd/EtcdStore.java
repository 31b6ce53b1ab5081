package io.kv4j.etcd;

import io.kv4j.KeyRange;
import io.kv4j.StoreException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.etcd.EtcdClient.Retry;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.LockKeeper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A store kept under one key prefix {@code P} of an etcd cluster (layout and value format in {@link
 * ValueCodec}). Every write is one etcd txn whose comparisons fence it: the lock key must still be
 * the one this store created (so a store that lost its lease cannot write), and each keyspace
 * written must still be the one this store opened (so a write racing a drop cannot leave keys
 * behind). Values too large for one request are chunked ({@link Writes}, {@link Chunks}); reads
 * ({@link Reads}) resolve them at the revision they read the key at. The lock key's lease is
 * renewed by a {@link LockKeeper}.
 */
final class EtcdStore extends AbstractStore {
  final EtcdSettings settings;
  final EtcdClient client;
  private final EtcdStore root;
  private final byte[] prefix; // P
  final byte[] base; // where this handle's keys live
  final byte[] chunkArea; // where the chunks of this handle's values live
  private final byte[] lockKey;
  private final byte[] chunksKey; // present once the store has held a chunked value
  private final long lease;
  private final long lockRevision;
  private final Map<String, Long> keyspaces; // name -> create revision of its registry key
  private final LockKeeper keeper; // on the root: renews the lease
  private final Chunks chunks;
  final Reads reads;
  final Writes writes;
  private volatile boolean lockLost;
  private volatile boolean chunksUsed; // on the root: whether chunksKey exists

  EtcdStore(
      StoreInfo info,
      EtcdSettings settings,
      EtcdClient client,
      long lease,
      long lockRevision,
      boolean chunksUsed) {
    super(info);
    this.settings = settings;
    this.client = client;
    this.root = this;
    this.prefix = ValueCodec.bytes(settings.prefix());
    this.base = ValueCodec.concat(prefix, ValueCodec.bytes("d/"));
    this.chunkArea = ValueCodec.chunkArea(prefix, null);
    this.lockKey = ValueCodec.concat(prefix, ValueCodec.bytes("m/lock"));
    this.chunksKey = ValueCodec.concat(prefix, ValueCodec.bytes("m/chunks"));
    this.lease = lease;
    this.lockRevision = lockRevision;
    this.chunksUsed = chunksUsed;
    this.keyspaces = new ConcurrentHashMap<>();
    this.chunks = new Chunks(client, settings);
    this.reads = new Reads(client, settings, info(), base, chunkArea, lockKey, chunks);
    this.writes = new Writes(chunks);
    long period = Math.max(500, settings.lockTtlSeconds() * 1000L / 3);
    this.keeper =
        LockKeeper.start(
            "etcd lease of prefix " + settings.prefix(),
            Duration.ofMillis(period),
            this::keepLease);
  }

  private EtcdStore(EtcdStore store, String name) {
    super(store, name);
    this.settings = store.settings;
    this.client = store.client;
    this.root = store;
    this.prefix = store.prefix;
    this.base = ValueCodec.concat(prefix, ValueCodec.bytes("k/" + name + "/"));
    this.chunkArea = ValueCodec.chunkArea(prefix, name);
    this.lockKey = store.lockKey;
    this.chunksKey = store.chunksKey;
    this.lease = store.lease;
    this.lockRevision = store.lockRevision;
    this.keyspaces = store.keyspaces;
    this.keeper = null;
    this.chunks = store.chunks;
    this.reads = new Reads(client, settings, info(), base, chunkArea, lockKey, chunks);
    this.writes = store.writes;
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
        failWrites(LEASE_LOST, null);
      } else {
        backgroundRecovered(LEASE_TASK);
      }
    } catch (StoreException | IllegalArgumentException e) {
      // Unreachable right now (election, member down): the next tick tries again; until one
      // works, stats() and verify() say the store is degraded.
      backgroundFailing(LEASE_TASK, e);
    } catch (Throwable e) {
      // Anything else means the lease may no longer be renewed and could expire unseen: the store
      // fails, naming the cause, until reopened.
      lockLost = true;
      failWrites("its lease keep-alive task failed unexpectedly", e);
    }
  }

  private static final String LEASE_TASK = "lease keep-alive";
  private static final String LEASE_LOST =
      "lost the lease holding the store's lock key (it expired while this client was cut off, or"
          + " it was revoked); close and reopen";

  // ---------------------------------------------------------------------------------- keys

  /** Where a user key of this handle lives, for messages. */
  String describe(byte[] userKey) {
    return info().describe() + " key '" + ValueCodec.printable(userKey) + "'";
  }

  private byte[] baseOf(String keyspace) {
    return keyspace == null
        ? root.base
        : ValueCodec.concat(prefix, ValueCodec.bytes("k/" + keyspace + "/"));
  }

  private byte[] registryKey(String name) {
    return ValueCodec.concat(prefix, ValueCodec.bytes("m/ks/" + name));
  }

  // ------------------------------------------------------------------------------- fences

  private void checkLock() {
    if (root.lockLost) {
      if (root.isClosed()) {
        // close() revoked the lease under a call that raced it: that call fails as closed.
        checkOpen();
        root.checkOpen();
      }
      throw failWrites(LEASE_LOST, null);
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
        client.call("keyspace", "/v3/kv/range", Range.key(reg).json(), Retry.ALWAYS);
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
      Txn t = new Txn().requireCreated(reg, 0).put(reg, ValueCodec.bytes(name));
      t.getOnFailure(reg);
      Map<String, Object> w = commit("create keyspace '" + name + "'", t, Set.of(), Retry.ALWAYS);
      if (Boolean.TRUE.equals(w.get("succeeded"))) {
        rev = Answers.revision(w);
      } else {
        List<Object> got = Answers.rangeKvs(Json.list(w, "responses"), 0);
        rev = Json.number(Json.object(got.get(0)), "create_revision");
      }
    }
    keyspaces.put(name, rev);
    return rev;
  }

  /** The fences a txn carries: the keyspaces whose registry keys it compares, with revisions. */
  record Fences(List<String> names, List<Long> revisions) {}

  /**
   * Appends the fences of a write to {@code t}: the lock key's and {@code spaces}' registry keys'
   * create revisions compared, and read in the failure branch after the caller's reads.
   */
  Fences fence(Txn t, Set<String> spaces) {
    t.requireCreated(lockKey, lockRevision).getOnFailure(lockKey);
    List<String> names = new ArrayList<>(spaces);
    List<Long> revs = new ArrayList<>();
    for (String n : names) {
      long rev = ensureKeyspace(n);
      revs.add(rev);
      t.requireCreated(registryKey(n), rev).getOnFailure(registryKey(n));
    }
    return new Fences(names, revs);
  }

  /**
   * Sends a write txn fenced by the lock key and the registry keys of {@code spaces}. Throws when a
   * fence failed; otherwise answers etcd's reply ({@code succeeded} false: a comparison of the
   * caller's failed).
   */
  Map<String, Object> commit(String op, Txn t, Set<String> spaces, Retry retry) {
    checkLock();
    Fences f = fence(t, spaces);
    t.checkSize(op, settings, info());
    Map<String, Object> r = client.call(op, "/v3/kv/txn", t.json(), retry);
    if (Boolean.TRUE.equals(r.get("succeeded"))) {
      return r;
    }
    List<Object> responses = Json.list(r, "responses");
    int first = responses.size() - 1 - f.names().size(); // the lock key's read
    List<Object> lock = Answers.rangeKvs(responses, first);
    if (lock.isEmpty()
        || Json.number(Json.object(lock.get(0)), "create_revision") != lockRevision) {
      root.lockLost = true;
      checkLock();
    }
    for (int i = 0; i < f.names().size(); i++) {
      List<Object> reg = Answers.rangeKvs(responses, first + 1 + i);
      long rev = f.revisions().get(i);
      if (reg.isEmpty() || Json.number(Json.object(reg.get(0)), "create_revision") != rev) {
        keyspaces.remove(f.names().get(i), rev);
        throw new IllegalStateException(
            info().describe()
                + ": keyspace '"
                + f.names().get(i)
                + "' was dropped while "
                + op
                + " ran");
      }
    }
    return r;
  }

  /** The marker key present once the store has held a chunked value. */
  byte[] chunksKey() {
    return chunksKey;
  }

  /** Whether the store may hold chunks: writes must then delete each key's old chunks. */
  boolean chunksUsed() {
    return root.chunksUsed;
  }

  void noteChunksUsed() {
    root.chunksUsed = true;
  }

  /** Creates the marker key before the store's first chunks are written (once per store). */
  void markChunksUsed() {
    if (!root.chunksUsed) {
      Txn t = new Txn().put(chunksKey, ValueCodec.bytes("chunked values written"));
      commit("mark the store as holding chunked values", t, Set.of(), Retry.ALWAYS);
      root.chunksUsed = true;
    }
  }

  Set<String> ownSpace() {
    String k = keyspaceName();
    return k == null ? Set.of() : Set.of(k);
  }

  // ------------------------------------------------------------------------------- writing

  private Writes.Op op(String keyspace, byte[] key, byte[] value) {
    byte[] data = ValueCodec.concat(baseOf(keyspace), key);
    byte[] chunkPrefix = ValueCodec.chunkPrefix(ValueCodec.chunkArea(prefix, keyspace), key);
    return new Writes.Op(data, chunkPrefix, value);
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    checkLock();
    writes.apply(this, "put", List.of(op(keyspaceName(), key, value)), ownSpace());
  }

  @Override
  protected void doDelete(byte[] key) {
    checkLock();
    writes.apply(this, "delete", List.of(op(keyspaceName(), key, null)), ownSpace());
  }

  /** A batch's operations, each key's last one (etcd refuses a txn writing a key twice). */
  private List<Writes.Op> ops(WriteBatch batch, Set<String> spaces) {
    // Keeping each key's last operation leaves what the batch, applied in order, leaves.
    Map<ByteBuffer, Writes.Op> last = new LinkedHashMap<>();
    for (int i = 0, n = batch.size(); i < n; i++) {
      String ks = keyspaceOf(batch, i);
      if (ks != null) {
        spaces.add(ks);
      }
      Writes.Op o = op(ks, batch.key(i), batch.isDelete(i) ? null : batch.value(i));
      last.remove(ByteBuffer.wrap(o.dataKey()));
      last.put(ByteBuffer.wrap(o.dataKey()), o);
    }
    return new ArrayList<>(last.values());
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    checkLock();
    Set<String> spaces = new LinkedHashSet<>();
    List<Writes.Op> ops = ops(batch, spaces);
    writes.apply(this, "batch of " + batch.size() + " operations", ops, spaces);
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    checkLock();
    Writes.Op o = op(keyspaceName(), key, value);
    Writes.Condition c = writes.condition(this, o.dataKey(), o.chunkPrefix(), expected);
    // c may be null, a condition that surely does not hold, which List.of would refuse.
    List<Writes.Condition> conds = Collections.singletonList(c);
    return writes.writeIf(this, "conditional write", List.of(o), conds, ownSpace());
  }

  /**
   * The conditions are compared in the same txn that publishes the operations. A condition's
   * keyspace is not fenced nor created: a key of a keyspace that does not exist is absent.
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    checkLock();
    Set<String> spaces = new LinkedHashSet<>();
    List<Writes.Op> ops = ops(batch, spaces);
    List<Writes.Condition> conds = new ArrayList<>(batch.conditionCount());
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      Writes.Op at = op(conditionKeyspaceOf(batch, i), batch.conditionKey(i), null);
      conds.add(writes.condition(this, at.dataKey(), at.chunkPrefix(), batch.conditionValue(i)));
    }
    String what =
        "conditional batch of " + batch.size() + " operations, " + conds.size() + " conditions";
    return writes.writeIf(this, what, ops, conds, spaces);
  }

  @Override
  protected void doCompact() {
    chunks.collect(this);
    if (root == this) {
      for (String name : doKeyspaces()) {
        chunks.collect(new EtcdStore(this, name));
      }
    }
  }

  // ------------------------------------------------------------------------------- reading

  @Override
  protected byte[] doGet(byte[] key) {
    return reads.get(key, 0);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return reads.getAll(keys, 0);
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new EtcdCursor(this, range, 0);
  }

  @Override
  protected AbstractSnapshot doSnapshot() {
    return new EtcdSnapshot(this, reads.revisionNow());
  }

  @Override
  protected void doSync() {
    // Every acknowledged write is in the Raft log of a majority of members, fsynced there.
  }

  @Override
  protected StoreStats doStats() {
    String count = Range.of(base, ValueCodec.prefixEnd(base)).countOnly().json();
    Map<String, Object> r = client.call("stats", "/v3/kv/range", count, Retry.ALWAYS);
    // diskBytes: the database file of the member that answered, which every store on the cluster
    // (and its history until compaction) shares; etcd keeps no per-prefix size.
    long db =
        Json.number(client.call("stats", "/v3/maintenance/status", "{}", Retry.ALWAYS), "dbSize");
    Map<String, Number> figures = new LinkedHashMap<>();
    figures.put("revision", Answers.revision(r));
    figures.put("cluster.db-size", db);
    figures.put("retries", client.retries());
    figures.put("chunks.collected", chunks.collected());
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
    byte[] p = ValueCodec.concat(prefix, ValueCodec.bytes("m/ks/"));
    String body = Range.of(p, ValueCodec.prefixEnd(p)).keysOnly().json();
    Map<String, Object> r = client.call("keyspaces", "/v3/kv/range", body, Retry.ALWAYS);
    List<String> names = new ArrayList<>();
    for (Object kv : Json.list(r, "kvs")) {
      byte[] k = Answers.key(kv);
      names.add(new String(k, p.length, k.length - p.length, StandardCharsets.UTF_8));
    }
    return names;
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    checkLock();
    byte[] b = baseOf(name);
    byte[] area = ValueCodec.chunkArea(prefix, name);
    Txn t =
        new Txn()
            .delete(registryKey(name))
            .deleteRange(b, ValueCodec.prefixEnd(b))
            .deleteRange(area, ValueCodec.prefixEnd(area));
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
    keeper.close(); // waits for a keep-alive in progress: none runs after the revoke
    try {
      Opening.revoke(client, lease); // deletes the lock key with the lease
    } finally {
      client.close();
    }
  }
}
