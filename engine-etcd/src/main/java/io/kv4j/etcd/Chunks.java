package io.kv4j.etcd;

import io.kv4j.etcd.EtcdClient.Retry;
import io.kv4j.etcd.ValueCodec.ChunkName;
import io.kv4j.etcd.ValueCodec.Manifest;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * The chunks of values too large for one etcd request (format in {@link ValueCodec}): written in
 * fenced txns of at most {@code max-request-bytes} before the txn that publishes their manifest,
 * read back at the revision the manifest was read at, and collected by {@code compact()} when no
 * manifest names them (a writer that failed or died between the two).
 */
final class Chunks {
  /**
   * Room kept in every request for keys, fences and framing: a write's keys (up to 4 KiB each, and
   * a key appears in up to six places of its txn) and the lock and keyspace fences.
   */
  static final int RESERVE = 64 << 10;

  /** The most chunk bytes one range read returns. */
  private static final long PAGE_BYTES = 8L << 20;

  private static final SecureRandom RANDOM = new SecureRandom();

  private final EtcdClient client;
  private final long requestBytes;
  private final int maxTxnOps;

  /** The longest value a put stores inline; longer ones are chunked. */
  final int inlineMax;

  /** The size of a chunk (the last one of a value may be shorter). */
  final int chunkSize;

  /** Ids of chunked values being written by this client: compact() leaves their chunks alone. */
  private final Set<ByteBuffer> inFlight = ConcurrentHashMap.newKeySet();

  private final AtomicLong collected = new AtomicLong();

  Chunks(EtcdClient client, EtcdSettings s) {
    this.client = client;
    this.requestBytes = s.maxRequestBytes();
    this.maxTxnOps = s.maxTxnOps();
    // Half the room: a conditional write may carry the expected value and the new one.
    this.inlineMax = (int) ((requestBytes - RESERVE) / 2);
    this.chunkSize = Math.min(1 << 20, inlineMax);
  }

  /** Chunk keys deleted by compact() so far. */
  long collected() {
    return collected.get();
  }

  /** A value to be written in chunks under a fresh id, then published by a manifest. */
  static final class Pending {
    final byte[] chunkPrefix;
    final byte[] value;
    final Manifest manifest;
    final byte[] idPrefix;

    /** The revision that created chunk 0, which the publishing txn requires unchanged. */
    long chunk0Revision;

    Pending(byte[] chunkPrefix, byte[] value, Manifest manifest) {
      this.chunkPrefix = chunkPrefix;
      this.value = value;
      this.manifest = manifest;
      this.idPrefix = ValueCodec.idPrefix(chunkPrefix, manifest.id());
    }

    byte[] chunk0() {
      return ValueCodec.chunkKey(idPrefix, 0);
    }

    byte[] stored() {
      return ValueCodec.manifest(manifest);
    }
  }

  /** Plans a value's chunks under a fresh id, marking the id in flight until {@link #release}. */
  Pending prepare(byte[] chunkPrefix, byte[] value) {
    byte[] id = new byte[ValueCodec.ID_BYTES];
    RANDOM.nextBytes(id);
    CRC32C crc = new CRC32C();
    crc.update(value);
    int count = (value.length + chunkSize - 1) / chunkSize;
    Pending p =
        new Pending(
            chunkPrefix,
            value,
            new Manifest(id, value.length, count, chunkSize, (int) crc.getValue()));
    inFlight.add(ByteBuffer.wrap(id));
    return p;
  }

  /** Ends the values' writes (published or not): compact() may judge their chunks again. */
  void release(Collection<Pending> pending) {
    for (Pending p : pending) {
      inFlight.remove(ByteBuffer.wrap(p.manifest.id()));
    }
  }

  /**
   * Writes the chunks of {@code pending}, packed into txns of at most {@code max-request-bytes} and
   * {@code max-txn-ops}, each fenced like any write of {@code h}; records each value's chunk 0
   * revision.
   */
  void write(EtcdStore h, String op, List<Pending> pending, Set<String> spaces) {
    long budget = requestBytes - RESERVE;
    int ops = Math.max(1, maxTxnOps);
    Txn t = null;
    List<Pending> starting = new ArrayList<>();
    for (Pending p : pending) {
      Manifest m = p.manifest;
      for (int i = 0; i < m.count(); i++) {
        byte[] key = ValueCodec.chunkKey(p.idPrefix, i);
        int len = m.length(i);
        if (t != null && (t.bytes() + key.length + len + 24 > budget || t.width() >= ops)) {
          flush(h, op, t, starting, spaces);
          t = null;
        }
        if (t == null) {
          t = new Txn();
        }
        int from = (int) m.offset(i);
        t.put(key, Arrays.copyOfRange(p.value, from, from + len));
        if (i == 0) {
          starting.add(p);
        }
      }
    }
    if (t != null) {
      flush(h, op, t, starting, spaces);
    }
  }

  private static void flush(
      EtcdStore h, String op, Txn t, List<Pending> starting, Set<String> spaces) {
    Map<String, Object> r = h.commit(op + " (chunks)", t, spaces, Retry.ALWAYS);
    long revision = Json.number(Json.object(r.get("header")), "revision");
    for (Pending p : starting) {
      p.chunk0Revision = revision;
    }
    starting.clear();
  }

