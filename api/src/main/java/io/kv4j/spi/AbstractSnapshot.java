package io.kv4j.spi;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.StoreClosedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Snapshot bookkeeping done once: key checks, features a scan needs, idempotent close that closes
 * the snapshot's cursors first, closing with the store, and never releasing engine resources under
 * a read in flight. An engine implements {@link #doGet(byte[])}, {@link #doScan(KeyRange)} and
 * {@link #release()}, and returns the snapshot from {@link AbstractStore#doSnapshot()}.
 *
 * <p>Reads and close are mutually exclusive: {@link #release()} runs only after every {@code
 * doGet}, {@code doGetAll} and {@code doScan} in flight has returned, so an engine may free native
 * resources (a read transaction, a snapshot handle) there without a use after free. Cursors opened
 * by {@link #doScan(KeyRange)} are {@link AbstractCursor}s of the store; they are closed before
 * {@link #release()} and must not use the snapshot's resources after their own {@link
 * AbstractCursor#release()}.
 */
public abstract class AbstractSnapshot implements Snapshot {
  private final AbstractStore store;
  private final Set<AbstractCursor> cursors = ConcurrentHashMap.newKeySet();
  private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
  private boolean closed; // guarded by gate's write lock; read under its read lock
  private boolean closedByStore;

  /**
   * Creates the snapshot's shell.
   *
   * @param store the store the snapshot reads
   */
  protected AbstractSnapshot(AbstractStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /**
   * Reads a valid key as of the snapshot.
   *
   * @param key a key within limits
   * @return a fresh copy of the value, or null
   */
  protected abstract byte[] doGet(byte[] key);

  /**
   * Reads valid keys as of the snapshot. The default calls {@link #doGet(byte[])} for each.
   *
   * @param keys keys within limits
   * @return the values, one per key, in order
   */
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    List<byte[]> values = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      values.add(doGet(key));
    }
    return values;
  }

  /**
   * Opens a cursor over a range as of the snapshot; the range's features were checked.
   *
   * @param range the range
   * @return the cursor, constructed with this snapshot's store
   */
  protected abstract AbstractCursor doScan(KeyRange range);

  /** Frees the engine resources; called exactly once, after the snapshot's cursors were closed. */
  protected abstract void release();

  @Override
  public final byte[] get(byte[] key) {
    store.arguments().key(key);
    enter();
    try {
      return doGet(key);
    } finally {
      gate.readLock().unlock();
    }
  }

  @Override
  public final List<byte[]> getAll(List<byte[]> keys) {
    store.arguments().keys(keys);
    enter();
    try {
      return store.arguments().values(keys, doGetAll(keys));
    } finally {
      gate.readLock().unlock();
    }
  }

  @Override
  public final Cursor scan(KeyRange range) {
    Objects.requireNonNull(range, "range");
    store.arguments().scan(range);
    enter();
    try {
      AbstractCursor c = doScan(range);
      c.openedBy(this);
      cursors.add(c);
      store.readers().add(c);
      return c;
    } finally {
      gate.readLock().unlock();
    }
  }

  @Override
  public final void close() {
    finish(false);
  }

  /** Closes this snapshot because its store closes. */
  final void closeByStore() {
    finish(true);
  }

  /**
   * Whether the snapshot was closed.
   *
   * @return true once closed
   */
  protected final boolean isClosed() {
    gate.readLock().lock();
    try {
      return closed;
    } finally {
      gate.readLock().unlock();
    }
  }

  void forget(AbstractCursor c) {
    cursors.remove(c);
  }

  private void finish(boolean byStore) {
    gate.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      closedByStore = byStore;
    } finally {
      gate.writeLock().unlock();
    }
    try {
      for (AbstractCursor c : new ArrayList<>(cursors)) {
        if (byStore) {
          c.closeByStore(); // StoreClosedException, as a get of this snapshot now throws
        } else {
          c.closeBySnapshot();
        }
      }
      release();
    } finally {
      store.readers().remove(this);
    }
  }

  /** Takes the read side of the gate, or throws if the snapshot or its store is closed. */
  private void enter() {
    gate.readLock().lock();
    if (closed) {
      boolean byStore = closedByStore;
      gate.readLock().unlock();
      if (byStore) {
        throw new StoreClosedException(
            "snapshot's store is closed (" + store.info().describe() + ")");
      }
      throw new IllegalStateException("snapshot is closed (" + store.info().describe() + ")");
    }
  }

  /**
   * The snapshot's open cursors, for tests and stats.
   *
   * @return how many cursors opened from this snapshot are open
   */
  protected final int openCursors() {
    return cursors.size();
  }
}
