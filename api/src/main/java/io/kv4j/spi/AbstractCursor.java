package io.kv4j.spi;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import java.util.NoSuchElementException;

/**
 * Cursor bookkeeping done once: the range limit, the empty-range shortcut, idempotent close,
 * releasing resources as soon as the cursor is exhausted, clear errors after close, and closing
 * with the store. An engine implements {@link #advance()} and {@link #release()}.
 *
 * <p>Iteration and close are mutually exclusive (the methods synchronize on the cursor), so a store
 * closed from another thread never frees engine resources underneath a running {@link #advance()}.
 */
public abstract class AbstractCursor implements Cursor {
  private static final int OPEN = 0;
  private static final int EXHAUSTED = 1;
  private static final int CLOSED = 2;
  private static final int STORE_CLOSED = 3;
  private static final int SNAPSHOT_CLOSED = 4;

  private final AbstractStore store;
  private long remaining;
  private Entry pending;
  private int state = OPEN;
  private AbstractSnapshot snapshot; // the snapshot that opened this cursor, if any

  /**
   * Creates the cursor's shell.
   *
   * @param store the store that opened the cursor
   * @param range the range, for its limit
   */
  protected AbstractCursor(AbstractStore store, KeyRange range) {
    this.store = store;
    this.remaining = range.isEmpty() ? 0 : range.limitValue();
  }

  /**
   * The next entry in range and order, ignoring the limit (handled here).
   *
   * @return the entry with fresh arrays, or null when the range is exhausted
   */
  protected abstract Entry advance();

  /** Frees the engine resources; called exactly once, on exhaustion or close. */
  protected abstract void release();

  @Override
  public final synchronized boolean hasNext() {
    checkUsable();
    if (pending != null) {
      return true;
    }
    if (state == EXHAUSTED) {
      return false;
    }
    Entry e = remaining > 0 ? advance() : null;
    if (e == null) {
      finish(EXHAUSTED);
      return false;
    }
    pending = e;
    return true;
  }

  @Override
  public final synchronized Entry next() {
    if (!hasNext()) {
      throw new NoSuchElementException("cursor is exhausted");
    }
    Entry e = pending;
    pending = null;
    remaining--;
    return e;
  }

  @Override
  public final synchronized void close() {
    finish(CLOSED);
  }

  final synchronized void closeByStore() {
    finish(STORE_CLOSED);
  }

  final synchronized void closeBySnapshot() {
    finish(SNAPSHOT_CLOSED);
  }

  final synchronized void openedBy(AbstractSnapshot s) {
    this.snapshot = s;
  }

  private void checkUsable() {
    if (state == CLOSED) {
      throw new IllegalStateException("cursor is closed (" + store.info().describe() + ")");
    }
    if (state == STORE_CLOSED) {
      throw new StoreClosedException("cursor's store is closed (" + store.info().describe() + ")");
    }
    if (state == SNAPSHOT_CLOSED) {
      throw new IllegalStateException(
          "cursor's snapshot is closed (" + store.info().describe() + ")");
    }
  }

  private void finish(int newState) {
    if (state == CLOSED || state == STORE_CLOSED || state == SNAPSHOT_CLOSED) {
      return;
    }
    boolean mustRelease = state == OPEN;
    state = newState == EXHAUSTED ? EXHAUSTED : newState;
    if (newState != EXHAUSTED) {
      pending = null;
    }
    if (mustRelease) {
      try {
        release();
      } finally {
        store.readers().remove(this);
        if (snapshot != null) {
          snapshot.forget(this);
        }
      }
    }
  }
}