  /**
   * Reassembles a chunked value from its chunks at {@code revision} (the revision its manifest was
   * read at: they all exist there).
   *
   * @throws io.kv4j.StoreCorruptedException when a chunk is missing or the value's CRC differs
   */
  byte[] read(String where, byte[] chunkPrefix, Manifest m, long revision) {
    if (m.length() > Integer.MAX_VALUE - 16) {
      throw ValueCodec.corrupted(where, "a manifest of an impossible size: " + m.describe());
    }
    byte[] out = new byte[(int) m.length()];
    byte[] idPrefix = ValueCodec.idPrefix(chunkPrefix, m.id());
    byte[] end = ValueCodec.prefixEnd(idPrefix);
    long perPage = Math.max(1, PAGE_BYTES / m.chunkSize());
    int next = 0;
    while (next < m.count()) {
      byte[] from = ValueCodec.chunkKey(idPrefix, next);
      String body = Range.of(from, end).limit(perPage).at(revision).json();
      List<Object> kvs = Json.list(client.call("get", "/v3/kv/range", body, Retry.ALWAYS), "kvs");
      if (kvs.isEmpty()) {
        throw ValueCodec.corrupted(where, m.describe() + " whose chunk " + next + " is missing");
      }
      for (Object kv : kvs) {
        byte[] value = Answers.value(kv);
        if (next >= m.count()
            || !Arrays.equals(Answers.key(kv), ValueCodec.chunkKey(idPrefix, next))
            || value.length != m.length(next)) {
          throw ValueCodec.corrupted(
              where, m.describe() + " whose chunk " + next + " is missing or of the wrong size");
        }
        System.arraycopy(value, 0, out, (int) m.offset(next), value.length);
        next++;
      }
    }
    CRC32C crc = new CRC32C();
    crc.update(out);
    if ((int) crc.getValue() != m.crc()) {
      throw ValueCodec.corrupted(where, m.describe() + " whose chunks fail its CRC32C");
    }
    return out;
  }

  /**
   * Deletes the chunks of {@code h}'s area that no manifest names (a write that failed or whose
   * client died between its chunks and its manifest), leaving those of writes in flight here. Each
   * value's chunks go in a txn requiring its key unchanged since they were judged orphans.
   */
  void collect(EtcdStore h) {
    long revision = h.reads.revisionNow();
    List<ChunkName> names = new ArrayList<>();
    byte[] from = h.chunkArea;
    byte[] end = ValueCodec.prefixEnd(h.chunkArea);
    while (true) {
      String body = Range.of(from, end).limit(1000).at(revision).keysOnly().json();
      Map<String, Object> r = client.call("compact", "/v3/kv/range", body, Retry.ALWAYS);
      List<Object> kvs = Json.list(r, "kvs");
      for (Object kv : kvs) {
        ChunkName n = ValueCodec.parseChunkKey(h.chunkArea, Answers.key(kv));
        if (n != null && (names.isEmpty() || !names.get(names.size() - 1).sameValue(n))) {
          names.add(n);
        }
      }
      if (kvs.isEmpty() || !Boolean.TRUE.equals(r.get("more"))) {
        break;
      }
      from = ValueCodec.concat(Answers.key(kvs.get(kvs.size() - 1)), new byte[] {0});
    }
    names.removeIf(n -> inFlight.contains(ByteBuffer.wrap(n.id())));
    int batch = Math.max(1, Math.min(maxTxnOps, 500));
    for (int i = 0; i < names.size(); i += batch) {
      List<ChunkName> part = names.subList(i, Math.min(names.size(), i + batch));
      List<Object> owners = h.reads.kvs(part.stream().map(ChunkName::key).toList(), revision).kvs();
      for (int j = 0; j < part.size(); j++) {
        collectIfOrphan(h, part.get(j), owners.get(j));
      }
    }
  }

  private void collectIfOrphan(EtcdStore h, ChunkName n, Object owner) {
    byte[] dataKey = ValueCodec.concat(h.base, n.key());
    if (owner != null) {
      byte[] stored = Answers.value(owner);
      String where = h.describe(n.key());
      if (ValueCodec.isManifest(stored, where)
          && Arrays.equals(ValueCodec.parseManifest(stored, where).id(), n.id())) {
        return; // live
      }
    }
    byte[] idPrefix = ValueCodec.idPrefix(ValueCodec.chunkPrefix(h.chunkArea, n.key()), n.id());
    Txn t = new Txn();
    if (owner == null) {
      t.requireCreated(dataKey, 0);
    } else {
      t.requireModified(dataKey, Json.number(Json.object(owner), "mod_revision"));
    }
    t.deleteRange(idPrefix, ValueCodec.prefixEnd(idPrefix));
    Map<String, Object> r = h.commit("compact", t, h.ownSpace(), Retry.ALWAYS);
    if (Boolean.TRUE.equals(r.get("succeeded"))) {
      Object d = Json.object(Json.list(r, "responses").get(0)).get("response_delete_range");
      collected.addAndGet(Json.number(Json.object(d), "deleted"));
    }
  }
}
