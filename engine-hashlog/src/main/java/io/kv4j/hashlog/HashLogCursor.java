package io.kv4j.hashlog;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;

/**
 * A cursor over an immutable sorted array of record locations taken from {@link KeyOrder} when the
 * scan opened. Equal keys are adjacent; the largest location among them is the key's state at that
 * moment, so the cursor is a point-in-time snapshot: later writes are not visible, each key appears
 * at most once, in unsigned key order. Values are read from the (append-only, never rewritten)
 * segments when the cursor reaches them.
 */
final class HashLogCursor extends AbstractCursor {
  private final HashLogStore store;
  private final KeyRange range;
  private final boolean reverse;
  private long[] view;
  private int pos;

  HashLogCursor(HashLogStore store, KeyRange range, long[] view) {
    super(store, range);
    this.store = store;
    this.range = range;
    this.reverse = range.isReverse();
    this.view = view;
    this.pos = reverse ? lastAtOrBelow() : firstAtOrAbove();
  }

  /** First index whose key satisfies the lower bound. */
  private int firstAtOrAbove() {
    byte[] lower = range.lower();
    if (lower == null) {
      return 0;
    }
    boolean incl = range.lowerInclusive();
    int lo = 0;
    int hi = view.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = store.compareKey(view[mid], lower);
      if (c < 0 || (c == 0 && !incl)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Last index whose key satisfies the upper bound. */
  private int lastAtOrBelow() {
    byte[] upper = range.upper();
    if (upper == null) {
      return view.length - 1;
    }
    boolean incl = range.upperInclusive();
    int lo = 0;
    int hi = view.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = store.compareKey(view[mid], upper);
      if (c < 0 || (c == 0 && incl)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo - 1;
  }

  @Override
  protected Entry advance() {
    long[] v = view;
    if (v == null) {
      return null;
    }
    int token = store.enter();
    try {
      int step = reverse ? -1 : 1;
      while (pos >= 0 && pos < v.length) {
        long best = v[pos];
        int p = pos + step;
        while (p >= 0 && p < v.length && sameKey(v[p], best)) {
          best = Math.max(best, v[p]);
          p += step;
        }
        pos = p;
        byte[] key = store.keyAt(best);
        if (reverse ? !range.aboveLower(key) : !range.belowUpper(key)) {
          pos = reverse ? -1 : v.length;
          return null;
        }
        if (store.isTombstone(best)) {
          continue;
        }
        return new Entry(key, store.readValue(best));
      }
      return null;
    } finally {
      store.exit(token);
    }
  }

  private boolean sameKey(long a, long b) {
    return store.compareKeys(a, b) == 0;
  }

  @Override
  protected void release() {
    view = null;
    store.compactor.unpin(this);
  }
}
