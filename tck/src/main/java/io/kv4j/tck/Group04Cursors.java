package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Group 4: cursors. */
final class Group04Cursors extends RuleGroup {
  /**
   * Group 4's rules as JUnit tests, in rule order, each run in a new {@code Group04Cursors}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r4_1_closeIsIdempotent() {
      new Group04Cursors(this).required_r4_1_closeIsIdempotent();
    }

    @Test
    default void required_r4_2_useAfterCloseIsClearError() {
      new Group04Cursors(this).required_r4_2_useAfterCloseIsClearError();
    }

    @Test
    default void required_r4_3_cursorDiesWithStore() {
      new Group04Cursors(this).required_r4_3_cursorDiesWithStore();
    }

    @Test
    default void required_r4_4_manyCursorsAtOnce() {
      new Group04Cursors(this).required_r4_4_manyCursorsAtOnce();
    }

    @Test
    default void required_r4_5_snapshotCursorSeesNoLaterWrites() {
      new Group04Cursors(this).required_r4_5_snapshotCursorSeesNoLaterWrites();
    }

    @Test
    default void required_r4_6_cursorUnderWritesStaysOrdered() {
      new Group04Cursors(this).required_r4_6_cursorUnderWritesStaysOrdered();
    }

    @Test
    default void required_r4_7_exhaustedCursor() {
      new Group04Cursors(this).required_r4_7_exhaustedCursor();
    }

    @Test
    default void required_r4_8_streamAndForEachCloseTheCursor() {
      new Group04Cursors(this).required_r4_8_streamAndForEachCloseTheCursor();
    }

    @Test
    default void required_r4_9_repeatedHasNextDoesNotAdvance() {
      new Group04Cursors(this).required_r4_9_repeatedHasNextDoesNotAdvance();
    }

    @Test
    default void required_r4_10_forEachReleasesCursorWhenActionThrows() {
      new Group04Cursors(this).required_r4_10_forEachReleasesCursorWhenActionThrows();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group04Cursors(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group04Cursors(TckBase kit) {
    super(kit);
  }

  private Store filled(int n) {
    Store s = open();
    for (int i = 0; i < n; i++) {
      s.put(key(i), b("v" + i));
    }
    return s;
  }

  void required_r4_1_closeIsIdempotent() {
    require("4.1", Feature.ORDERED_SCAN);
    Store s = filled(3);
    Cursor c = s.scan(KeyRange.all());
    assertThat(c.hasNext()).as(rule("4.1", "a cursor over 3 keys has a first entry")).isTrue();
    c.close();
    c.close();
    Cursor exhausted = s.scan(KeyRange.all());
    exhausted.forEachRemaining(e -> {});
    exhausted.close();
    exhausted.close();
    s.put(key(9), b("after"));
    assertThat(s.get(key(9)))
        .as(rule("4.1", "the store works after cursors closed twice"))
        .isEqualTo(b("after"));
  }

  void required_r4_2_useAfterCloseIsClearError() {
    require("4.2", Feature.ORDERED_SCAN);
    Store s = filled(3);
    Cursor c = s.scan(KeyRange.all());
    c.next();
    c.close();
    assertThat(thrown(c::hasNext))
        .as(rule("4.2", "hasNext on a closed cursor is an IllegalStateException"))
        .isInstanceOf(IllegalStateException.class);
    assertThat(thrown(c::next))
        .as(rule("4.2", "next on a closed cursor is an IllegalStateException"))
        .isInstanceOf(IllegalStateException.class);
  }

  void required_r4_3_cursorDiesWithStore() {
    require("4.3", Feature.ORDERED_SCAN);
    Store s = filled(100);
    Cursor c = s.scan(KeyRange.all());
    // A second cursor, never used before the close: reverse when the engine declares it, so the
    // reverse path is covered too; forward otherwise (an engine may refuse reverse scans).
    Cursor untouched =
        s.scan(
            has(Feature.REVERSE_SCAN)
                ? KeyRange.all().reverse().limit(Long.MAX_VALUE)
                : KeyRange.all().limit(Long.MAX_VALUE));
    c.next();
    close(s);
    assertThat(thrown(c::hasNext))
        .as(rule("4.3", "a cursor of a closed store throws StoreClosedException, never crashes"))
        .isInstanceOf(StoreClosedException.class);
    assertThat(thrown(c::next))
        .as(rule("4.3", "next on a cursor of a closed store throws StoreClosedException"))
        .isInstanceOf(StoreClosedException.class);
    assertThat(thrown(untouched::next))
        .as(
            rule(
                "4.3",
                "next on a cursor never used before its store closed throws"
                    + " StoreClosedException"))
        .isInstanceOf(StoreClosedException.class);
    c.close();
    untouched.close();
  }

  void required_r4_4_manyCursorsAtOnce() {
    require("4.4", Feature.ORDERED_SCAN);
    Store s = filled(50);
    List<Cursor> cursors = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      Cursor c = s.scan(KeyRange.all().gte(key(i % 50)));
      cursors.add(c);
    }
    for (int i = 0; i < cursors.size(); i++) {
      Cursor c = cursors.get(i);
      assertThat(c.hasNext()).as(rule("4.4", "cursor " + i + " of 100 open at once")).isTrue();
      assertThat(c.next().key())
          .as(rule("4.4", "cursor " + i + " starts at its bound"))
          .isEqualTo(key(i % 50));
    }
    cursors.forEach(Cursor::close);
    assertThat(scanAll(s, KeyRange.all()))
        .as(rule("4.4", "a full scan after closing the 100 cursors returns all 50 keys"))
        .hasSize(50);
  }

  void required_r4_5_snapshotCursorSeesNoLaterWrites() {
    require("4.5", Feature.SNAPSHOT_SCAN);
    Store s = filled(100);
    List<Entry> before = scanAll(s, KeyRange.all());
    try (Cursor c = s.scan(KeyRange.all());
        Cursor r = has(Feature.REVERSE_SCAN) ? s.scan(KeyRange.all().reverse()) : null) {
      // The point in time is the return of scan(), not the first hasNext(): writes made between
      // the two are not seen either.
      s.put(key(0), b("changed-before-first-hasNext"));
      s.delete(key(99));
      s.put(key(50_000), b("new-before-first-hasNext"));
      c.next();
      if (r != null) {
        r.next();
      }
      for (int i = 0; i < 100; i += 3) {
        s.put(key(i), b("changed"));
      }
      for (int i = 1; i < 100; i += 3) {
        s.delete(key(i));
      }
      s.put(key(1000), b("new"));
      List<Entry> seen = new ArrayList<>();
      seen.add(before.get(0));
      c.forEachRemaining(seen::add);
      assertThat(seen)
          .as(
              rule(
                  "4.5",
                  "a SNAPSHOT_SCAN cursor sees none of the writes made after scan() returned"
                      + " (also those before its first hasNext())"))
          .isEqualTo(before);
      if (r != null) {
        List<Entry> rev = new ArrayList<>();
        rev.add(before.get(before.size() - 1));
        r.forEachRemaining(rev::add);
        List<Entry> want = new ArrayList<>(before);
        java.util.Collections.reverse(want);
        assertThat(rev).as(rule("4.5", "reverse snapshot cursor too")).isEqualTo(want);
      }
    }
  }

  void required_r4_9_repeatedHasNextDoesNotAdvance() {
    require("4.9", Feature.ORDERED_SCAN);
    Store s = filled(30);
    List<Entry> want = scanAll(s, KeyRange.all());
    for (boolean reverse : new boolean[] {false, true}) {
      if (reverse && !has(Feature.REVERSE_SCAN)) {
        continue;
      }
      List<Entry> seen = new ArrayList<>();
      try (Cursor c = s.scan(reverse ? KeyRange.all().reverse() : KeyRange.all())) {
        for (int i = 0; ; i++) {
          boolean more = c.hasNext();
          for (int extra = 0; extra < i % 4; extra++) {
            assertThat(c.hasNext())
                .as(rule("4.9", "hasNext() called again before next() gives the same answer"))
                .isEqualTo(more);
          }
          if (!more) {
            break;
          }
          seen.add(c.next());
        }
      }
      List<Entry> expect = new ArrayList<>(want);
      if (reverse) {
        java.util.Collections.reverse(expect);
      }
      assertThat(keysOf(seen))
          .as(
              rule(
                  "4.9",
                  "calling hasNext() 1-4 times before each next() skips no entry"
                      + (reverse ? " (reverse)" : "")))
          .containsExactlyElementsOf(keysOf(expect));
    }
  }

  void required_r4_10_forEachReleasesCursorWhenActionThrows() {
    require("4.10", Feature.ORDERED_SCAN);
    Store s = filled(20);
    Number base = s.stats().figures().get("open-cursors");
    org.junit.jupiter.api.Assumptions.assumeTrue(
        base != null,
        "[4.10] skipped: engine '"
            + engine()
            + "' does not report the 'open-cursors' figure in stats(), so the kit cannot see"
            + " a leaked cursor");
    try (Cursor c = s.scan(KeyRange.all())) {
      assertThat(c.hasNext()).as(rule("4.10", "a cursor over 20 entries has a first")).isTrue();
      assertThat(s.stats().figures().get("open-cursors").longValue())
          .as(rule("4.10", "'open-cursors' counts a cursor that is open"))
          .isEqualTo(base.longValue() + 1);
    }
    assertThat(s.stats().figures().get("open-cursors").longValue())
        .as(rule("4.10", "'open-cursors' drops when the cursor is closed"))
        .isEqualTo(base.longValue());
    assertThat(
            thrown(
                () ->
                    s.forEach(
                        KeyRange.all(),
                        e -> {
                          throw new IllegalStateException("stop");
                        })))
        .as(rule("4.10", "the action's exception propagates"))
        .hasMessage("stop");
    assertThat(s.stats().figures().get("open-cursors").longValue())
        .as(rule("4.10", "forEach closed its cursor although the action threw"))
        .isEqualTo(base.longValue());
    try (Stream<Entry> st = s.stream(KeyRange.all())) {
      assertThat(st.limit(2).count())
          .as(rule("4.10", "a stream over the store yields its first 2 entries"))
          .isEqualTo(2);
    }
    assertThat(s.stats().figures().get("open-cursors").longValue())
        .as(rule("4.10", "closing a partly consumed stream closed its cursor"))
        .isEqualTo(base.longValue());
  }

  void required_r4_6_cursorUnderWritesStaysOrdered() {
    require("4.6", Feature.ORDERED_SCAN);
    Store s = filled(300);
    for (boolean reverse : new boolean[] {false, true}) {
      if (reverse && !has(Feature.REVERSE_SCAN)) {
        continue;
      }
      KeyRange r = reverse ? KeyRange.all().reverse() : KeyRange.all();
      List<byte[]> seen = new ArrayList<>();
      try (Cursor c = s.scan(r)) {
        int i = 0;
        while (c.hasNext()) {
          seen.add(c.next().key());
          if (i < 100) {
            // Bounded: a non-snapshot cursor may see these keys ahead of it.
            s.put(key(1000 + i), b("new"));
          }
          s.put(key(i * 7 % 300), b("upd"));
          s.delete(key((i * 13 + 5) % 300));
          i++;
        }
      }
      for (int i = 1; i < seen.size(); i++) {
        int cmp = Arrays.compareUnsigned(seen.get(i - 1), seen.get(i));
        assertThat(reverse ? cmp > 0 : cmp < 0)
            .as(
                rule(
                    "4.6",
                    "keys seen while writing must be strictly "
                        + (reverse ? "descending" : "ascending")
                        + ", each at most once; broke at position "
                        + i))
            .isTrue();
      }
      for (int i = 0; i < 1000 + seen.size(); i++) {
        s.put(key(i % 300), b("v" + (i % 300)));
      }
    }
  }

  void required_r4_7_exhaustedCursor() {
    require("4.7", Feature.ORDERED_SCAN);
    Store s = filled(2);
    try (Cursor c = s.scan(KeyRange.all())) {
      c.next();
      c.next();
      assertThat(c.hasNext()).as(rule("4.7", "an exhausted cursor has no next")).isFalse();
      assertThat(c.hasNext()).as(rule("4.7", "and stays exhausted")).isFalse();
      assertThat(thrown(c::next))
          .as(rule("4.7", "next on an exhausted cursor is NoSuchElementException"))
          .isInstanceOf(NoSuchElementException.class);
    }
  }

  void required_r4_8_streamAndForEachCloseTheCursor() {
    require("4.8", Feature.ORDERED_SCAN);
    Store s = filled(20);
    List<Entry> direct = scanAll(s, KeyRange.all());
    try (Stream<Entry> st = s.stream(KeyRange.all())) {
      assertThat(st.collect(Collectors.toList()))
          .as(rule("4.8", "stream() yields what the cursor yields"))
          .isEqualTo(direct);
    }
    List<Entry> viaForEach = new ArrayList<>();
    s.forEach(KeyRange.all(), viaForEach::add);
    assertThat(viaForEach)
        .as(rule("4.8", "forEach yields what the cursor yields"))
        .isEqualTo(direct);
    assertThat(
            thrown(
                () ->
                    s.forEach(
                        KeyRange.all(),
                        e -> {
                          throw new IllegalStateException("stop");
                        })))
        .as(rule("4.8", "an exception from the action propagates"))
        .hasMessage("stop");
    try (Stream<Entry> st = s.stream(KeyRange.all())) {
      assertThat(st.limit(3).count())
          .as(rule("4.8", "a stream limited to 3 yields 3 entries"))
          .isEqualTo(3);
    }
    s.put(key(100), b("x"));
    assertThat(s.get(key(100)))
        .as(rule("4.8", "the store works after streams and forEach released their cursors"))
        .isEqualTo(b("x"));
  }
}
