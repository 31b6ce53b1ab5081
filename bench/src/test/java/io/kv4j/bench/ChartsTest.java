package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.knowm.xchart.CategoryChart;

/** What the charts show (the data and labels handed to XChart), not their pixels. */
class ChartsTest {

  private static Result row(String engine, String scenario, int threads, double ops, double p99) {
    return new Result(
        engine,
        scenario,
        "",
        threads,
        Durability.BUFFERED,
        1000,
        1.0,
        ops,
        p99 / 4,
        p99,
        p99 * 3,
        p99 * 4,
        5,
        0,
        0,
        0,
        null);
  }

  private static Result na(String engine, String scenario, String why) {
    return Result.failed(engine, scenario, "", 0, Durability.BUFFERED, why);
  }

  private static Charts.Plot plot(List<Charts.Plot> plots, String file) {
    return plots.stream()
        .filter(p -> p.file().equals(file))
        .findFirst()
        .orElseThrow(() -> new AssertionError(file + " not among " + files(plots)));
  }

  private static List<String> files(List<Charts.Plot> plots) {
    return plots.stream().map(Charts.Plot::file).toList();
  }

  private static final List<Result> SCAN =
      List.of(
          row("slow", "scan", 1, 100, 50),
          row("slow", "scan", 2, 150, 40),
          row("fast", "scan", 1, 300, 10),
          row("fast", "scan", 2, 260_000, 20),
          row("mid", "scan", 1, 400, 30),
          row("mid", "scan", 2, 200, 30),
          na("hashmap", "scan", "n/a: no ordered scans"));

  @Test
  void throughput_sortedBestFirstAtTheLargestThreadCount_naEngineLastWithANote() {
    Charts.Plot p = plot(Charts.plots(SCAN), "throughput-buffered-scan");
    assertThat(p.categories()).containsExactly("fast", "mid", "slow", "hashmap (n/a)");
    assertThat(p.series()).extracting(Charts.Series::name).containsExactly("1 thread", "2 threads");
    assertThat(p.series().get(0).values()).containsExactly(300.0, 400.0, 100.0, null);
    assertThat(p.series().get(1).values()).containsExactly(260_000.0, 200.0, 150.0, null);
    assertThat(p.notes()).containsExactly("hashmap: n/a: no ordered scans");
    assertThat(Charts.xTitle(p))
        .isEqualTo("engine, best (highest) first; no bar: hashmap: n/a: no ordered scans");
    assertThat(p.logY()).isFalse();
  }

  @Test
  void latency_oneChartPerThreadCount_sortedByP99_naEngineKept() {
    List<Charts.Plot> plots = Charts.plots(SCAN);
    assertThat(files(plots))
        .containsExactly(
            "throughput-buffered-scan", "latency-buffered-scan-1t", "latency-buffered-scan-2t");
    Charts.Plot one = plot(plots, "latency-buffered-scan-1t");
    assertThat(one.categories()).containsExactly("fast", "mid", "slow", "hashmap (n/a)");
    Charts.Plot two = plot(plots, "latency-buffered-scan-2t");
    assertThat(two.categories()).containsExactly("fast", "mid", "slow", "hashmap (n/a)");
    assertThat(two.series()).extracting(Charts.Series::name).containsExactly("p50", "p99", "p99.9");
    assertThat(two.series().get(1).values()).containsExactly(20.0, 30.0, 40.0, null);
    assertThat(two.logY()).isTrue();
    assertThat(two.title()).contains("latency at 2 threads").contains("lowest p99 first");
    assertThat(two.notes()).containsExactly("hashmap: n/a: no ordered scans");
  }

  @Test
  void latency_engineFailedAtOneThreadCount_isMarkedFailedThere() {
    List<Result> rs = new ArrayList<>(SCAN);
    rs.add(row("flaky", "scan", 1, 500, 5));
    rs.add(
        Result.failed("flaky", "scan", "", 2, Durability.BUFFERED, "VerificationException: bad"));
    List<Charts.Plot> plots = Charts.plots(rs);
    assertThat(plot(plots, "latency-buffered-scan-1t").categories()).startsWith("flaky");
    Charts.Plot two = plot(plots, "latency-buffered-scan-2t");
    assertThat(two.categories()).endsWith("flaky (failed)");
    assertThat(two.notes()).contains("flaky: failed: VerificationException: bad");
    Charts.Plot tp = plot(plots, "throughput-buffered-scan");
    assertThat(tp.notes()).contains("flaky at 2 threads: failed: VerificationException: bad");
  }

  @Test
  void titles_areWordsWithTheScenarioIdInBrackets() {
    Charts.Plot p = plot(Charts.plots(SCAN), "throughput-buffered-scan");
    assertThat(p.title())
        .startsWith("Scans of 100 keys (scan): throughput, higher is better; durability BUFFERED")
        .doesNotContain("buffered-scan");
    assertThat(Charts.title("readrandom")).isEqualTo("Random reads (readrandom)");
    assertThat(Charts.title("single-op insert"))
        .isEqualTo("Single inserts into a fresh store, one commit each (single-op insert)");
    for (Scenario s : Catalogue.standard().all()) {
      if (!s.ownTable() && s.kind() != Scenario.Kind.SINGLE_OP) {
        assertThat(Charts.title(s.id()))
            .as(s.id())
            .isNotEqualTo(s.id())
            .endsWith("(" + s.id() + ")");
      }
    }
  }

  @Test
  void reason_dropsTheEngineNameTheNoteAlreadyStartsWith_andShortensLongOnes() {
    Result r =
        na(
            "chronicle-map",
            "durable-put",
            "n/a: engine 'chronicle-map' cannot honour durability SYNC: it never forces its"
                + " memory-mapped file to disk; open it with durability=buffered");
    String why = Charts.reason(r);
    assertThat(why).startsWith("n/a: cannot honour durability SYNC").endsWith(" ...");
    assertThat(why.length()).isLessThanOrEqualTo(84);
  }

