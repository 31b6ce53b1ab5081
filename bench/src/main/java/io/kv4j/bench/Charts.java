package io.kv4j.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * PNG charts made with XChart: throughput per scenario (a bar per engine and thread count), latency
 * percentiles per scenario and thread count, footprint, space under churn.
 *
 * <p>What a chart shows is decided first, as a {@link Plot} (tested without pixels), then drawn:
 * engines sorted by result, best first; engines without numbers (n/a, failed) last, labelled as
 * such and explained in a note on the chart; plain tick labels with thousands separators; a title
 * in words with the scenario id in brackets, so it can be found in the tables. The stores that are
 * not kv4j engines (peers, raw libraries, instruments) come after the kv4j engines, labelled with
 * what they are ({@code mapdb (peer)}), and are drawn in grey: reference, not a choice.
 */
final class Charts {
  private Charts() {}

  /**
   * One bar chart, before it is drawn.
   *
   * @param file the file name without {@code .png}
   * @param title the chart's title
   * @param yTitle the y axis title
   * @param logY whether the y axis is logarithmic
   * @param categories the x labels (engines, best first; those without numbers last, marked)
   * @param series the bars of each category, one series per thread count or percentile
   * @param notes why an engine has no bar, one line each (empty when every engine has numbers)
   * @param reference per category, true for a store that is not a kv4j engine (drawn grey)
   */
  record Plot(
      String file,
      String title,
      String yTitle,
      boolean logY,
      List<String> categories,
      List<Series> series,
      List<String> notes,
      List<Boolean> reference) {
    /**
     * Whether any category is a store that is not a kv4j engine.
     *
     * @return true when some bars are drawn grey
     */
    boolean hasReference() {
      return reference.contains(true);
    }
  }

  /**
   * One series of bars.
   *
   * @param name its legend entry
   * @param values one value per category, null where the category has none
   */
  record Series(String name, List<Double> values) {}

  /**
   * The y tick label format: plain numbers with thousands separators and at most two decimals
   * (XChart's default switches to {@code 2.6E5} for large values). A pattern, not a formatting
   * function: with a function XChart places the ticks of a log axis as if it were linear.
   */
  static final String TICK_PATTERN = "#,##0.##";

