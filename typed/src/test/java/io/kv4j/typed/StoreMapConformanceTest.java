package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The map view against {@link ConcurrentSkipListMap}, the JDK's concurrent navigable map, as the
 * reference: the same seeded random sequence of operations runs on a {@link StoreMap} over a real
 * engine and on a skip list with the same comparator, each operation through the same random chain
 * of views (head, tail and sub maps with random inclusiveness, descending maps, views of views),
 * and every answer (values, entries, keys, sizes, whole iterations, the exception thrown) and the
 * whole content after every step must be identical. The map reads in pages of 3 entries so that
 * iteration crosses many pages.
 */
class StoreMapConformanceTest {
  private static final String[] GROUPS = {"g0", "g1", "g2"};
  private static final String[] NAMES = {"", "a", "a\0", "\ud83d\ude00"};
  private static final int OPS = 52;

  @TempDir Path dir;

  static Stream<Arguments> runs() {
    return Stream.of(
        Arguments.of("memory", 1L, 3000),
        Arguments.of("memory", 2L, 3000),
        Arguments.of("memory", 3L, 3000),
        Arguments.of("hashlog", 4L, 2000),
        Arguments.of("sqlite", 5L, 800));
  }

  private Store open(String engine) {
    return engine.equals("memory")
        ? Stores.open("memory:")
        : Stores.open(
            StoreConfig.builder(engine)
                .path(dir.resolve(engine))
                .durability(Durability.BUFFERED)
                .build());
  }

  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("runs")
  void randomOperations_matchConcurrentSkipListMap(String engine, long seed, int steps) {
    try (Store store = open(engine)) {
      StoreMap<Tuple, String> actualRoot =
          StoreMap.of(store, KeyCodec.tuple(), ValueCodec.utf8(), 3);
      ConcurrentSkipListMap<Tuple, String> modelRoot =
          new ConcurrentSkipListMap<>(actualRoot.comparator());
      Random r = new Random(seed);
      int viewsMade = 0;
      int threw = 0;
      for (int step = 0; step < steps; step++) {
        List<ViewStep> path = randomPath(r);
        int op = r.nextInt(OPS);
        Args a = new Args(r);
        String where =
            engine + ", seed " + seed + ", step " + step + ": " + path + " op " + op + " " + a;
        Object expected = outcome(() -> apply(op, view(modelRoot, path), a));
        Object actual = outcome(() -> apply(op, view(actualRoot, path), a));
        assertThat(actual).as(where).isEqualTo(expected);
        assertThat(entries(actualRoot)).as("content after " + where).isEqualTo(entries(modelRoot));
        viewsMade += path.isEmpty() ? 0 : 1;
        threw += String.valueOf(expected).startsWith("threw ") ? 1 : 0;
      }
      // what the store itself holds, read without the map
      List<String> stored = new ArrayList<>();
      try (Cursor c = store.scan(KeyRange.all())) {
        c.forEachRemaining(
            e -> stored.add(Tuple.unpack(e.key()) + "=" + ValueCodec.utf8().decode(e.value())));
      }
      assertThat(stored).as("store content, seed " + seed).isEqualTo(entries(modelRoot));
      assertThat(viewsMade).as("steps through views, seed " + seed).isGreaterThan(steps / 2);
      assertThat(threw).as("steps that threw, seed " + seed).isBetween(steps / 50, steps / 2);
    }
  }

  // ---- random arguments and views --------------------------------------------------------

  private static Tuple randomKey(Random r) {
    String g = GROUPS[r.nextInt(GROUPS.length)];
    switch (r.nextInt(4)) {
      case 0:
        return Tuple.of(g);
      case 1:
      case 2:
        return Tuple.of(g, r.nextInt(9) - 4);
      default:
        return Tuple.of(g, r.nextInt(9) - 4, NAMES[r.nextInt(NAMES.length)]);
    }
  }

  /** The arguments one operation may use, drawn before either map runs it. */
  private static final class Args {
    final Tuple k;
    final Tuple k2;
    final String v;
    final String v2;
    final boolean inc;

    Args(Random r) {
      k = randomKey(r);
      k2 = randomKey(r);
      v = "v" + r.nextInt(4);
      v2 = "v" + r.nextInt(4);
      inc = r.nextBoolean();
    }

    @Override
    public String toString() {
      return "(" + k + ", " + k2 + ", " + v + ", " + v2 + ", " + inc + ")";
    }
  }

  /** One step from a map to a view of it. */
  private record ViewStep(int kind, Tuple a, boolean ai, Tuple b, boolean bi, boolean ordered) {
    ConcurrentNavigableMap<Tuple, String> apply(ConcurrentNavigableMap<Tuple, String> m) {
      Tuple lo = a;
      Tuple hi = b;
      @SuppressWarnings("unchecked")
      Comparator<Tuple> c = (Comparator<Tuple>) m.comparator();
      if (ordered && c.compare(lo, hi) > 0) { // mostly well-formed, in the view's own direction
        lo = b;
        hi = a;
      }
      return switch (kind) {
        case 0 -> m.descendingMap();
        case 1 -> m.headMap(a, ai);
        case 2 -> m.tailMap(a, ai);
        case 3 -> m.subMap(lo, ai, hi, bi);
        case 4 -> m.headMap(a);
        case 5 -> m.tailMap(a);
        default -> m.subMap(lo, hi);
      };
    }

