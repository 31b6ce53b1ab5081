package io.kv4j.etcd;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * A paged cursor: each page is one range request (descending by key for a reverse range), the next
 * page starting just past the last key returned. The first page is read when the cursor opens and
 * every later one at its revision, so the cursor sees the store as of {@code scan()}
 * (SNAPSHOT_SCAN), or at a snapshot's revision. Holds nothing on the server between pages.
 */
final class EtcdCursor extends AbstractCursor {
  private static final byte[] ZERO = {0};

  private final EtcdStore store;
  private final int baseLength;
  private final boolean reverse;
  private final int fetchSize;
  private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
  private byte[] from; // first etcd key of the next page (inclusive)
  private byte[] end; // etcd range end (exclusive)
  private long revision;
  private long left;
  private boolean done;

  EtcdCursor(EtcdStore store, KeyRange range, long revision) {
    super(store, range);
    this.store = store;
    byte[] base = store.base;
    this.baseLength = base.length;
    this.reverse = range.isReverse();
    this.fetchSize = store.settings.fetchSize();
    this.revision = revision;
    this.left = range.limitValue();
    byte[] lo = range.lower();
    byte[] hi = range.upper();
    this.from =
        lo == null
            ? base
            : range.lowerInclusive()
                ? ValueCodec.concat(base, lo)
                : ValueCodec.concat(ValueCodec.concat(base, lo), ZERO);
    this.end =
        hi == null
            ? ValueCodec.prefixEnd(base)
            : range.upperInclusive()
                ? ValueCodec.concat(ValueCodec.concat(base, hi), ZERO)
                : ValueCodec.concat(base, hi);
    if (revision == 0 && !range.isEmpty()) {
      fetch(); // the first page now: it fixes the revision the cursor reads at, scan()'s moment
    }
  }

  private void fetch() {
    if (Arrays.compareUnsigned(from, end) >= 0 || left <= 0) {
      done = true;
      return;
    }
    int count = (int) Math.min(fetchSize, left);
    Reads.Page page = store.reads.page(from, end, count, revision, reverse);
    if (revision == 0) {
      revision = page.revision(); // later pages read the store as of the first
    }
    byte[] last = null;
    for (Object kv : page.kvs()) {
      byte[] k = Answers.key(kv);
      last = k;
      // A chunked value: its chunks at the same revision.
      byte[] value = store.reads.decode(kv, revision);
      buffer.add(new Entry(Arrays.copyOfRange(k, baseLength, k.length), value));
    }
    left -= page.kvs().size();
    if (last == null || !page.more() || left <= 0) {
      done = true;
    } else if (reverse) {
      end = last;
    } else {
      from = ValueCodec.concat(last, ZERO);
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
