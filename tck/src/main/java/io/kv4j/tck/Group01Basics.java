package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import org.junit.jupiter.api.Test;

/** Group 1: basics. */
final class Group01Basics extends RuleGroup {
  /**
   * Group 1's rules as JUnit tests, in rule order, each run in a new {@code Group01Basics}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r1_1_putThenGet() {
      new Group01Basics(this).required_r1_1_putThenGet();
    }

    @Test
    default void required_r1_2_overwriteReplacesValue() {
      new Group01Basics(this).required_r1_2_overwriteReplacesValue();
    }

    @Test
    default void required_r1_3_deleteRemovesKey() {
      new Group01Basics(this).required_r1_3_deleteRemovesKey();
    }

    @Test
    default void required_r1_4_absentKeyIsNull() {
      new Group01Basics(this).required_r1_4_absentKeyIsNull();
    }

    @Test
    default void required_r1_5_emptyValueIsNotAbsent() {
      new Group01Basics(this).required_r1_5_emptyValueIsNotAbsent();
    }

    @Test
    default void required_r1_6_deleteOfAbsentKeyIsNoError() {
      new Group01Basics(this).required_r1_6_deleteOfAbsentKeyIsNoError();
    }

    @Test
    default void required_r1_7_returnedArraysAreCopies() {
      new Group01Basics(this).required_r1_7_returnedArraysAreCopies();
    }

    @Test
    default void required_r1_8_inputArraysAreNotRetained() {
      new Group01Basics(this).required_r1_8_inputArraysAreNotRetained();
    }

    @Test
    default void required_r1_9_manyKeysIndependent() {
      new Group01Basics(this).required_r1_9_manyKeysIndependent();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group01Basics(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group01Basics(TckBase kit) {
    super(kit);
  }

  void required_r1_1_putThenGet() {
    Store s = open();
    s.put(b("a"), b("1"));
    assertThat(s.get(b("a"))).as(rule("1.1", "get returns what put stored")).isEqualTo(b("1"));
  }

  void required_r1_2_overwriteReplacesValue() {
    Store s = open();
    s.put(b("a"), b("1"));
    s.put(b("a"), b("second value"));
    assertThat(s.get(b("a")))
        .as(rule("1.2", "a second put replaces the value"))
        .isEqualTo(b("second value"));
  }

  void required_r1_3_deleteRemovesKey() {
    Store s = open();
    s.put(b("a"), b("1"));
    s.put(b("b"), b("2"));
    s.delete(b("a"));
    assertThat(s.get(b("a"))).as(rule("1.3", "deleted key reads as null")).isNull();
    assertThat(s.get(b("b"))).as(rule("1.3", "other keys survive a delete")).isEqualTo(b("2"));
  }

  void required_r1_4_absentKeyIsNull() {
    Store s = open();
    assertThat(s.get(b("never"))).as(rule("1.4", "absent key reads as null")).isNull();
    assertThat(s.contains(b("never"))).as(rule("1.4", "contains is false")).isFalse();
  }

  void required_r1_5_emptyValueIsNotAbsent() {
    Store s = open();
    s.put(b("e"), new byte[0]);
    assertThat(s.get(b("e")))
        .as(rule("1.5", "an empty value is a value: get must return byte[0], not null"))
        .isNotNull()
        .isEmpty();
    assertThat(s.contains(b("e"))).as(rule("1.5", "contains sees an empty value")).isTrue();
  }

  void required_r1_6_deleteOfAbsentKeyIsNoError() {
    Store s = open();
    s.delete(b("never"));
    s.put(b("x"), b("1"));
    s.delete(b("x"));
    s.delete(b("x"));
    assertThat(s.get(b("x"))).as(rule("1.6", "double delete leaves the key absent")).isNull();
  }

  void required_r1_7_returnedArraysAreCopies() {
    Store s = open();
    s.put(b("k"), b("value"));
    byte[] got = s.get(b("k"));
    got[0] = 'X';
    assertThat(s.get(b("k")))
        .as(rule("1.7", "changing a returned array must not change the store"))
        .isEqualTo(b("value"));
    if (has(io.kv4j.Feature.ORDERED_SCAN)) {
      byte[] scanned = scanAll(s, io.kv4j.KeyRange.all()).get(0).value();
      scanned[0] = 'Y';
      assertThat(s.get(b("k")))
          .as(rule("1.7", "changing a scanned value must not change the store"))
          .isEqualTo(b("value"));
    }
  }

  void required_r1_8_inputArraysAreNotRetained() {
    Store s = open();
    byte[] k = b("key");
    byte[] v = b("value");
    s.put(k, v);
    v[0] = 'X';
    k[0] = 'Z';
    assertThat(s.get(b("key")))
        .as(rule("1.8", "changing arrays after put must not change what is stored"))
        .isEqualTo(b("value"));
    assertThat(s.get(b("zey"))).as(rule("1.8", "the key array is not retained")).isNull();
  }

  void required_r1_9_manyKeysIndependent() {
    Store s = open();
    for (int i = 0; i < 1000; i++) {
      s.put(key(i), b("v" + i));
    }
    for (int i = 0; i < 1000; i += 2) {
      s.delete(key(i));
    }
    for (int i = 0; i < 1000; i++) {
      byte[] want = i % 2 == 0 ? null : b("v" + i);
      assertThat(s.get(key(i)))
          .as(rule("1.9", "key " + i + " after put/delete mix"))
          .isEqualTo(want);
    }
  }
}
