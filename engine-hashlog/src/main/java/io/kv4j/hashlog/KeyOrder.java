package io.kv4j.hashlog;

import java.util.Arrays;

/**
 * The ordered view of the keys, for scans, with no Java object per key: a sorted run of record
 * locations ({@code base}), a second, smaller sorted run of recent ones ({@code recent}), and the
 * locations written since the last scan ({@code delta}, unsorted, tombstones included). A scan
 * sorts the delta and merges it into {@code recent}, and gets both sorted runs, immutable, which
 * its cursor merges as it goes. Only when {@code recent} outgrows a fraction of the base is it
 * merged into a new base: a scan after a few writes (YCSB-E: 5% inserts) then copies a few thousand
 * locations, not the whole key set.
 *
 * <p>The runs may hold several locations of one key (older writes, tombstones); within a run they
 * are adjacent, and the newest (largest location: a key's records have larger locations the newer
 * they are, compaction copies included) is the key's state when the runs were taken. So a cursor
 * sees the store as of the moment it was opened. When stale entries make up more than half of the
 * runs, or the delta outgrows the live key count (writes without scans), the view is dropped and
 * rebuilt from the index at the next scan; compaction drops it too (its locations move).
 *
 * <p>Memory: 8 bytes per entry of the runs and the delta, counted in the index bytes per key.
 */
final class KeyOrder {
  private static final long[] EMPTY = new long[0];
  private final HashLogStore store;

  // Guarded by the store's write lock.
  private long[] delta = new long[64];
  private int deltaSize;
  private boolean rebuild = true;

  /** Two sorted runs of locations, immutable; a cursor merges them (see {@link KeyOrder}). */
  record View(long[] base, long[] recent) {
    static final View EMPTY_VIEW = new View(EMPTY, EMPTY);
  }

  // Guarded by this.
  private long[] base = EMPTY;
  private long[] recent = EMPTY;

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
    return (long) (base.length + recent.length + delta.length) * Long.BYTES;
  }

  /**
   * Two sorted, immutable runs of locations describing the store now: for each key, the largest
   * location among its entries in both is its current record (a put, or a tombstone).
   */
  synchronized View snapshot() {
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
      recent = EMPTY;
    } else if (d != null) {
      LongSort.sort(d, prefixes(d), byKey);
      recent = merge(recent, d, byKey);
      if (recent.length > base.length / 8 + 256) {
        base = merge(base, recent, byKey);
        recent = EMPTY;
      }
      if (base.length + recent.length > 2 * live + 4096) {
        store.writeLock.lock();
        try {
          dropAll();
        } finally {
          store.writeLock.unlock();
        }
      }
    }
    return new View(base, recent);
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
