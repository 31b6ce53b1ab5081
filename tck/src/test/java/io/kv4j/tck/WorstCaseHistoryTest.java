package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The checker on the worst a machine can do to rule 19.3's histories: every operation of a round
 * overlapping every other thread's (as when a busy machine stalls threads mid-call), each thread
 * making the most operations a round allows. The search's size is bounded by what overlaps; the
 * rule's lanes must keep it far below the memo's bound, for correct engines and for an engine whose
 * last answer no order explains (the search then tries every order of the whole partition).
 * Histories are generated: the operations run in one random order against a map, then get the
 * widest windows that order allows.
 */
class WorstCaseHistoryTest {
  /** Rule 19.3's rounds per set of hot keys: one partition. */
  private static final int ROUNDS = 24;

  @ParameterizedTest(name = "{0} threads per partition, last answer broken: {1}")
  @CsvSource({"4,false", "4,true"})
  void check_rule19_3AtItsWorstInOneLane_decidesFarBelowTheMemoBound(
      int threads, boolean breakLast) {
    assertThat(threads).isEqualTo(Group19Histories.LANE_WIDTH);
    for (long seed = 1; seed <= 12; seed++) {
      List<Operation> ops = new Generator(seed, threads, 4).rounds(ROUNDS, breakLast);
      HistoryVerdict v = LinearizabilityCheck.check(ops, 0, Duration.ofSeconds(60));
      String what =
          "seed "
              + seed
              + ", "
              + ops.size()
              + " operations: "
              + v.explanation().lines().findFirst();
      assertThat(v.decided()).as(what).isTrue();
      assertThat(v.linearizable()).as(what).isEqualTo(!breakLast);
      assertThat(v.largestSearch())
          .as("configurations of the largest search, " + what)
          .isLessThan(LinearizabilityCheck.MAX_CONFIGURATIONS / 10);
    }
  }

  @ParameterizedTest(name = "{0} threads per partition")
  @CsvSource({"8"})
  void check_rule19_3AtItsWorstWithoutLanes_reachesTheMemoBound(int threads) {
    // Why the lanes: eight threads in one partition, at their worst, with a broken last answer.
    boolean anyUndecided = false;
    for (long seed = 1; seed <= 6 && !anyUndecided; seed++) {
      List<Operation> ops = new Generator(seed, threads, 4).rounds(ROUNDS, true);
      HistoryVerdict v = LinearizabilityCheck.check(ops, 0, Duration.ofSeconds(60));
      anyUndecided = !v.decided();
    }
    assertThat(anyUndecided).as("some history of eight threads is undecided").isTrue();
  }

  /** Rule 19.3's operations, executed in one order, timed so that a round's threads all overlap. */
  static final class Generator {
    private final SplittableRandom rnd;
    private final int threads;
    private final int hot;
    private final Map<String, String> model = new HashMap<>();
    private final List<Operation> ops = new ArrayList<>();
    private int written;

    Generator(long seed, int threads, int hot) {
      this.rnd = new SplittableRandom(seed);
      this.threads = threads;
      this.hot = hot;
    }

    List<Operation> rounds(int rounds, boolean breakLast) {
      for (int r = 0; r < rounds; r++) {
        round(r, breakLast && r == rounds - 1);
      }
      return ops;
    }

    private record Planned(int thread, int kind) {}

