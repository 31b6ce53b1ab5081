package io.kv4j.lmdb;

import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.lmdbjava.Txn;

/**
 * A snapshot: one LMDB read transaction held active for the snapshot's life, through which every
 * get, getAll and scan reads, so they all see the store as of the commit current when it opened.
 *
 * <p>Threads: the environment is opened with MDB_NOTLS, so the transaction is not bound to the
 * thread that began it and any thread may read through the snapshot; but LMDB forbids using one
 * transaction (and its cursors) from two threads at once, so every native call on it, cursor steps
 * of the snapshot's scans included, runs under {@link #lock}.
 *
 * <p>Lifetime: the transaction counts in the store's gate like an open cursor (the store entered
 * the gate for it), so the map is not remapped and the environment not freed while the snapshot is
 * open. {@link #release()} runs once, after reads in flight returned and the snapshot's cursors
 * were closed ({@link AbstractSnapshot} guarantees both), and before the store frees the
 * environment (the store closes its snapshots first): it gives the transaction back to the pool
 * (reset, so it holds no pages) and leaves the gate.
 *
 * <p>Cost: until it closes, the snapshot pins the pages of its commit, which LMDB cannot reuse, so
 * the data file grows under writes instead of reusing free pages; it holds one reader slot (option
 * {@code max-readers}); and the map cannot grow under it (a write that needs growth waits up to
 * {@code map-growth-timeout} for it, then fails).
 */
final class LmdbSnapshot extends AbstractSnapshot {
  private final LmdbStore store;
  private final ReentrantLock lock = new ReentrantLock();
  private final int gateToken;
  private final int spaceToken; // in the keyspace's gate (see Space)
  private final AtomicInteger ownerCursors;
  private Txn<byte[]> txn; // guarded by lock; null once released

  LmdbSnapshot(
      LmdbStore store, Txn<byte[]> txn, int gateToken, int spaceToken, AtomicInteger ownerCursors) {
    super(store);
    this.store = store;
    this.txn = txn;
    this.gateToken = gateToken;
    this.spaceToken = spaceToken;
    this.ownerCursors = ownerCursors;
    // Counted as an open cursor of the opening thread: if that thread then needs the map to grow,
    // the gate refuses at once instead of waiting for this snapshot (see TxnGate).
    ownerCursors.incrementAndGet();
  }

  @Override
  protected byte[] doGet(byte[] key) {
    lock.lock();
    try {
      return store.readIn(txn, key);
    } finally {
      lock.unlock();
    }
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    lock.lock();
    try {
      return store.readAllIn(txn, keys);
    } finally {
      lock.unlock();
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    lock.lock();
    try {
      return new LmdbCursor(store, range, this);
    } finally {
      lock.unlock();
    }
  }

  /** The transaction, for this snapshot's cursors (which hold {@link #lock()}). */
  Txn<byte[]> txn() {
    return txn;
  }

  /** The lock every native call on the transaction runs under. */
  ReentrantLock lock() {
    return lock;
  }

  @Override
  protected void release() {
    lock.lock();
    try {
      Txn<byte[]> t = txn;
      txn = null;
      ownerCursors.decrementAndGet();
      store.release(t, gateToken, spaceToken);
    } finally {
      lock.unlock();
    }
  }
}
