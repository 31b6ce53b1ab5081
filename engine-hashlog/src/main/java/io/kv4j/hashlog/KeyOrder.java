package io.kv4j.hashlog;

import java.util.Arrays;

/**
 * The ordered view of the keys, for scans, with no Java object per key: a sorted run of record
 * locations ({@code base}) plus the locations written since it was built ({@code delta}, unsorted,
 * tombstones included). A scan folds the delta into a new sorted base (sorting only the delta and
 * merging by binary search) and iterates that immutable array.
 *
 * <p>The base may hold several locations of one key (older writes, tombstones); they are adjacent,
 * and the newest (largest location: locations grow in write order) is the key's state when the base
 * was taken. So a cursor over a base sees the store as of the moment it was opened. When stale
 * entries make up more than half of the base, or the delta outgrows the live key count (writes
 * without scans), the view is dropped and rebuilt from the index at the next scan.
 *
 * <p>Memory: 8 bytes per entry of the base and delta, counted in the index bytes per key.
 */
final class KeyOrder {
  private static final long[] EMPTY = new long[0];
  private final HashLogStore store;

  // Guarded by the store's write lock.
  private long[] delta = new long[64];
  private int deltaSize;
  private boolean rebuild = true;

  // Guarded by this.
  private long[] base = EMPTY;

  KeyOrder(HashLogStore store) {
    this.store = store;
  }

  /** Notes a new record location (put or tombstone). Caller holds the store's write lock. */
  void added(long location) {
    if (rebuild) {
      return;
    }
    if (deltaSize == delta.length) {
      if (delta.length >= Math.max(1 << 16, store.keyCount())) {
        dropAll();
        return;
      }
      delta = Arrays.copyOf(delta, delta.length * 2);
    }
    delta[deltaSize++] = location;
  }

  /** Forgets everything; the next scan rebuilds from the index. Caller holds the write lock. */
  void dropAll() {
    rebuild = true;
    deltaSize = 0;
    delta = new long[64];
  }

  /** Bytes held, for stats (racy read is fine). */
  long memoryBytes() {
    return (long) (base.length + delta.length) * Long.BYTES;
  }

  /**
   * A sorted, immutable array of locations describing the store now: for each key, the largest
   * location among its entries is its current record (a put, or a tombstone).
   */
  synchronized long[] snapshot() {
    long[] full = null;
    long[] d = null;
    long live;
    store.writeLock.lock();
    try {
      if (rebuild) {
        full = store.allLocations();
        rebuild = false;
        deltaSize = 0;
      } else if (deltaSize > 0) {
        d = Arrays.copyOf(delta, deltaSize);
        deltaSize = 0;
        if (delta.length > 4096) {
          delta = new long[64];
        }
      }
      live = store.keyCount();
    } finally {
      store.writeLock.unlock();
    }
    LongSort.Comparator byKey = store::compareRecords;
    if (full != null) {
      LongSort.sort(full, prefixes(full), byKey);
      base = full;
    } else if (d != null) {
      LongSort.sort(d, prefixes(d), byKey);
      base = merge(base, d, byKey);
      if (base.length > 2 * live + 4096) {
        store.writeLock.lock();
        try {
          dropAll();
        } finally {
          store.writeLock.unlock();
        }
      }
    }
    return base;
  }

  private long[] prefixes(long[] locs) {
    long[] p = new long[locs.length];
    for (int i = 0; i < locs.length; i++) {
      p[i] = store.keyPrefix(locs[i]);
    }
    return p;
  }

  private static long[] merge(long[] a, long[] b, LongSort.Comparator c) {
    long[] out = new long[a.length + b.length];
    int i = 0;
    int o = 0;
    for (long x : b) {
      // First index in a[i..] whose entry sorts after x.
      int lo = i;
      int hi = a.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (c.compare(a[mid], x) <= 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      System.arraycopy(a, i, out, o, lo - i);
      o += lo - i;
      i = lo;
      out[o++] = x;
    }
    System.arraycopy(a, i, out, o, a.length - i);
    return out;
  }
}
