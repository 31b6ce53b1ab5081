package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Rule 8.5's second part: a key count flagged exact is checked while writers run, not only after
 * they stopped. The writers only overwrite live keys (puts, and with {@code ATOMIC_BATCH} batches
 * of overwrites) and delete absent keys, so the live count never changes and every exact count read
 * meanwhile must equal it; a count kept apart from the data (counted before the write is applied,
 * corrected after) is right once the writers stop but wrong while they run. Each writer's calls
 * change one key at a time, or a batch at once, so even a count summed over shards one after
 * another sees no change.
 */
final class KeyCountWhileWriting extends RuleGroup {
  /** Stats read while the writers run, at least; the writers go on until the reader made them. */
  static final int MIN_READS = 500;

  KeyCountWhileWriting(TckBase kit) {
    super(kit);
  }

  /**
   * Runs the writers on {@code s}, whose live keys are {@code key(t * per + i)} for each writer
   * thread {@code t < writers} and each {@code i < per} with {@code i % 3 != 0} (what the first
   * part of 8.5 left), beside one thread reading {@code stats()}; {@code live} is their number.
   */
  void check(Store s, int writers, int per, long live) throws InterruptedException {
    AtomicLong reads = new AtomicLong();
    AtomicBoolean writing = new AtomicBoolean(true);
    AtomicBoolean reading = new AtomicBoolean(true);
    AtomicLong writersLeft = new AtomicLong(writers);
    AtomicReference<String> wrong = new AtomicReference<>();
    boolean batches = has(Feature.ATOMIC_BATCH);
    List<Throwable> errors =
        runThreads(
            "8.5",
            writers + 1,
            t -> {
              if (t == writers) {
                try {
                  readCounts(s, live, writing, reads, wrong);
                } finally {
                  reading.set(false);
                }
                return;
              }
              try {
                overwrite(s, t, per, batches, reads, reading);
              } finally {
                if (writersLeft.decrementAndGet() == 0) {
                  writing.set(false);
                }
              }
            });
    noThreadFailed("8.5", errors);
    assertThat(wrong.get())
        .as(
            rule(
                "8.5",
                "a key count flagged exact, read while "
                    + writers
                    + " threads overwrite live keys"
                    + (batches ? " (puts and batches)" : "")
                    + " and delete absent ones, equals the "
                    + live
                    + " live keys at every read (a count kept apart from the data, counted"
                    + " before a write is applied and corrected after, is wrong in between)"))
        .isNull();
  }

  private static void readCounts(
      Store s, long live, AtomicBoolean writing, AtomicLong reads, AtomicReference<String> wrong) {
    while (writing.get() && wrong.get() == null && !Thread.currentThread().isInterrupted()) {
      long n = reads.get();
      StoreStats st = call("8.5", () -> "stats() read #" + n + " while writing", s::stats);
      reads.incrementAndGet();
      if (st.keyCountExact() && st.keyCount() != live) {
        wrong.set(
            "stats() read #"
                + n
                + " answered "
                + st.keyCount()
                + " keys, flagged exact, while the live keys stayed "
                + live);
      }
    }
  }

  /**
   * Overwrites writer {@code t}'s live keys round after round (values of varying length, every
   * fourth call a batch of four overwrites when the engine has them, every fifth a delete of an
   * absent key) until it made {@code per} calls and the reader read {@link #MIN_READS} times (or
   * stopped, having found a wrong count).
   */
  private static void overwrite(
      Store s, int t, int per, boolean batches, AtomicLong reads, AtomicBoolean reading) {
    long base = (long) t * per;
    for (int op = 0; op < per || (reads.get() < MIN_READS && reading.get()); op++) {
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      int i = liveIndex(op, per);
      long k = base + i;
      int call = op;
      byte[] v = b("overwrite " + op + "x".repeat(op % 17));
      if (call % 5 == 4) {
        run(
            "8.5",
            () -> "thread " + t + " op #" + call + " (delete absent key)",
            () -> s.delete(key(k + 1_000_000_000L)));
      } else if (batches && call % 4 == 3) {
        WriteBatch b = new WriteBatch();
        for (int j = 0; j < 4; j++) {
          b.put(key(base + liveIndex(op + j * 7, per)), v);
        }
        run(
            "8.5",
            () -> "thread " + t + " op #" + call + " (batch of overwrites)",
            () -> s.write(b));
      } else {
        run(
            "8.5",
            () -> "thread " + t + " op #" + call + " (overwrite key " + k + ")",
            () -> s.put(key(k), v));
      }
    }
  }

  /** A live index of a writer's keys (one with {@code i % 3 != 0}) for its {@code op}-th call. */
  private static int liveIndex(int op, int per) {
    int i = Math.floorMod(op, per);
    return i % 3 == 0 ? (i + 1 < per ? i + 1 : i - 1) : i;
  }
}
