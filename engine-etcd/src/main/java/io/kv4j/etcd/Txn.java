package io.kv4j.etcd;

import java.util.Base64;

/** The JSON of one etcd transaction ({@code POST /v3/kv/txn}), built up, with its size. */
final class Txn {
  private final StringBuilder compare = new StringBuilder();
  private final StringBuilder success = new StringBuilder();
  private final StringBuilder failure = new StringBuilder();
  private int compares;
  private int successOps;
  private int failureOps;
  private long bytes = 64;

  static String b64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }

  private static StringBuilder sep(StringBuilder sb) {
    return sb.length() == 0 ? sb : sb.append(',');
  }

  /** Requires the key's create revision to be {@code rev} (0: the key must be absent). */
  Txn requireCreated(byte[] key, long rev) {
    sep(compare)
        .append("{\"key\":\"")
        .append(b64(key))
        .append("\",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":\"")
        .append(rev)
        .append("\"}");
    compares++;
    bytes += key.length + 24;
    return this;
  }

  /** Requires the key to hold {@code value} (a compare on an absent key fails). */
  Txn requireValue(byte[] key, byte[] value) {
    sep(compare)
        .append("{\"key\":\"")
        .append(b64(key))
        .append("\",\"target\":\"VALUE\",\"result\":\"EQUAL\",\"value\":\"")
        .append(b64(value))
        .append("\"}");
    compares++;
    bytes += key.length + value.length + 24;
    return this;
  }

  Txn put(byte[] key, byte[] value) {
    return put(key, value, 0);
  }

  Txn put(byte[] key, byte[] value, long lease) {
    sep(success)
        .append("{\"request_put\":{\"key\":\"")
        .append(b64(key))
        .append("\",\"value\":\"")
        .append(b64(value))
        .append('"');
    if (lease != 0) {
      success.append(",\"lease\":\"").append(lease).append('"');
    }
    success.append("}}");
    successOps++;
    bytes += key.length + value.length + 24;
    return this;
  }

  Txn delete(byte[] key) {
    return deleteRange(key, null);
  }

  /** Deletes {@code [key, end)}, or the key alone when {@code end} is null. */
  Txn deleteRange(byte[] key, byte[] end) {
    sep(success).append("{\"request_delete_range\":{\"key\":\"").append(b64(key)).append('"');
    if (end != null) {
      success.append(",\"range_end\":\"").append(b64(end)).append('"');
      bytes += end.length;
    }
    success.append("}}");
    successOps++;
    bytes += key.length + 16;
    return this;
  }

  /** Reads one key in the success branch (at {@code revision}, or the latest when 0). */
  Txn get(byte[] key, long revision) {
    range(sep(success), key, revision);
    successOps++;
    bytes += key.length + 16;
    return this;
  }

  /** Reads one key in the failure branch, to tell which comparison failed. */
  Txn getOnFailure(byte[] key) {
    range(sep(failure), key, 0);
    failureOps++;
    return this;
  }

  private static void range(StringBuilder sb, byte[] key, long revision) {
    sb.append("{\"request_range\":{\"key\":\"").append(b64(key)).append('"');
    if (revision != 0) {
      sb.append(",\"revision\":\"").append(revision).append('"');
    }
    sb.append("}}");
  }

  /** The most operations in one branch or comparisons, what etcd's --max-txn-ops bounds. */
  int width() {
    return Math.max(compares, Math.max(successOps, failureOps));
  }

  int successOps() {
    return successOps;
  }

  /** An estimate, from above, of the request's size as etcd counts it (protobuf, not JSON). */
  long bytes() {
    return bytes;
  }

  String json() {
    return "{\"compare\":["
        + compare
        + "],\"success\":["
        + success
        + "],\"failure\":["
        + failure
        + "]}";
  }
}