    @Override
    public String toString() {
      String[] names = {"desc", "head", "tail", "sub", "head1", "tail1", "sub2"};
      return names[kind] + (kind == 0 ? "" : "(" + a + "," + ai + "," + b + "," + bi + ")");
    }
  }

  private static List<ViewStep> randomPath(Random r) {
    List<ViewStep> path = new ArrayList<>();
    int n = r.nextInt(10) < 4 ? 0 : 1 + r.nextInt(3);
    for (int i = 0; i < n; i++) {
      path.add(
          new ViewStep(
              r.nextInt(7),
              randomKey(r),
              r.nextBoolean(),
              randomKey(r),
              r.nextBoolean(),
              r.nextInt(5) > 0));
    }
    return path;
  }

  private static ConcurrentNavigableMap<Tuple, String> view(
      ConcurrentNavigableMap<Tuple, String> m, List<ViewStep> path) {
    for (ViewStep s : path) {
      m = s.apply(m);
    }
    return m;
  }

  // ---- operations ------------------------------------------------------------------------

  private static String grow(String old, String add) {
    return old.length() >= 6 ? null : old + add; // null: compute and merge remove the key
  }

  private static Object apply(int op, ConcurrentNavigableMap<Tuple, String> m, Args a) {
    Tuple k = a.k;
    String v = a.v;
    return switch (op) {
      case 0 -> m.get(k);
      case 1 -> m.put(k, v);
      case 2 -> m.remove(k);
      case 3 -> m.containsKey(k);
      case 4 -> m.putIfAbsent(k, v);
      case 5 -> m.remove(k, v);
      case 6 -> m.replace(k, v);
      case 7 -> m.replace(k, v, a.v2);
      case 8 -> m.firstKey();
      case 9 -> m.lastKey();
      case 10 -> m.firstEntry();
      case 11 -> m.lastEntry();
      case 12 -> m.pollFirstEntry();
      case 13 -> m.pollLastEntry();
      case 14 -> m.ceilingEntry(k);
      case 15 -> m.floorEntry(k);
      case 16 -> m.higherEntry(k);
      case 17 -> m.lowerEntry(k);
      case 18 -> m.ceilingKey(k);
      case 19 -> m.floorKey(k);
      case 20 -> m.higherKey(k);
      case 21 -> m.lowerKey(k);
      case 22 -> m.size();
      case 23 -> m.isEmpty();
      case 24 -> m.entrySet();
      case 25 -> m.keySet();
      case 26 -> m.values();
      case 27 -> m.descendingKeySet();
      case 28 -> m.keySet().headSet(k, a.inc);
      case 29 -> m.navigableKeySet().tailSet(k, a.inc).descendingSet();
      case 30 -> m.keySet().pollFirst();
      case 31 -> m.descendingKeySet().pollFirst();
      case 32 -> removeWhileIterating(m, v);
      case 33 -> {
        if (a.inc && k.size() == 1) { // rarely: empty the view
          m.clear();
        }
        yield m.size();
      }
      case 34 -> m.containsValue(v);
      case 35 -> m.computeIfAbsent(k, x -> v);
      case 36 -> m.computeIfPresent(k, (x, old) -> grow(old, a.v2));
      case 37 -> m.compute(k, (x, old) -> old == null ? v : grow(old, a.v2));
      case 38 -> m.merge(k, v, StoreMapConformanceTest::grow);
      case 39 -> m.entrySet().remove(Map.entry(k, v));
      case 40 -> m.entrySet().contains(Map.entry(k, v));
      case 41 -> m.keySet().remove(k);
      case 42 -> m.hashCode();
      case 43 -> m.toString();
      case 44 -> {
        TreeMap<Tuple, String> more = new TreeMap<>(m.comparator());
        more.put(k, v);
        more.put(a.k2, a.v2);
        m.putAll(more);
        yield m.size();
      }
      case 45 -> {
        m.replaceAll((x, old) -> old.length() >= 6 ? "v0" : old + "r");
        yield m.values();
      }
      case 46 -> Arrays.asList(m.keySet().toArray());
      case 47 -> m.keySet().subSet(k, a.inc, a.k2, !a.inc);
      case 48 -> m.getOrDefault(k, "default");
      case 49 -> {
        List<String> seen = new ArrayList<>();
        m.forEach((x, y) -> seen.add(x + "=" + y));
        yield seen;
      }
      case 50 -> m.equals(new TreeMap<>(m));
      default -> m.headMap(k, a.inc).lastEntry();
    };
  }

  private static List<Object> removeWhileIterating(
      ConcurrentNavigableMap<Tuple, String> m, String value) {
    List<Object> removed = new ArrayList<>();
    Iterator<Map.Entry<Tuple, String>> it = m.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Tuple, String> e = it.next();
      if (e.getValue().equals(value)) {
        it.remove();
        removed.add(normalize(e));
      }
    }
    return removed;
  }

  private static Object outcome(Callable<Object> call) {
    try {
      return normalize(call.call());
    } catch (Exception e) {
      return "threw " + e.getClass().getName();
    }
  }

  /** Answers as comparable values: entries as "k=v", collections as lists, iterated. */
  private static Object normalize(Object o) {
    if (o instanceof Map.Entry<?, ?> e) {
      return e.getKey() + "=" + e.getValue();
    }
    if (o instanceof Collection<?> c) {
      List<Object> out = new ArrayList<>();
      for (Object x : c) {
        out.add(normalize(x));
      }
      return out;
    }
    return o;
  }

  private static Object entries(Map<Tuple, String> m) {
    return normalize(m.entrySet());
  }
}
