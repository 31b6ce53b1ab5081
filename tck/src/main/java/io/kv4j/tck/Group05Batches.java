package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Group 5: batches. */
final class Group05Batches extends RuleGroup {
  /**
   * Group 5's rules as JUnit tests, in rule order, each run in a new {@code Group05Batches}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r5_1_batchAppliesAllInOrder() {
      new Group05Batches(this).required_r5_1_batchAppliesAllInOrder();
    }

    @Test
    default void required_r5_2_invalidOperationAppliesNothing() {
      new Group05Batches(this).required_r5_2_invalidOperationAppliesNothing();
    }

    @Test
    default void required_r5_3_putThenDeleteInOneBatch() {
      new Group05Batches(this).required_r5_3_putThenDeleteInOneBatch();
    }

    @Test
    default void required_r5_4_emptyBatchIsNoOp() {
      new Group05Batches(this).required_r5_4_emptyBatchIsNoOp();
    }

    @Test
    default void required_r5_5_largeBatchOf10000() {
      new Group05Batches(this).required_r5_5_largeBatchOf10000();
    }

    @Test
    default void required_r5_6_batchWith16MiBOfValues() {
      new Group05Batches(this).required_r5_6_batchWith16MiBOfValues();
    }

    @Test
    default void required_r5_7_batchIsReusableAndNotRetained() {
      new Group05Batches(this).required_r5_7_batchIsReusableAndNotRetained();
    }

    @Test
    default void required_r5_8_batchWithoutFeatureIsRefused() {
      new Group05Batches(this).required_r5_8_batchWithoutFeatureIsRefused();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group05Batches(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group05Batches(TckBase kit) {
    super(kit);
  }

  void required_r5_1_batchAppliesAllInOrder() {
    require("5.1", Feature.ATOMIC_BATCH);
    Store s = open();
    s.put(b("gone"), b("x"));
    WriteBatch batch =
        new WriteBatch()
            .put(b("a"), b("1"))
            .put(b("b"), b("2"))
            .delete(b("gone"))
            .put(b("a"), b("3"));
    s.write(batch);
    assertThat(s.get(b("a"))).as(rule("5.1", "later operations on a key win")).isEqualTo(b("3"));
    assertThat(s.get(b("b"))).as(rule("5.1", "every put applied")).isEqualTo(b("2"));
    assertThat(s.get(b("gone"))).as(rule("5.1", "every delete applied")).isNull();
  }

  void required_r5_2_invalidOperationAppliesNothing() {
    require("5.2", Feature.ATOMIC_BATCH);
    Store s = open();
    s.put(b("k1"), b("old"));
    int max = s.info().limits().maxKeySize();
    WriteBatch batch =
        new WriteBatch()
            .put(b("k1"), b("new"))
            .put(b("k2"), b("new"))
            .put(new byte[max + 1], b("bad"))
            .delete(b("k1"));
    assertThat(thrown(() -> s.write(batch)))
        .as(rule("5.2", "a batch with an over-limit key is rejected"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(s.get(b("k1")))
        .as(rule("5.2", "a rejected batch applies nothing: k1 keeps its old value"))
        .isEqualTo(b("old"));
    assertThat(s.get(b("k2")))
        .as(rule("5.2", "a rejected batch applies nothing: k2 stays absent"))
        .isNull();
  }

  void required_r5_3_putThenDeleteInOneBatch() {
    require("5.3", Feature.ATOMIC_BATCH);
    Store s = open();
    s.write(new WriteBatch().put(b("x"), b("1")).delete(b("x")));
    assertThat(s.get(b("x")))
        .as(rule("5.3", "put then delete of one key leaves it absent"))
        .isNull();
    s.write(new WriteBatch().delete(b("y")).put(b("y"), b("2")));
    assertThat(s.get(b("y")))
        .as(rule("5.3", "delete then put leaves it present"))
        .isEqualTo(b("2"));
    if (has(Feature.ORDERED_SCAN)) {
      assertThat(keysOf(scanAll(s, KeyRange.all())))
          .as(rule("5.3", "scan agrees"))
          .containsExactly(hex(b("y")));
    }
  }

  void required_r5_4_emptyBatchIsNoOp() {
    require("5.4", Feature.ATOMIC_BATCH);
    Store s = open();
    s.put(b("a"), b("1"));
    s.write(new WriteBatch());
    assertThat(s.get(b("a"))).as(rule("5.4", "an empty batch changes nothing")).isEqualTo(b("1"));
  }

  void required_r5_5_largeBatchOf10000() {
    require("5.5", Feature.ATOMIC_BATCH);
    Store s = open();
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < 10_000; i++) {
      batch.put(key(i), b("v" + i));
    }
    for (int i = 0; i < 10_000; i += 10) {
      batch.delete(key(i));
    }
    s.write(batch);
    for (int i = 0; i < 10_000; i++) {
      assertThat(s.get(key(i)))
          .as(rule("5.5", "key " + i + " of a 11,000-operation batch"))
          .isEqualTo(i % 10 == 0 ? null : b("v" + i));
    }
  }

  void required_r5_6_batchWith16MiBOfValues() {
    require("5.6", Feature.ATOMIC_BATCH);
    Store s = open();
    SplittableRandom rnd = new SplittableRandom(56);
    byte[][] values = new byte[16][];
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < 16; i++) {
      values[i] = value(rnd, 1 << 20);
      batch.put(key(i), values[i]);
    }
    s.write(batch);
    for (int i = 0; i < 16; i++) {
      assertThat(s.get(key(i)))
          .as(rule("5.6", "1 MiB value " + i + " of a 16 MiB batch"))
          .isEqualTo(values[i]);
    }
  }

  void required_r5_7_batchIsReusableAndNotRetained() {
    require("5.7", Feature.ATOMIC_BATCH);
    Store s = open();
    byte[] v = b("one");
    WriteBatch batch = new WriteBatch().put(b("k"), v);
    v[0] = 'X';
    s.write(batch);
    assertThat(s.get(b("k"))).as(rule("5.7", "the batch copied its arguments")).isEqualTo(b("one"));
    s.delete(b("k"));
    s.write(batch);
    assertThat(s.get(b("k"))).as(rule("5.7", "a batch can be written twice")).isEqualTo(b("one"));
    batch.clear();
    batch.put(b("k"), b("two"));
    assertThat(s.get(b("k")))
        .as(rule("5.7", "changing a written batch changes nothing stored"))
        .isEqualTo(b("one"));
    // The arrays a batch hands out (key(i), value(i)) are its own: an engine that keeps them
    // instead of copying lets a later change of the batch reach the store.
    WriteBatch held = new WriteBatch().put(b("held"), b("value"));
    s.write(held);
    held.value(0)[0] = 'Z';
    held.key(0)[0] = 'X';
    assertThat(s.get(b("held")))
        .as(
            rule(
                "5.7",
                "changing the arrays a written batch holds changes nothing stored: the engine"
                    + " copied the key and value"))
        .isEqualTo(b("value"));
    assertThat(s.get(b("Xeld")))
        .as(rule("5.7", "a key changed in the batch after write is not stored"))
        .isNull();
  }

  void required_r5_8_batchWithoutFeatureIsRefused() {
    Store s = open();
    if (has(Feature.ATOMIC_BATCH)) {
      s.write(new WriteBatch().put(b("a"), b("1")));
      assertThat(s.get(b("a"))).as(rule("5.8", "a declared ATOMIC_BATCH works")).isEqualTo(b("1"));
    } else {
      assertThat(thrown(() -> s.write(new WriteBatch().put(b("a"), b("1")))))
          .as(rule("5.8", "an engine without ATOMIC_BATCH refuses batches, never fakes them"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("ATOMIC_BATCH");
    }
  }
}
