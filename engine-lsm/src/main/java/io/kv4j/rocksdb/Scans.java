package io.kv4j.rocksdb;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.spi.AbstractCursor;
import java.util.Arrays;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/** Cursors: a native iterator per cursor over one column family, bounded by the range. */
final class Scans {
  private Scans() {}

  /**
   * A cursor over a range, as of a snapshot or, with {@code snapshot} null, as of now (an iterator
   * is a point-in-time view by itself).
   */
  static AbstractCursor open(RocksDbStore s, KeyRange range, Snapshot snapshot) {
    if (range.isEmpty()) {
      return new RocksDbCursor(s, range, null, null, null, null);
    }
    int l = s.enter();
    ReadOptions ro = null;
    Slice lower = null;
    Slice upper = null;
    RocksIterator it = null;
    boolean ok = false;
    try {
      ro = new ReadOptions();
      if (snapshot != null) {
        ro.setSnapshot(snapshot);
      }
      byte[] lo = range.lower();
      if (lo != null) {
        // RocksDB's lower bound is inclusive; the smallest key above k is k followed by 0x00.
        lower = new Slice(range.lowerInclusive() ? lo : successor(lo));
        ro.setIterateLowerBound(lower);
      }
      byte[] hi = range.upper();
      if (hi != null) {
        // RocksDB's upper bound is exclusive; to include k, bound at k followed by 0x00.
        upper = new Slice(range.upperInclusive() ? successor(hi) : hi);
        ro.setIterateUpperBound(upper);
      }
      it = s.db.newIterator(s.column.handle, ro);
      RocksDbCursor c = new RocksDbCursor(s, range, ro, lower, upper, it);
      s.liveCursors.add(c);
      ok = true;
      return c;
    } finally {
      if (!ok) {
        RocksDbCursor.free(it, ro, lower, upper);
      }
      s.gate.exit(l);
    }
  }

  private static byte[] successor(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** One step of a cursor, inside the gate. */
  static Entry step(
      RocksDbStore s, RocksDbCursor c, RocksIterator it, boolean first, boolean reverse) {
    int l = s.enter();
    try {
      if (c.isFreed()) {
        throw new StoreClosedException("cursor's store is closed (" + s.info().describe() + ")");
      }
      if (first) {
        if (reverse) {
          it.seekToLast();
        } else {
          it.seekToFirst();
        }
      } else if (reverse) {
        it.prev();
      } else {
        it.next();
      }
      if (!it.isValid()) {
        it.status();
        return null;
      }
      return new Entry(it.key(), it.value());
    } catch (RocksDBException e) {
      throw Failures.translate(s.dir, "scan", e);
    } finally {
      s.gate.exit(l);
    }
  }
}
