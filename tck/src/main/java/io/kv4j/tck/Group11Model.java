package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Group 11: random operations checked against a {@link TreeMap}. The seed is in every failure
 * message; replay with {@code -Dkv4j.tck.seed=<seed>}; lengthen with {@code -Dkv4j.tck.ops=N}.
 */
final class Group11Model extends RuleGroup {
  /**
   * Group 11's rules as JUnit tests, in rule order, each run in a new {@code Group11Model}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r11_1_randomOperationsMatchModel() {
      new Group11Model(this).required_r11_1_randomOperationsMatchModel();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group11Model(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group11Model(TckBase kit) {
    super(kit);
  }

  void required_r11_1_randomOperationsMatchModel() {
    long seed = randomSeed();
    SplittableRandom rnd = new SplittableRandom(seed);
    String replay = " (replay with -Dkv4j.tck.seed=" + seed + ")";
    Store[] s = {open()};
    TreeMap<byte[], byte[]> model = newModel();
    boolean scans = has(Feature.ORDERED_SCAN);
    for (int op = 0; op < env().ops(); op++) {
      int dice = rnd.nextInt(100);
      String at = "seed=" + seed + " op #" + op;
      if (dice < 40) {
        byte[] k = randomKey(rnd);
        byte[] v = value(rnd, rnd.nextInt(10) == 0 ? 0 : rnd.nextInt(1, 300));
        run("11.1", () -> at + " (put key=" + hex(k) + ")", replay, () -> s[0].put(k, v));
        model.put(k, v);
      } else if (dice < 55) {
        byte[] k = randomKey(rnd);
        run("11.1", () -> at + " (delete key=" + hex(k) + ")", replay, () -> s[0].delete(k));
        model.remove(k);
      } else if (dice < 62 && has(Feature.ATOMIC_BATCH)) {
        WriteBatch b = new WriteBatch();
        TreeMap<byte[], byte[]> after = new TreeMap<>(model);
        for (int i = rnd.nextInt(1, 20); i > 0; i--) {
          byte[] k = randomKey(rnd);
          if (rnd.nextInt(4) == 0) {
            b.delete(k);
            after.remove(k);
          } else {
            byte[] v = value(rnd, rnd.nextInt(50));
            b.put(k, v);
            after.put(k, v);
          }
        }
        run("11.1", () -> at + " (batch of " + b.size() + ")", replay, () -> s[0].write(b));
        model = after;
      } else if (dice < 80) {
        byte[] k = randomKey(rnd);
        String where = at + " (get key=" + hex(k) + ")";
        assertThat(call("11.1", () -> where, replay, () -> s[0].get(k)))
            .as(rule("11.1", where + replay))
            .isEqualTo(model.get(k));
      } else if (dice < 98 && scans) {
        KeyRange r0 = randomRange(rnd);
        KeyRange r = r0.isReverse() && !has(Feature.REVERSE_SCAN) ? r0.reverse() : r0;
        TreeMap<byte[], byte[]> m = model;
        run(
            "11.1",
            () -> at + " (scan " + r + ")",
            replay,
            () -> assertScan("11.1", s[0], m, r, at + replay));
      } else if (has(Feature.PERSISTENT)) {
        s[0] = call("11.1", () -> at + " (close and reopen)", replay, () -> reopen(s[0]));
      }
    }
    for (var e : model.entrySet()) {
      String where = "final get key=" + hex(e.getKey()) + ", seed=" + seed;
      assertThat(call("11.1", () -> where, replay, () -> s[0].get(e.getKey())))
          .as(rule("11.1", where + replay))
          .isEqualTo(e.getValue());
    }
    if (has(Feature.PERSISTENT)) {
      s[0] = call("11.1", () -> "final reopen, seed=" + seed, replay, () -> reopen(s[0]));
      for (var e : model.entrySet()) {
        String where = "final get after reopen key=" + hex(e.getKey()) + ", seed=" + seed;
        assertThat(call("11.1", () -> where, replay, () -> s[0].get(e.getKey())))
            .as(rule("11.1", where + replay))
            .isEqualTo(e.getValue());
      }
    }
  }

  /** Keys from a small alphabet so operations collide, with 0x00/0xFF edges and prefixes. */
  static byte[] randomKey(SplittableRandom rnd) {
    int len = rnd.nextInt(1, 4);
    byte[] k = new byte[len];
    for (int i = 0; i < len; i++) {
      int pick = rnd.nextInt(6);
      k[i] =
          (byte)
              (pick == 0
                  ? 0x00
                  : pick == 1 ? 0xFF : pick == 2 ? 0x7F : pick == 3 ? 0x80 : 0x41 + rnd.nextInt(3));
    }
    return k;
  }

  static KeyRange randomRange(SplittableRandom rnd) {
    KeyRange r = rnd.nextInt(5) == 0 ? KeyRange.prefix(randomKey(rnd)) : KeyRange.all();
    if (rnd.nextBoolean()) {
      r = rnd.nextBoolean() ? r.gte(randomKey(rnd)) : r.gt(randomKey(rnd));
    }
    if (rnd.nextBoolean()) {
      r = rnd.nextBoolean() ? r.lte(randomKey(rnd)) : r.lt(randomKey(rnd));
    }
    if (rnd.nextBoolean()) {
      r = r.reverse();
    }
    if (rnd.nextInt(3) == 0) {
      r = r.limit(rnd.nextInt(6));
    }
    return r;
  }
}
