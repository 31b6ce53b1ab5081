package io.kv4j.hashlog;

import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import java.util.ArrayList;
import java.util.List;

/**
 * A read snapshot: the ordered view's two immutable sorted runs ({@link KeyOrder.View}), taken once
 * when the snapshot opened, exactly what a scan cursor takes. A key's state at that point is the
 * largest location among its entries in both runs (a put, or a tombstone), found by binary search
 * in each run, comparing the 8-byte key prefixes kept beside the runs first and the keys in the
 * segments only on equal prefixes. Scans open a {@link HashLogCursor} over the same view.
 *
 * <p>The snapshot is a {@link ReaderGuard#pin pin}: segments that compaction retires while it is
 * open stay mapped (and the records it points into readable) until it is released, once, by {@link
 * #release()}. Every read enters the guard, so a store closing meanwhile waits for it or refuses
 * it, and never unmaps under it.
 *
 * <p>Memory: the runs are shared with the store's scan view while it does not change; once writes
 * are merged into that view by a later scan or snapshot, this snapshot keeps its own runs alive: up
 * to 16 bytes per key (a location and a key prefix), like an open cursor.
 */
final class HashLogSnapshot extends AbstractSnapshot {
  private final RecordReader records;
  private final ReaderGuard guard;
  private final Compactor compactor;
  private final AbstractStore store;
  private volatile KeyOrder.View view; // null once released

  HashLogSnapshot(
      AbstractStore store,
      RecordReader records,
      ReaderGuard guard,
      Compactor compactor,
      KeyOrder.View view) {
    super(store);
    this.store = store;
    this.records = records;
    this.guard = guard;
    this.compactor = compactor;
    this.view = view;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    int token = guard.enter();
    try {
      return read(view, key);
    } finally {
      guard.exit(token);
    }
  }

  /** The gets of {@link #doGet} inside one reader-guard entry. */
  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    KeyOrder.View v = view;
    List<byte[]> values = new ArrayList<>(keys.size());
    int token = guard.enter();
    try {
      for (byte[] key : keys) {
        values.add(read(v, key));
      }
    } finally {
      guard.exit(token);
    }
    return values;
  }

  /** The key's value as of the view, or null. Caller is inside the guard. */
  private byte[] read(KeyOrder.View v, byte[] key) {
    long prefix = RecordReader.keyPrefix(key);
    long loc =
        Math.max(
            find(v.base(), v.basePrefixes(), key, prefix),
            find(v.recent(), v.recentPrefixes(), key, prefix));
    if (loc == 0 || records.isTombstone(loc)) {
      return null;
    }
    return records.readValue(loc, key);
  }

  /** The location of {@code key}'s entry in a sorted run (one entry per key), or 0. */
  private long find(long[] run, long[] prefixes, byte[] key, long prefix) {
    int lo = 0;
    int hi = run.length - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = Long.compareUnsigned(prefixes[mid], prefix);
      if (c == 0) {
        c = records.compareKey(run[mid], key);
      }
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return run[mid];
      }
    }
    return 0;
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    KeyOrder.View v = range.isEmpty() ? KeyOrder.View.EMPTY_VIEW : view;
    int token = guard.enter();
    try {
      // This snapshot's pin already holds every segment the view points into; the cursor pins
      // them as well, for as long as it is open.
      HashLogCursor c = new HashLogCursor(store, records, guard, compactor, range, v);
      guard.pin(c);
      return c;
    } finally {
      guard.exit(token);
    }
  }

  @Override
  protected void release() {
    view = null;
    compactor.cursorClosed(this);
  }
}
