package io.kv4j.spi;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit of concurrent writes (flat combining): each caller queues its write, then takes the
 * writer lock; whoever holds it is the group's leader and hands every queued write (up to a count
 * and a byte limit) to the engine's {@link Committer} in one call, which applies them in one
 * transaction and syncs once. A caller whose write a leader already handled finds it done when it
 * gets the lock and returns at once, so concurrent writers share one commit and one sync.
 *
 * <p><b>Ordering.</b> Writes are grouped in the order they were queued, a group holds them in that
 * order, and groups are committed one after another in that order. Writes of one thread are
 * therefore committed in the order its calls were made.
 *
 * <p><b>Answers.</b> {@link #submit} returns once its write's group was handled. When {@link
 * Committer#commit} returns normally, every member's {@code submit} returns {@code true}; a
 * committer that settles members one by one (after retrying a failed group member by member, say)
 * records each member's own outcome in the write itself. When {@code commit} throws, nothing of the
 * group may have been committed, and {@link Committer#failure} maps the cause once for the whole
 * group: every member's {@code submit} throws the exception it returns, or returns {@code false}
 * when it returns null (the caller then retries its write alone, outside the group). If the cause
 * is an {@link Error}, the leader's own {@code submit} rethrows it after its members got their
 * answers; no waiter is ever left queued.
 *
 * <p><b>Thread-safety.</b> {@code submit} may be called by any number of threads. The committer is
 * called by one thread at a time, with {@link #lock()} held; everything it writes into a write
 * before returning is visible to that write's caller once {@code submit} returns. The lock may be
 * held by the engine for work that must keep group commits out (verify, compaction, a batch).
 * Waiting for the lock is not interruptible: a queued write may be committed by another thread's
 * group at any moment, so it cannot be withdrawn; the interrupt status is left as it was.
 *
 * <p><b>Close.</b> There is nothing to close: a queued write is always settled before its {@code
 * submit} returns, so once the engine has stopped new calls (its lifecycle lock or call gate) and
 * calls in flight have returned, no write is left queued.
 *
 * @param <W> the engine's pending write
 */
public final class GroupCommit<W> {
  /**
   * What an engine supplies: how to commit a group, how big a write is, and what a failed group's
   * members see.
   *
   * @param <W> the engine's pending write
   */
  public interface Committer<W> {
    /**
     * Applies every write of {@code group}, in order, in one transaction, commits it and syncs it
     * as the store's durability asks. Called with the writer lock held, by one thread at a time.
     *
     * @param group the writes, in queue order; never empty
     * @throws Exception if the group failed; nothing of it may have been committed
     */
    void commit(List<W> group) throws Exception;

    /**
     * What each member of a group whose {@link #commit} threw sees; called once per failed group,
     * with the writer lock held. It may put the store into its failed state.
     *
     * @param group the group's writes, in queue order
     * @param cause what {@code commit} threw
     * @return the exception every member's {@code submit} throws, or null to have each member's
     *     {@code submit} return {@code false} so its caller retries the write alone
     */
    RuntimeException failure(List<W> group, Throwable cause);

    /**
     * The bytes a write adds to a group (keys and values), for the group's byte limit.
     *
     * @param write a queued write
     * @return its size in bytes, at least 0
     */
    long bytes(W write);
  }

  /** A queued write and its answer; the answer is written and read under the writer lock. */
  private static final class Pending<W> {
    final W write;
    final long bytes;
    boolean done;
    boolean committed;
    RuntimeException error;

    Pending(W write, long bytes) {
      this.write = write;
      this.bytes = bytes;
    }
  }

  private final Committer<W> committer;
  private final int maxWrites;
  private final long maxBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Pending<W>> queue = new ArrayDeque<>(); // guarded by itself

  /**
   * A group commit with the given limits.
   *
   * @param committer the engine's strategy
   * @param maxWrites the most writes one group holds, at least 1
   * @param maxBytes the most bytes one group holds; a single larger write forms a group alone
   * @throws IllegalArgumentException if a limit is below 1
   */
  public GroupCommit(Committer<W> committer, int maxWrites, long maxBytes) {
    this.committer = Objects.requireNonNull(committer, "committer");
    if (maxWrites < 1 || maxBytes < 1) {
      throw new IllegalArgumentException(
          "group limits must be at least 1: maxWrites=" + maxWrites + ", maxBytes=" + maxBytes);
    }
    this.maxWrites = maxWrites;
    this.maxBytes = maxBytes;
  }

  /**
   * The writer lock group commits run under; an engine holds it for other writes (batches, keyspace
   * changes) and for work that must keep writes out.
   *
   * @return the lock
   */
  public ReentrantLock lock() {
    return lock;
  }

  /**
   * Writes queued and not yet taken into a group.
   *
   * @return the count
   */
  public int queued() {
    synchronized (queue) {
      return queue.size();
    }
  }

  /**
   * Queues {@code write} and returns once a group holding it was handled (see the class comment).
   * Must not be called from inside {@link Committer#commit}.
   *
   * @param write the write
   * @return true if its group was committed; false if the group failed and the committer asked for
   *     each member to be retried alone by its caller
   * @throws RuntimeException the failed group's exception, as {@link Committer#failure} mapped it
   * @throws Error what the committer threw, in the leader that called it
   */
  public boolean submit(W write) {
    Objects.requireNonNull(write, "write");
    Pending<W> me = new Pending<>(write, committer.bytes(write));
    synchronized (queue) {
      queue.addLast(me);
    }
    lock.lock();
    try {
      while (!me.done) {
        commitGroup();
      }
    } finally {
      lock.unlock();
    }
    if (me.error != null) {
      throw me.error;
    }
    return me.committed;
  }

  /** Takes the next group off the queue and hands it to the committer; lock held. */
  private void commitGroup() {
    List<Pending<W>> group = new ArrayList<>();
    synchronized (queue) {
      long bytes = 0;
      while (!queue.isEmpty() && group.size() < maxWrites) {
        Pending<W> p = queue.peekFirst();
        if (!group.isEmpty() && bytes + p.bytes > maxBytes) {
          break;
        }
        queue.pollFirst();
        group.add(p);
        bytes += p.bytes;
      }
    }
    if (group.isEmpty()) {
      return; // the caller's write was taken by an earlier group and is done
    }
    List<W> writes = new ArrayList<>(group.size());
    for (Pending<W> p : group) {
      writes.add(p.write);
    }
    boolean committed = false;
    RuntimeException error = null;
    try {
      committer.commit(writes);
      committed = true;
    } catch (Throwable t) {
      try {
        error = committer.failure(writes, t);
      } catch (RuntimeException mapping) {
        error = mapping; // the mapper's own failure is the best answer left
      } finally {
        if (t instanceof Error) {
          settle(group, false, error);
          throw (Error) t;
        }
      }
    }
    settle(group, committed, error);
  }

  private static <W> void settle(List<Pending<W>> group, boolean committed, RuntimeException e) {
    for (Pending<W> p : group) {
      p.committed = committed;
      p.error = e;
      p.done = true;
    }
  }
}
