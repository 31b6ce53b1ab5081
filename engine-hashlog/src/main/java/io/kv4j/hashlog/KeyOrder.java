package io.kv4j.hashlog;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The ordered view of the keys, for scans, with no Java object per key: a sorted run of record
 * locations ({@code base}), a second, smaller sorted run of recent ones ({@code recent}), and the
 * locations written since the last scan ({@code delta}, unsorted, tombstones included). A scan
 * sorts the delta and merges it into {@code recent}, and gets both sorted runs, immutable, which
 * its cursor merges as it goes. Only when {@code recent} outgrows a fraction of the base is it
 * merged into a new base: a scan after a few writes (YCSB-E: 5% inserts) then copies a few thousand
 * locations, not the whole key set.
 *
 * <p>Each run holds at most one location per key (merges keep the larger, newer one; the base holds
 * no tombstones), and a key in both runs has its newer entry in {@code recent}: the largest
 * location is the key's state when the runs were taken (a key's records have larger locations the
 * newer they are, compaction copies included). So a cursor sees the store as of the moment it was
 * opened, and overwrites do not pile up stale entries. Compaction moves records: the next scan
 * moves the runs' entries along ({@link #relocated}) rather than rebuilding the view from the
 * index; it is dropped and rebuilt only when the delta outgrows the live key count (writes without
 * scans) or relocations pile up unread.
 *
 * <p>Memory: 8 bytes per entry of the runs and the delta, counted in the index bytes per key.
 */
final class KeyOrder {
  private static final long[] EMPTY = new long[0];
  private final RecordReader records;
  private final KeyDir keys;
  private final ReentrantLock writeLock;

  // Guarded by the store's write lock.
  private long[] delta = new long[64];
  private int deltaSize;
  private boolean rebuild = true;
  private final List<Relocation> relocations = new ArrayList<>(); // since the last scan, in order
  private long relocatedEntries;

  /**
   * Where one compaction run copied records: each location in {@code from} (ascending) moved to the
   * same index of {@code to}; a location in one of the {@code victims} (ascending ids) that is not
   * in {@code from} was dropped (a superseded put, or a tombstone no older segment needs).
   */
  private record Relocation(int[] victims, long[] from, long[] to) {}

  /**
   * Two sorted runs of locations, immutable, each with one entry per key, and beside each the first
   * 8 bytes of every entry's key ({@link RecordReader#keyPrefix}), so that most comparisons stay in
   * these arrays instead of reading keys from the segments. A cursor merges the runs.
   */
  record View(long[] base, long[] basePrefixes, long[] recent, long[] recentPrefixes) {
    static final View EMPTY_VIEW = new View(EMPTY, EMPTY, EMPTY, EMPTY);
  }

  /** A run of locations and its key prefixes. */
  private record Run(long[] locs, long[] prefixes) {
    static final Run NONE = new Run(EMPTY, EMPTY);
  }

  /** Times the view was built from the index (a sort of every key), for stats. */
  private volatile long rebuilds;

  // Guarded by this.
  private Run base = Run.NONE;
  private Run recent = Run.NONE;

  KeyOrder(RecordReader records, KeyDir keys, ReentrantLock writeLock) {
    this.records = records;
    this.keys = keys;
    this.writeLock = writeLock;
  }