    private void round(int r, boolean tamper) {
      List<Integer> left = new ArrayList<>();
      List<Planned> order = new ArrayList<>();
      int[] count = new int[threads];
      for (int t = 0; t < threads; t++) {
        count[t] = 3;
        for (int i = 0; i < count[t]; i++) {
          left.add(t);
        }
      }
      while (!left.isEmpty()) {
        int t = left.remove(rnd.nextInt(left.size()));
        order.add(new Planned(t, rnd.nextInt(100)));
      }
      long base = r * 100_000L;
      long end = base + 10L * (order.size() + 1);
      // Each op's lin point; windows split halfway between a thread's consecutive points.
      long[] point = new long[order.size()];
      for (int i = 0; i < order.size(); i++) {
        point[i] = base + 10L * (i + 1);
      }
      long[] from = new long[order.size()];
      long[] to = new long[order.size()];
      long[] lastPoint = new long[threads];
      int[] lastIndex = new int[threads];
      java.util.Arrays.fill(lastIndex, -1);
      for (int i = 0; i < order.size(); i++) {
        int t = order.get(i).thread();
        int prev = lastIndex[t];
        if (prev < 0) {
          from[i] = base;
        } else {
          long mid = (lastPoint[t] + point[i]) / 2;
          to[prev] = mid;
          from[i] = mid + 1;
        }
        lastIndex[t] = i;
        lastPoint[t] = point[i];
        to[i] = end;
      }
      List<String> keys = new ArrayList<>();
      for (int k = 0; k < hot; k++) {
        keys.add("k" + k);
      }
      boolean tampered = false;
      for (int i = 0; i < order.size(); i++) {
        int t = order.get(i).thread();
        int kind = order.get(i).kind();
        if (kind < 30 || kind >= 90) {
          List<Operation.Cell> w = new ArrayList<>();
          List<String> sh = shuffled(keys);
          int n = 2 + rnd.nextInt(hot - 1);
          for (int j = 0; j < n; j++) {
            String v = rnd.nextInt(10) == 0 ? null : "t" + t + "#" + written++;
            w.add(cell(sh.get(j), v));
          }
          List<Operation.Cell> cond = List.of();
          Boolean answer = null;
          if (kind >= 90) {
            String k = keys.get(rnd.nextInt(hot));
            String expect = rnd.nextBoolean() ? model.get(k) : "stale";
            cond = List.of(cell(k, expect));
            answer = java.util.Objects.equals(model.get(k), expect);
          }
          if (answer == null || answer) {
            for (Operation.Cell c : w) {
              String k = new String(c.key(), StandardCharsets.US_ASCII);
              if (c.value() == null) {
                model.remove(k);
              } else {
                model.put(k, new String(c.value(), StandardCharsets.US_ASCII));
              }
            }
          }
          add(t, "write", List.of(), cond, w, answer, from[i], to[i]);
        } else if (kind < 60) {
          if (kind >= 45) {
            // Half the reads, a write of its own, the other half: the snapshot's window covers
            // the thread's next operation.
            int next = nextOfThread(order, i);
            if (next >= 0) {
              to[i] = to[next];
            }
          }
          List<Operation.Cell> reads = new ArrayList<>();
          for (String k : keys) {
            reads.add(cell(k, model.get(k)));
          }
          if (tamper && !tampered && model.get(keys.get(0)) != null) {
            reads.set(0, cell(keys.get(0), "never-written"));
            tampered = true;
          }
          add(t, "snapshot", reads, List.of(), List.of(), null, from[i], to[i]);
        } else if (kind < 70) {
          for (String k : keys) {
            add(
                t,
                "getAll",
                List.of(cell(k, model.get(k))),
                List.of(),
                List.of(),
                null,
                from[i],
                to[i]);
          }
        } else if (kind < 80) {
          String k = keys.get(rnd.nextInt(hot));
          add(t, "get", List.of(cell(k, model.get(k))), List.of(), List.of(), null, from[i], to[i]);
        } else {
          String k = keys.get(rnd.nextInt(hot));
          String v = "t" + t + "#" + written++;
          model.put(k, v);
          add(t, "put", List.of(), List.of(), List.of(cell(k, v)), null, from[i], to[i]);
        }
      }
    }

    private static int nextOfThread(List<Planned> order, int i) {
      for (int j = i + 1; j < order.size(); j++) {
        if (order.get(j).thread() == order.get(i).thread()) {
          return j;
        }
      }
      return -1;
    }

    private List<String> shuffled(List<String> keys) {
      List<String> o = new ArrayList<>(keys);
      for (int i = o.size() - 1; i > 0; i--) {
        java.util.Collections.swap(o, i, rnd.nextInt(i + 1));
      }
      return o;
    }

    private static Operation.Cell cell(String k, String v) {
      return new Operation.Cell(
          null,
          k.getBytes(StandardCharsets.US_ASCII),
          v == null ? null : v.getBytes(StandardCharsets.US_ASCII));
    }

    private void add(
        int client,
        String name,
        List<Operation.Cell> reads,
        List<Operation.Cell> conditions,
        List<Operation.Cell> writes,
        Boolean answer,
        long from,
        long to) {
      ops.add(
          new Operation(
              ops.size(), client, name, reads, conditions, writes, answer, from, to, null));
    }
  }
}
