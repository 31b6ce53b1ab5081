package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Group 3: ranges. Every case is checked against a {@link TreeMap} model. */
final class Group03Ranges extends RuleGroup {
  /**
   * Group 3's rules as JUnit tests, in rule order, each run in a new {@code Group03Ranges}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r3_1_boundMatrixForward() {
      new Group03Ranges(this).required_r3_1_boundMatrixForward();
    }

    @Test
    default void required_r3_2_boundMatrixReverse() {
      new Group03Ranges(this).required_r3_2_boundMatrixReverse();
    }

    @Test
    default void required_r3_3_prefixRanges() {
      new Group03Ranges(this).required_r3_3_prefixRanges();
    }

    @Test
    default void required_r3_4_limits() {
      new Group03Ranges(this).required_r3_4_limits();
    }

    @Test
    default void required_r3_5_emptyAndInvertedRanges() {
      new Group03Ranges(this).required_r3_5_emptyAndInvertedRanges();
    }

    @Test
    default void required_r3_6_boundsPastBothEnds() {
      new Group03Ranges(this).required_r3_6_boundsPastBothEnds();
    }

    @Test
    default void required_r3_7_scanOfEmptyStore() {
      new Group03Ranges(this).required_r3_7_scanOfEmptyStore();
    }

    @Test
    default void required_r3_8_emptyAndOverlongBounds() {
      new Group03Ranges(this).required_r3_8_emptyAndOverlongBounds();
    }

    @Test
    default void required_r3_9_prefixPaginationForwardAndReverse() {
      new Group03Ranges(this).required_r3_9_prefixPaginationForwardAndReverse();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group03Ranges(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group03Ranges(TckBase kit) {
    super(kit);
  }

  /** Stored keys: ends of the byte range, a prefix family and neighbours. */
  private static final byte[][] STORED = {
    b(0x10),
    b(0x20),
    b(0x30),
    b(0x30, 0x00),
    b(0x30, 0xFF),
    b(0x40),
    b(0x80),
    b(0xFF),
    b(0xFF, 0xFF)
  };

  /** Bounds: on stored keys, between them, and past both ends. */
  private static final byte[][] BOUNDS = {
    b(0x01),
    b(0x10),
    b(0x15),
    b(0x30),
    b(0x30, 0x00, 0x00),
    b(0x30, 0xFF),
    b(0x7F),
    b(0xFF),
    b(0xFF, 0xFF, 0xFF)
  };

  private TreeMap<byte[], byte[]> fill(Store s) {
    TreeMap<byte[], byte[]> model = newModel();
    for (byte[] k : STORED) {
      byte[] v = b("v" + hex(k));
      s.put(k, v);
      model.put(k, v);
    }
    return model;
  }

  /** Every combination of absent/inclusive/exclusive lower and upper bounds. */
  private static List<KeyRange> boundMatrix() {
    List<KeyRange> out = new ArrayList<>();
    List<KeyRange> lowers = new ArrayList<>();
    lowers.add(KeyRange.all());
    for (byte[] lo : BOUNDS) {
      lowers.add(KeyRange.all().gte(lo));
      lowers.add(KeyRange.all().gt(lo));
    }
    for (KeyRange l : lowers) {
      out.add(l);
      for (byte[] hi : BOUNDS) {
        out.add(l.lte(hi));
        out.add(l.lt(hi));
      }
    }
    return out;
  }

