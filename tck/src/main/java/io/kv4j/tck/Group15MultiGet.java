package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Group 15: multi-get — {@code getAll} answers in the order asked; every engine has it. */
final class Group15MultiGet extends RuleGroup {
  /**
   * Group 15's rules as JUnit tests, in rule order, each run in a new {@code Group15MultiGet};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r15_1_getAllReturnsValuesInKeyOrder() {
      new Group15MultiGet(this).required_r15_1_getAllReturnsValuesInKeyOrder();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group15MultiGet(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group15MultiGet(TckBase kit) {
    super(kit);
  }

  void required_r15_1_getAllReturnsValuesInKeyOrder() {
    Store s = open();
    SplittableRandom rnd = new SplittableRandom(seed(13) + 15);
    TreeMap<byte[], byte[]> model = newModel();
    for (int i = 0; i < 200; i++) {
      if (rnd.nextBoolean()) {
        byte[] v = value(rnd, rnd.nextInt(40));
        s.put(key(i), v);
        model.put(key(i), v);
      }
    }
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add(key(rnd.nextInt(250))); // duplicates, absent keys, any order
    }
    List<byte[]> values = s.getAll(keys);
    assertThat(values)
        .as(rule("15.1", "seed=" + (seed(13) + 15) + ": one value per key"))
        .hasSize(300);
    for (int i = 0; i < keys.size(); i++) {
      assertThat(values.get(i))
          .as(
              rule(
                  "15.1",
                  "seed="
                      + (seed(13) + 15)
                      + ": value "
                      + i
                      + " is that of key "
                      + hex(keys.get(i))))
          .isEqualTo(model.get(keys.get(i)));
    }
    assertThat(s.getAll(List.of())).as(rule("15.1", "no keys, no values")).isEmpty();
    int max = s.info().limits().maxKeySize();
    assertThat(thrown(() -> s.getAll(List.of(key(1), new byte[max + 1]))))
        .as(rule("15.1", "an over-limit key is rejected like get's"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(thrown(() -> s.getAll(Arrays.asList(key(1), null))))
        .as(rule("15.1", "a null key is rejected like get's"))
        .isInstanceOf(NullPointerException.class);
  }
}
