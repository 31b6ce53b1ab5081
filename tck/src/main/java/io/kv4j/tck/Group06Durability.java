package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Group 6: durability and reopen. */
final class Group06Durability extends RuleGroup {
  /**
   * Group 6's rules as JUnit tests, in rule order, each run in a new {@code Group06Durability};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r6_1_dataSurvivesReopen() {
      new Group06Durability(this).required_r6_1_dataSurvivesReopen();
    }

    @Test
    default void required_r6_2_deletesStayDeleted() {
      new Group06Durability(this).required_r6_2_deletesStayDeleted();
    }

    @Test
    default void required_r6_3_manyReopenCycles() {
      new Group06Durability(this).required_r6_3_manyReopenCycles();
    }

    @Test
    default void required_r6_4_syncThenReopen() {
      new Group06Durability(this).required_r6_4_syncThenReopen();
    }

    @Test
    default void required_r6_5_edgeValuesSurviveReopen() {
      new Group06Durability(this).required_r6_5_edgeValuesSurviveReopen();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group06Durability(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group06Durability(TckBase kit) {
    super(kit);
  }

  void required_r6_1_dataSurvivesReopen() {
    require("6.1", Feature.PERSISTENT);
    for (Durability d : Durability.values()) {
      Store s = open(config(tempDir.resolve("d-" + d), d));
      SplittableRandom rnd = new SplittableRandom(61);
      TreeMap<byte[], byte[]> model = newModel();
      for (int i = 0; i < 500; i++) {
        byte[] v = value(rnd, rnd.nextInt(3000));
        s.put(key(i), v);
        model.put(key(i), v);
      }
      close(s);
      s = open(config(tempDir.resolve("d-" + d), d));
      for (var e : model.entrySet()) {
        assertThat(s.get(e.getKey()))
            .as(rule("6.1", d + ": key " + hex(e.getKey()) + " after close and reopen"))
            .isEqualTo(e.getValue());
      }
      if (has(Feature.ORDERED_SCAN)) {
        assertScan("6.1", s, model, KeyRange.all());
      }
    }
  }

  void required_r6_2_deletesStayDeleted() {
    require("6.2", Feature.PERSISTENT);
    Store s = open();
    for (int i = 0; i < 200; i++) {
      s.put(key(i), b("v" + i));
    }
    s = reopen(s);
    for (int i = 0; i < 200; i += 2) {
      s.delete(key(i));
    }
    if (has(Feature.ATOMIC_BATCH)) {
      s.write(new WriteBatch().delete(key(1)).delete(key(3)));
    }
    s = reopen(s);
    s = reopen(s);
    for (int i = 0; i < 200; i++) {
      boolean gone = i % 2 == 0 || (has(Feature.ATOMIC_BATCH) && (i == 1 || i == 3));
      assertThat(s.get(key(i)))
          .as(rule("6.2", "key " + i + (gone ? " was deleted and must stay deleted" : " survives")))
          .isEqualTo(gone ? null : b("v" + i));
    }
  }

  void required_r6_3_manyReopenCycles() {
    require("6.3", Feature.PERSISTENT);
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    for (int cycle = 0; cycle < 12; cycle++) {
      for (int i = 0; i < 50; i++) {
        byte[] k = key(cycle * 31 + i);
        byte[] v = b("c" + cycle + "-" + i);
        s.put(k, v);
        model.put(k, v);
      }
      s.delete(key(cycle * 17));
      model.remove(key(cycle * 17));
      s = reopen(s);
      for (var e : model.entrySet()) {
        assertThat(s.get(e.getKey()))
            .as(rule("6.3", "cycle " + cycle + ": key " + hex(e.getKey())))
            .isEqualTo(e.getValue());
      }
      assertThat(s.get(key(cycle * 17)))
          .as(rule("6.3", "cycle " + cycle + ": deleted key"))
          .isNull();
    }
  }

  void required_r6_4_syncThenReopen() {
    require("6.4", Feature.PERSISTENT);
    for (Durability d : Durability.values()) {
      Store s = open(config(tempDir.resolve("sync-" + d), d));
      s.put(b("a"), b("1"));
      s.sync();
      s.put(b("b"), new byte[0]);
      s.sync();
      s.sync();
      close(s);
      s = open(config(tempDir.resolve("sync-" + d), d));
      assertThat(s.get(b("a")))
          .as(rule("6.4", d + ": synced write survives reopen"))
          .isEqualTo(b("1"));
      assertThat(s.get(b("b")))
          .as(rule("6.4", d + ": synced empty value survives reopen"))
          .isEqualTo(new byte[0]);
      assertThat(s.info().durability())
          .as(rule("6.4", "info reports the durability asked for"))
          .isEqualTo(d);
    }
  }

  void required_r6_5_edgeValuesSurviveReopen() {
    require("6.5", Feature.PERSISTENT);
    Store s = open();
    int max = s.info().limits().maxKeySize();
    byte[] bigKey = new byte[max];
    Arrays.fill(bigKey, (byte) 0xFF);
    s.put(bigKey, new byte[0]);
    s.put(b(0x00), new byte[0]);
    s.put(b(0x01), b("after empties"));
    s = reopen(s);
    assertThat(s.get(bigKey))
        .as(rule("6.5", "max-length key with empty value after reopen"))
        .isEqualTo(new byte[0]);
    assertThat(s.get(b(0x00)))
        .as(rule("6.5", "empty value after reopen is not null"))
        .isEqualTo(new byte[0]);
    assertThat(s.get(b(0x01)))
        .as(rule("6.5", "records after an empty value survive recovery"))
        .isEqualTo(b("after empties"));
  }
}