  void required_r3_1_boundMatrixForward() {
    require("3.1", Feature.ORDERED_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    for (KeyRange r : boundMatrix()) {
      assertScan("3.1", s, model, r);
    }
  }

  void required_r3_2_boundMatrixReverse() {
    require("3.2", Feature.REVERSE_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    for (KeyRange r : boundMatrix()) {
      assertScan("3.2", s, model, r.reverse());
    }
  }

  void required_r3_3_prefixRanges() {
    require("3.3", Feature.ORDERED_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    byte[][] more = {b(0xFF, 0x00), b(0xFF, 0xFF, 0x01), b(0x2F, 0xFF), b(0x31)};
    for (byte[] k : more) {
      s.put(k, k);
      model.put(k, k);
    }
    byte[][] prefixes = {b(0x30), b(0x30, 0xFF), b(0xFF), b(0xFF, 0xFF), b(0x2F), b(0x50), b(0x10)};
    for (byte[] p : prefixes) {
      KeyRange r = KeyRange.prefix(p);
      assertScan("3.3", s, model, r);
      if (has(Feature.REVERSE_SCAN)) {
        assertScan("3.3", s, model, r.reverse());
        assertScan("3.3", s, model, r.reverse().limit(1));
      }
    }
    assertThat(keysOf(scanAll(s, KeyRange.prefix(b(0xFF)))))
        .as(rule("3.3", "prefix ff (its successor overflows) covers ff, ff00, ffff, ffff01"))
        .containsExactly("ff", "ff00", "ffff", "ffff01");
  }

  void required_r3_4_limits() {
    require("3.4", Feature.ORDERED_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    for (long limit : new long[] {0, 1, 2, 5, STORED.length, STORED.length + 1}) {
      assertScan("3.4", s, model, KeyRange.all().limit(limit));
      assertScan("3.4", s, model, KeyRange.all().gt(b(0x10)).lt(b(0xFF)).limit(limit));
      if (has(Feature.REVERSE_SCAN)) {
        assertScan("3.4", s, model, KeyRange.all().reverse().limit(limit));
        assertScan(
            "3.4", s, model, KeyRange.all().gte(b(0x15)).lte(b(0x80)).reverse().limit(limit));
      }
    }
    if (has(Feature.REVERSE_SCAN)) {
      assertThat(keysOf(scanAll(s, KeyRange.all().reverse().limit(2))))
          .as(rule("3.4", "reverse with a limit returns the HIGHEST keys"))
          .containsExactly("ffff", "ff");
    }
  }

  void required_r3_5_emptyAndInvertedRanges() {
    require("3.5", Feature.ORDERED_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    List<KeyRange> empty =
        List.of(
            KeyRange.all().gte(b(0x40)).lt(b(0x40)),
            KeyRange.all().gt(b(0x40)).lte(b(0x40)),
            KeyRange.all().gt(b(0x40)).lt(b(0x40)),
            KeyRange.all().gte(b(0x80)).lte(b(0x20)),
            KeyRange.all().gt(b(0x30)).lt(b(0x30, 0x00)),
            KeyRange.between(b(0x11), b(0x12)));
    for (KeyRange r : empty) {
      assertThat(scanAll(s, r)).as(rule("3.5", "range " + r + " is empty")).isEmpty();
      if (has(Feature.REVERSE_SCAN)) {
        assertThat(scanAll(s, r.reverse()))
            .as(rule("3.5", "range " + r + " reversed is empty"))
            .isEmpty();
      }
    }
    assertScan("3.5", s, model, KeyRange.all().gte(b(0x40)).lte(b(0x40)));
  }

  void required_r3_6_boundsPastBothEnds() {
    require("3.6", Feature.ORDERED_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    KeyRange wide = KeyRange.all().gte(b(0x00)).lte(b(0xFF, 0xFF, 0xFF, 0xFF));
    assertScan("3.6", s, model, wide);
    assertScan("3.6", s, model, KeyRange.all().gt(b(0xFF, 0xFF)));
    assertScan("3.6", s, model, KeyRange.all().lt(b(0x10)));
    if (has(Feature.REVERSE_SCAN)) {
      assertScan("3.6", s, model, wide.reverse());
      assertScan("3.6", s, model, KeyRange.all().gt(b(0xFF, 0xFF)).reverse());
      assertScan("3.6", s, model, KeyRange.all().lt(b(0x10)).reverse());
    }
  }

  void required_r3_7_scanOfEmptyStore() {
    require("3.7", Feature.ORDERED_SCAN);
    Store s = open();
    assertThat(scanAll(s, KeyRange.all())).as(rule("3.7", "an empty store scans empty")).isEmpty();
    if (has(Feature.REVERSE_SCAN)) {
      assertThat(scanAll(s, KeyRange.all().reverse())).as(rule("3.7", "reversed too")).isEmpty();
    }
    s.put(b("a"), b("1"));
    s.delete(b("a"));
    assertThat(scanAll(s, KeyRange.all()))
        .as(rule("3.7", "a deleted key is not scanned"))
        .isEmpty();
  }

  void required_r3_8_emptyAndOverlongBounds() {
    require("3.8", Feature.ORDERED_SCAN);
    Store s = open();
    TreeMap<byte[], byte[]> model = fill(s);
    byte[] longBound = new byte[s.info().limits().maxKeySize() + 10];
    java.util.Arrays.fill(longBound, (byte) 0x30);
    byte[] longHigh = longBound.clone();
    longHigh[0] = (byte) 0xFF;
    List<KeyRange> ranges =
        List.of(
            KeyRange.all().gte(new byte[0]),
            KeyRange.all().gt(new byte[0]),
            KeyRange.all().lt(new byte[0]),
            KeyRange.all().lte(new byte[0]),
            KeyRange.all().gte(longBound),
            KeyRange.all().lte(longBound),
            KeyRange.all().gt(b(0x20)).lt(longHigh),
            KeyRange.all().gt(longHigh));
    for (KeyRange r : ranges) {
      assertScan("3.8", s, model, r);
      if (has(Feature.REVERSE_SCAN)) {
        assertScan("3.8", s, model, r.reverse());
      }
    }
  }

  void required_r3_9_prefixPaginationForwardAndReverse() {
    require("3.9", Feature.ORDERED_SCAN);
    Store s = open();
    // Tenants whose prefixes are neighbours, one ending in 0xFF (its successor carries over), and
    // keys just outside each prefix that a widened range would leak.
    byte[][] prefixes = {b(0x74, 0x31), b(0x74, 0x32), b(0x74, 0xFF), b(0x75)};
    TreeMap<byte[], byte[]> model = newModel();
    for (byte[] p : prefixes) {
      for (int i = 0; i < 23; i++) {
        byte[] k = java.util.Arrays.copyOf(p, p.length + 2);
        k[p.length] = (byte) (i * 11);
        k[p.length + 1] = (byte) (0xFF - i);
        byte[] v = b("v" + hex(k));
        s.put(k, v);
        model.put(k, v);
      }
    }
    for (byte[] outside : new byte[][] {b(0x74), b(0x74, 0x30, 0xFF), b(0x74, 0x33), b(0x76)}) {
      s.put(outside, b("outside"));
      model.put(outside, b("outside"));
    }
    for (byte[] p : prefixes) {
      List<String> want = new ArrayList<>();
      for (byte[] k : model.keySet()) {
        if (k.length >= p.length && java.util.Arrays.equals(k, 0, p.length, p, 0, p.length)) {
          want.add(hex(k));
        }
      }
      for (int page : new int[] {1, 7, 23, 50}) {
        List<String> got = new ArrayList<>();
        KeyRange r = KeyRange.prefix(p).limit(page);
        for (int guard = 0; guard < 100; guard++) {
          List<io.kv4j.Entry> batch = scanAll(s, r);
          batch.forEach(e -> got.add(hex(e.key())));
          if (batch.size() < page) {
            break;
          }
          r = KeyRange.prefix(p).gt(batch.get(batch.size() - 1).key()).limit(page);
        }
        assertThat(got)
            .as(
                rule(
                    "3.9",
                    "pages of "
                        + page
                        + " over prefix "
                        + hex(p)
                        + " with prefix(p).gt(lastKey).limit(n) (a key outside the prefix means"
                        + " a bound replaced the prefix instead of narrowing it)"))
            .containsExactlyElementsOf(want);
        if (has(Feature.REVERSE_SCAN)) {
          List<String> back = new ArrayList<>();
          KeyRange rr = KeyRange.prefix(p).reverse().limit(page);
          for (int guard = 0; guard < 100; guard++) {
            List<io.kv4j.Entry> batch = scanAll(s, rr);
            batch.forEach(e -> back.add(hex(e.key())));
            if (batch.size() < page) {
              break;
            }
            rr = KeyRange.prefix(p).lt(batch.get(batch.size() - 1).key()).reverse().limit(page);
          }
          List<String> wantBack = new ArrayList<>(want);
          java.util.Collections.reverse(wantBack);
          assertThat(back)
              .as(rule("3.9", "reverse pages of " + page + " over prefix " + hex(p)))
              .containsExactlyElementsOf(wantBack);
        }
      }
      // A resume key below the prefix keeps the prefix; one above it leaves nothing.
      assertThat(keysOf(scanAll(s, KeyRange.prefix(p).gte(b(0x00)))))
          .as(rule("3.9", "prefix(" + hex(p) + ").gte(00) is the whole prefix, nothing below"))
          .containsExactlyElementsOf(want);
      assertThat(scanAll(s, KeyRange.prefix(p).gt(b(0xFF, 0xFF, 0xFF))))
          .as(rule("3.9", "prefix(" + hex(p) + ").gt(ffffff) is empty"))
          .isEmpty();
    }
  }
}
