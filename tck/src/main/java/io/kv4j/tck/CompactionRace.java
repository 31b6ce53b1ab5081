package io.kv4j.tck;

import static io.kv4j.tck.RuleGroup.b;
import static io.kv4j.tck.RuleGroup.key;
import static io.kv4j.tck.RuleGroup.rule;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The threads of rule 10.12 ({@link
 * Group10Lifecycle#required_r10_12_compactDuringWritesLosesNothing}) and what they wrote: while
 * writers put and delete their own keys, compactions, each started only after every writer wrote
 * since the previous one, MUST lose nothing: after a reopen every key holds its last write.
 *
 * <p>Only writes made during the last compaction can stay lost (a later compaction copies the
 * store's current state again), so every writer must still be writing then. The writes are capped
 * (an engine whose compactions grow with the data must not fill the heap), and the cap is paced:
 * each writer has {@code cap / (rounds + 1)} writes per compaction round, and one that used its
 * share waits for the next compaction to begin, then writes during it. So each compaction, the last
 * included, runs while every writer still has writes to make.
 */
final class CompactionRace {
  private final Store store;
  private final int writers;
  private final int rounds;

  /** Writes per writer, at most. */
  private final int cap;

  /** How many writes each writer made. */
  private final AtomicIntegerArray written;

  /** 1 for each writer that stopped (also when a write failed). */
  private final AtomicIntegerArray finished;

  /** 1 while a writer waits for the next compaction to begin (its share of this round used). */
  private final AtomicIntegerArray paused;

  private final AtomicBoolean compacting = new AtomicBoolean(true);

  /** Compactions begun. */
  private final AtomicInteger started = new AtomicInteger();

  /** Compactions returned. */
  private final AtomicInteger compactions = new AtomicInteger();

  CompactionRace(Store store, int writers, int rounds, int cap) {
    this.store = store;
    this.writers = writers;
    this.rounds = rounds;
    this.cap = cap;
    this.written = new AtomicIntegerArray(writers);
    this.finished = new AtomicIntegerArray(writers);
    this.paused = new AtomicIntegerArray(writers);
  }

  /** Thread t of the rule's {@code writers + 1}: the last one compacts, the others write. */
  void run(int t) {
    if (t == writers) {
      compact();
    } else {
      write(t);
    }
  }

  /** The compactor's rounds. */
  private void compact() {
    try {
      for (int r = 0; r < rounds && !Thread.currentThread().isInterrupted(); r++) {
        // Each compaction starts once every writer has written since the last one, so writes run
        // during every compaction, the last one included: a write an engine loses there is never
        // copied back by a later compaction.
        int[] seen = new int[writers];
        for (int w = 0; w < writers; w++) {
          seen[w] = written.get(w);
        }
        for (int w = 0; w < writers; w++) {
          while (written.get(w) <= seen[w] + 20
              && finished.get(w) == 0
              && paused.get(w) == 0
              && !Thread.currentThread().isInterrupted()) {
            Thread.onSpinWait();
          }
        }
        started.incrementAndGet();
        store.compact();
        compactions.incrementAndGet();
      }
    } finally {
      compacting.set(false);
    }
  }

  /**
   * Writer t: until the compactions are over, then a little more (at most {@link #cap} writes),
   * paced by the compactions begun (see the class comment).
   */
  private void write(int t) {
    try {
      int share = Math.max(1, cap / (rounds + 1));
      int extra = 50;
      for (int i = 0; (compacting.get() || extra-- > 0) && i < cap; i++) {
        while (compacting.get()
            && i >= (started.get() + 1L) * share
            && !Thread.currentThread().isInterrupted()) {
          paused.set(t, 1);
          java.util.concurrent.locks.LockSupport.parkNanos(50_000); // polls: leaves the CPU to it
        }
        paused.set(t, 0);
        long k = (long) t << 32 | i;
        store.put(key(k), b("c" + t + "-" + i));
        if (i % 4 == 0) {
          store.delete(key(k));
        }
        written.set(t, i + 1);
      }
    } finally {
      finished.set(t, 1);
    }
  }

  /** Every key written holds its last write in {@code again}, the store reopened. */
  void checkEveryWrite(Store again) {
    for (int t = 0; t < writers; t++) {
      for (int i = 0; i < written.get(t); i++) {
        long k = (long) t << 32 | i;
        assertThat(again.get(key(k)))
            .as(
                rule(
                    "10.12",
                    "after "
                        + compactions.get()
                        + " compactions run during writes and a reopen, key "
                        + k
                        + " (thread "
                        + t
                        + ", write "
                        + i
                        + ") holds its last write (a compaction that copies outside the write"
                        + " lock loses the writes made meanwhile)"))
            .isEqualTo(i % 4 == 0 ? null : b("c" + t + "-" + i));
      }
    }
  }
}
