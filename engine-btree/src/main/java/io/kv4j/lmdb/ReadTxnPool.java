package io.kv4j.lmdb;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.lmdbjava.Env;
import org.lmdbjava.Txn;

/**
 * The store's idle read transactions: reset (holding a reader slot but no snapshot), renewed when
 * borrowed. The environment is opened with MDB_NOTLS, so a transaction is not bound to the thread
 * that created it and threads that die leak no reader slot.
 *
 * <p>The first idle transaction of each thread stripe is parked in its own padded slot, so a get on
 * each core takes and returns its own without a shared lock; the overflow waits in a LIFO deque
 * under its monitor. Together at most {@code min(64, max-readers / 2)}; more are closed.
 *
 * <p>Callers borrow and return inside a gate section (or while a cursor or snapshot holds one), so
 * the environment is neither remapped nor freed under a transaction in use.
 */
final class ReadTxnPool {
  private static final int PARK_PAD = 16;

  private final Env<byte[]> env;
  private final int poolCapacity;
  private final int parkSlots;
  private final AtomicReferenceArray<Txn<byte[]>> parked;
  private final ArrayDeque<Txn<byte[]>> idle = new ArrayDeque<>();
  private final AtomicLong live = new AtomicLong();

  ReadTxnPool(Env<byte[]> env, int maxReaders) {
    this.env = env;
    this.poolCapacity = Math.max(1, Math.min(64, maxReaders / 2));
    this.parkSlots = Integer.highestOneBit(Math.min(16, poolCapacity));
    this.parked = new AtomicReferenceArray<>((parkSlots + 1) * PARK_PAD);
  }

  /** Read transactions alive in this store: in use plus pooled. */
  long live() {
    return live.get();
  }

  private int parkSlot() {
    // By thread id, as CallGate stripes: threads started in sequence take different slots.
    @SuppressWarnings("deprecation") // threadId() is Java 19+; getId() is the same value
    long id = Thread.currentThread().getId();
    return ((int) id & (parkSlots - 1)) * PARK_PAD;
  }

  /** An active read transaction: a pooled one renewed, or a new one. */
  Txn<byte[]> borrow() {
    Txn<byte[]> txn = parked.getAndSet(parkSlot(), null);
    if (txn == null) {
      synchronized (idle) {
        txn = idle.pollFirst();
      }
    }
    if (txn == null) {
      txn = env.txnRead();
      live.incrementAndGet();
      return txn;
    }
    try {
      txn.renew();
    } catch (RuntimeException e) {
      closeReset(txn);
      throw e;
    }
    return txn;
  }

  /** Resets a read transaction and pools it, or closes it when the pool is full. Never throws. */
  void giveBack(Txn<byte[]> txn) {
    try {
      txn.reset();
    } catch (RuntimeException e) {
      closeQuietly(txn);
      return;
    }
    if (parked.compareAndSet(parkSlot(), null, txn)) {
      return;
    }
    synchronized (idle) {
      if (idle.size() < poolCapacity - parkSlots) {
        idle.addFirst(txn);
        return;
      }
    }
    closeReset(txn);
  }

  /** Closes every pooled transaction; the caller has drained the gate (no transaction in use). */
  void closeAll() {
    List<Txn<byte[]>> all;
    synchronized (idle) {
      all = new ArrayList<>(idle);
      idle.clear();
    }
    for (int i = 0; i < parked.length(); i += PARK_PAD) {
      Txn<byte[]> txn = parked.getAndSet(i, null);
      if (txn != null) {
        all.add(txn);
      }
    }
    for (Txn<byte[]> txn : all) {
      closeReset(txn);
    }
  }

  /**
   * Closes a reset read transaction. lmdbjava 0.9.1's {@code Txn.close()} aborts only a READY
   * transaction, so closing a reset one would leak its reader slot; renew it first.
   */
  private void closeReset(Txn<byte[]> txn) {
    try {
      txn.renew();
    } catch (RuntimeException ignored) {
      // Fall through: close what can be closed.
    }
    closeQuietly(txn);
  }

  private void closeQuietly(Txn<byte[]> txn) {
    try {
      txn.close();
    } catch (RuntimeException ignored) {
      // Nothing more can be done for this transaction.
    } finally {
      live.decrementAndGet();
    }
  }
}
