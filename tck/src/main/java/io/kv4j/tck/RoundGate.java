package io.kv4j.tck;

import java.time.Duration;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Releases a fixed set of threads together, round after round, for the contention rules (13.2,
 * 14.2). A {@link java.util.concurrent.CyclicBarrier} parks its threads and wakes them one after
 * another, so on a small machine the first one released has often finished its call before the next
 * one runs, and they never meet in the engine. Here the waiting threads spin (yielding now and
 * then, so that threads without a CPU can arrive), and a round starts at one instant shortly after
 * the last thread arrived: the threads that hold a CPU then leave within nanoseconds of each other.
 *
 * <p>The last thread to arrive for a round asks {@code stop} whether to go on; every thread then
 * gets the same answer from {@link #await(int)}. A thread that fails calls {@link #abort()} so that
 * the others stop instead of waiting for it; a thread that waits longer than the timeout aborts the
 * gate.
 */
final class RoundGate {
  /**
   * How long after the last thread arrived a round starts: long enough for the waiting threads on a
   * CPU to see the release (they yield every few microseconds), short next to a round.
   */
  private static final long LEAD_NANOS = 100_000;

  private final int parties;
  private final BooleanSupplier stop;
  private final long timeoutNanos;
  private final AtomicInteger arrived = new AtomicInteger();
  private volatile int released; // rounds released so far
  private volatile long startAt; // System.nanoTime() at which the last released round starts
  private volatile boolean stopped;
  private volatile boolean aborted;

  /**
   * @param parties the threads that meet each round
   * @param stop asked once per round by its last thread: true ends the rounds
   * @param timeout how long a thread waits for the others at most
   */
  RoundGate(int parties, BooleanSupplier stop, Duration timeout) {
    this.parties = parties;
    this.stop = stop;
    this.timeoutNanos = timeout.toNanos();
  }

  /**
   * Waits until every thread arrived for round {@code round} (each thread calls it for the rounds
   * 0, 1, 2, ... in turn), then until the round's start.
   *
   * @return true to run the round, false when the rounds are over
   * @throws BrokenBarrierException if another thread aborted the gate
   * @throws TimeoutException if the others did not all arrive within the timeout
   */
  boolean await(int round) throws BrokenBarrierException, TimeoutException {
    if (arrived.incrementAndGet() == parties * (round + 1)) {
      stopped = stop.getAsBoolean();
      startAt = System.nanoTime() + LEAD_NANOS;
      released = round + 1;
      return startTogether();
    }
    long start = System.nanoTime();
    for (int spins = 1; released <= round; spins++) {
      if (aborted) {
        throw new BrokenBarrierException();
      }
      if (spins % 64 != 0) {
        Thread.onSpinWait();
        continue;
      }
      Thread.yield(); // let a thread without a CPU arrive
      if (System.nanoTime() - start > timeoutNanos) {
        aborted = true;
        throw new TimeoutException(
            "the other threads did not all arrive for round "
                + round
                + " within "
                + Duration.ofNanos(timeoutNanos).toSeconds()
                + " s");
      }
    }
    return startTogether();
  }

  /**
   * Spins until the released round's start: the threads that saw the release in time (those on a
   * CPU) leave at the same instant, the others as soon as they run.
   */
  private boolean startTogether() {
    long at = startAt;
    while (System.nanoTime() - at < 0) {
      Thread.onSpinWait();
    }
    return !stopped;
  }

  /** Stops the other threads: their {@link #await(int)} throws. */
  void abort() {
    aborted = true;
  }
}
