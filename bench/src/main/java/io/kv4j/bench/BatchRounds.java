package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The batch-load scenario with {@code --batch-sizes} or {@code --rounds N}: for each batch size,
 * every engine first loads a fresh store once uncounted (in a fresh JVM whichever engine loads
 * first runs at about half speed: the JIT and the heap's first touches), then the engines take
 * turns, one fresh load each per round, the order reversed every other round (A B, B A, A B, ...:
 * ABBA), each load once the process has gone quiet. A row per engine and size gives the median
 * round with the slowest and fastest in brackets; a note per kv4j engine and its raw library gives
 * kv4j / raw round by round (each pair measured back to back), with its median and range.
 */
final class BatchRounds {
  /** Largest {@code --batch-sizes} value. */
  static final int MAX_BATCH = 1_000_000;

  private final Rig rig;
  private final Loads loads;

  BatchRounds(Rig rig, Loads loads) {
    this.rig = rig;
    this.loads = loads;
  }

  /**
   * Whether the batch-load scenario runs here instead of engine by engine.
   *
   * @param o the run's options
   * @return true with {@code --batch-sizes} or {@code --rounds} above 1
   */
  static boolean applies(Options o) {
    return !o.batchSizes.isEmpty() || o.rounds > 1;
  }

  /**
   * The {@code --batch-sizes} values, checked.
   *
   * @param values the comma-separated parts
   * @return the sizes, in the order given
   * @throws IllegalArgumentException if a value is not a number in 1..{@value #MAX_BATCH}, repeats,
   *     or there is none
   */
  static List<Integer> sizes(List<String> values) {
    List<Integer> out = new ArrayList<>();
    for (String v : values) {
      int n = Integer.parseInt(v.replace("_", ""));
      if (n < 1 || n > MAX_BATCH) {
        throw new IllegalArgumentException(
            "--batch-sizes values must be 1.." + MAX_BATCH + ", got " + v);
      }
      if (out.contains(n)) {
        throw new IllegalArgumentException("--batch-sizes: " + n + " given twice");
      }
      out.add(n);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("--batch-sizes needs at least one size");
    }
    return List.copyOf(out);
  }

  /**
   * The engines' order in a round: as given in even rounds, reversed in odd ones, so each engine's
   * mean position is the same over two rounds and neighbours in the list stay neighbours.
   *
   * @param n how many engines
   * @param round the round, from 0
   * @return the engines' indices in the order they load
   */
  static int[] order(int n, int round) {
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = round % 2 == 0 ? i : n - 1 - i;
    }
    return out;
  }

  /**
   * kv4j / raw round by round.
   *
   * @param perRound the ratio of each round both completed, in round order
   * @param median their median
   * @param min the smallest
   * @param max the largest
   */
  record Ratios(double[] perRound, double median, double min, double max) {
    /**
     * The ratios of the rounds both engines completed (a failed round is NaN in either).
     *
     * @param kv4j the kv4j engine's puts/s by round
     * @param raw the raw library's, by round
     * @return the ratios, or null if no round has both
     */
    static Ratios of(double[] kv4j, double[] raw) {
      double[] r = new double[Math.min(kv4j.length, raw.length)];
      int n = 0;
      for (int i = 0; i < r.length; i++) {
        if (kv4j[i] > 0 && raw[i] > 0) {
          r[n++] = kv4j[i] / raw[i];
        }
      }
      if (n == 0) {
        return null;
      }
      double[] rounds = Arrays.copyOf(r, n);
      return new Ratios(rounds, BatchRounds.median(rounds), lowest(rounds), highest(rounds));
    }
  }

  /**
   * Measures the scenario on every engine.
   *
   * @param engines the engines, in order
   * @param s the batch-load scenario
   * @param footprint measures the footprints, or null when footprint is not selected
   */
  void run(List<StoreProvider> engines, Scenario s, Footprint footprint) {
    Options o = rig.options();
    Durability d = s.durability(o.durability);
    List<StoreProvider> able = new ArrayList<>();
    for (StoreProvider p : engines) {
      if (p.features().contains(Feature.ATOMIC_BATCH)) {
        able.add(p);
      } else {
        rig.add(Result.failed(p.id(), s.id(), "", 1, d, "n/a: no atomic batches"));
      }
    }
    List<Integer> sizes = o.batchSizes.isEmpty() ? List.of(s.batch()) : o.batchSizes;
    int footprintSize = sizes.contains(s.batch()) ? s.batch() : sizes.get(0);
    for (int size : sizes) {
      String phase = o.batchSizes.isEmpty() ? "" : "batch-" + size;
      size(able, s, size, phase, size == footprintSize ? footprint : null);
    }
  }

  /** One batch size: the uncounted loads, the rounds, the rows and the notes. */
  private void size(
      List<StoreProvider> engines, Scenario s, int size, String phase, Footprint footprint) {
    int rounds = rig.options().rounds;
    String label = phase.isEmpty() ? s.id() : s.id() + " " + phase;
    Set<Integer> out = new HashSet<>();
    Map<Integer, List<Result>> rows = new LinkedHashMap<>();
    for (int e = 0; e < engines.size(); e++) {
      rows.put(e, new ArrayList<>());
      Result w = load(engines.get(e), s, size, phase, null, out, e);
      if (w != null) {
        rig.log(
            engines.get(e).id(),
            String.format(
                Locale.ROOT, "%-18s uncounted load %,12.0f puts/s", label, w.opsPerSec()));
      }
    }
    for (int r = 0; r < rounds; r++) {
      for (int e : order(engines.size(), r)) {
        if (out.contains(e)) {
          continue;
        }
        Result x = load(engines.get(e), s, size, phase, r == rounds - 1 ? footprint : null, out, e);
        if (x == null) {
          continue;
        }
        rows.get(e).add(x);
        rig.log(
            engines.get(e).id(),
            String.format(
                Locale.ROOT,
                "%-18s round %d/%d %,12.0f puts/s",
                label,
                r + 1,
                rounds,
                x.opsPerSec()));
      }
    }
    for (int e = 0; e < engines.size(); e++) {
      if (!out.contains(e)) {
        Result m = combine(rows.get(e));
        rig.progress().result(m, "median of " + rows.get(e).size() + ", batches of " + size);
        rig.add(m);
      }
    }
    notes(engines, rows, out, label);
  }

  /**
   * One fresh load once the process is quiet; null if it failed: then its row is recorded and the
   * engine is out for this size.
   */
  private Result load(
      StoreProvider p,
      Scenario s,
      int size,
      String phase,
      Footprint footprint,
      Set<Integer> out,
      int e) {
    Rounds.settle(rig, p.id());
    Result r;
    try {
      r = loads.freshBatchLoad(p, s, size, phase, footprint, x -> {});
    } catch (RuntimeException | Error x) {
      Durability d = s.durability(rig.options().durability);
      r = Result.failed(p.id(), s.id(), phase, 1, d, Rows.describe(x));
    }
    if (!r.ok()) {
      out.add(e);
      rig.add(r);
      return null;
    }
    return r;
  }

  /** The rounds' rows as one: the median round's, with the rounds and the range as figures. */
  static Result combine(List<Result> rounds) {
    List<Result> sorted =
        rounds.stream()
            .sorted((a, b) -> Double.compare(a.opsPerSec(), b.opsPerSec()))
            .collect(Collectors.toList());
    double[] rates = sorted.stream().mapToDouble(Result::opsPerSec).toArray();
    Result m = sorted.get((sorted.size() - 1) / 2);
    Map<String, Double> figures = new LinkedHashMap<>();
    figures.put("rounds", (double) rates.length);
    figures.put("ops-per-sec-min", rates[0]);
    figures.put("ops-per-sec-max", rates[rates.length - 1]);
    return new Result(
            m.engine(),
            m.scenario(),
            m.phase(),
            m.threads(),
            m.durability(),
            m.ops(),
            m.seconds(),
            median(rates),
            m.p50Us(),
            m.p99Us(),
            m.p999Us(),
            m.maxUs(),
            m.cpuUsPerOp(),
            m.bgCpuShare(),
            0,
            0,
            null)
        .with(0, 0, figures);
  }

  /** A note and a log line per kv4j engine whose raw library ran beside it. */
  private void notes(
      List<StoreProvider> engines,
      Map<Integer, List<Result>> rows,
      Set<Integer> out,
      String label) {
    int rounds = rig.options().rounds;
    for (int raw = 0; raw < engines.size(); raw++) {
      String rawId = engines.get(raw).id();
      if (!Abstraction.isRaw(rawId) || out.contains(raw)) {
        continue;
      }
      String kv4jId = rawId.substring(0, rawId.length() - Abstraction.SUFFIX.length());
      for (int k = 0; k < engines.size(); k++) {
        if (!engines.get(k).id().equals(kv4jId) || out.contains(k)) {
          continue;
        }
        Ratios q = Ratios.of(rates(rows.get(k), rounds), rates(rows.get(raw), rounds));
        if (q == null) {
          continue;
        }
        String text =
            String.format(
                Locale.ROOT,
                "%s: %s / %s puts/s round by round %s (median %.2f, range %.2f-%.2f over %d"
                    + " rounds; each engine loaded once uncounted first, order ABBA)",
                label,
                kv4jId,
                rawId,
                Arrays.stream(q.perRound())
                    .mapToObj(x -> String.format(Locale.ROOT, "%.2f", x))
                    .collect(Collectors.joining(", ")),
                q.median(),
                q.min(),
                q.max(),
                q.perRound().length);
        rig.log(kv4jId, text);
        rig.out().notes().add(text);
      }
    }
  }

  /** An engine's puts/s by round; all its rounds ran, since a failure takes it out. */
  private static double[] rates(List<Result> rows, int rounds) {
    double[] r = new double[rounds];
    for (int i = 0; i < rows.size() && i < rounds; i++) {
      r[i] = rows.get(i).opsPerSec();
    }
    return r;
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    int m = s.length / 2;
    return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  private static double lowest(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  private static double highest(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }
}
