package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Group 18: conditional batches — {@link Store#writeIf(WriteBatch)} checks every condition and
 * applies every operation as one atomic step ({@link Feature#CONDITIONAL_BATCH}).
 */
final class Group18ConditionalBatches extends RuleGroup {
  /**
   * Group 18's rules as JUnit tests, in rule order, each run in a new {@code
   * Group18ConditionalBatches}; {@link StoreTck} implements it. A rule is added here and in
   * SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r18_1_writeIfMatchesAModel() {
      new Group18ConditionalBatches(this).required_r18_1_writeIfMatchesAModel();
    }

    @Test
    default void required_r18_2_failedConditionAppliesNothing() {
      new Group18ConditionalBatches(this).required_r18_2_failedConditionAppliesNothing();
    }

    @Test
    default void required_r18_3_conditionsSeeTheStoreBeforeTheBatch() {
      new Group18ConditionalBatches(this).required_r18_3_conditionsSeeTheStoreBeforeTheBatch();
    }

    @Test
    default void required_r18_4_optimisticTransfersLoseNothing() throws Exception {
      new Group18ConditionalBatches(this).required_r18_4_optimisticTransfersLoseNothing();
    }

    @Test
    default void required_r18_5_conditionsAreNeverIgnored() {
      new Group18ConditionalBatches(this).required_r18_5_conditionsAreNeverIgnored();
    }

    @Test
    default void required_r18_6_keyspaceConditionsCheckTheirKeyspace() {
      new Group18ConditionalBatches(this).required_r18_6_keyspaceConditionsCheckTheirKeyspace();
    }

    @Test
    default void required_r18_7_conditionalBatchesSurviveReopen() {
      new Group18ConditionalBatches(this).required_r18_7_conditionalBatchesSurviveReopen();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group18ConditionalBatches(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group18ConditionalBatches(TckBase kit) {
    super(kit);
  }

  /**
   * 18.1: random conditional batches against a model: each answers what the model says (true when
   * every condition holds in the model) and leaves the store equal to the model.
   */
  void required_r18_1_writeIfMatchesAModel() {
    require("18.1", Feature.CONDITIONAL_BATCH);
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    long seed = seed(18);
    SplittableRandom rnd = new SplittableRandom(seed);
    byte[][] values = {b("a"), b("b"), new byte[0], b("ccc")};
    int rounds = Math.max(100, env().ops() / 4);
    int applied = 0;
    for (int round = 0; round < rounds; round++) {
      WriteBatch batch = new WriteBatch();
      boolean holds = true;
      int conditions = 1 + rnd.nextInt(3);
      for (int c = 0; c < conditions; c++) {
        byte[] k = key(rnd.nextInt(12));
        byte[] current = model.get(k);
        // Mostly conditions that hold (the current value or absence), some that do not.
        byte[] expected = rnd.nextInt(4) == 0 ? pick(rnd, values) : current;
        if (rnd.nextInt(6) == 0) {
          expected = null;
        }
        if (expected == null) {
          batch.expectAbsent(k);
          holds &= current == null;
        } else {
          batch.expect(k, expected);
          holds &= Arrays.equals(current, expected);
        }
      }
      TreeMap<byte[], byte[]> next = new TreeMap<>(model);
      int ops = rnd.nextInt(4);
      for (int o = 0; o < ops; o++) {
        byte[] k = key(rnd.nextInt(12));
        if (rnd.nextInt(3) == 0) {
          batch.delete(k);
          next.remove(k);
        } else {
          byte[] v = pick(rnd, values);
          batch.put(k, v);
          next.put(k, v);
        }
      }
      String where = "seed=" + seed + " round #" + round + " " + batch;
      boolean answer = call("18.1", () -> where, () -> s.writeIf(batch));
      assertThat(answer)
          .as(rule("18.1", where + ": writeIf answers whether every condition held"))
          .isEqualTo(holds);
      if (holds) {
        model = next;
        applied++;
      }
      for (int k = 0; k < 12; k++) {
        assertThat(s.get(key(k)))
            .as(rule("18.1", where + ": key " + k + " after the batch (" + holds + ")"))
            .isEqualTo(model.get(key(k)));
      }
    }
    assertThat(applied)
        .as(rule("18.1", "seed=" + seed + ": the rounds applied some batches"))
        .isPositive();
    if (has(Feature.ORDERED_SCAN)) {
      assertScan("18.1", s, model, KeyRange.all());
    }
  }

  /** 18.2: a batch whose conditions do not all hold changes nothing, whichever one fails. */
  void required_r18_2_failedConditionAppliesNothing() {
    require("18.2", Feature.CONDITIONAL_BATCH);
    Store s = open();
    s.put(b("x"), b("1"));
    s.put(b("empty"), new byte[0]);
    Map<String, WriteBatch> failing =
        Map.of(
            "a value that differs",
            new WriteBatch().expect(b("x"), b("2")),
            "a value that is longer",
            new WriteBatch().expect(b("x"), b("11")),
            "absence of a present key",
            new WriteBatch().expectAbsent(b("x")),
            "a value of an absent key",
            new WriteBatch().expect(b("absent"), new byte[0]),
            "absence of a key holding an empty value",
            new WriteBatch().expectAbsent(b("empty")),
            "one failing condition among holding ones",
            new WriteBatch()
                .expect(b("x"), b("1"))
                .expectAbsent(b("absent"))
                .expect(b("empty"), b("1")));
    for (Map.Entry<String, WriteBatch> e : failing.entrySet()) {
      WriteBatch batch = e.getValue();
      for (int i = 0; i < 50; i++) {
        batch.put(key(i), b("v" + i));
      }
      batch.delete(b("x"));
      batch.put(b("empty"), b("full"));
      assertThat(call("18.2", e::getKey, () -> s.writeIf(batch)))
          .as(rule("18.2", e.getKey() + ": writeIf answers false"))
          .isFalse();
      assertThat(s.get(b("x")))
          .as(rule("18.2", e.getKey() + ": a delete of the failed batch was applied"))
          .isEqualTo(b("1"));
      assertThat(s.get(b("empty")))
          .as(rule("18.2", e.getKey() + ": a put of the failed batch was applied"))
          .isEqualTo(new byte[0]);
      for (int i = 0; i < 50; i++) {
        assertThat(s.get(key(i)))
            .as(rule("18.2", e.getKey() + ": put #" + i + " of the failed batch was applied"))
            .isNull();
      }
    }
    if (has(Feature.ORDERED_SCAN)) {
      assertThat(keysOf(scanAll(s, KeyRange.all())))
          .as(rule("18.2", "the failed batches left no key behind"))
          .containsExactly(hex(b("empty")), hex(b("x")));
    }
  }

  /**
   * 18.3: conditions see the store as it was before the batch: none sees the batch's own
   * operations, wherever they stand in it.
   */
  void required_r18_3_conditionsSeeTheStoreBeforeTheBatch() {
    require("18.3", Feature.CONDITIONAL_BATCH);
    Store s = open();
    s.put(b("k"), b("old"));
    assertThat(s.writeIf(new WriteBatch().put(b("k"), b("new")).expect(b("k"), b("new"))))
        .as(rule("18.3", "a condition on the value the batch itself writes does not hold"))
        .isFalse();
    assertThat(s.get(b("k"))).as(rule("18.3", "so nothing was written")).isEqualTo(b("old"));
    assertThat(s.writeIf(new WriteBatch().delete(b("k")).expect(b("k"), b("old"))))
        .as(rule("18.3", "a condition on the value the batch deletes holds"))
        .isTrue();
    assertThat(s.get(b("k"))).as(rule("18.3", "and the delete applied")).isNull();
    assertThat(s.writeIf(new WriteBatch().put(b("n"), b("1")).expectAbsent(b("n"))))
        .as(rule("18.3", "absence of a key the batch creates holds"))
        .isTrue();
    assertThat(s.get(b("n"))).as(rule("18.3", "and the put applied")).isEqualTo(b("1"));
    assertThat(s.writeIf(new WriteBatch().expect(b("n"), b("1"))))
        .as(rule("18.3", "a batch of conditions only is an atomic check"))
        .isTrue();
    assertThat(s.writeIf(new WriteBatch().expectAbsent(b("n"))))
        .as(rule("18.3", "a failed check of conditions only"))
        .isFalse();
    assertThat(s.get(b("n"))).as(rule("18.3", "a check changes nothing")).isEqualTo(b("1"));
  }

  /**
   * 18.4: threads move amounts between accounts with optimistic transactions (read two accounts and
   * a count, writeIf with a condition on each): the money is conserved and every transfer a thread
   * was told succeeded is counted once.
   */
  void required_r18_4_optimisticTransfersLoseNothing() throws Exception {
    require("18.4", Feature.CONDITIONAL_BATCH);
    Store s = open();
    int accounts = 4;
    long initial = 1_000_000;
    for (int a = 0; a < accounts; a++) {
      s.put(key(a), counter(initial));
    }
    byte[] countKey = b("transfers");
    s.put(countKey, counter(0));
    int perThread = Math.max(40, env().stressOps() / 5);
    long seed = seed(184);
    AtomicLong retries = new AtomicLong();
    AtomicLong successes = new AtomicLong();
    List<Throwable> errors =
        runThreads(
            "18.4",
            env().stressThreads(),
            t -> {
              SplittableRandom rnd = new SplittableRandom(seed + t);
              for (int i = 0; i < perThread; i++) {
                int from = rnd.nextInt(accounts);
                int to = (from + 1 + rnd.nextInt(accounts - 1)) % accounts;
                long amount = 1 + rnd.nextInt(100);
                long before = successes.get();
                long falses = 0;
                while (true) {
                  byte[] f = s.get(key(from));
                  byte[] g = s.get(key(to));
                  byte[] n = s.get(countKey);
                  WriteBatch tx =
                      new WriteBatch()
                          .expect(key(from), f)
                          .expect(key(to), g)
                          .expect(countKey, n)
                          .put(key(from), counter(count(f) - amount))
                          .put(key(to), counter(count(g) + amount))
                          .put(countKey, counter(count(n) + 1));
                  if (s.writeIf(tx)) {
                    break;
                  }
                  retries.incrementAndGet();
                  falses = checkFalseStreak("18.4", t, i, falses + 1, successes.get() - before);
                }
                successes.incrementAndGet();
              }
            });
    noThreadFailed("18.4", errors);
    long total = 0;
    for (int a = 0; a < accounts; a++) {
      total += count(s.get(key(a)));
    }
    String what =
        env().stressThreads()
            + " threads x "
            + perThread
            + " transfers, seed="
            + seed
            + " ("
            + retries.get()
            + " retries)";
    assertThat(total)
        .as(
            rule(
                "18.4", what + ": money appeared or vanished, so a check and its write were apart"))
        .isEqualTo(accounts * initial);
    assertThat(count(s.get(countKey)))
        .as(rule("18.4", what + ": the transfer count lost an update"))
        .isEqualTo((long) env().stressThreads() * perThread);
  }

  /**
   * 18.5: a batch with conditions is never written as if it had none: {@code write} refuses it on
   * every engine, and an engine without {@link Feature#CONDITIONAL_BATCH} refuses {@code writeIf},
   * naming the feature. Neither changes anything.
   */
  void required_r18_5_conditionsAreNeverIgnored() {
    Store s = open();
    s.put(b("k"), b("v"));
    WriteBatch conditional = new WriteBatch().expect(b("k"), b("other")).put(b("k"), b("w"));
    if (has(Feature.ATOMIC_BATCH)) {
      assertThat(thrown(() -> s.write(conditional)))
          .as(rule("18.5", "write(batch) refuses a batch with conditions"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("writeIf");
    }
    if (has(Feature.CONDITIONAL_BATCH)) {
      assertThat(s.writeIf(conditional))
          .as(rule("18.5", "a declared CONDITIONAL_BATCH checks the condition"))
          .isFalse();
    } else {
      assertThat(thrown(() -> s.writeIf(conditional)))
          .as(rule("18.5", "an engine without CONDITIONAL_BATCH refuses it, naming the feature"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("CONDITIONAL_BATCH");
    }
    assertThat(s.get(b("k"))).as(rule("18.5", "a refused batch changes nothing")).isEqualTo(b("v"));
  }

  /**
   * 18.6: conditions on keys of named keyspaces are checked in those keyspaces, never in the
   * store's own keys.
   */
  void required_r18_6_keyspaceConditionsCheckTheirKeyspace() {
    require("18.6", Feature.CONDITIONAL_BATCH);
    require("18.6", Feature.KEYSPACE_BATCH);
    Store s = open();
    Store users = s.keyspace("users");
    s.put(b("k"), b("root"));
    users.put(b("k"), b("user"));
    assertThat(s.writeIf(new WriteBatch().expect("users", b("k"), b("root")).put(b("x"), b("1"))))
        .as(rule("18.6", "a condition naming keyspace users reads users' key, not the store's"))
        .isFalse();
    assertThat(s.get(b("x"))).as(rule("18.6", "nothing applied")).isNull();
    assertThat(
            s.writeIf(
                new WriteBatch()
                    .expect("users", b("k"), b("user"))
                    .expect(Store.DEFAULT_KEYSPACE, b("k"), b("root"))
                    .expectAbsent("Orders-2", b("k"))
                    .put("users", b("k"), b("user2"))
                    .put(b("x"), b("1"))))
        .as(rule("18.6", "conditions in three keyspaces that hold"))
        .isTrue();
    assertThat(users.get(b("k"))).as(rule("18.6", "users' key written")).isEqualTo(b("user2"));
    assertThat(s.get(b("x"))).as(rule("18.6", "the store's key written")).isEqualTo(b("1"));
    assertThat(users.writeIf(new WriteBatch().expect(b("k"), b("root"))))
        .as(rule("18.6", "an unnamed condition through a keyspace handle reads that keyspace"))
        .isFalse();
    assertThat(users.writeIf(new WriteBatch().expect(b("k"), b("user2")).delete(b("k"))))
        .as(rule("18.6", "an unnamed condition through a keyspace handle that holds"))
        .isTrue();
    assertThat(users.get(b("k"))).as(rule("18.6", "deleted through the handle")).isNull();
    assertThat(s.get(b("k")))
        .as(rule("18.6", "the store's own key untouched"))
        .isEqualTo(b("root"));
  }

  /** 18.7: what a writeIf that answered true wrote survives a reopen; what one refused does not. */
  void required_r18_7_conditionalBatchesSurviveReopen() {
    require("18.7", Feature.CONDITIONAL_BATCH);
    require("18.7", Feature.PERSISTENT);
    Store s = open();
    for (int i = 0; i < 100; i++) {
      WriteBatch b = new WriteBatch().expectAbsent(key(i)).put(key(i), b("v" + i));
      if (i > 0) {
        b.expect(key(i - 1), b("v" + (i - 1))).put(key(i - 1), b("w" + (i - 1)));
      }
      assertThat(s.writeIf(b)).as(rule("18.7", "batch #" + i + " holds")).isTrue();
    }
    assertThat(s.writeIf(new WriteBatch().expectAbsent(key(0)).put(b("refused"), b("x"))))
        .as(rule("18.7", "a batch whose condition fails"))
        .isFalse();
    s = reopen(s);
    for (int i = 0; i < 100; i++) {
      assertThat(s.get(key(i)))
          .as(rule("18.7", "key " + i + " after reopen"))
          .isEqualTo(b((i == 99 ? "v" : "w") + i));
    }
    assertThat(s.get(b("refused")))
        .as(rule("18.7", "a refused batch left nothing for recovery to replay"))
        .isNull();
  }
}
