package io.kv4j.sqlite;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bounded pool of connections with borrow/return. Every connection it opens is tracked until it
 * is closed, so {@link #close()} closes each exactly once, idle or borrowed; a connection returned
 * after that is ignored. A thread that dies between borrow and return (the store returns in a
 * finally block) leaks nothing: there is no per-thread state.
 *
 * <p>At most {@code maxOpen} connections exist at once; {@link #borrow()} waits for one to be
 * returned beyond that. At most {@code maxIdle} are kept open while idle; the rest are closed on
 * return.
 */
final class ConnectionPool {
  /** Opens a new, configured connection. */
  interface Factory {
    SqlConn open() throws SQLException;
  }

  private final Factory factory;
  private final int maxOpen;
  private final int maxIdle;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition returned = lock.newCondition();
  private final ArrayDeque<SqlConn> idle = new ArrayDeque<>();
  private final Set<SqlConn> open = Collections.newSetFromMap(new IdentityHashMap<>());
  private int opening;
  private boolean closed;

  ConnectionPool(Factory factory, int maxOpen, int maxIdle) {
    this.factory = factory;
    this.maxOpen = maxOpen;
    this.maxIdle = maxIdle;
  }

  /**
   * An idle connection, a new one, or (when {@code maxOpen} are out) the next one returned.
   *
   * @throws IllegalStateException if the pool is closed (the store checks first)
   */
  SqlConn borrow() throws SQLException {
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw new IllegalStateException("connection pool is closed");
        }
        SqlConn c = idle.pollFirst();
        if (c != null) {
          return c;
        }
        if (open.size() + opening < maxOpen) {
          opening++;
          break;
        }
        returned.awaitUninterruptibly();
      }
    } finally {
      lock.unlock();
    }
    SqlConn c = null;
    boolean tracked = false;
    try {
      c = factory.open();
    } finally {
      lock.lock();
      try {
        opening--;
        if (c != null && !closed) {
          open.add(c);
          tracked = true;
        } else {
          returned.signal();
        }
      } finally {
        lock.unlock();
      }
    }
    if (!tracked) {
      // The pool closed while the connection was being opened.
      c.close();
      throw new IllegalStateException("connection pool is closed");
    }
    return c;
  }

  /**
   * Returns a borrowed connection. A broken one ({@code healthy == false}) or one beyond {@code
   * maxIdle} is closed; after {@link #close()} nothing happens (the pool closed it already).
   */
  void giveBack(SqlConn c, boolean healthy) throws SQLException {
    boolean discard;
    lock.lock();
    try {
      if (!open.contains(c)) {
        return;
      }
      discard = closed || !healthy || idle.size() >= maxIdle;
      if (discard) {
        open.remove(c);
      } else {
        idle.addFirst(c);
      }
      returned.signal();
    } finally {
      lock.unlock();
    }
    if (discard) {
      c.close();
    }
  }

  /** Open connections, idle or borrowed. */
  int openCount() {
    lock.lock();
    try {
      return open.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Closes every connection the pool opened, idle or borrowed, exactly once. The caller guarantees
   * no borrowed connection is in use (the store's lifecycle lock). Idempotent.
   */
  void close() throws SQLException {
    List<SqlConn> all;
    lock.lock();
    try {
      closed = true;
      all = new ArrayList<>(open);
      open.clear();
      idle.clear();
      returned.signalAll();
    } finally {
      lock.unlock();
    }
    SQLException first = null;
    for (SqlConn c : all) {
      try {
        c.close();
      } catch (SQLException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
