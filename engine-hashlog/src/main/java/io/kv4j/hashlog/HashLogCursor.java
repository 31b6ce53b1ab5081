package io.kv4j.hashlog;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;

/**
 * A cursor over the two immutable sorted runs of record locations ({@link KeyOrder.View}) taken
 * when the scan opened, merged as it goes. Equal keys are adjacent within a run; the largest
 * location among a key's entries in both runs is the key's state at that moment, so the cursor is a
 * point-in-time snapshot: later writes are not visible, each key appears at most once, in unsigned
 * key order. Values are read from the (append-only, never rewritten) segments when the cursor
 * reaches them.
 */
final class HashLogCursor extends AbstractCursor {
  private final RecordReader records;
  private final ReaderGuard guard;
  private final Compactor compactor;
  private final KeyRange range;
  private final boolean reverse;
  private final int step;
  private long[] a; // the base run; null once released
  private long[] b; // the recent run
  private long[] ap; // key prefixes of a's entries
  private long[] bp; // key prefixes of b's entries
  private int pa;
  private int pb;

  HashLogCursor(
      AbstractStore store,
      RecordReader records,
      ReaderGuard guard,
      Compactor compactor,
      KeyRange range,
      KeyOrder.View view) {
    super(store, range);
    this.records = records;
    this.guard = guard;
    this.compactor = compactor;
    this.range = range;
    this.reverse = range.isReverse();
    this.step = reverse ? -1 : 1;
    this.a = view.base();
    this.b = view.recent();
    this.ap = view.basePrefixes();
    this.bp = view.recentPrefixes();
    this.pa = reverse ? lastAtOrBelow(a) : firstAtOrAbove(a);
    this.pb = reverse ? lastAtOrBelow(b) : firstAtOrAbove(b);
  }

  /** First index of {@code v} whose key satisfies the lower bound. */
  private int firstAtOrAbove(long[] v) {
    byte[] lower = range.lower();
    if (lower == null) {
      return 0;
    }
    boolean incl = range.lowerInclusive();
    int lo = 0;
    int hi = v.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = records.compareKey(v[mid], lower);
      if (c < 0 || (c == 0 && !incl)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Last index of {@code v} whose key satisfies the upper bound. */
  private int lastAtOrBelow(long[] v) {
    byte[] upper = range.upper();
    if (upper == null) {
      return v.length - 1;
    }
    boolean incl = range.upperInclusive();
    int lo = 0;
    int hi = v.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      int c = records.compareKey(v[mid], upper);
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
    long[] va = a;
    long[] vb = b;
    if (va == null) {
      return null;
    }
    int token = guard.enter();
    try {
      while (true) {
        boolean hasA = pa >= 0 && pa < va.length;
        boolean hasB = pb >= 0 && pb < vb.length;
        if (!hasA && !hasB) {
          return null;
        }
        // Each run holds one entry per key: the next key is the nearer head (both, if equal),
        // and the larger location of the two is its state.
        int c;
        if (hasA && hasB) {
          c = Long.compareUnsigned(ap[pa], bp[pb]);
          if (c == 0) {
            c = records.compareKeys(va[pa], vb[pb]);
          }
          if (reverse) {
            c = -c;
          }
        } else {
          c = hasA ? -1 : 1;
        }
        long best;
        if (c < 0) {
          best = va[pa];
          pa += step;
        } else if (c > 0) {
          best = vb[pb];
          pb += step;
        } else {
          best = Math.max(va[pa], vb[pb]);
          pa += step;
          pb += step;
        }
        byte[] key = records.keyAt(best);
        if (reverse ? !range.aboveLower(key) : !range.belowUpper(key)) {
          pa = pb = reverse ? -1 : Integer.MAX_VALUE;
          return null;
        }
        if (records.isTombstone(best)) {
          continue;
        }
        return new Entry(key, records.readValue(best));
      }
    } finally {
      guard.exit(token);
    }
  }

  @Override
  protected void release() {
    a = null;
    b = null;
    ap = null;
    bp = null;
    compactor.cursorClosed(this);
  }
}
