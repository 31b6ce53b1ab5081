package io.kv4j.lmdb;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreCorruptedException;
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
  private final LmdbSnapshot snapshot; // null: the cursor has a transaction of its own
  private final int gateToken; // the store's gate counts this cursor's transaction until release
  private final int spaceToken; // in the keyspace's gate (see Space); 0 through a snapshot
  private final byte[] lower;
  private final byte[] upper;
  private Txn<byte[]> txn;
  private Cursor<byte[]> cursor;
  private boolean started;
  private byte[] previous; // the last key returned, to check LMDB's order

  private LmdbCursor(
      LmdbStore store,
      KeyRange range,
      Txn<byte[]> txn,
      AtomicInteger ownerCursors,
      LmdbSnapshot snapshot,
      int gateToken,
      int spaceToken) {
    super(store, range);
    this.store = store;
    this.range = range;
    this.reverse = range.isReverse();
    this.lower = range.lower();
    this.upper = range.upper();
    this.txn = txn;
    this.ownerCursors = ownerCursors;
    this.snapshot = snapshot;
    this.gateToken = gateToken;
    this.spaceToken = spaceToken;
  }

  LmdbCursor(
      LmdbStore store,
      KeyRange range,
      Txn<byte[]> txn,
      int gateToken,
      int spaceToken,
      AtomicInteger ownerCursors) {
    this(store, range, txn, ownerCursors, null, gateToken, spaceToken);
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

  /**
   * A cursor reading through a snapshot's transaction, which stays the snapshot's: every native
   * call runs under the snapshot's lock, and release closes only the LMDB cursor. The caller holds
   * the snapshot's lock.
   */
  LmdbCursor(LmdbStore store, KeyRange range, LmdbSnapshot snapshot) {
    this(store, range, null, null, snapshot, 0, 0);
    if (!range.isEmpty()) {
      try {
        this.cursor = store.db().openCursor(snapshot.txn());
      } catch (RuntimeException e) {
        throw Errors.translate(store.info().describe(), store.dataFile(), e);
      }
    }
  }

  @Override
  protected Entry advance() {
    if (snapshot == null) {
      return step();
    }
    snapshot.lock().lock();
    try {
      return step();
    } finally {
      snapshot.lock().unlock();
    }
  }

  private Entry step() {
    if (cursor == null) {
      return null;
    }
    try {
      ArrayProxy.beginCursor(store.bounds(), store.framed());
      boolean found = started ? (reverse ? cursor.prev() : cursor.next()) : position();
      started = true;
      if (!found) {
        return null;
      }
      byte[] key = cursor.key();
      if (!(reverse ? range.aboveLower(key) : range.belowUpper(key))) {
        return null;
      }
      if (previous != null) {
        int c = Arrays.compareUnsigned(previous, key);
        if (reverse ? c <= 0 : c >= 0) {
          // A damaged branch page can send the cursor back over keys it already returned.
          throw new StoreCorruptedException(
              store.info().describe()
                  + ": "
                  + store.dataFile()
                  + ": LMDB returned keys out of order during a scan (a damaged page)",
              store.dataFile(),
              -1);
        }
      }
      previous = key;
      return new Entry(key, cursor.val());
    } catch (RuntimeException e) {
      throw Errors.translate(store.info().describe(), store.dataFile(), e);
    } finally {
      ArrayProxy.release();
    }
  }

  /**
   * Moves to the first entry in range and direction; false if there is none. Bounds may be empty or
   * longer than any key (KeyRange does not limit them), which LMDB refuses as seek keys
   * (MDB_BAD_VALSIZE): an empty bound is below every key, and a bound longer than 511 bytes is
   * sought by its 511-byte prefix, which is the only key at or above the prefix that is below the
   * bound. The loops then step past the at most one or two keys that fail the exact bound.
   */
  private boolean position() {
    boolean found;
    if (!reverse) {
      if (lower == null || lower.length == 0) {
        found = cursor.first();
      } else {
        found = cursor.get(seekKey(lower), GetOp.MDB_SET_RANGE);
      }
      while (found && !range.aboveLower(cursor.key())) {
        found = cursor.next();
      }
      return found;
    }
    if (upper == null) {
      found = cursor.last();
    } else if (upper.length == 0) {
      return false; // no key is at or below the empty key
    } else {
      found = cursor.get(seekKey(upper), GetOp.MDB_SET_RANGE);
      if (!found) {
        found = cursor.last(); // every key is below the upper bound
      }
    }
    while (found && !range.belowUpper(cursor.key())) {
      found = cursor.prev();
    }
    return found;
  }

  private static byte[] seekKey(byte[] bound) {
    return bound.length > LmdbProvider.MAX_KEY_SIZE
        ? Arrays.copyOf(bound, LmdbProvider.MAX_KEY_SIZE)
        : bound;
  }

  @Override
  protected void release() {
    if (snapshot != null) {
      snapshot.lock().lock();
      try {
        if (cursor != null) {
          cursor.close();
        }
      } catch (RuntimeException ignored) {
        // The snapshot's transaction frees the cursor's state when it ends.
      } finally {
        cursor = null;
        snapshot.lock().unlock();
      }
      return;
    }
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
      store.release(t, gateToken, spaceToken);
    }
  }
}
