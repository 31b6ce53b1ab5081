package io.kv4j.etcd;

import io.kv4j.StoreInfo;
import java.util.ArrayList;
import java.util.List;

/**
 * One etcd transaction ({@code POST /v3/kv/txn}), built up and then rendered as JSON; it counts its
 * size and operations as they are added, so a write can be sized (against {@code max-request-bytes}
 * and {@code max-txn-ops}) before anything is encoded or sent.
 */
final class Txn {
  private final List<Cmp> compare = new ArrayList<>();
  private final List<Op> success = new ArrayList<>();
  private final List<Op> failure = new ArrayList<>();
  private long bytes = 64;

  private enum Target {
    CREATE,
    MOD,
    VALUE
  }

  private record Cmp(byte[] key, Target target, long revision, byte[] value) {}

  /** A put (value set), a delete of {@code [key, end)} or of key alone, or a read (get set). */
  private record Op(byte[] key, byte[] end, byte[] value, long lease, boolean get, long revision) {}

  /** Requires the key's create revision to be {@code rev} (0: the key must be absent). */
  Txn requireCreated(byte[] key, long rev) {
    compare.add(new Cmp(key, Target.CREATE, rev, null));
    bytes += key.length + 24;
    return this;
  }

  /** Requires the key's last modification to be at revision {@code rev}. */
  Txn requireModified(byte[] key, long rev) {
    compare.add(new Cmp(key, Target.MOD, rev, null));
    bytes += key.length + 24;
    return this;
  }

  /** Requires the key to hold {@code value} (a compare on an absent key fails). */
  Txn requireValue(byte[] key, byte[] value) {
    compare.add(new Cmp(key, Target.VALUE, 0, value));
    bytes += key.length + value.length + 24;
    return this;
  }

  Txn put(byte[] key, byte[] value) {
    return put(key, value, 0);
  }

  Txn put(byte[] key, byte[] value, long lease) {
    success.add(new Op(key, null, value, lease, false, 0));
    bytes += key.length + value.length + 24;
    return this;
  }

  Txn delete(byte[] key) {
    return deleteRange(key, null);
  }

  /** Deletes {@code [key, end)}, or the key alone when {@code end} is null. */
  Txn deleteRange(byte[] key, byte[] end) {
    success.add(new Op(key, end, null, 0, false, 0));
    bytes += key.length + 16 + (end == null ? 0 : end.length);
    return this;
  }

  /** Reads one key in the success branch (at {@code revision}, or the latest when 0). */
  Txn get(byte[] key, long revision) {
    success.add(new Op(key, null, null, 0, true, revision));
    bytes += key.length + 16;
    return this;
  }

  /** Reads one key in the failure branch, to tell which comparison failed. */
  Txn getOnFailure(byte[] key) {
    failure.add(new Op(key, null, null, 0, true, 0));
    bytes += key.length + 16;
    return this;
  }

  /** The most operations in one branch or comparisons, what etcd's --max-txn-ops bounds. */
  int width() {
    return Math.max(compare.size(), Math.max(success.size(), failure.size()));
  }

  /** An estimate, from above, of the request's size as etcd counts it (protobuf, not JSON). */
  long bytes() {
    return bytes;
  }

  /**
   * Refuses this txn when it is over max-txn-ops or max-request-bytes, naming the limit and its
   * option.
   *
   * @param op what the txn does, for the message
   * @param settings the limits
   * @param store the store it writes, for the message
   * @throws IllegalArgumentException if the txn is over a limit
   */
  void checkSize(String op, EtcdSettings settings, StoreInfo store) {
    if (width() > settings.maxTxnOps()) {
      throw new IllegalArgumentException(
          op
              + " needs "
              + width()
              + " operations in one etcd transaction, more than max-txn-ops="
              + settings.maxTxnOps()
              + " ("
              + store.describe()
              + "; a batch takes one per distinct key, two per key once the store has held a"
              + " chunked value, and three per value too large to write inline; raise the"
              + " cluster's --max-txn-ops and this option together, or split the batch)");
    }
    if (bytes > settings.maxRequestBytes()) {
      throw new IllegalArgumentException(
          op
              + " needs a request of about "
              + bytes
              + " bytes even with its large values chunked, more than max-request-bytes="
              + settings.maxRequestBytes()
              + " ("
              + store.describe()
              + "; raise the cluster's --max-request-bytes and this option together, or split the"
              + " batch)");
    }
  }

  String json() {
    StringBuilder b = new StringBuilder((int) Math.min(Integer.MAX_VALUE - 16, bytes * 4 / 3 + 64));
    b.append("{\"compare\":[");
    for (int i = 0; i < compare.size(); i++) {
      Cmp c = compare.get(i);
      b.append(i == 0 ? "" : ",").append("{\"key\":\"").append(ValueCodec.b64(c.key()));
      b.append("\",\"target\":\"").append(c.target()).append("\",\"result\":\"EQUAL\",");
      switch (c.target()) {
        case CREATE -> b.append("\"create_revision\":\"").append(c.revision());
        case MOD -> b.append("\"mod_revision\":\"").append(c.revision());
        case VALUE -> b.append("\"value\":\"").append(ValueCodec.b64(c.value()));
      }
      b.append("\"}");
    }
    ops(b.append("],\"success\":["), success);
    ops(b.append("],\"failure\":["), failure);
    return b.append("]}").toString();
  }

  private static void ops(StringBuilder b, List<Op> ops) {
    for (int i = 0; i < ops.size(); i++) {
      Op o = ops.get(i);
      b.append(i == 0 ? "" : ",");
      String kind =
          o.get() ? "request_range" : o.value() != null ? "request_put" : "request_delete_range";
      b.append("{\"").append(kind).append("\":{\"key\":\"").append(ValueCodec.b64(o.key()));
      b.append('"');
      if (o.end() != null) {
        b.append(",\"range_end\":\"").append(ValueCodec.b64(o.end())).append('"');
      }
      if (o.value() != null) {
        b.append(",\"value\":\"").append(ValueCodec.b64(o.value())).append('"');
      }
      if (o.lease() != 0) {
        b.append(",\"lease\":\"").append(o.lease()).append('"');
      }
      if (o.revision() != 0) {
        b.append(",\"revision\":\"").append(o.revision()).append('"');
      }
      b.append("}}");
    }
  }
}
