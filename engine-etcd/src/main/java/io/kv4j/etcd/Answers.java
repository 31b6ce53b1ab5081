package io.kv4j.etcd;

import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The parts of etcd's answers every reader needs: a txn's range responses, a kv's key and value
 * (base64 in the JSON gateway; absent when empty) and the revision an answer was read at.
 */
final class Answers {
  private Answers() {}

  /** The kvs of the range response at {@code i} of a txn's responses. */
  static List<Object> rangeKvs(List<Object> responses, int i) {
    return Json.list(Json.object(Json.object(responses.get(i)).get("response_range")), "kvs");
  }

  /** A kv's value; etcd leaves an empty value out. */
  static byte[] value(Object kv) {
    Object v = Json.object(kv).get("value");
    return v == null ? new byte[0] : Base64.getDecoder().decode(v.toString());
  }

  /** A kv's key. */
  static byte[] key(Object kv) {
    Object k = Json.object(kv).get("key");
    return k == null ? new byte[0] : Base64.getDecoder().decode(k.toString());
  }

  /** The cluster's revision when it answered. */
  static long revision(Map<String, Object> answer) {
    return Json.number(Json.object(answer.get("header")), "revision");
  }
}
