package io.kv4j.tck;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Rule 10.16: calls racing {@code close()}. Threads call every method of the store (and of a
 * keyspace handle, a snapshot and a cursor, where declared) without pause while another thread
 * closes it. A call that starts before {@code close()} returns either completes normally with a
 * right answer or throws {@link StoreClosedException}; a call that starts after {@code close()}
 * returned throws {@link StoreClosedException}. The keys the calls read are never changed (writes
 * write the value they hold), so every right answer is known: a store being emptied by its close
 * that answers "absent", or an index freed under a call, fails the rule.
 *
 * <p>How often a call meets the close is not left to chance: rounds go on (each a new store) until
 * {@value #WANTED} calls started while a {@code close()} was running, at least {@value #MIN_ROUNDS}
 * rounds, at most {@value #MAX_ROUNDS} rounds or {@value #BACKSTOP_SECONDS} s.
 */
final class CloseRace extends RuleGroup {
  /** Keys whose values the calls read and rewrite unchanged. */
  private static final int KEYS = 64;

  /** Keys of the keyspace handle, when the engine has keyspaces. */
  private static final int SPACE_KEYS = 16;

  /** Calls started while a close() ran that the rule waits for. */
  static final int WANTED = 40;

  static final int MIN_ROUNDS = 10;
  static final int MAX_ROUNDS = 1000;
  static final int BACKSTOP_SECONDS = 120;

  /** Calls each caller makes before the closer may close: the callers are running. */
  private static final int WARM_CALLS = 16;

  /** Where a round is, as the callers read it before and after each call. */
  private static final int OPEN = 0;

  private static final int CLOSING = 1;
  private static final int CLOSED = 2;

  CloseRace(TckBase kit) {
    super(kit);
  }

  /** One call of the race: makes it and checks its answer (an AssertionError when wrong). */
  private interface Call {
    void call(int i);
  }

  void required_r10_16_callsRacingCloseAnswerOrThrowStoreClosed() throws Exception {
    int callers = Math.max(2, env().threads());
    AtomicLong during = new AtomicLong();
    AtomicLong overlapped = new AtomicLong();
    long started = System.nanoTime();
    long backstop = started + TimeUnit.SECONDS.toNanos(BACKSTOP_SECONDS);
    int round = 0;
    while (round < MIN_ROUNDS
        || (during.get() < WANTED && round < MAX_ROUNDS && System.nanoTime() - backstop < 0)) {
      round(round, callers, during, overlapped);
      round++;
    }
    System.out.printf(
        "[10.16] %d rounds of %d callers and a close(): %d calls started while close() ran"
            + " (%d wanted), %d more overlapped it%n",
        round, callers, during.get(), WANTED, overlapped.get());
  }

  /** One round: a new store, callers without pause, a close() once they all run. */
  private void round(int round, int callers, AtomicLong during, AtomicLong overlapped)
      throws InterruptedException {
    Store s = open(config(tempDir.resolve("close-race-" + round), Durability.BUFFERED));
    for (int i = 0; i < KEYS; i++) {
      s.put(key(i), value(i));
    }
    Store ks = null;
    if (has(Feature.KEYSPACES)) {
      ks = s.keyspace("race");
      for (int i = 0; i < SPACE_KEYS; i++) {
        ks.put(key(i), spaceValue(i));
      }
    }
    Map<String, Call> calls = calls(s, ks);
    List<String> names = new ArrayList<>(calls.keySet());
    AtomicInteger phase = new AtomicInteger(OPEN);
    CountDownLatch warm = new CountDownLatch(callers);
    List<Throwable> errors =
        runThreads(
            "10.16",
            callers + 1,
            t -> {
              if (t == callers) {
                closer(s, warm, phase, round);
              } else {
                caller(t, round, names, calls, warm, phase, during, overlapped);
              }
            });
    noThreadFailed("10.16", causesFirst(errors));
  }

  /** Closes the store once every caller made {@value #WARM_CALLS} calls. */
  private void closer(Store s, CountDownLatch warm, AtomicInteger phase, int round)
      throws InterruptedException {
    // A caller stuck in a call holds this at most the thread limit, which then names it.
    warm.await(threadTimeout().toMillis(), TimeUnit.MILLISECONDS);
    phase.set(CLOSING);
    try {
      close(s);
    } catch (RuntimeException e) {
      throw new AssertionError(
          rule(
              "10.16",
              "round "
                  + round
                  + ": close() threw while other threads called the store: "
                  + e
                  + " (close() must close the store, whatever calls are in flight)"),
          e);
    } finally {
      phase.set(CLOSED);
    }
  }

  /**
   * Calls one method after another until it saw the store closed and made every call once more,
   * each of which must then throw {@link StoreClosedException}.
   */
  private void caller(
      int t,
      int round,
      List<String> names,
      Map<String, Call> calls,
      CountDownLatch warm,
      AtomicInteger phase,
      AtomicLong during,
      AtomicLong overlapped) {
    int afterClose = 0;
    boolean warmed = false;
    try {
      for (long n = 0; afterClose < names.size(); n++) {
        if (n == WARM_CALLS) {
          warm.countDown();
          warmed = true;
        }
        String name = names.get((int) ((n + t) % names.size()));
        int i = (int) ((n * 7 + t) % KEYS);
        int before = phase.get();
        Throwable failure = null;
        try {
          calls.get(name).call(i);
        } catch (StoreClosedException e) {
          failure = e;
        } catch (RuntimeException e) {
          throw new AssertionError(
              rule(
                  "10.16",
                  where(round, t, n, name, i, before)
                      + ": threw "
                      + e
                      + " (a call racing close() must answer right or throw"
                      + " StoreClosedException)"),
              e);
        } catch (AssertionError e) {
          throw new AssertionError(
              rule(
                  "10.16",
                  where(round, t, n, name, i, before)
                      + ": "
                      + e.getMessage()
                      + " (a call racing close() must answer right or throw"
                      + " StoreClosedException)"),
              e);
        }
        int after = phase.get();
        if (before == CLOSING) {
          during.incrementAndGet();
        } else if (before == OPEN && after != OPEN) {
          overlapped.incrementAndGet();
        }
        if (before == CLOSED) {
          if (failure == null) {
            throw new AssertionError(
                rule(
                    "10.16",
                    where(round, t, n, name, i, before)
                        + ": returned normally (every call after close() returned must throw"
                        + " StoreClosedException)"));
          }
          afterClose++;
        }
      }
    } finally {
      if (!warmed) {
        warm.countDown(); // a caller that failed early does not hold the closer
      }
    }
  }

  private static String where(int round, int t, long n, String name, int i, int before) {
    return "round "
        + round
        + " thread "
        + t
        + " call #"
        + n
        + " "
        + name
        + " (key "
        + i
        + ") started "
        + (before == OPEN
            ? "before close()"
            : before == CLOSING ? "while close() ran" : "after close() returned");
  }

  /** Every call of the race, by name, for the features the engine declares. */
  private Map<String, Call> calls(Store s, Store ks) {
    Map<String, Call> calls = new LinkedHashMap<>();
    calls.put("get", i -> answer("get", s.get(key(i)), value(i)));
    calls.put(
        "contains",
        i -> {
          if (!s.contains(key(i))) {
            // tagged: the caller wraps it in rule("10.16", where ...)
            throw new AssertionError("contains answered false for a key that is always present");
          }
        });
    calls.put(
        "getAll",
        i -> {
          List<byte[]> got = s.getAll(List.of(key(i), key((i + 1) % KEYS)));
          answer("getAll[0]", got.get(0), value(i));
          answer("getAll[1]", got.get(1), value((i + 1) % KEYS));
        });
    calls.put("put", i -> s.put(key(i), value(i)));
    calls.put("delete", i -> s.delete(key(1000 + i)));
    calls.put(
        "stats",
        i -> {
          StoreStats st = s.stats();
          if (st.keyCountExact() && st.keyCount() < KEYS) {
            // tagged: the caller wraps it in rule("10.16", where ...)
            throw new AssertionError(
                "stats() counted "
                    + st.keyCount()
                    + " keys, flagged exact, in a store that always holds at least "
                    + KEYS);
          }
        });
    calls.put("sync", i -> s.sync());
    calls.put("verify", i -> s.verify());
    if (has(Feature.ORDERED_SCAN)) {
      calls.put("scan", i -> scan(s));
    }
    if (has(Feature.ATOMIC_BATCH)) {
      calls.put(
          "write", i -> s.write(new WriteBatch().put(key(i), value(i)).delete(key(1000 + i))));
    }
    if (has(Feature.CONDITIONAL_WRITE)) {
      calls.put(
          "putIfAbsent",
          i -> expect("putIfAbsent of a present key", s.putIfAbsent(key(i), b("x")), false));
      calls.put(
          "replace",
          i -> expect("replace of the value held", s.replace(key(i), value(i), value(i)), true));
      calls.put(
          "delete(key, expected)",
          i -> expect("delete(key, a value not held)", s.delete(key(i), b("x")), false));
    }
    if (has(Feature.CONDITIONAL_BATCH)) {
      calls.put(
          "writeIf",
          i ->
              expect(
                  "writeIf expecting the value held",
                  s.writeIf(new WriteBatch().expect(key(i), value(i)).put(key(i), value(i))),
                  true));
    }
    if (has(Feature.SNAPSHOT_READ)) {
      calls.put("snapshot", i -> snapshot(s, i));
    }
    if (ks != null) {
      calls.put(
          "keyspace get",
          i -> answer("a keyspace handle's get", ks.get(key(i % SPACE_KEYS)), spaceValue(i)));
      calls.put("keyspace put", i -> ks.put(key(i % SPACE_KEYS), spaceValue(i % SPACE_KEYS)));
    }
    return calls;
  }

  /** A full scan of the fixed keys: in order, each with its value, all of them if it ends. */
  private static void scan(Store s) {
    int seen = 0;
    try (Cursor c = s.scan(KeyRange.between(key(0), key(KEYS)))) {
      while (c.hasNext()) {
        Entry e = c.next();
        if (!Arrays.equals(e.key(), key(seen))) {
          // tagged: the caller wraps it in rule("10.16", where ...)
          throw new AssertionError(
              "the scan's entry " + seen + " is key " + hex(e.key()) + ", not " + hex(key(seen)));
        }
        answer("the scan's entry " + seen, e.value(), value(seen));
        seen++;
      }
    }
    if (seen != KEYS) {
      // tagged: the caller wraps it in rule("10.16", where ...)
      throw new AssertionError(
          "a scan that ended normally returned " + seen + " of the " + KEYS + " keys");
    }
  }

  /** A snapshot's get; closing the snapshot throws nothing, also after the store closed. */
  private static void snapshot(Store s, int i) {
    Snapshot snap = s.snapshot();
    try {
      answer("a snapshot's get", snap.get(key(i)), value(i));
    } finally {
      try {
        snap.close();
      } catch (RuntimeException e) {
        // tagged: the caller wraps it in rule("10.16", where ...)
        throw new AssertionError("closing a snapshot threw " + e + " (it must throw nothing)", e);
      }
    }
  }

  private static void answer(String what, byte[] got, byte[] want) {
    if (!Arrays.equals(got, want)) {
      // tagged: the caller wraps it in rule("10.16", where ...)
      throw new AssertionError(
          what
              + " answered "
              + (got == null ? "null" : hex(got))
              + ", not the value the key always holds ("
              + hex(want)
              + "): a store being closed answered from emptied or freed state");
    }
  }

  private static void expect(String what, boolean got, boolean want) {
    if (got != want) {
      // tagged: the caller wraps it in rule("10.16", where ...)
      throw new AssertionError(what + " answered " + got + ", not " + want);
    }
  }

  private static byte[] value(int i) {
    return b("value-" + i);
  }

  private static byte[] spaceValue(int i) {
    return b("race-" + (i % SPACE_KEYS));
  }
}
