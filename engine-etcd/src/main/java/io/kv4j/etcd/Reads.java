package io.kv4j.etcd;

import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.etcd.EtcdClient.Retry;
import io.kv4j.etcd.ValueCodec.Manifest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The reads of one store or keyspace handle: its keys at an etcd revision (0: the latest, read
 * linearizably), each chunked value reassembled from its chunks read <em>at the revision its key
 * was read at</em>, when they all existed (a manifest is only published with its chunks, and chunks
 * are only deleted with their manifest). Holds nothing on the server.
 */
final class Reads {
  private final EtcdClient client;
  private final StoreInfo info;
  private final byte[] base; // where the handle's keys live
  private final byte[] chunkArea; // where the chunks of the handle's values live
  private final byte[] lockKey; // read for the cluster's revision
  private final Chunks chunks;
  private final int maxTxnOps;

  Reads(
      EtcdClient client,
      EtcdSettings settings,
      StoreInfo info,
      byte[] base,
      byte[] chunkArea,
      byte[] lockKey,
      Chunks chunks) {
    this.client = client;
    this.info = info;
    this.base = base;
    this.chunkArea = chunkArea;
    this.lockKey = lockKey;
    this.chunks = chunks;
    this.maxTxnOps = settings.maxTxnOps();
  }

  /** A key as read: its kv (key, value, revisions) and the revision it was read at. */
  record Stored(Object kv, long revision) {
    long modRevision() {
      return Json.number(Json.object(kv), "mod_revision");
    }
  }

  /** Reads one etcd key of the handle's area at {@code revision} (0: latest); null if absent. */
  Stored stored(byte[] dataKey, long revision) {
    Map<String, Object> r =
        client.call("get", "/v3/kv/range", Range.key(dataKey).at(revision).json(), Retry.ALWAYS);
    List<Object> kvs = Json.list(r, "kvs");
    // The header carries the cluster's revision now, not the one asked for.
    return kvs.isEmpty()
        ? null
        : new Stored(kvs.get(0), revision > 0 ? revision : Answers.revision(r));
  }

  /** The user's value of a kv of the handle read at {@code revision}, chunks reassembled. */
  byte[] decode(Object kv, long revision) {
    byte[] k = Answers.key(kv);
    byte[] userKey = Arrays.copyOfRange(k, base.length, k.length);
    return decode(kv, revision, ValueCodec.chunkPrefix(chunkArea, userKey));
  }

  /** The user's value of a kv whose chunks start with {@code chunkPrefix}, read at revision. */
  byte[] decode(Object kv, long revision, byte[] chunkPrefix) {
    byte[] stored = Answers.value(kv);
    String where = info.describe() + " etcd key '" + ValueCodec.printable(Answers.key(kv)) + "'";
    if (!ValueCodec.isManifest(stored, where)) {
      return ValueCodec.inlineValue(stored);
    }
    Manifest m = ValueCodec.parseManifest(stored, where);
    return chunks.read(where, chunkPrefix, m, revision);
  }

  /** The value of a user key at {@code revision} (0: latest); null if absent. */
  byte[] get(byte[] key, long revision) {
    Stored s = stored(ValueCodec.concat(base, key), revision);
    return s == null ? null : decode(s.kv(), s.revision());
  }

  /** Kvs read at one revision (null where a key is absent). */
  record Kvs(List<Object> kvs, long revision) {}

  /**
   * The kvs of user keys, read in txns of at most max-txn-ops ranges, every one at {@code revision}
   * (0: the first txn's, read linearizably).
   */
  Kvs kvs(List<byte[]> keys, long revision) {
    List<Object> out = new ArrayList<>(keys.size());
    for (int from = 0; from < keys.size(); from += maxTxnOps) {
      Txn t = new Txn();
      List<byte[]> part = keys.subList(from, Math.min(keys.size(), from + maxTxnOps));
      for (byte[] k : part) {
        t.get(ValueCodec.concat(base, k), revision);
      }
      Map<String, Object> r = client.call("getAll", "/v3/kv/txn", t.json(), Retry.ALWAYS);
      if (revision == 0) {
        revision = Answers.revision(r);
      }
      List<Object> responses = Json.list(r, "responses");
      if (responses.size() != part.size()) {
        throw new StoreIOException(
            info.describe()
                + ": getAll read "
                + part.size()
                + " keys and etcd answered "
                + responses.size(),
            (Throwable) null);
      }
      for (int i = 0; i < part.size(); i++) {
        List<Object> kvs = Answers.rangeKvs(responses, i);
        out.add(kvs.isEmpty() ? null : kvs.get(0));
      }
    }
    return new Kvs(out, revision);
  }

  /** Reads keys at one revision ({@link #kvs}), chunked values reassembled at it. */
  List<byte[]> getAll(List<byte[]> keys, long revision) {
    Kvs kvs = kvs(keys, revision);
    List<byte[]> values = new ArrayList<>(keys.size());
    for (Object kv : kvs.kvs()) {
      values.add(kv == null ? null : decode(kv, kvs.revision()));
    }
    return values;
  }

  /** One page of a range read: the answer's kvs and the revision it was read at. */
  record Page(List<Object> kvs, long revision, boolean more) {}

  /** Up to {@code limit} kvs of {@code [key, end)} at {@code revision}, descending if reverse. */
  Page page(byte[] key, byte[] end, int limit, long revision, boolean reverse) {
    Range range = Range.of(key, end).limit(limit).at(revision);
    if (reverse) {
      range.descending();
    }
    Map<String, Object> r = client.call("scan", "/v3/kv/range", range.json(), Retry.ALWAYS);
    return new Page(Json.list(r, "kvs"), Answers.revision(r), Boolean.TRUE.equals(r.get("more")));
  }

  /** The cluster's revision now, read linearizably. */
  long revisionNow() {
    String body = Range.key(lockKey).limit(1).countOnly().json();
    return Answers.revision(client.call("snapshot", "/v3/kv/range", body, Retry.ALWAYS));
  }
}