  /** Notes a new record location (put or tombstone). Caller holds the writer lock. */
  void added(long location) {
    if (rebuild) {
      return;
    }
    if (deltaSize == delta.length) {
      if (delta.length >= Math.max(1 << 16, keys.size())) {
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
    relocations.clear();
    relocatedEntries = 0;
  }

  /**
   * Notes that a compaction run copied records out of {@code victims} (ascending ids): the first
   * {@code n} of {@code from[i] → to[i]}, puts and kept tombstones, ascending by {@code from} (the
   * run walks its victims in id order and each one by offset). The next scan moves its runs'
   * entries along instead of rebuilding the view from the index (a sort of every key). A location
   * keeps its key, so the runs stay sorted; a key's copy has a larger location than its older
   * records and a smaller one than its newer records, so the largest location still names its
   * state. Caller holds the write lock.
   */
  void relocated(int[] victims, long[] from, long[] to, int n) {
    if (rebuild) {
      return;
    }
    for (int i = 1; i < n; i++) {
      if (from[i] <= from[i - 1]) {
        dropAll(); // not in walk order after all: rebuild rather than guess
        return;
      }
    }
    relocations.add(new Relocation(victims, Arrays.copyOf(from, n), Arrays.copyOf(to, n)));
    relocatedEntries += n;
    if (relocatedEntries > Math.max(1 << 16, keys.size())) {
      dropAll(); // no scan for a long while: stop keeping the relocations
    }
  }

  /** {@code run} with every relocation applied in order; dropped entries removed. */
  private static Run relocate(Run run, List<Relocation> rs) {
    long[] locs = run.locs();
    if (locs.length == 0) {
      return run;
    }
    long[] prefixes = run.prefixes(); // null for the unsorted delta
    long[] out = new long[locs.length];
    long[] outPrefixes = prefixes == null ? null : new long[locs.length];
    int n = 0;
    next:
    for (int i = 0; i < locs.length; i++) {
      long e = locs[i];
      for (Relocation r : rs) {
        if (Arrays.binarySearch(r.victims(), (int) (e >>> 32)) >= 0) {
          int k = Arrays.binarySearch(r.from(), e);
          if (k < 0) {
            continue next; // dropped by compaction: a newer entry of its key is in the view
          }
          e = r.to()[k];
        }
      }
      if (prefixes != null) {
        outPrefixes[n] = prefixes[i]; // same key: same prefix, same place in the order
      }
      out[n++] = e;
    }
    if (n == locs.length) {
      return new Run(out, outPrefixes);
    }
    return new Run(Arrays.copyOf(out, n), prefixes == null ? null : Arrays.copyOf(outPrefixes, n));
  }

  /** Times the view was built from the index since open. */
  long rebuilds() {
    return rebuilds;
  }

  /** Bytes held, for stats (racy read is fine). */
  long memoryBytes() {
    // In long arithmetic: two runs of 2^29 entries each would overflow an int.
    return (2L * (base.locs().length + recent.locs().length) + delta.length) * Long.BYTES;
  }

  /**
   * Two sorted, immutable runs of locations describing the store now: for each key, the largest
   * location among its entries in both is its current record (a put, or a tombstone).
   */
  synchronized View snapshot() {
    long[] full = null;
    long[] d = null;
    List<Relocation> moved = null;
    long live;
    writeLock.lock();
    try {
      if (rebuild) {
        full = keys.locations();
        rebuild = false;
        deltaSize = 0;
      } else {
        if (deltaSize > 0) {
          d = Arrays.copyOf(delta, deltaSize);
          deltaSize = 0;
          if (delta.length > 4096) {
            delta = new long[64];
          }
        }
        if (!relocations.isEmpty()) {
          moved = new ArrayList<>(relocations);
          relocations.clear();
          relocatedEntries = 0;
        }
      }
      live = keys.size();
    } finally {
      writeLock.unlock();
    }
    try {
      LongSort.Comparator byKey = records::compareRecords;
      if (full != null) {
        rebuilds++; // only under this object's monitor
        long[] p = prefixes(full);
        LongSort.sort(full, p, byKey);
        base = new Run(full, p);
        recent = Run.NONE;
      } else {
        if (moved != null) {
          base = relocate(base, moved);
          recent = relocate(recent, moved);
          if (d != null) {
            d = relocate(new Run(d, null), moved).locs(); // no prefixes yet
          }
        }
        if (d != null && d.length > 0) {
          long[] p = prefixes(d);
          LongSort.sort(d, p, byKey);
          recent = merge(recent, newestPerKey(new Run(d, p)), false);
          if (recent.locs().length > base.locs().length / 8 + 256) {
            base = merge(base, recent, true);
            recent = Run.NONE;
          }
          if (base.locs().length + recent.locs().length > 2 * live + 4096) {
            writeLock.lock();
            try {
              dropAll();
            } finally {
              writeLock.unlock();
            }
          }
        }
      }
    } catch (RuntimeException | Error e) {
      // The entries taken from the index above are in no view now: the next scan starts over.
      rebuild = true;
      throw e;
    }
    return new View(base.locs(), base.prefixes(), recent.locs(), recent.prefixes());
  }

  private long[] prefixes(long[] locs) {
    long[] p = new long[locs.length];
    for (int i = 0; i < locs.length; i++) {
      p[i] = records.keyPrefix(locs[i]);
    }
    return p;
  }

  /** Compares the keys of two entries: by prefix first, by the keys themselves on a tie. */
  private int compare(long x, long xPrefix, long y, long yPrefix) {
    int c = Long.compareUnsigned(xPrefix, yPrefix);
    return c != 0 ? c : records.compareKeys(x, y);
  }

  /**
   * Merges {@code b} into {@code a}, both sorted with at most one entry per key: for a key in both,
   * the larger location (its newer record) is kept, so the result has one entry per key too. With
   * {@code dropTombstones} (merging into the base, which shadows nothing) a key whose newest entry
   * is a tombstone is left out. Binary search per entry of {@code b}, which is the smaller run.
   */
  private Run merge(Run ra, Run rb, boolean dropTombstones) {
    long[] a = ra.locs();
    long[] ap = ra.prefixes();
    long[] b = rb.locs();
    long[] bp = rb.prefixes();
    long[] out = new long[a.length + b.length];
    long[] outPrefixes = new long[out.length];
    int i = 0;
    int o = 0;
    for (int k = 0; k < b.length; k++) {
      long x = b[k];
      long px = bp[k];
      // First index in a[i..] whose key is not below x's.
      int lo = i;
      int hi = a.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (compare(a[mid], ap[mid], x, px) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      System.arraycopy(a, i, out, o, lo - i);
      System.arraycopy(ap, i, outPrefixes, o, lo - i);
      o += lo - i;
      i = lo;
      long keep = x;
      if (i < a.length && compare(a[i], ap[i], x, px) == 0) {
        keep = Math.max(a[i], x);
        i++;
      }
      if (!dropTombstones || !records.isTombstone(keep)) {
        out[o] = keep;
        outPrefixes[o++] = px;
      }
    }
    System.arraycopy(a, i, out, o, a.length - i);
    System.arraycopy(ap, i, outPrefixes, o, a.length - i);
    o += a.length - i;
    return o == out.length
        ? new Run(out, outPrefixes)
        : new Run(Arrays.copyOf(out, o), Arrays.copyOf(outPrefixes, o));
  }

  /** {@code d} (sorted by key, then location) with only the last, newest, entry of each key. */
  private Run newestPerKey(Run d) {
    long[] l = d.locs();
    long[] p = d.prefixes();
    int o = 0;
    for (int k = 0; k < l.length; k++) {
      if (k + 1 < l.length && compare(l[k], p[k], l[k + 1], p[k + 1]) == 0) {
        continue;
      }
      l[o] = l[k];
      p[o++] = p[k];
    }
    return o == l.length ? d : new Run(Arrays.copyOf(l, o), Arrays.copyOf(p, o));
  }
}
