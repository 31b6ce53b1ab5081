package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checker on hand-written histories: times are in milliseconds from the start, an operation
 * from {@code from} to {@code to}, {@link #NEVER} for one that threw (indeterminate).
 */
class LinearizabilityCheckTest {
  private static final long NEVER = -1;
  private static final Duration BUDGET = Duration.ofSeconds(20);

  private final List<Operation> ops = new ArrayList<>();

  private static byte[] b(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.US_ASCII);
  }

  private static Operation.Cell c(String key, String value) {
    return new Operation.Cell(null, b(key), b(value));
  }

  private int add(
      int client,
      String name,
      List<Operation.Cell> reads,
      List<Operation.Cell> conditions,
      List<Operation.Cell> writes,
      Boolean answer,
      long from,
      long to) {
    int id = ops.size();
    ops.add(
        new Operation(
            id,
            client,
            name,
            reads,
            conditions,
            writes,
            to == NEVER ? null : answer,
            from * 1_000_000,
            to == NEVER ? Long.MAX_VALUE : to * 1_000_000,
            to == NEVER ? "StoreIOException: connection reset" : null));
    return id;
  }

  private int put(int client, String k, String v, long from, long to) {
    return add(client, "put", List.of(), List.of(), List.of(c(k, v)), null, from, to);
  }

  private int delete(int client, String k, long from, long to) {
    return add(client, "delete", List.of(), List.of(), List.of(c(k, null)), null, from, to);
  }

  private int get(int client, String k, String v, long from, long to) {
    return add(client, "get", List.of(c(k, v)), List.of(), List.of(), null, from, to);
  }

  private int replace(
      int client, String k, String expected, String v, boolean won, long from, long to) {
    return add(
        client, "replace", List.of(), List.of(c(k, expected)), List.of(c(k, v)), won, from, to);
  }

  private int putIfAbsent(int client, String k, String v, boolean won, long from, long to) {
    return add(
        client, "putIfAbsent", List.of(), List.of(c(k, null)), List.of(c(k, v)), won, from, to);
  }

  private int batch(int client, long from, long to, String... kv) {
    List<Operation.Cell> w = new ArrayList<>();
    for (int i = 0; i < kv.length; i += 2) {
      w.add(c(kv[i], kv[i + 1]));
    }
    return add(client, "write", List.of(), List.of(), w, null, from, to);
  }

  private int snapshot(int client, long from, long to, String... kv) {
    List<Operation.Cell> r = new ArrayList<>();
    for (int i = 0; i < kv.length; i += 2) {
      r.add(c(kv[i], kv[i + 1]));
    }
    return add(client, "snapshot getAll", r, List.of(), List.of(), null, from, to);
  }

  private HistoryVerdict check() {
    return check(BUDGET);
  }

  private HistoryVerdict check(Duration budget) {
    return LinearizabilityCheck.check(ops, 0, budget);
  }

  private void assertLinearizable() {
    HistoryVerdict v = check();
    assertThat(v.decided()).as(v.explanation()).isTrue();
    assertThat(v.linearizable()).as(v.explanation()).isTrue();
  }

  private String assertNotLinearizable(int culprit) {
    HistoryVerdict v = check();
    assertThat(v.decided()).as(v.explanation()).isTrue();
    assertThat(v.linearizable()).as(v.explanation()).isFalse();
    assertThat(v.explanation())
        .as("the failing prefix ends with the operation no order explains")
        .contains("ends when #" + culprit + " returned")
        .containsPattern("#" + culprit + " .*<-- no order explains this answer");
    return v.explanation();
  }

  @Test
  void check_sequentialRegister_isLinearizable() {
    put(0, "k", "a", 0, 1);
    get(1, "k", "a", 2, 3);
    delete(0, "k", 4, 5);
    get(1, "k", null, 6, 7);
    put(1, "k", "b", 8, 9);
    get(0, "k", "b", 10, 11);
    HistoryVerdict v = check();
    assertThat(v.linearizable()).as(v.explanation()).isTrue();
    assertThat(v.explanation()).as("the summary").startsWith("linearizable: 6 operations in 1 ");
  }

  @Test
  void check_overlappingPutsWhereOnlyOneOrderWorks_isLinearizable() {
    // a and b overlap; a read inside them sees b, a later read sees a: only b, get, a, get works.
    put(0, "k", "a", 0, 10);
    put(1, "k", "b", 0, 10);
    get(2, "k", "b", 2, 3);
    get(2, "k", "a", 11, 12);
    get(3, "k", "a", 13, 14);
    assertLinearizable();
  }

  @Test
  void check_readsThatFlipBetweenTwoConcurrentPuts_isNotLinearizable() {
    put(0, "k", "a", 0, 10);
    put(1, "k", "b", 0, 10);
    get(2, "k", "a", 1, 2);
    get(2, "k", "b", 3, 4);
    int last = get(2, "k", "a", 5, 6); // a, b, a with one write of each: no order
    String text = assertNotLinearizable(last);
    assertThat(text).as("the prefix holds all five").contains("holds 5 operations");
  }

  @Test
  void check_indeterminatePutThatTookEffect_isLinearizable() {
    put(0, "k", "a", 0, 1);
    put(1, "k", "b", 2, NEVER);
    get(2, "k", "b", 5, 6);
    get(2, "k", "b", 7, 8);
    assertLinearizable();
  }

  @Test
  void check_indeterminatePutThatDidNotTakeEffect_isLinearizable() {
    put(0, "k", "a", 0, 1);
    put(1, "k", "b", 2, NEVER);
    get(2, "k", "a", 5, 6);
    put(0, "k", "c", 7, 8);
    get(2, "k", "c", 9, 10);
    assertLinearizable();
  }

  @Test
  void check_indeterminatePutSeenThenUnseen_isNotLinearizable() {
    put(0, "k", "a", 0, 1);
    put(1, "k", "b", 2, NEVER);
    get(2, "k", "b", 5, 6);
    int unseen = get(2, "k", "a", 7, 8); // b happened: a cannot come back
    String text = assertNotLinearizable(unseen);
    assertThat(text).as("the indeterminate put is shown as such").contains("?", "threw");
  }

  @Test
  void check_indeterminateCasWithUnknownAnswer_mayHaveTakenEffect() {
    put(0, "k", "a", 0, 1);
    replace(1, "k", "a", "b", true, 2, NEVER);
    get(2, "k", "b", 5, 6);
    assertLinearizable();
  }

  @Test
  void check_staleRead_isNotLinearizable() {
    put(0, "k", "a", 0, 1);
    put(1, "k", "b", 2, 3);
    int stale = get(2, "k", "a", 4, 5);
    String text = assertNotLinearizable(stale);
    assertThat(text)
        .as("a readable timeline: client, times and operations")
        .contains("key \"k\"")
        .containsPattern("#1 +t1 +2\\.000 +3\\.000  put \"k\" := \"b\"")
        .containsPattern("#2 +t2 +4\\.000 +5\\.000  get \"k\" -> \"a\"   <-- no order");
  }

  @Test
  void check_lostUpdate_isNotLinearizable() {
    put(0, "k", "a", 0, 1);
    put(1, "k", "b", 2, 3); // acknowledged ...
    get(2, "k", "b", 4, 5);
    int lost = get(3, "k", "a", 6, 7); // ... then overwritten by the earlier write
    assertNotLinearizable(lost);
  }

  @Test
  void check_twoCompareAndSetsOnOneExpectedValueBothWinning_isNotLinearizable() {
    put(0, "k", "a", 0, 1);
    replace(1, "k", "a", "b", true, 2, 5);
    int second = replace(2, "k", "a", "c", true, 3, 6);
    String text = assertNotLinearizable(second);
    assertThat(text).as("the CAS is shown").contains("replace \"k\" == \"a\" := \"c\" -> true");
  }

  @Test
  void check_twoCompareAndSetsOneWinning_isLinearizable() {
    put(0, "k", "a", 0, 1);
    replace(1, "k", "a", "b", true, 2, 5);
    replace(2, "k", "a", "c", false, 3, 6);
    get(0, "k", "b", 7, 8);
    assertLinearizable();
  }

  @Test
  void check_twoPutIfAbsentWinners_isNotLinearizable() {
    putIfAbsent(0, "k", "a", true, 0, 3);
    int second = putIfAbsent(1, "k", "b", true, 1, 4);
    assertNotLinearizable(second);
  }

  @Test
  void check_snapshotSeeingHalfABatch_isNotLinearizable() {
    batch(0, 0, 1, "x", "a1", "y", "a2");
    batch(1, 2, 5, "x", "b1", "y", "b2");
    int half = snapshot(2, 3, 4, "x", "b1", "y", "a2");
    String text = assertNotLinearizable(half);
    assertThat(text)
        .as("the partition names both keys and the batch")
        .contains("keys \"x\", \"y\"")
        .contains("write {\"x\" := \"b1\", \"y\" := \"b2\"}")
        .contains("snapshot getAll {\"x\" -> \"b1\", \"y\" -> \"a2\"}");
  }

  @Test
  void check_snapshotSeeingAWriteBegunAfterIt_isNotLinearizable() {
    int snap = snapshot(0, 0, 1, "x", "a"); // snapshot() returned at 1 ...
    put(1, "x", "a", 2, 3); // ... and saw a put invoked at 2
    String text = assertNotLinearizable(snap);
    assertThat(text)
        .as("the writer is shown although it is not in the prefix, marked +")
        .contains("holds 1 operation and")
        .containsPattern("#1 +t1 +2\\.000 +3\\.000\\+  put \"x\" := \"a\"")
        .contains("+ invoked after the prefix: it wrote what #0 saw");
  }

  @Test
  void check_snapshotsSeeingWholeBatches_isLinearizable() {
    batch(0, 0, 1, "x", "a1", "y", "a2");
    batch(1, 2, 5, "x", "b1", "y", "b2");
    snapshot(2, 3, 4, "x", "a1", "y", "a2");
    snapshot(3, 3, 4, "x", "b1", "y", "b2");
    snapshot(2, 6, 7, "x", "b1", "y", "b2");
    assertLinearizable();
  }

  @Test
  void check_perKeyReadsOfAGetAllDuringABatch_mayMixBatches() {
    // Store.getAll is not atomic: each value is a read of its own within the call.
    batch(0, 0, 1, "x", "a1", "y", "a2");
    batch(1, 2, 5, "x", "b1", "y", "b2");
    add(2, "getAll[0]", List.of(c("x", "b1")), List.of(), List.of(), null, 3, 4);
    add(2, "getAll[1]", List.of(c("y", "a2")), List.of(), List.of(), null, 3, 4);
    assertLinearizable();
  }

  @Test
  void check_independentKeys_areCheckedApart() {
    put(0, "k1", "a", 0, 1);
    put(1, "k2", "b", 0, 1);
    get(0, "k1", "a", 2, 3);
    get(1, "k2", "b", 2, 3);
    HistoryVerdict v = check();
    assertThat(v.partitions()).as("two keys, no operation names both").isEqualTo(2);
    assertThat(v.linearizable()).as(v.explanation()).isTrue();
  }

  @Test
  void check_failingPrefix_isTheShortestAndEndsAtTheFirstUnexplainedAnswer() {
    int t = 0;
    for (int i = 0; i < 50; i++, t += 4) { // a long linearizable stretch
      put(i % 3, "k", "v" + i, t, t + 2);
      get((i + 1) % 3, "k", "v" + i, t + 1, t + 3);
    }
    put(0, "k", "new", t, t + 1);
    int stale = get(1, "k", "v49", t + 2, t + 3);
    for (int i = 0; i < 20; i++) { // more failures after it
      get(2, "k", "v" + i, t + 4 + i, t + 5 + i);
    }
    String text = assertNotLinearizable(stale);
    assertThat(text)
        .as("the prefix stops at the stale read, and earlier operations are left out")
        .contains("holds 102 operations")
        .contains("earlier operations of the prefix not shown");
  }

  @Test
  void check_overBudget_saysItCouldNotDecide() {
    // 24 concurrent puts and a read of a value none wrote: every subset of the puts must be tried.
    for (int i = 0; i < 24; i++) {
      put(i, "k", "v" + i, 0, 100);
      get(i, "k", "v" + i, 0, 100);
    }
    get(99, "k", "nobody", 0, 100);
    HistoryVerdict v = check(Duration.ofMillis(50));
    assertThat(v.decided()).as(v.explanation()).isFalse();
    assertThat(v.linearizable()).as("undecided is never a pass").isFalse();
    assertThat(v.explanation()).startsWith("could not decide in 50 ms " + CheckClock.measured());
  }

  @Test
  void budget_isTheCheckingThreadsCpuTime_onHotSpot() {
    // HotSpot measures a thread's CPU time on Linux, the kit's platform: a busy machine then slows
    // the check without cutting its search short.
    assertThat(CheckClock.CPU).as("thread CPU time is measurable").isTrue();
    long cpu = CheckClock.now();
    long spin = System.nanoTime() + 20_000_000;
    long x = 0;
    while (System.nanoTime() - spin < 0) {
      x++;
    }
    assertThat(CheckClock.now() - cpu).as("CPU time spent spinning (%d spins)", x).isPositive();
  }
}
