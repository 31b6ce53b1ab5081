package io.kv4j.etcd;

/** The JSON of one range read ({@code POST /v3/kv/range}), built up. */
final class Range {
  private final StringBuilder b;

  private Range(byte[] key) {
    b = new StringBuilder("{\"key\":\"").append(ValueCodec.b64(key)).append('"');
  }

  /** A read of one key. */
  static Range key(byte[] key) {
    return new Range(key);
  }

  /** A read of {@code [from, end)}. */
  static Range of(byte[] from, byte[] end) {
    Range r = new Range(from);
    r.b.append(",\"range_end\":\"").append(ValueCodec.b64(end)).append('"');
    return r;
  }

  /** At most {@code n} entries (0: all). */
  Range limit(long n) {
    if (n > 0) {
      b.append(",\"limit\":\"").append(n).append('"');
    }
    return this;
  }

  /** As of {@code revision} (0: the latest, read linearizably). */
  Range at(long revision) {
    if (revision > 0) {
      b.append(",\"revision\":\"").append(revision).append('"');
    }
    return this;
  }

  /** Descending by key. */
  Range descending() {
    b.append(",\"sort_order\":\"DESCEND\",\"sort_target\":\"KEY\"");
    return this;
  }

  /** Only the count, no entries. */
  Range countOnly() {
    b.append(",\"count_only\":true");
    return this;
  }

  /** Entries without their values. */
  Range keysOnly() {
    b.append(",\"keys_only\":true");
    return this;
  }

  String json() {
    return b + "}";
  }
}
