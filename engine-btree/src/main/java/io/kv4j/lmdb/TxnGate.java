package io.kv4j.lmdb;

import io.kv4j.StoreClosedException;
import io.kv4j.spi.CallGate;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Who may touch the LMDB environment right now. Every native section (a get, a write transaction, a
 * stats call) and every open cursor (its read transaction stays active until the cursor is
 * released) counts as <em>active</em>. Two things need the environment to themselves: growing the
 * map ({@code mdb_env_set_mapsize} remaps the file, so no transaction may be active) and closing
 * it. Both set an exclusive flag that keeps new sections out, then wait until the active count
 * drops to zero.
 *
 * <p>The deadlock that a plain read-write lock would have: a thread holding an open cursor asks for
 * a new section (a get, a new cursor) while a grower waits for the cursors to close. Its cursor
 * keeps the count above zero, so the grower never proceeds, and the thread never gets in. Here, a
 * thread that holds open cursors is let in even while exclusive access is pending: it cannot make
 * things worse (its cursors already block the grower) and it is what lets it finish and close them.
 * A grower that itself holds open cursors could never see the count reach zero, so growth refuses
 * up front instead of waiting forever, and a grower waiting for other threads' cursors gives up
 * after a timeout.
 */
final class TxnGate {
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final ThreadLocal<AtomicInteger> cursorsOfThread =
      ThreadLocal.withInitial(AtomicInteger::new);
  private final String describe;
  // Every active section and cursor transaction, counted without a shared lock so that gets on
  // different cores do not contend; never closed itself (this class's closed flag is the rule).
  private final CallGate active = new CallGate();
  private volatile boolean exclusive;
  private volatile boolean closed;
  private volatile RuntimeException poisoned;

  TxnGate(String describe) {
    this.describe = describe;
  }

  /**
   * Enters a native section; pair with {@link #exit(int)}. The common case, no growth or close
   * pending, is one atomic increment of a counter of this thread's own and two volatile reads.
   *
   * @return the token for {@link #exit(int)}
   * @throws StoreClosedException if the store is closed or closing
   */
  int enter() {
    int token = active.enter();
    // After the increment (a full fence): runExclusive and closeAndDrain set their flag before they
    // read the count, so either they see this section or it sees their flag.
    if (!exclusive && !closed) {
      return token;
    }
    exit(token);
    return enterSlow();
  }

  private int enterSlow() {
    boolean bypass = cursorsOfThread.get().get() > 0;
    lock.lock();
    try {
      while (exclusive && !closed && !bypass) {
        changed.awaitUninterruptibly();
      }
      if (closed) {
        throw closedOrPoisoned();
      }
      return active.enter();
    } finally {
      lock.unlock();
    }
  }

  private RuntimeException closedOrPoisoned() {
    RuntimeException p = poisoned;
    if (p instanceof io.kv4j.StoreIOException) {
      return new io.kv4j.StoreIOException(p.getMessage(), p);
    }
    return new StoreClosedException(describe + " is closed");
  }

  /**
   * Refuses every later section for good, as if closed but with {@code why} as the reason: for an
   * environment that can no longer be touched safely (its map was lost when a remap failed). Called
   * from inside {@link #runExclusive}, so no section is active.
   *
   * @param why the reason, a {@link io.kv4j.StoreIOException}
   */
  void poison(RuntimeException why) {
    poisoned = why;
    closed = true;
  }

  /**
   * Leaves a native section or releases a cursor's transaction.
   *
   * @param token what {@link #enter()} returned
   */
  void exit(int token) {
    active.exit(token);
    if (exclusive || closed) {
      lock.lock();
      try {
        changed.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * The counter of cursors open by the calling thread; a cursor increments it when it opens and
   * decrements the same counter when released, whichever thread releases it.
   *
   * @return the current thread's counter
   */
  AtomicInteger cursorsOfCurrentThread() {
    return cursorsOfThread.get();
  }

  /**
   * Runs {@code action} with no transaction active, for growing the map. The caller holds no
   * section.
   *
   * @param timeoutMillis how long to wait for active transactions (open cursors) to finish
   * @param action what to run alone
   * @return true if it ran, false if transactions stayed active past the timeout
   * @throws IllegalStateException if the calling thread holds open cursors (waiting would deadlock)
   * @throws StoreClosedException if the store closes meanwhile
   */
  boolean runExclusive(long timeoutMillis, Runnable action) {
    int own = cursorsOfThread.get().get();
    if (own > 0) {
      throw new IllegalStateException(
          describe
              + ": the LMDB map is full and cannot grow while this thread holds "
              + own
              + " open cursor(s) or snapshot(s) on the store (growing remaps the file, which needs"
              + " every read transaction closed). Close them before writing, or raise the"
              + " 'map-size' option");
    }
    lock.lock();
    try {
      while (exclusive && !closed) {
        changed.awaitUninterruptibly();
      }
      if (closed) {
        throw new StoreClosedException(describe + " is closed");
      }
      exclusive = true;
      try {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (active.inside() > 0 && !closed) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          try {
            // Bounded: exits signal only when they see the flag, so poll as well.
            changed.awaitNanos(Math.min(left, POLL_NANOS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        }
        if (closed) {
          throw new StoreClosedException(describe + " is closed");
        }
        action.run();
        return true;
      } finally {
        exclusive = false;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Marks the store closed, lets waiting threads fail, and waits until every active section has
   * finished, so the environment can be freed. Cursors must have been released before.
   */
  void closeAndDrain() {
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
      boolean interrupted = false;
      while (active.inside() > 0) {
        try {
          changed.awaitNanos(POLL_NANOS);
        } catch (InterruptedException e) {
          interrupted = true; // keep waiting: freeing the environment under a section crashes
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Active sections and cursor transactions right now.
   *
   * @return the count
   */
  int active() {
    return (int) active.inside();
  }
}
