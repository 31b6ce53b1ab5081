package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Group 9: limits and bad input. */
final class Group09Limits extends RuleGroup {
  /**
   * Group 9's rules as JUnit tests, in rule order, each run in a new {@code Group09Limits}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r9_1_declaredLimitsMeetTheMinimum() {
      new Group09Limits(this).required_r9_1_declaredLimitsMeetTheMinimum();
    }

    @Test
    default void required_r9_2_sixteenMiBValue() {
      new Group09Limits(this).required_r9_2_sixteenMiBValue();
    }

    @Test
    default void required_r9_3_overLimitValueRejected() {
      new Group09Limits(this).required_r9_3_overLimitValueRejected();
    }

    @Test
    default void required_r9_4_hundredThousandKeys() {
      new Group09Limits(this).required_r9_4_hundredThousandKeys();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group09Limits(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group09Limits(TckBase kit) {
    super(kit);
  }

  void required_r9_1_declaredLimitsMeetTheMinimum() {
    Store s = open();
    Limits l = s.info().limits();
    assertThat(l.maxKeySize())
        .as(rule("9.1", "every engine supports keys of at least 511 bytes"))
        .isGreaterThanOrEqualTo(511);
    assertThat(l.maxValueSize())
        .as(rule("9.1", "every engine supports values of at least 16 MiB"))
        .isGreaterThanOrEqualTo(16 << 20);
    assertThat(l)
        .as(rule("9.1", "the store declares the provider's limits"))
        .isEqualTo(provider().limits());
  }

  void required_r9_2_sixteenMiBValue() {
    Store s = open();
    byte[] big = value(new SplittableRandom(92), 16 << 20);
    s.put(b("big"), big);
    s.put(b("small"), b("s"));
    assertThat(s.get(b("big"))).as(rule("9.2", "a 16 MiB value round-trips")).isEqualTo(big);
    if (has(Feature.PERSISTENT)) {
      s = reopen(s);
      assertThat(s.get(b("big"))).as(rule("9.2", "a 16 MiB value survives reopen")).isEqualTo(big);
    }
    s.put(b("big"), b("shrunk"));
    assertThat(s.get(b("big")))
        .as(rule("9.2", "a 16 MiB value can be replaced"))
        .isEqualTo(b("shrunk"));
  }

  void required_r9_3_overLimitValueRejected() {
    Store s = open();
    int max = s.info().limits().maxValueSize();
    org.junit.jupiter.api.Assumptions.assumeTrue(
        max <= (256 << 20),
        "[9.3] skipped: maxValueSize " + max + " is too large to allocate in a test");
    s.put(b("k"), b("kept"));
    byte[] tooBig = new byte[max + 1];
    assertThat(thrown(() -> s.put(b("k"), tooBig)))
        .as(rule("9.3", "a value over the limit is an IllegalArgumentException naming the limit"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(max));
    assertThat(s.get(b("k"))).as(rule("9.3", "the old value is kept")).isEqualTo(b("kept"));
  }

  void required_r9_4_hundredThousandKeys() {
    Store s = open();
    int n = env().manyKeys();
    byte[] v = new byte[100];
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < n; i++) {
      v[0] = (byte) i;
      if (has(Feature.ATOMIC_BATCH)) {
        batch.put(key(i), v);
        if (batch.size() == 1000) {
          s.write(batch);
          batch.clear();
        }
      } else {
        s.put(key(i), v);
      }
    }
    if (!batch.isEmpty()) {
      s.write(batch);
    }
    if (has(Feature.PERSISTENT)) {
      s = reopen(s);
    }
    for (int i = 0; i < n; i += 997) {
      assertThat(s.get(key(i)))
          .as(rule("9.4", "key " + i + " of " + n))
          .isNotNull()
          .hasSize(100)
          .startsWith((byte) i);
    }
    if (has(Feature.ORDERED_SCAN)) {
      long count = 0;
      long prev = -1;
      try (var c = s.scan(KeyRange.all())) {
        while (c.hasNext()) {
          long idx = java.nio.ByteBuffer.wrap(c.next().key()).getLong();
          assertThat(idx).as(rule("9.4", "scan order over " + n + " keys")).isEqualTo(prev + 1);
          prev = idx;
          count++;
        }
      }
      assertThat(count).as(rule("9.4", "a full scan sees all " + n + " keys")).isEqualTo(n);
    }
    var stats = s.stats();
    if (stats.keyCountExact()) {
      assertThat(stats.keyCount()).as(rule("9.4", "an exact key count is exact")).isEqualTo(n);
    } else {
      assertThat(stats.keyCount())
          .as(rule("9.4", "an estimated key count is within 50%"))
          .isBetween((long) (n * 0.5), (long) (n * 1.5));
    }
  }
}
