package io.kv4j.redis;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A scan of a sharded store: a k-way merge of the shards' sorted-set indexes. It opens with one
 * page of every shard, fetched pipelined (one round trip per node), then refills a shard whenever
 * its buffered page runs out. Each page is read atomically on its shard; the merge is not a
 * snapshot, but keys come strictly in order, each at most once (a key lives in exactly one shard,
 * and each shard's pages move strictly past its last key).
 */
final class ShardedCursor extends AbstractCursor {
  /** One shard's buffered page and where its next page starts. */
  private static final class Head {
    final int shard;
    final ArrayDeque<Entry> buffer = new ArrayDeque<>();
    byte[] last;
    boolean done;

    Head(int shard) {
      this.shard = shard;
    }
  }

  private final ShardedStore store;
  private final KeyRange range;
  private final int fetchSize;
  private final PriorityQueue<Head> heads;
  private long left;
  private boolean started;

  ShardedCursor(ShardedStore store, KeyRange range, int fetchSize) {
    super(store, range);
    this.store = store;
    this.range = range;
    this.fetchSize = fetchSize;
    this.left = range.limitValue();
    Comparator<Head> order =
        (a, b) -> Arrays.compareUnsigned(a.buffer.peek().key(), b.buffer.peek().key());
    this.heads =
        new PriorityQueue<>(
            Math.max(1, store.shards()), range.isReverse() ? order.reversed() : order);
  }

  private byte[] lowerBound() {
    byte[] lo = range.lower();
    return lo == null
        ? RedisCursor.MINUS
        : RedisCursor.bound(range.lowerInclusive() ? (byte) '[' : (byte) '(', lo);
  }

  private byte[] upperBound() {
    byte[] hi = range.upper();
    return hi == null
        ? RedisCursor.PLUS
        : RedisCursor.bound(range.upperInclusive() ? (byte) '[' : (byte) '(', hi);
  }

  /** Fetches the next page of each head given, pipelined, and queues those that hold entries. */
  private void fetch(List<Head> batch, int count) {
    boolean reverse = range.isReverse();
    int n = batch.size();
    int[] shard = new int[n];
    byte[][] min = new byte[n][];
    byte[][] max = new byte[n][];
    for (int i = 0; i < n; i++) {
      Head h = batch.get(i);
      shard[i] = h.shard;
      if (reverse) {
        min[i] = lowerBound();
        max[i] = h.last == null ? upperBound() : RedisCursor.bound((byte) '(', h.last);
      } else {
        min[i] = h.last == null ? lowerBound() : RedisCursor.bound((byte) '(', h.last);
        max[i] = upperBound();
      }
    }
    List<List<Object>> pages = store.pages(shard, min, max, count, reverse);
    for (int i = 0; i < n; i++) {
      Head h = batch.get(i);
      List<Object> page = pages.get(i);
      for (int e = 0; e + 1 < page.size(); e += 2) {
        byte[] k = (byte[]) page.get(e);
        byte[] v = (byte[]) page.get(e + 1);
        h.last = k;
        if (v != null) {
          h.buffer.add(new Entry(k, v));
        }
      }
      if (page.size() / 2 < count) {
        h.done = true;
      }
    }
  }

  private void start() {
    started = true;
    if (range.isEmpty() || left <= 0) {
      return;
    }
    List<Head> all = new java.util.ArrayList<>(store.shards());
    for (int j = 0; j < store.shards(); j++) {
      all.add(new Head(j));
    }
    // A first page per shard: small when there are many shards (most scans read few entries).
    int first =
        (int) Math.min(left, Math.max(16, Math.min(fetchSize, 2 * fetchSize / store.shards())));
    fetch(all, first);
    for (Head h : all) {
      settle(h);
    }
  }

  /** Queues a head holding entries; refills an empty one until it holds some or is done. */
  private void settle(Head h) {
    while (h.buffer.isEmpty() && !h.done) {
      fetch(List.of(h), (int) Math.min(fetchSize, left));
    }
    if (!h.buffer.isEmpty()) {
      heads.add(h);
    }
  }

  @Override
  protected Entry advance() {
    if (!started) {
      start();
    }
    if (left <= 0) {
      return null;
    }
    Head h = heads.poll();
    if (h == null) {
      return null;
    }
    Entry e = h.buffer.poll();
    left--;
    if (left > 0) {
      settle(h);
    }
    return e;
  }

  @Override
  protected void release() {
    heads.clear();
    left = 0;
  }
}
