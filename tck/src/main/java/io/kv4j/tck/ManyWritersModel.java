package io.kv4j.tck;

import static io.kv4j.tck.RuleGroup.b;
import static io.kv4j.tck.RuleGroup.call;
import static io.kv4j.tck.RuleGroup.hex;
import static io.kv4j.tck.RuleGroup.key;
import static io.kv4j.tck.RuleGroup.rule;
import static io.kv4j.tck.RuleGroup.run;
import static java.nio.charset.StandardCharsets.UTF_8;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The writers of rule 8.8 ({@link Group08Concurrency#required_r8_8_manyWritersMatchModel}) and the
 * model they are checked against: threads putting and deleting their own keys MUST leave every key
 * in its last state, and a full scan equal to the model.
 *
 * <p>Thread t owns the keys i * threads + t: neighbours in key order belong to different threads,
 * and the keys of all threads grow together, so every thread inserts where the others are
 * rebalancing the same part of the index. A chunk's keys are put, then every 4th deleted: as one
 * batch, or (without ATOMIC_BATCH, and every 8th chunk with it) one call at a time. Key i of every
 * thread ends as {@code m<i>}, or deleted when i is a multiple of 4.
 */
final class ManyWritersModel {
  /** Keys per thread of rule 8.8 written in batches, as a multiple of {@code stressOps}. */
  static final int BATCHED_KEYS_FACTOR = 8;

  private final Store store;
  private final int threads;
  private final boolean batches;

  /** Keys per chunk. */
  private final int chunk;

  /** Keys per thread. */
  private final int per;

  /** The end of every failure message: what was done, and what an engine failing it does wrong. */
  private final String lost;

  /**
   * @param batches whether the engine has ATOMIC_BATCH
   * @param stressOps the environment's {@code stressOps}
   */
  ManyWritersModel(Store store, int threads, boolean batches, int stressOps) {
    this.store = store;
    this.threads = threads;
    this.batches = batches;
    // With ATOMIC_BATCH most keys go in batches of 256 puts and 64 deletes: an engine applies a
    // batch to its index in one long stretch, so a writer that does it outside the write lock is
    // still applying when the next one starts, and each thread writes for longer than a scheduler
    // time slice. A batch costs one log append, so the kit can afford 8 times the keys.
    this.chunk = batches ? 256 : 16;
    this.per = batches ? stressOps * BATCHED_KEYS_FACTOR : stressOps;
    this.lost =
        " after "
            + threads
            + " threads wrote their own keys concurrently (an index changed outside the write"
            + " lock loses updates or breaks its order)";
  }

  /** Thread t's writes: its keys chunk by chunk, each engine call named by its index. */
  void write(int t) {
    int op = 0;
    for (int from = 0; from < per; from += chunk) {
      int to = Math.min(per, from + chunk);
      if (batches && (from / chunk) % 8 != 7) {
        op = writeBatch(t, from, to, op);
      } else {
        op = writeOneByOne(t, from, to, op);
      }
    }
  }

  /** Keys from..to of thread t put, then every 4th deleted, in one batch; returns the next op. */
  private int writeBatch(int t, int from, int to, int op) {
    WriteBatch wb = new WriteBatch();
    for (int i = from; i < to; i++) {
      wb.put(key((long) i * threads + t), b("m" + i));
    }
    for (int i = from; i < to; i += 4) {
      wb.delete(key((long) i * threads + t));
    }
    long first = (long) from * threads + t;
    run(
        "8.8",
        () -> "thread " + t + " op #" + op + " (batch of " + wb.size() + " from key " + first + ")",
        () -> store.write(wb));
    return op + 1;
  }

  /** As {@link #writeBatch}, one call per put and per delete. */
  private int writeOneByOne(int t, int from, int to, int op) {
    int next = op;
    for (int i = from; i < to; i++) {
      long k = (long) i * threads + t;
      byte[] v = b("m" + i);
      int at = next++;
      run(
          "8.8",
          () -> "thread " + t + " op #" + at + " (put key " + k + ")",
          () -> store.put(key(k), v));
    }
    for (int i = from; i < to; i += 4) {
      long k = (long) i * threads + t;
      int at = next++;
      run(
          "8.8",
          () -> "thread " + t + " op #" + at + " (delete key " + k + ")",
          () -> store.delete(key(k)));
    }
    return next;
  }

  /** Every key of thread t reads its last write (a get, so a lookup that the scan hides fails). */
  void checkOwnKeys(int t) {
    for (int i = 0; i < per; i++) {
      long k = (long) i * threads + t;
      byte[] want = i % 4 == 0 ? null : b("m" + i);
      byte[] got = call("8.8", () -> "final get of key " + k, () -> store.get(key(k)));
      if (!Arrays.equals(got, want)) {
        throw new AssertionError(
            rule(
                "8.8",
                "key "
                    + k
                    + " (thread "
                    + t
                    + ") reads "
                    + quoted(got, "nothing")
                    + " instead of its last write, "
                    + quoted(want, "a delete")
                    + lost));
      }
    }
  }

  /**
   * A full scan returns exactly the live keys of all threads in order. It steps through the scan
   * and the expected keys together and reports the first mismatch (a whole-list diff of this many
   * keys would drown it).
   */
  void checkFullScan() {
    long seen = 0;
    long i = 0;
    try (Cursor c = call("8.8", () -> "full scan", () -> store.scan(KeyRange.all()))) {
      while (call("8.8", () -> "full scan", c::hasNext)) {
        Entry e = call("8.8", () -> "full scan", c::next);
        while (i / threads < per && (i / threads) % 4 == 0) {
          i++; // a deleted key
        }
        String want =
            i / threads >= per ? "the end of the scan" : "key " + i + " = 'm" + (i / threads) + "'";
        String got = describe(e);
        if (!got.equals(want) || !Arrays.equals(e.key(), key(i))) {
          throw new AssertionError(
              rule(
                  "8.8",
                  "entry #" + seen + " of a full scan is " + got + ", expected " + want + lost));
        }
        seen++;
        i++;
      }
    }
    long live = (long) threads * per - (long) threads * ((per + 3) / 4);
    if (seen != live) {
      throw new AssertionError(
          rule("8.8", "a full scan returned " + seen + " entries, expected " + live + lost));
    }
  }

  /** An entry as the scan's failure names it: a kit key as its index and value, another in hex. */
  private static String describe(Entry e) {
    return e.key().length == 16
        ? "key " + ByteBuffer.wrap(e.key()).getLong() + " = '" + new String(e.value(), UTF_8) + "'"
        : "key " + hex(e.key());
  }

  private static String quoted(byte[] v, String ifNull) {
    return v == null ? ifNull : "'" + new String(v, UTF_8) + "'";
  }
}
