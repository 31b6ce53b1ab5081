package io.kv4j.lmdb;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.lmdbjava.Cursor;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

/**
 * A cursor over one read transaction, so it sees the store as of the moment it opened. Forward
 * scans seek to the lower bound ({@code MDB_SET_RANGE}: first key at or above it) and step with
 * {@code next}; reverse scans seek to the upper bound and step back with {@code prev}. Bounds are
 * checked exactly, inclusive or exclusive, in unsigned order. Keys and values come out of LMDB as
 * fresh arrays (copied by {@link ArrayProxy}), never as views of the map.
 *
 * <p>{@link io.kv4j.spi.AbstractCursor} serializes {@link #advance()} and {@link #release()}, and
 * the store releases every cursor before it frees the environment, so native calls here never run
 * after close. The transaction counts as active in the store's gate until release.
 */
final class LmdbCursor extends io.kv4j.spi.AbstractCursor {
  private final LmdbStore store;
  private final KeyRange range;
  private final boolean reverse;
  private final AtomicInteger ownerCursors;
  private final byte[] lower;
  private final byte[] upper;
  private Txn<byte[]> txn;
  private Cursor<byte[]> cursor;
  private boolean started;

  LmdbCursor(LmdbStore store, KeyRange range, Txn<byte[]> txn, AtomicInteger ownerCursors) {
    super(store, range);
    this.store = store;
    this.range = range;
    this.reverse = range.isReverse();
    this.lower = range.lower();
    this.upper = range.upper();
    this.txn = txn;
    this.ownerCursors = ownerCursors;
    ownerCursors.incrementAndGet();
    if (txn != null) {
      try {
        this.cursor = store.db().openCursor(txn);
      } catch (RuntimeException e) {
        ownerCursors.decrementAndGet();
        throw e;
      }
    }
  }

  @Override
  protected Entry advance() {
    if (cursor == null) {
      return null;
    }
    try {
      boolean found = started ? (reverse ? cursor.prev() : cursor.next()) : position();
      started = true;
      if (!found) {
        return null;
      }
      byte[] key = cursor.key();
      if (!(reverse ? range.aboveLower(key) : range.belowUpper(key))) {
        return null;
      }
      return new Entry(key, cursor.val());
    } catch (RuntimeException e) {
      throw Errors.translate(store.info().describe(), store.dataFile(), e);
    } finally {
      ArrayProxy.release();
    }
  }

  /** Moves to the first entry in range and direction; false if there is none. */
  private boolean position() {
    if (!reverse) {
      if (lower == null) {
        return cursor.first();
      }
      if (!cursor.get(lower, GetOp.MDB_SET_RANGE)) {
        return false;
      }
      if (!range.lowerInclusive() && Arrays.equals(cursor.key(), lower)) {
        return cursor.next();
      }
      return true;
    }
    if (upper == null) {
      return cursor.last();
    }
    if (!cursor.get(upper, GetOp.MDB_SET_RANGE)) {
      return cursor.last(); // every key is below the upper bound
    }
    int c = Arrays.compareUnsigned(cursor.key(), upper);
    if (c > 0 || (c == 0 && !range.upperInclusive())) {
      return cursor.prev();
    }
    return true;
  }

  @Override
  protected void release() {
    try {
      if (cursor != null) {
        cursor.close();
      }
    } catch (RuntimeException ignored) {
      // The transaction is reset or closed next, which frees the cursor's state anyway.
    } finally {
      cursor = null;
      Txn<byte[]> t = txn;
      txn = null;
      ownerCursors.decrementAndGet();
      store.cursorReleased(t);
    }
  }
}
