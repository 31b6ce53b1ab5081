package io.kv4j.redis;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import java.util.ArrayDeque;
import java.util.List;

/**
 * A paged cursor over the store's sorted-set index: each page is {@code ZRANGEBYLEX} (or {@code
 * ZREVRANGEBYLEX}) plus {@code HMGET} in one script, the next page starting just past the last key
 * returned. Not a snapshot, but strictly ordered, each key at most once. Holds no connection
 * between pages.
 */
final class RedisCursor extends AbstractCursor {
  static final byte[] MINUS = {'-'};
  static final byte[] PLUS = {'+'};

  private final RedisStore store;
  private final KeyRange range;
  private final int fetchSize;
  private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
  private long left;
  private byte[] last;
  private boolean done;

  RedisCursor(RedisStore store, KeyRange range, int fetchSize) {
    super(store, range);
    this.store = store;
    this.range = range;
    this.fetchSize = fetchSize;
    this.left = range.limitValue();
  }

  static byte[] bound(byte prefix, byte[] key) {
    byte[] b = new byte[key.length + 1];
    b[0] = prefix;
    System.arraycopy(key, 0, b, 1, key.length);
    return b;
  }

  private byte[] lowerBound() {
    byte[] lo = range.lower();
    return lo == null ? MINUS : bound(range.lowerInclusive() ? (byte) '[' : (byte) '(', lo);
  }

  private byte[] upperBound() {
    byte[] hi = range.upper();
    return hi == null ? PLUS : bound(range.upperInclusive() ? (byte) '[' : (byte) '(', hi);
  }

  private void fetch() {
    boolean reverse = range.isReverse();
    byte[] min;
    byte[] max;
    if (reverse) {
      min = lowerBound();
      max = last == null ? upperBound() : bound((byte) '(', last);
    } else {
      min = last == null ? lowerBound() : bound((byte) '(', last);
      max = upperBound();
    }
    int count = (int) Math.min(fetchSize, left);
    List<Object> page = store.page(min, max, count, reverse);
    for (int i = 0; i + 1 < page.size(); i += 2) {
      byte[] k = (byte[]) page.get(i);
      byte[] v = (byte[]) page.get(i + 1);
      last = k;
      if (v != null) {
        buffer.add(new Entry(k, v));
      }
    }
    left -= page.size() / 2;
    if (page.size() / 2 < count || left <= 0) {
      done = true;
    }
  }

  @Override
  protected Entry advance() {
    while (buffer.isEmpty() && !done) {
      fetch();
    }
    return buffer.poll();
  }

  @Override
  protected void release() {
    buffer.clear();
    done = true;
  }
}
