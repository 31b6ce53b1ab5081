package io.kv4j.spi;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Counts the calls in flight into a store's native handles or memory mappings, so that close (or
 * the unmapping of a region) waits for them instead of freeing memory under them: use after free of
 * native memory crashes the JVM, where a closed gate gives a clear exception.
 *
 * <pre>{@code
 * int token = gate.enter();
 * if (token < 0) {
 *   throw new StoreClosedException(...);
 * }
 * try {
 *   ... // use the native handle or the mapping
 * } finally {
 *   gate.exit(token);
 * }
 * }</pre>
 *
 * <p>Unlike the read side of a {@link java.util.concurrent.locks.ReadWriteLock}, entering costs one
 * atomic increment of a counter of the calling thread's stripe (chosen by thread id), padded to its
 * own 128 bytes, so readers on different cores do not contend for one cache line: reads scale with
 * threads.
 *
 * <p>Why not {@link java.util.concurrent.atomic.LongAdder}: a thread whose update of a LongAdder
 * cell meets contention moves to another cell, so a call's increment and decrement can land in
 * different cells while {@code sum()} reads the cells one by one; a call backing out could add +1
 * to a cell already summed and -1 to one not yet summed, hiding a call still inside. Here the token
 * is the counter that was incremented and {@link #exit} decrements that same counter, so each
 * counter stays at or above the number of calls inside that counted there: a sum can over-count
 * while a call backs out, never under-count.
 *
 * <p>Thread-safe. {@link #exit} may run on another thread than the matching {@link #enter} (a
 * cursor closed by another thread).
 */
public final class CallGate {
  private static final int PAD = 16; // longs per counter: 128 bytes (adjacent-line prefetch pairs)

  private final AtomicLongArray counts; // [epoch][stripe], each PAD longs apart
  private final int stripes;
  private volatile int epoch;
  private volatile boolean closed;

  /**
   * A gate with 64 stripes, or 8 per hardware thread on larger machines (at most 1024): 16 KiB per
   * gate at 64. Threads take stripes by their id, so up to that many threads started one after
   * another (a pool's workers, an engine's background threads) never share a counter.
   */
  public CallGate() {
    int want = Math.min(1024, Math.max(64, Runtime.getRuntime().availableProcessors() * 8));
    this.stripes = Integer.highestOneBit(want - 1) << 1;
    // One PAD before the first counter and after the last: nothing else shares their lines.
    this.counts = new AtomicLongArray((2 * stripes + 2) * PAD);
  }

  private int counter(int e, int stripe) {
    return (e * stripes + stripe + 1) * PAD;
  }

  private int stripe() {
    // Thread ids are handed out in sequence, a plain field read; an identity hash could collide
    // for two busy threads and, on a thread whose monitor was ever inflated, costs a VM call.
    @SuppressWarnings("deprecation") // threadId() is Java 19+; getId() is the same value
    long id = Thread.currentThread().getId();
    return (int) id & (stripes - 1);
  }

  /**
   * Counts a call in, unless the gate is closed.
   *
   * @return the token to pass to {@link #exit}, never negative; or -1 if the gate is closed, in
   *     which case nothing was counted and the caller must not call {@link #exit}
   */
  public int enter() {
    int stripe = stripe();
    while (true) {
      int e = epoch & 1;
      int i = counter(e, stripe);
      counts.getAndIncrement(i);
      // Re-read after the increment (both volatile): close() and awaitEarlier() write first and
      // read the counters after, so either they see this call or it sees their write.
      if (closed) {
        counts.getAndDecrement(i);
        return -1;
      }
      if ((epoch & 1) == e) {
        return i;
      }
      counts.getAndDecrement(i);
    }
  }

  /**
   * Counts a call out.
   *
   * @param token what {@link #enter} returned for the call
   * @throws IllegalArgumentException if the token is not one {@link #enter} returns
   */
  public void exit(int token) {
    if (token < PAD || token >= counts.length() - PAD || token % PAD != 0) {
      throw new IllegalArgumentException("not a token of this gate: " + token);
    }
    counts.getAndDecrement(token);
  }

  /**
   * Waits until every call that entered before this method was called has exited; calls entering
   * meanwhile are not waited for. For retiring a resource that new calls can no longer reach (an
   * unlinked mapping) while the gate stays open.
   */
  public synchronized void awaitEarlier() {
    int old = epoch & 1;
    epoch = old ^ 1;
    for (int round = 0; sum(old) != 0; round++) {
      pause(round);
    }
  }

  /**
   * Closes the gate: from now on {@link #enter} returns -1; then waits until every call inside has
   * exited. Calling it again only waits again.
   */
  public void close() {
    closed = true;
    awaitEmpty();
  }

  /** Waits until no call is inside. */
  public void awaitEmpty() {
    for (int round = 0; inside() != 0; round++) {
      pause(round);
    }
  }

  /**
   * Spins first (calls are usually a get, over in a microsecond), then sleeps in steps of up to a
   * millisecond (a call can be a long scan step or a manual compaction).
   */
  private static void pause(int round) {
    if (round < 1_000) {
      Thread.onSpinWait();
    } else {
      LockSupport.parkNanos(Math.min(1_000_000L, 1_000L << Math.min(10, (round - 1_000) / 16)));
    }
  }

  /**
   * Whether {@link #close} was called.
   *
   * @return true once closed
   */
  public boolean isClosed() {
    return closed;
  }

  /**
   * The calls inside now, a snapshot that may briefly count a call that is backing out of a closed
   * gate (never one less than are inside throughout).
   *
   * @return the count
   */
  public long inside() {
    return sum(0) + sum(1);
  }

  private long sum(int e) {
    long s = 0;
    for (int k = 0; k < stripes; k++) {
      s += counts.get(counter(e, k));
    }
    return s;
  }
}
