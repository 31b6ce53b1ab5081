package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.Store;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Group 13: conditional writes — {@code putIfAbsent}, {@code replace} and {@code delete(key,
 * expected)} compare and write atomically ({@link Feature#CONDITIONAL_WRITE}).
 */
final class Group13ConditionalWrites extends RuleGroup {
  /**
   * Group 13's rules as JUnit tests, in rule order, each run in a new {@code
   * Group13ConditionalWrites}; {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r13_1_conditionalWritesMatchAModel() {
      new Group13ConditionalWrites(this).required_r13_1_conditionalWritesMatchAModel();
    }

    @Test
    default void required_r13_2_replaceLoopsLoseNoIncrement() throws Exception {
      new Group13ConditionalWrites(this).required_r13_2_replaceLoopsLoseNoIncrement();
    }

    @Test
    default void required_r13_3_putIfAbsentHasOneWinner() throws Exception {
      new Group13ConditionalWrites(this).required_r13_3_putIfAbsentHasOneWinner();
    }

    @Test
    default void required_r13_4_conditionalWritesWithoutFeatureAreRefused() {
      new Group13ConditionalWrites(this).required_r13_4_conditionalWritesWithoutFeatureAreRefused();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group13ConditionalWrites(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group13ConditionalWrites(TckBase kit) {
    super(kit);
  }

  void required_r13_1_conditionalWritesMatchAModel() {
    require("13.1", Feature.CONDITIONAL_WRITE);
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    SplittableRandom rnd = new SplittableRandom(seed(13));
    byte[][] values = {b(""), b("a"), b("b"), b("ab"), b("abc")};
    for (int op = 0; op < env().ops(); op++) {
      byte[] k = key(rnd.nextInt(8));
      byte[] current = model.get(k);
      byte[] guess = rnd.nextInt(3) == 0 && current != null ? current.clone() : pick(rnd, values);
      byte[] v = pick(rnd, values);
      String where = "seed=" + seed(13) + " op #" + op + " key=" + hex(k);
      switch (rnd.nextInt(5)) {
        case 0 -> {
          boolean want = current == null;
          assertThat(s.putIfAbsent(k, v))
              .as(rule("13.1", where + ": putIfAbsent answers whether the key was absent"))
              .isEqualTo(want);
          if (want) {
            model.put(k, v);
          }
        }
        case 1 -> {
          boolean want = current != null && Arrays.equals(current, guess);
          assertThat(s.replace(k, guess, v))
              .as(rule("13.1", where + ": replace answers whether the value matched"))
              .isEqualTo(want);
          if (want) {
            model.put(k, v);
          }
        }
        case 2 -> {
          boolean want = current != null && Arrays.equals(current, guess);
          assertThat(s.delete(k, guess))
              .as(rule("13.1", where + ": delete(key, expected) answers whether the value matched"))
              .isEqualTo(want);
          if (want) {
            model.remove(k);
          }
        }
        case 3 -> {
          s.put(k, v);
          model.put(k, v);
        }
        default -> {
          s.delete(k);
          model.remove(k);
        }
      }
      assertThat(s.get(k))
          .as(rule("13.1", where + ": the key holds what the conditional writes decided"))
          .isEqualTo(model.get(k));
    }
    if (has(Feature.PERSISTENT)) {
      s = reopen(s);
      for (int i = 0; i < 8; i++) {
        assertThat(s.get(key(i)))
            .as(rule("13.1", "seed=" + seed(13) + ": key " + i + " after reopen"))
            .isEqualTo(model.get(key(i)));
      }
    }
  }

  /**
   * 13.2: conditional writes stay atomic under contention. First, threads increment four shared
   * counters through get + replace (or putIfAbsent) retry loops: no increment may be lost. Then, in
   * rounds, every thread reads one counter and all, released together, replace the value they read
   * with the next one: exactly one may answer true per round. A retry loop that only meets false
   * answers fails the rule at once ({@link #checkFalseStreak}).
   */
  void required_r13_2_replaceLoopsLoseNoIncrement() throws Exception {
    require("13.2", Feature.CONDITIONAL_WRITE);
    Store s = open();
    incrementLoopsLoseNothing(s);
    oneWinnerPerRound(s, key(4));
  }

  /** 13.2, free-running: retry loops over four counters lose no increment. */
  private void incrementLoopsLoseNothing(Store s) throws Exception {
    int threads = env().stressThreads();
    int counters = 4;
    int perThread = Math.max(50, env().stressOps() / 4);
    AtomicLong successes = new AtomicLong();
    AtomicLong retries = new AtomicLong();
    List<Throwable> errors =
        runThreads(
            "13.2",
            threads,
            t -> {
              for (int i = 0; i < perThread; i++) {
                byte[] k = key((t + i) % counters);
                long before = successes.get();
                long falses = 0;
                while (true) {
                  byte[] cur = s.get(k);
                  boolean won =
                      cur == null
                          ? s.putIfAbsent(k, counter(1))
                          : s.replace(k, cur, counter(count(cur) + 1));
                  if (won) {
                    break;
                  }
                  retries.incrementAndGet();
                  falses = checkFalseStreak("13.2", t, i, falses + 1, successes.get() - before);
                }
                successes.incrementAndGet();
              }
            });
    noThreadFailed("13.2", errors);
    long total = 0;
    for (int c = 0; c < counters; c++) {
      byte[] v = s.get(key(c));
      total += v == null ? 0 : count(v);
    }
    assertThat(total)
        .as(
            rule(
                "13.2",
                threads
                    + " threads x "
                    + perThread
                    + " increments through replace loops over "
                    + counters
                    + " counters ("
                    + retries.get()
                    + " retries): an increment was lost, so a compare and its write were not"
                    + " atomic"))
        .isEqualTo((long) threads * perThread);
  }

  /**
   * 13.2, in rounds: every thread reads the counter {@code k}; then all, released together ({@link
   * RoundGate}), replace the value they read with the next one (putIfAbsent in the first round).
   * Exactly one must answer true: two winners are a compare and write that were not atomic, none a
   * false answer to a condition that held. Runs for {@code 2 x stressOps} ms ({@link
   * #contentionWindow}) and until {@link #CONTENDED_ROUNDS} rounds were contended (two threads'
   * conditional writes overlapped in time), at most ten times that window: a compare and a write a
   * hundred nanoseconds apart meet only when two threads run at once, which a busy machine makes
   * rarer, so the rule counts contention rather than time.
   */
  private static final int MIN_ROUNDS = 50;

  /** Rounds of 13.2 in which at least two threads' conditional writes overlapped. */
  static final int CONTENDED_ROUNDS = 5_000;

  private void oneWinnerPerRound(Store s, byte[] k) throws Exception {
    int threads = env().stressThreads();
    int rounds = Math.max(100_000, env().stressOps() * 10);
    long window = contentionWindow(env(), 2).toNanos();
    long deadline = System.nanoTime() + window;
    long backstop = deadline + 9 * window;
    AtomicIntegerArray winners = new AtomicIntegerArray(rounds);
    AtomicInteger done = new AtomicInteger();
    AtomicInteger contended = new AtomicInteger();
    long[] began = new long[threads]; // each thread's slot, published by the gate
    long[] ended = new long[threads];
    // At least MIN_ROUNDS rounds however late the threads start on a busy machine, and past the
    // window until CONTENDED_ROUNDS rounds had two writes overlapping (or the backstop passed).
    RoundGate gate =
        new RoundGate(
            threads,
            () -> {
              long now = System.nanoTime();
              return done.get() >= MIN_ROUNDS
                  && now - deadline > 0
                  && (contended.get() >= CONTENDED_ROUNDS || now - backstop > 0);
            },
            threadTimeout());
    List<Throwable> errors =
        runThreads(
            "13.2",
            threads,
            t -> {
              try {
                for (int r = 0; r < rounds; r++) {
                  byte[] cur = s.get(k);
                  if (!gate.await(2 * r)) { // every thread read the counter: all write together
                    return;
                  }
                  began[t] = System.nanoTime();
                  boolean won =
                      cur == null
                          ? s.putIfAbsent(k, counter(1))
                          : s.replace(k, cur, counter(count(cur) + 1));
                  ended[t] = System.nanoTime();
                  if (won) {
                    winners.incrementAndGet(r);
                  }
                  gate.await(2 * r + 1); // every thread answered
                  if (t == 0) {
                    checkOneWinner(r, winners.get(r), threads, count(cur));
                    if (overlapped(began, ended)) {
                      contended.incrementAndGet();
                    }
                    done.set(r + 1);
                  }
                }
              } catch (Throwable e) {
                gate.abort(); // the other threads stop too
                throw e;
              }
            });
    noThreadFailed("13.2", causesFirst(errors));
    assertThat(count(s.get(k)))
        .as(
            rule(
                "13.2",
                "the counter after "
                    + done.get()
                    + " rounds of "
                    + threads
                    + " threads released together ("
                    + contended.get()
                    + " contended), one winner each"))
        .isEqualTo(done.get());
    System.out.printf(
        "[13.2] %d rounds of %d threads released together, %d of them contended (%d wanted)%n",
        done.get(), threads, contended.get(), CONTENDED_ROUNDS);
  }

  /** Whether two of the intervals [began[i], ended[i]] overlap. */
  static boolean overlapped(long[] began, long[] ended) {
    for (int i = 0; i < began.length; i++) {
      for (int j = i + 1; j < began.length; j++) {
        if (began[i] - ended[j] < 0 && began[j] - ended[i] < 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** Fails round {@code r} of 13.2 unless exactly one of the threads' writes answered true. */
  private static void checkOneWinner(int r, int won, int threads, long read) {
    String op =
        read < 0 ? "putIfAbsent(counter, 1)" : "replace(counter, " + read + ", " + (read + 1) + ")";
    if (won > 1) {
      throw new AssertionError(
          rule(
              "13.2",
              "round "
                  + r
                  + ": "
                  + won
                  + " of "
                  + threads
                  + " threads released together answered true to "
                  + op
                  + ", all having read "
                  + (read < 0 ? "no value" : read)
                  + ": a compare and its write were not atomic (an increment was lost)"));
    }
    if (won == 0) {
      throw new AssertionError(
          rule(
              "13.2",
              "round "
                  + r
                  + ": none of "
                  + threads
                  + " threads released together was answered true to "
                  + op
                  + ", though the counter held what each expected: a conditional write answers"
                  + " false although its condition holds (a retry loop would spin forever)"));
    }
  }

  void required_r13_3_putIfAbsentHasOneWinner() throws Exception {
    require("13.3", Feature.CONDITIONAL_WRITE);
    Store s = open();
    int keys = Math.max(20, env().stressOps() / 10);
    int[][] wins = new int[env().stressThreads()][keys];
    List<Throwable> errors =
        runThreads(
            "13.3",
            env().stressThreads(),
            t -> {
              for (int i = 0; i < keys; i++) {
                if (s.putIfAbsent(key(i), b("thread-" + t))) {
                  wins[t][i]++;
                }
              }
            });
    assertThat(errors).as(rule("13.3", "no thread failed")).isEmpty();
    for (int i = 0; i < keys; i++) {
      int winner = -1;
      int count = 0;
      for (int t = 0; t < env().stressThreads(); t++) {
        if (wins[t][i] > 0) {
          winner = t;
          count += wins[t][i];
        }
      }
      assertThat(count)
          .as(rule("13.3", "threads told that their putIfAbsent of key " + i + " won"))
          .isEqualTo(1);
      assertThat(s.get(key(i)))
          .as(rule("13.3", "key " + i + " holds the value of the one putIfAbsent that won"))
          .isEqualTo(b("thread-" + winner));
    }
  }

  void required_r13_4_conditionalWritesWithoutFeatureAreRefused() {
    Store s = open();
    s.put(b("k"), b("v"));
    if (has(Feature.CONDITIONAL_WRITE)) {
      assertThat(s.replace(b("k"), b("v"), b("w")))
          .as(rule("13.4", "a declared CONDITIONAL_WRITE works"))
          .isTrue();
      return;
    }
    for (Runnable call :
        List.<Runnable>of(
            () -> s.putIfAbsent(b("n"), b("v")),
            () -> s.replace(b("k"), b("v"), b("w")),
            () -> s.delete(b("k"), b("v")))) {
      assertThat(thrown(call::run))
          .as(rule("13.4", "an engine without CONDITIONAL_WRITE refuses it, naming the feature"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("CONDITIONAL_WRITE");
    }
    assertThat(s.get(b("k"))).as(rule("13.4", "a refused call changes nothing")).isEqualTo(b("v"));
    assertThat(s.get(b("n"))).as(rule("13.4", "a refused call changes nothing")).isNull();
  }
}
