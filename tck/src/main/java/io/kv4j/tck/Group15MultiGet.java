package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
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

    @Test
    default void required_r15_2_getAllReadsAfreshAndKeepsNothing() {
      new Group15MultiGet(this).required_r15_2_getAllReadsAfreshAndKeepsNothing();
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

  /**
   * 15.2: {@code getAll} reads the store as it is at each call and owns nothing it is given or
   * gives: a later call sees the writes made since an earlier one (keys it found absent included);
   * the arrays it returns are fresh, one per position (a key asked twice gets two), so changing one
   * changes neither the other, nor the store, nor a later read; the list it returns holds the
   * values of the call, not a view that reads later; and the key list and arrays passed in are not
   * kept, so changing them afterwards changes no answer already given and nothing stored.
   */
  void required_r15_2_getAllReadsAfreshAndKeepsNothing() {
    Store s = open();
    s.put(b("a"), b("1"));
    s.put(b("e"), new byte[0]);
    List<byte[]> keys = new ArrayList<>(List.of(b("a"), b("b"), b("e"), b("a")));
    List<byte[]> first = s.getAll(keys);
    assertThat(first)
        .as(rule("15.2", "getAll of a, b (absent), e (empty value), a"))
        .containsExactly(b("1"), null, new byte[0], b("1"));
    assertThat(first.get(0) != first.get(3))
        .as(rule("15.2", "a key asked twice gets two arrays, not one shared by both positions"))
        .isTrue();
    first.get(0)[0] = 'X';
    assertThat(first.get(3))
        .as(rule("15.2", "changing the array returned for a key changes no other position's"))
        .isEqualTo(b("1"));
    assertThat(s.get(b("a")))
        .as(rule("15.2", "changing an array getAll returned changes nothing stored (get)"))
        .isEqualTo(b("1"));
    assertThat(s.getAll(List.of(b("a"))))
        .as(rule("15.2", "changing an array getAll returned changes no later getAll"))
        .containsExactly(b("1"));

    List<byte[]> asked = new ArrayList<>(List.of(b("a"), b("b"), b("e")));
    List<byte[]> second = s.getAll(asked);
    asked.get(0)[0] = 'b'; // the array that named a now names b
    asked.set(1, b("e"));
    asked.add(b("a"));
    assertThat(second)
        .as(
            rule(
                "15.2",
                "the answer of getAll after the caller changed the key list and its arrays (the"
                    + " list returned holds the values, it is not a view over the keys)"))
        .containsExactly(b("1"), null, new byte[0]);
    assertThat(s.getAll(List.of(b("a"), b("b"))))
        .as(rule("15.2", "changing the keys passed to getAll changes nothing stored"))
        .containsExactly(b("1"), null);

    s.put(b("b"), b("2")); // absent for every getAll so far
    s.put(b("a"), b("3"));
    s.delete(b("e"));
    assertThat(s.getAll(List.of(b("a"), b("b"), b("e"))))
        .as(
            rule(
                "15.2",
                "getAll sees the writes made after an earlier getAll: a, overwritten; b, found"
                    + " absent before and put since; e, deleted"))
        .containsExactly(b("3"), b("2"), null);
    assertThat(second)
        .as(rule("15.2", "a list getAll returned before later writes still holds its values"))
        .containsExactly(b("1"), null, new byte[0]);
    newKeysAreSeen(s);
    if (has(Feature.SNAPSHOT_READ)) {
      snapshotGetAllGivesCopies(s);
    }
  }

  /** 15.2: getAll of a key it found absent sees it once written (put or, some, in a batch). */
  private void newKeysAreSeen(Store s) {
    for (int i = 0; i < 20; i++) {
      byte[] k = b("fresh-" + i);
      assertThat(s.getAll(List.of(k)))
          .as(rule("15.2", "getAll of a key never written"))
          .containsExactly((byte[]) null);
      if (has(Feature.ATOMIC_BATCH) && i % 2 == 1) {
        s.write(new WriteBatch().put(k, b("v" + i)));
      } else {
        s.put(k, b("v" + i));
      }
      assertThat(s.getAll(List.of(k, b("a"))))
          .as(rule("15.2", "getAll right after the key it found absent was written"))
          .containsExactly(b("v" + i), b("3"));
    }
  }

  /** 15.2: a snapshot's getAll gives a key asked twice two arrays, neither read back. */
  private void snapshotGetAllGivesCopies(Store s) {
    try (Snapshot snap = s.snapshot()) {
      List<byte[]> twice = snap.getAll(List.of(b("a"), b("a")));
      twice.get(0)[0] = 'Y';
      assertThat(twice.get(1))
          .as(rule("15.2", "a snapshot's getAll: a key asked twice gets two arrays"))
          .isEqualTo(b("3"));
      assertThat(snap.get(b("a")))
          .as(rule("15.2", "changing an array a snapshot's getAll returned changes no read"))
          .isEqualTo(b("3"));
    }
  }
}