  static List<String> write(Path dir, List<Result> results) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<String> files = new ArrayList<>();
    for (Plot p : plots(results)) {
      files.add(save(draw(p), dir, p.file()));
    }
    return files;
  }

  /**
   * Every chart of a report: for each durability and scenario (and phase) of the throughput tables,
   * throughput, then latency at each thread count; then footprint and space under churn.
   *
   * @param results the run's rows
   * @return the plots, in report order
   */
  static List<Plot> plots(List<Result> results) {
    List<Plot> out = new ArrayList<>();
    Map<String, List<Result>> byScenario = new LinkedHashMap<>();
    Catalogue catalogue = Catalogue.standard();
    for (Result r : results) {
      if (!catalogue.ownTable(r.scenario()) && !r.scenario().equals("open")) {
        String key =
            r.durability().name().toLowerCase(Locale.ROOT) + "-" + r.label().replace(' ', '-');
        byScenario.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
      }
    }
    for (Map.Entry<String, List<Result>> e : byScenario.entrySet()) {
      List<Result> rs = e.getValue();
      if (rs.stream().noneMatch(Result::ok)) {
        continue;
      }
      out.add(throughput(e.getKey(), rs));
      for (int t : threads(rs)) {
        out.add(latency(e.getKey(), rs, t));
      }
    }
    List<Result> fp = Grouping.rows(results, catalogue.footprint().id());
    if (fp.stream().anyMatch(Result::ok)) {
      out.add(footprint(fp));
    }
    List<Result> churn = new ArrayList<>();
    for (Scenario s : catalogue.ofKind(Scenario.Kind.CHURN)) {
      churn.addAll(Grouping.rows(results, s.id()));
    }
    if (churn.stream().anyMatch(Result::ok)) {
      out.add(churn(churn));
    }
    return out;
  }

  /** The thread counts with numbers, ascending. */
  private static Set<Integer> threads(List<Result> rs) {
    Set<Integer> threads = new TreeSet<>();
    rs.stream().filter(Result::ok).forEach(r -> threads.add(r.threads()));
    return threads;
  }

  /**
   * A chart's title in words, from the catalogue's {@code title} (or {@code title.<phase>}): {@code
   * Random reads (readrandom)}; the label itself when the catalogue has no words for it.
   *
   * @param label a row's label: scenario and phase
   * @return the title's start
   */
  static String title(String label) {
    int space = label.indexOf(' ');
    String id = space < 0 ? label : label.substring(0, space);
    String phase = space < 0 ? "" : label.substring(space + 1);
    String words =
        id.equals(Scenario.YOURS)
            ? "Your workload"
            : Catalogue.standard().find(id).map(s -> s.title(phase)).orElse(null);
    return words == null ? label : words + " (" + label + ")";
  }

  private static String durability(String key) {
    return key.substring(0, key.indexOf('-')).toUpperCase(Locale.ROOT);
  }

  private static String threadsName(int t) {
    return t + (t == 1 ? " thread" : " threads");
  }

  /** Why a row has no numbers, for a chart's note: "n/a: no ordered scans", "failed: ...". */
  static String reason(Result r) {
    // The note starts with the engine already: "engine 'x' cannot ..." becomes "cannot ...".
    String e = r.error().replace("engine '" + r.engine() + "' ", "");
    String why = e.startsWith("n/a") ? e : "failed: " + e;
    if (why.length() <= 80) {
      return why;
    }
    int cut = why.lastIndexOf(' ', 78);
    return why.substring(0, cut > 40 ? cut : 78) + " ...";
  }

  /**
   * The categories of a chart: the kv4j engines with a number, ordered by {@code best} (lower
   * first), then the other stores with a number, ordered alike and tagged ({@code mapdb (peer)}),
   * then the engines without one, marked {@code (n/a)} or {@code (failed)}, with a note each.
   * {@code reference} gets, per category, whether it is a store that is not a kv4j engine.
   */
  private static List<String> order(
      List<Result> rs,
      java.util.function.Predicate<Result> counts,
      Comparator<String> best,
      List<String> engines,
      List<String> notes,
      List<Boolean> reference) {
    Set<String> all = new LinkedHashSet<>();
    rs.forEach(r -> all.add(r.engine()));
    List<String> measured = new ArrayList<>();
    List<String> rest = new ArrayList<>();
    for (String e : all) {
      if (rs.stream().anyMatch(r -> r.engine().equals(e) && r.ok() && counts.test(r))) {
        measured.add(e);
      } else {
        rest.add(e);
      }
    }
    measured.sort(
        Comparator.comparing((String e) -> !Engines.role(e).pickable())
            .thenComparing(best)
            .thenComparing(Comparator.naturalOrder()));
    rest.sort(Comparator.comparing((String e) -> !Engines.role(e).pickable()));
    List<String> labels = new ArrayList<>();
    for (String e : measured) {
      Engines.Role role = Engines.role(e);
      engines.add(e);
      labels.add(role.pickable() ? e : e + " (" + role.tag() + ")");
      reference.add(!role.pickable());
    }
    for (String e : rest) {
      Engines.Role role = Engines.role(e);
      Result why =
          rs.stream().filter(r -> r.engine().equals(e) && !r.ok()).findFirst().orElse(null);
      boolean na = why == null || why.error().startsWith("n/a");
      engines.add(e);
      String tag = role.pickable() ? "" : role.tag() + ", ";
      labels.add(e + " (" + tag + (na ? "n/a)" : "failed)"));
      reference.add(!role.pickable());
      notes.add(e + ": " + (why == null ? "n/a: not measured at this thread count" : reason(why)));
    }
    return labels;
  }

  private static double value(
      List<Result> rs, String engine, int threads, ToDoubleFunction<Result> f) {
    return rs.stream()
        .filter(r -> r.ok() && r.engine().equals(engine) && r.threads() == threads)
        .mapToDouble(f)
        .findFirst()
        .orElse(Double.NaN);
  }

  private static Double orNull(double v) {
    return Double.isNaN(v) ? null : v;
  }

  private static Plot throughput(String key, List<Result> rs) {
    Set<Integer> threads = threads(rs);
    int maxT = threads.stream().mapToInt(Integer::intValue).max().orElse(1);
    List<String> engines = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    // Best first: ops/s at the largest thread count, then at the smaller ones.
    Comparator<String> best =
        Comparator.comparingDouble((String e) -> -orZero(value(rs, e, maxT, Result::opsPerSec)));
    for (int t : ((TreeSet<Integer>) threads).descendingSet()) {
      best = best.thenComparingDouble(e -> -orZero(value(rs, e, t, Result::opsPerSec)));
    }
    List<Boolean> reference = new ArrayList<>();
    List<String> labels = order(rs, r -> true, best, engines, notes, reference);
    List<Series> series = new ArrayList<>();
    for (int t : threads) {
      List<Double> y = new ArrayList<>();
      for (String e : engines) {
        double v = value(rs, e, t, Result::opsPerSec);
        y.add(orNull(v));
        if (Double.isNaN(v) && rs.stream().anyMatch(r -> r.engine().equals(e) && r.ok())) {
          Result why =
              rs.stream()
                  .filter(r -> r.engine().equals(e) && r.threads() == t && !r.ok())
                  .findFirst()
                  .orElse(null);
          notes.add(
              e + " at " + threadsName(t) + ": " + (why == null ? "not measured" : reason(why)));
        }
      }
      series.add(new Series(threadsName(t), y));
    }
    String label = rs.get(0).label();
    return new Plot(
        "throughput-" + key,
        title(label)
            + ": throughput, higher is better; durability "
            + durability(key)
            + "; best at "
            + threadsName(maxT)
            + " first",
        "operations per second",
        false,
        labels,
        series,
        notes,
        reference);
  }

  private static double orZero(double v) {
    return Double.isNaN(v) ? 0 : v;
  }

  private static Plot latency(String key, List<Result> rs, int threads) {
    List<String> engines = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    Comparator<String> best =
        Comparator.comparingDouble((String e) -> value(rs, e, threads, Result::p99Us))
            .thenComparingDouble(e -> value(rs, e, threads, Result::p50Us));
    List<Boolean> reference = new ArrayList<>();
    List<String> labels = order(rs, r -> r.threads() == threads, best, engines, notes, reference);
    String[] names = {"p50", "p99", "p99.9"};
    List<Series> series = new ArrayList<>();
    for (int i = 0; i < names.length; i++) {
      int pi = i;
      List<Double> y = new ArrayList<>();
      for (String e : engines) {
        double v =
            value(rs, e, threads, r -> pi == 0 ? r.p50Us() : pi == 1 ? r.p99Us() : r.p999Us());
        // The log axis starts at 0.1 µs; below it a bar would not show at all.
        y.add(Double.isNaN(v) ? null : Math.max(v, 0.1));
      }
      series.add(new Series(names[i], y));
    }
    String label = rs.get(0).label();
    return new Plot(
        "latency-" + key + "-" + threads + "t",
        title(label)
            + ": latency at "
            + threadsName(threads)
            + ", lower is better; durability "
            + durability(key)
            + "; lowest p99 first",
        "µs per operation (log scale)",
        true,
        labels,
        series,
        notes,
        reference);
  }

  private static Plot footprint(List<Result> fp) {
    List<String> engines = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    Comparator<String> best =
        Comparator.comparingDouble(
                (String e) -> ratio(fp, e, "after-update", Result::amplification))
            .thenComparingDouble(e -> ratio(fp, e, "after-load", Result::amplification));
    List<Boolean> reference = new ArrayList<>();
    List<String> labels = order(fp, r -> true, best, engines, notes, reference);
    List<Series> series = new ArrayList<>();
    for (String phase : List.of("after-load", "after-update")) {
      List<Double> y = new ArrayList<>();
      for (String e : engines) {
        y.add(orNull(ratio(fp, e, phase, Result::amplification)));
      }
      series.add(new Series(phase.replace('-', ' '), y));
    }
    return new Plot(
        "footprint",
        "Disk footprint (footprint): allocated disk bytes / live bytes, lower is better;"
            + " smallest after the updates first",
        "disk bytes per live byte",
        false,
        labels,
        series,
        notes,
        reference);
  }

  /** A figure of an engine's row of a phase; NaN (sorted last) when there is none. */
  private static double ratio(
      List<Result> rs, String engine, String phase, ToDoubleFunction<Result> f) {
    double v =
        rs.stream()
            .filter(r -> r.ok() && r.engine().equals(engine) && r.phase().equals(phase))
            .mapToDouble(f)
            .findFirst()
            .orElse(Double.NaN);
    return v;
  }

  private static Plot churn(List<Result> rs) {
    List<String> engines = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    // Best first: the lowest of the worst disk/live figures the engine reached.
    Comparator<String> best =
        Comparator.comparingDouble(
            (String e) ->
                Math.max(
                    nanLast(ratio(rs, e, "uniform", r -> r.figure("worst-disk-per-live"))),
                    nanLast(ratio(rs, e, "zipfian", r -> r.figure("worst-disk-per-live")))));
    List<Boolean> reference = new ArrayList<>();
    List<String> labels = order(rs, r -> true, best, engines, notes, reference);
    List<Series> series = new ArrayList<>();
    for (String phase : List.of("uniform", "zipfian")) {
      for (boolean worst : new boolean[] {false, true}) {
        List<Double> y = new ArrayList<>();
        for (String e : engines) {
          y.add(
              orNull(
                  ratio(
                      rs,
                      e,
                      phase,
                      r -> worst ? r.figure("worst-disk-per-live") : r.amplification())));
        }
        series.add(new Series(phase + (worst ? ", worst" : ", at the end"), y));
      }
    }
    return new Plot(
        "churn",
        "Space under churn (churn): allocated disk bytes / live bytes, lower is better;"
            + " lowest worst case first",
        "disk bytes per live byte",
        false,
        labels,
        series,
        notes,
        reference);
  }

  private static double nanLast(double v) {
    return Double.isNaN(v) ? Double.MAX_VALUE : v;
  }

  /**
   * The x axis title: the order, and why an engine has no bar (XChart draws it as one line, below
   * the engine labels, where it covers nothing).
   */
  static String xTitle(Plot p) {
    String order =
        p.logY() || p.file().equals("footprint") || p.file().equals("churn")
            ? "engine, best (lowest) first"
            : "engine, best (highest) first";
    if (p.hasReference()) {
      order += "; grey bars: not kv4j engines, for reference";
    }
    return p.notes().isEmpty() ? order : order + "; no bar: " + String.join("; ", p.notes());
  }

  /** The bars of the kv4j engines, one colour per series (XChart's own first colours). */
  static final java.awt.Color[] KV4J_COLOURS = {
    new java.awt.Color(0x4E79A7),
    new java.awt.Color(0xF28E2B),
    new java.awt.Color(0x59A14F),
    new java.awt.Color(0xE15759),
    new java.awt.Color(0x76B7B2),
    new java.awt.Color(0xEDC948)
  };

  /** The bars of the stores that are not kv4j engines: greys, one shade per series. */
  static final java.awt.Color[] REFERENCE_GREYS = {
    new java.awt.Color(0x8C8C8C), new java.awt.Color(0xB4B4B4), new java.awt.Color(0x6E6E6E)
  };

  /**
   * The series as drawn: as planned, or, when some categories are not kv4j engines, each split in
   * two, the kv4j engines' bars in colour and the others' in grey (named "..., not kv4j"), each
   * with nulls where the other has its bars.
   *
   * @param p the plot
   * @return the series to draw, with the colour of each
   */
  static List<Map.Entry<Series, java.awt.Color>> drawn(Plot p) {
    List<Map.Entry<Series, java.awt.Color>> out = new ArrayList<>();
    int i = 0;
    for (Series ser : p.series()) {
      if (!p.hasReference()) {
        out.add(Map.entry(ser, KV4J_COLOURS[i++ % KV4J_COLOURS.length]));
        continue;
      }
      List<Double> mine = new ArrayList<>();
      List<Double> theirs = new ArrayList<>();
      for (int c = 0; c < ser.values().size(); c++) {
        boolean ref = p.reference().get(c);
        mine.add(ref ? null : ser.values().get(c));
        theirs.add(ref ? ser.values().get(c) : null);
      }
      out.add(Map.entry(new Series(ser.name(), mine), KV4J_COLOURS[i % KV4J_COLOURS.length]));
      out.add(
          Map.entry(
              new Series(ser.name() + ", not kv4j", theirs),
              REFERENCE_GREYS[i % REFERENCE_GREYS.length]));
      i++;
    }
    return out;
  }

  /** Pixels per character of the axis fonts, a little over their average advance. */
  static final int CHAR_PX = 8;

  /**
   * The width of a drawn plot: each category gets room for its bars and for its label, so labels
   * never collide, and the title and x axis title fit on their line.
   */
  static int width(Plot p) {
    int longest = p.categories().stream().mapToInt(String::length).max().orElse(0);
    int perCategory = Math.max(40 + p.series().size() * 22, longest * CHAR_PX + 16);
    int titles = Math.max(p.title().length(), xTitle(p).length()) * CHAR_PX + 120;
    return Math.max(900, Math.max(200 + p.categories().size() * perCategory, titles));
  }

  /** Draws a plot: wide enough that the engine labels and the x axis title fit. */
  static CategoryChart draw(Plot p) {
    String xTitle = xTitle(p);
    int width = width(p);
    CategoryChart c =
        new CategoryChartBuilder()
            .width(width)
            .height(520)
            .title(p.title())
            .xAxisTitle(xTitle)
            .yAxisTitle(p.yTitle())
            .build();
    Styler s = c.getStyler();
    c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    c.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
    c.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    c.getStyler().setPlotGridVerticalLinesVisible(false);
    c.getStyler().setYAxisDecimalPattern(TICK_PATTERN);
    c.getStyler().setLocale(Locale.ROOT);
    // One series per kind of store: overlapped bars then sit in the middle of their category,
    // since a category has bars in only one of the two (see drawn).
    c.getStyler().setOverlapped(p.hasReference() && p.series().size() == 1);
    s.setChartTitleFont(s.getChartTitleFont().deriveFont(13f));
    if (p.logY()) {
      c.getStyler().setYAxisLogarithmic(true);
      c.getStyler().setYAxisMin(0.1);
    } else {
      c.getStyler().setYAxisMin(0.0);
    }
    for (Map.Entry<Series, java.awt.Color> e : drawn(p)) {
      Series ser = e.getKey();
      if (ser.values().stream().allMatch(java.util.Objects::isNull)) {
        continue; // every category of this kind of store is n/a: no bars, no legend entry
      }
      c.addSeries(ser.name(), p.categories(), ser.values()).setFillColor(e.getValue());
    }
    return c;
  }

  private static String save(CategoryChart c, Path dir, String name) throws IOException {
    Path charts = dir.resolve("charts");
    Files.createDirectories(charts);
    BitmapEncoder.saveBitmap(c, charts.resolve(name).toString(), BitmapFormat.PNG);
    return "charts/" + name + ".png";
  }
}