  @Test
  void footprintAndChurn_lowestFirst_notPersistentShownAsNa() {
    List<Result> rs =
        List.of(
            Result.footprint("big", "footprint", "after-load", Durability.BUFFERED, 3000, 1000),
            Result.footprint("big", "footprint", "after-update", Durability.BUFFERED, 5000, 1000),
            Result.footprint("small", "footprint", "after-load", Durability.BUFFERED, 1500, 1000),
            Result.footprint("small", "footprint", "after-update", Durability.BUFFERED, 1200, 1000),
            na("memory", "footprint", "n/a: not persistent"),
            churn("a", "uniform", 3.0, 2.0),
            churn("a", "zipfian", 2.5, 2.0),
            churn("b", "uniform", 1.5, 1.2),
            churn("b", "zipfian", 1.8, 1.5),
            na("memory", "churn", "n/a: not persistent"));
    List<Charts.Plot> plots = Charts.plots(rs);
    assertThat(files(plots)).containsExactly("footprint", "churn");
    Charts.Plot fp = plot(plots, "footprint");
    assertThat(fp.categories()).containsExactly("small", "big", "memory (n/a)");
    assertThat(fp.series().get(1).values()).containsExactly(1.2, 5.0, null);
    assertThat(fp.notes()).containsExactly("memory: n/a: not persistent");
    Charts.Plot churn = plot(plots, "churn");
    assertThat(churn.categories()).containsExactly("b", "a", "memory (n/a)");
    assertThat(churn.series())
        .extracting(Charts.Series::name)
        .containsExactly(
            "uniform, at the end", "uniform, worst", "zipfian, at the end", "zipfian, worst");
    assertThat(churn.series().get(1).values()).containsExactly(1.5, 3.0, null);
  }

  private static Result churn(String engine, String phase, double worst, double atEnd) {
    return new Result(
            engine,
            "churn",
            phase,
            2,
            Durability.BUFFERED,
            1000,
            1.0,
            1000,
            1,
            2,
            3,
            4,
            5,
            0,
            (long) (atEnd * 1000),
            1000,
            null)
        .with((long) (atEnd * 1000), 1000, Map.of("worst-disk-per-live", worst));
  }

  @Test
  void draw_plainTickLabelsWithThousandsSeparators_andRoomForEveryLabel() {
    Charts.Plot p = plot(Charts.plots(SCAN), "throughput-buffered-scan");
    CategoryChart c = Charts.draw(p);
    assertThat(c.getStyler().getYAxisDecimalPattern()).isEqualTo(Charts.TICK_PATTERN);
    DecimalFormat f =
        new DecimalFormat(Charts.TICK_PATTERN, DecimalFormatSymbols.getInstance(Locale.ROOT));
    assertThat(f.format(260_000)).isEqualTo("260,000");
    assertThat(f.format(2_600_000)).isEqualTo("2,600,000");
    assertThat(f.format(0.1)).isEqualTo("0.1");
    assertThat(c.getTitle()).isEqualTo(p.title());
    assertThat(c.getXAxisTitle()).isEqualTo(Charts.xTitle(p));
    // Every category gets at least as many pixels as its label needs, so labels cannot collide.
    int longest = p.categories().stream().mapToInt(String::length).max().orElseThrow();
    assertThat((c.getWidth() - 200) / p.categories().size())
        .isGreaterThanOrEqualTo(longest * Charts.CHAR_PX);
    assertThat(c.getWidth()).isGreaterThanOrEqualTo(Charts.xTitle(p).length() * Charts.CHAR_PX);
    assertThat(c.getSeriesMap().keySet()).containsExactly("1 thread", "2 threads");
    assertThat(Arrays.asList(c.getSeriesMap().get("2 threads").getYData().toArray()))
        .containsExactly(260_000.0, 200.0, 150.0, null);
  }

  @Test
  void plots_peers_comeAfterTheKv4jEnginesTaggedAndDrawnGrey() {
    List<Result> rs =
        List.of(
            row("chronicle-map", "readrandom", 1, 900, 5),
            row("hashlog", "readrandom", 1, 500, 10),
            row("lmdb", "readrandom", 1, 300, 20),
            na("mapdb", "readrandom", "failed: x"));
    Charts.Plot p = plot(Charts.plots(rs), "throughput-buffered-readrandom");
    assertThat(p.categories())
        .containsExactly("hashlog", "lmdb", "chronicle-map (peer)", "mapdb (peer, failed)");
    assertThat(p.reference()).containsExactly(false, false, true, true);
    assertThat(Charts.xTitle(p)).contains("grey bars: not kv4j engines, for reference");
    List<Map.Entry<Charts.Series, java.awt.Color>> drawn = Charts.drawn(p);
    assertThat(drawn).hasSize(2);
    assertThat(drawn.get(0).getKey().values()).containsExactly(500.0, 300.0, null, null);
    assertThat(drawn.get(1).getKey().values()).containsExactly(null, null, 900.0, null);
    assertThat(drawn.get(1).getKey().name()).isEqualTo("1 thread, not kv4j");
    java.awt.Color grey = drawn.get(1).getValue();
    assertThat(grey.getRed()).as("grey").isEqualTo(grey.getGreen()).isEqualTo(grey.getBlue());
    assertThat(Charts.drawn(plot(Charts.plots(SCAN), "throughput-buffered-scan")))
        .as("no peer: the series as planned")
        .extracting(e -> e.getKey().name())
        .containsExactly("1 thread", "2 threads");
    Charts.draw(p); // draws without complaint
  }
}
