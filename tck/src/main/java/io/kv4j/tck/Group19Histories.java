package io.kv4j.tck;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Group 19: histories. Threads released together, round after round, make random operations on a
 * few hot keys through a {@link History}, which records each call and return; the whole history
 * must then be linearizable ({@link LinearizabilityCheck}), not only the store's end state right.
 * The rules check what the end-state rules cannot see: a read that returns a value older than a
 * completed write, a write acknowledged and then lost to an earlier one, two compare-and-sets that
 * both win, a snapshot that sees half a batch.
 *
 * <p>The hot keys change every few dozen rounds, so that each key's history (each partition the
 * checker searches) holds a few hundred operations while the rule runs for {@code stressOps / 2}
 * milliseconds (at least {@value #MIN_SETS} sets of hot keys, at most {@value #MAX_SETS}). A check
 * that does not decide within {@link #CHECK_BUDGET} of CPU time fails the rule, saying so.
 *
 * <p><b>Lanes.</b> The threads are split into lanes of at most {@value #LANE_WIDTH}, each with hot
 * keys of its own: the store serves every thread at once, but no more than {@value #LANE_WIDTH}
 * contend for one partition. The search grows exponentially with the operations in flight at once
 * in a partition, and how many are depends on the machine: on a busy one every operation of a round
 * overlaps every other. With {@value #LANE_WIDTH} threads a round of rule 19.3 taken at its worst
 * (three operations per thread, all overlapping) keeps a partition's search in the tens of
 * thousands of configurations, broken engines included; with eight it reaches the memo's bound
 * ({@code WorstCaseHistoryTest}).
 */
final class Group19Histories extends RuleGroup {
  /**
   * Group 19's rules as JUnit tests, in rule order, each run in a new {@code Group19Histories};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r19_1_registersAreLinearizable() throws Exception {
      new Group19Histories(this).required_r19_1_registersAreLinearizable();
    }

    @Test
    default void required_r19_2_conditionalWritesAreLinearizable() throws Exception {
      new Group19Histories(this).required_r19_2_conditionalWritesAreLinearizable();
    }

    @Test
    default void required_r19_3_batchesAreAtomicToSnapshotReads() throws Exception {
      new Group19Histories(this).required_r19_3_batchesAreAtomicToSnapshotReads();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group19Histories(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group19Histories(TckBase kit) {
    super(kit);
  }

  /**
   * How long the linearizability check of one rule may take before the rule fails undecided, in the
   * checking thread's CPU time ({@link CheckClock}): other work on the machine does not use it up.
   */
  static final Duration CHECK_BUDGET = Duration.ofSeconds(60);

  /** Threads a rule runs at most, whatever {@code stressThreads} says. */
  static final int MAX_THREADS = 16;

  /** Threads that share one lane's hot keys at most; see the class comment. */
  static final int LANE_WIDTH = 4;

  /** Sets of hot keys a rule runs at least, however slow the engine. */
  static final int MIN_SETS = 2;

  /** Sets of hot keys a rule runs at most, however fast the engine. */
  static final int MAX_SETS = 40;

  /** One random operation of a thread (a thread makes one to three a round) on the hot keys. */
  private interface Workload {
    void operation(Client c, List<byte[]> keys);
  }

  /** A thread of a rule: its number, its random choices and its unique values. */
  private static final class Client {
    final int id;
    final SplittableRandom rnd;
    final Store store;
    final History history;
    private int written;

    /** The value this client last read or wrote per key, for the expected values of its CAS. */
    final Map<String, byte[]> seen = new HashMap<>();

    Client(int id, long seed, Store store, History history) {
      this.id = id;
      this.rnd = new SplittableRandom(seed + 0x9E3779B97F4A7C15L * (id + 1));
      this.store = store;
      this.history = history;
    }

    /** A value no other write of the rule writes: {@code t<client>#<n>}. */
    byte[] fresh() {
      return ("t" + id + "#" + written++).getBytes(StandardCharsets.US_ASCII);
    }

    byte[] pick(List<byte[]> keys) {
      return keys.get(rnd.nextInt(keys.size()));
    }

    byte[] lastSeen(byte[] key) {
      return seen.get(new String(key, StandardCharsets.US_ASCII));
    }

    void saw(byte[] key, byte[] value) {
      seen.put(new String(key, StandardCharsets.US_ASCII), value);
    }
  }

  /**
   * 19.1: put, get and delete on three hot keys; each key's history must be linearizable (a
   * register).
   */
  void required_r19_1_registersAreLinearizable() throws Exception {
    runHistory(
        "19.1",
        3,
        40,
        "puts, gets and deletes",
        (c, keys) -> {
          byte[] k = c.pick(keys);
          int r = c.rnd.nextInt(100);
          if (r < 45) {
            c.history.get(c.id, c.store, k);
          } else if (r < 85) {
            c.history.put(c.id, c.store, k, c.fresh());
          } else {
            c.history.delete(c.id, c.store, k);
          }
        });
  }

  /**
   * 19.2: conditional writes among puts, gets and deletes on two hot keys: {@code replace} and
   * {@code delete(key, expected)} of the value the thread last saw (often just read), {@code
   * putIfAbsent}; each key's history must be linearizable (a register with compare-and-set).
   */
  void required_r19_2_conditionalWritesAreLinearizable() throws Exception {
    require("19.2", Feature.CONDITIONAL_WRITE);
    runHistory(
        "19.2",
        2,
        30,
        "compare-and-sets (replace, delete(key, expected), putIfAbsent) among puts, gets and"
            + " deletes",
        (c, keys) -> {
          byte[] k = c.pick(keys);
          int r = c.rnd.nextInt(100);
          if (r < 20) {
            c.saw(k, c.history.get(c.id, c.store, k));
          } else if (r < 30) {
            byte[] v = c.fresh();
            c.history.put(c.id, c.store, k, v);
            c.saw(k, v);
          } else if (r < 35) {
            c.history.delete(c.id, c.store, k);
            c.saw(k, null);
          } else {
            if (c.rnd.nextBoolean()) { // read-modify-write: the usual optimistic loop
              c.saw(k, c.history.get(c.id, c.store, k));
            }
            byte[] expected = c.lastSeen(k);
            if (expected == null || r < 50) {
              byte[] v = c.fresh();
              if (c.history.putIfAbsent(c.id, c.store, k, v)) {
                c.saw(k, v);
              }
            } else if (r < 88) {
              byte[] v = c.fresh();
              if (c.history.replace(c.id, c.store, k, expected, v)) {
                c.saw(k, v);
              }
            } else if (c.history.delete(c.id, c.store, k, expected)) {
              c.saw(k, null);
            }
          }
        });
  }

  /**
   * 19.3: batches of two to four puts (and deletes) over four hot keys, against snapshot reads of
   * all four (one {@code getAll} or four {@code get}s through the snapshot), {@code Store.getAll}
   * (each value a read of its own), gets and puts, and with {@code CONDITIONAL_BATCH} {@code
   * writeIf}; the four keys' history must be linearizable: a snapshot sees every batch whole or not
   * at all.
   */
  void required_r19_3_batchesAreAtomicToSnapshotReads() throws Exception {
    require("19.3", Feature.ATOMIC_BATCH);
    require("19.3", Feature.SNAPSHOT_READ);
    boolean writeIf = has(Feature.CONDITIONAL_BATCH);
    runHistory(
        "19.3",
        4,
        24,
        "batches, snapshot reads, getAll, gets, puts" + (writeIf ? " and writeIf" : ""),
        (c, keys) -> {
          int r = c.rnd.nextInt(100);
          if (r < 30 || (r >= 90 && !writeIf)) {
            c.history.write(c.id, c.store, batch(c, keys));
          } else if (r < 45) {
            try (History.SnapshotReads snap = c.history.snapshot(c.id, c.store)) {
              snap.getAll(keys);
            }
          } else if (r < 60) {
            // Half the keys, a write of the thread's own, the other half: the snapshot must not
            // see the write, nor the other threads' writes made meanwhile.
            try (History.SnapshotReads snap = c.history.snapshot(c.id, c.store)) {
              List<byte[]> order = shuffled(c, keys);
              int half = keys.size() / 2;
              for (byte[] k : order.subList(0, half)) {
                snap.get(k);
              }
              if (c.rnd.nextBoolean()) {
                c.history.write(c.id, c.store, batch(c, keys));
              } else {
                c.history.put(c.id, c.store, order.get(half + c.rnd.nextInt(half)), c.fresh());
              }
              for (byte[] k : order.subList(half, keys.size())) {
                snap.get(k);
              }
            }
          } else if (r < 70) {
            List<byte[]> vs = c.history.getAll(c.id, c.store, keys);
            for (int i = 0; i < keys.size(); i++) {
              c.saw(keys.get(i), vs.get(i));
            }
          } else if (r < 80) {
            byte[] k = c.pick(keys);
            c.saw(k, c.history.get(c.id, c.store, k));
          } else if (r < 90) {
            c.history.put(c.id, c.store, c.pick(keys), c.fresh());
          } else {
            WriteBatch b = batch(c, keys);
            byte[] k = c.pick(keys);
            byte[] expected = c.lastSeen(k);
            if (expected == null) {
              b.expectAbsent(k);
            } else {
              b.expect(k, expected);
            }
            c.history.writeIf(c.id, c.store, b);
          }
        });
  }

  /** Two to all of the keys, each put to a fresh value or (one in ten) deleted. */
  private static WriteBatch batch(Client c, List<byte[]> keys) {
    List<byte[]> order = shuffled(c, keys);
    int n = 2 + c.rnd.nextInt(keys.size() - 1);
    WriteBatch b = new WriteBatch();
    for (int i = 0; i < n; i++) {
      if (c.rnd.nextInt(10) == 0) {
        b.delete(order.get(i));
      } else {
        b.put(order.get(i), c.fresh());
      }
    }
    return b;
  }

  /** The keys in a random order. */
  private static List<byte[]> shuffled(Client c, List<byte[]> keys) {
    List<byte[]> order = new ArrayList<>(keys);
    for (int i = order.size() - 1; i > 0; i--) {
      java.util.Collections.swap(order, i, c.rnd.nextInt(i + 1));
    }
    return order;
  }

  /**
   * Runs a workload: {@code max(4, stressThreads)} threads (at most {@value #MAX_THREADS}) released
   * together ({@link RoundGate}) round after round, each making one to three operations a round on
   * the round's {@code hot} keys, which change every {@code roundsPerSet} rounds (so that each
   * set's partition holds a few hundred operations); then checks the history.
   */
  private void runHistory(String ruleId, int hot, int roundsPerSet, String what, Workload w)
      throws Exception {
    Store s = open();
    long seed = randomSeed();
    // At most 16: every thread can have an operation in flight, and the search grows with that.
    int threads = Math.min(MAX_THREADS, Math.max(4, env().stressThreads()));
    int lanes = (threads + LANE_WIDTH - 1) / LANE_WIDTH;
    History history = new History();
    long started = System.nanoTime();
    long deadline = started + contentionWindow(env(), 0.5).toNanos();
    AtomicInteger rounds = new AtomicInteger();
    RoundGate gate =
        new RoundGate(
            threads,
            () -> {
              int done = rounds.getAndIncrement();
              return done >= MAX_SETS * roundsPerSet
                  || (done >= MIN_SETS * roundsPerSet
                      && done % roundsPerSet == 0
                      && System.nanoTime() - deadline > 0);
            },
            threadTimeout());
    List<Throwable> errors =
        runThreads(
            ruleId,
            threads,
            t -> {
              Client c = new Client(t, seed, s, history);
              try {
                for (int round = 0; gate.await(round); round++) {
                  List<byte[]> keys = hotKeys(ruleId, round / roundsPerSet, t % lanes, hot);
                  for (int op = 1 + c.rnd.nextInt(3); op > 0; op--) {
                    w.operation(c, keys);
                  }
                }
              } catch (Throwable e) {
                gate.abort(); // the other threads stop too
                throw e;
              }
            });
    String where =
        "seed="
            + seed
            + ", "
            + threads
            + " threads in "
            + lanes
            + (lanes == 1 ? " lane" : " lanes")
            + " released together in "
            + (rounds.get() - 1)
            + " rounds of one to three operations each ("
            + what
            + "), "
            + history.size()
            + " operations on "
            + hot
            + " hot keys per lane changed every "
            + roundsPerSet
            + " rounds";
    noThreadFailed(ruleId, causesFirst(errors));
    long recorded = System.nanoTime();
    HistoryVerdict verdict = history.check(CHECK_BUDGET);
    System.out.printf(
        "[%s] %s: recorded in %d ms, checked in %d ms: %s%n",
        ruleId,
        where,
        TimeUnit.NANOSECONDS.toMillis(recorded - started),
        verdict.elapsed().toMillis(),
        verdict.decided() && verdict.linearizable()
            ? verdict.explanation()
            : verdict.decided() ? "not linearizable" : "undecided");
    if (!verdict.decided()) {
      throw new AssertionError(rule(ruleId, where + ": " + verdict.explanation() + replay(seed)));
    }
    if (!verdict.linearizable()) {
      throw new AssertionError(
          rule(ruleId, where + ": the history is " + verdict.explanation() + replay(seed)));
    }
  }

  private static String replay(long seed) {
    return "\n(the threads' choices replay with -Dkv4j.tck.seed="
        + seed
        + "; the interleaving is the machine's)";
  }

  /** The hot keys of one set and lane: {@code 19.1/s<set>/l<lane>/k<i>}, readable in a timeline. */
  private static List<byte[]> hotKeys(String ruleId, int set, int lane, int hot) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < hot; i++) {
      keys.add((ruleId + "/s" + set + "/l" + lane + "/k" + i).getBytes(StandardCharsets.US_ASCII));
    }
    return keys;
  }
}
