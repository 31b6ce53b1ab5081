package io.kv4j.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * PNG charts made with XChart: throughput bars and latency percentiles per scenario, footprint,
 * space under churn.
 */
final class Charts {
  private Charts() {}

  static List<String> write(Path dir, List<Result> results) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<String> files = new ArrayList<>();
    Map<String, List<Result>> byScenario = new LinkedHashMap<>();
    for (Result r : results) {
      if (r.ok() && !Scenario.ownTable(r.scenario())) {
        String key =
            r.durability().name().toLowerCase(Locale.ROOT) + "-" + r.label().replace(' ', '-');
        byScenario.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
      }
    }
    for (Map.Entry<String, List<Result>> e : byScenario.entrySet()) {
      files.add(throughput(dir, e.getKey(), e.getValue()));
      files.add(latency(dir, e.getKey(), e.getValue()));
    }
    List<Result> fp = new ArrayList<>();
    for (Result r : results) {
      if (r.ok() && r.scenario().equals("footprint")) {
        fp.add(r);
      }
    }
    if (!fp.isEmpty()) {
      files.add(footprint(dir, fp));
    }
    List<Result> churn = new ArrayList<>();
    for (Result r : results) {
      if (r.ok() && r.scenario().equals(Scenario.CHURN.id())) {
        churn.add(r);
      }
    }
    if (!churn.isEmpty()) {
      files.add(churn(dir, churn));
    }
    return files;
  }

  private static String churn(Path dir, List<Result> rs) throws IOException {
    List<String> engines = engines(rs);
    CategoryChart c =
        chart("space under churn: allocated disk / live bytes (lower is better)", "ratio");
    for (String phase : List.of("uniform", "zipfian")) {
      for (boolean worst : new boolean[] {false, true}) {
        List<Double> y = new ArrayList<>();
        for (String e : engines) {
          y.add(
              rs.stream()
                  .filter(r -> r.engine().equals(e) && r.phase().equals(phase))
                  .mapToDouble(r -> worst ? r.figure("worst-disk-per-live") : r.amplification())
                  .findFirst()
                  .orElse(0));
        }
        c.addSeries(phase + (worst ? " worst" : " at end"), engines, y);
      }
    }
    return save(c, dir, "churn");
  }

  private static CategoryChart chart(String title, String yTitle) {
    CategoryChart c =
        new CategoryChartBuilder()
            .width(900)
            .height(450)
            .title(title)
            .xAxisTitle("engine")
            .yAxisTitle(yTitle)
            .build();
    c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
    c.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    c.getStyler().setPlotGridVerticalLinesVisible(false);
    return c;
  }

  private static String throughput(Path dir, String key, List<Result> rs) throws IOException {
    List<String> engines = engines(rs);
    Set<Integer> threads = new TreeSet<>();
    rs.forEach(r -> threads.add(r.threads()));
    CategoryChart c = chart(key + ": throughput (higher is better)", "ops/s");
    for (int t : threads) {
      List<Double> y = new ArrayList<>();
      for (String e : engines) {
        y.add(
            rs.stream()
                .filter(r -> r.engine().equals(e) && r.threads() == t)
                .mapToDouble(Result::opsPerSec)
                .findFirst()
                .orElse(0));
      }
      c.addSeries(t + (t == 1 ? " thread" : " threads"), engines, y);
    }
    return save(c, dir, "throughput-" + key);
  }

  private static String latency(Path dir, String key, List<Result> rs) throws IOException {
    int maxT = rs.stream().mapToInt(Result::threads).max().orElse(1);
    List<Result> at = new ArrayList<>();
    for (Result r : rs) {
      if (r.threads() == maxT) {
        at.add(r);
      }
    }
    List<String> engines = engines(at);
    CategoryChart c =
        chart(key + ": latency at " + maxT + " thread(s) (lower is better, log scale)", "µs");
    c.getStyler().setYAxisLogarithmic(true);
    c.getStyler().setYAxisMin(0.1);
    String[] names = {"p50", "p99", "p99.9"};
    for (int i = 0; i < names.length; i++) {
      List<Double> y = new ArrayList<>();
      for (String e : engines) {
        Result r = at.stream().filter(x -> x.engine().equals(e)).findFirst().orElseThrow();
        double v = i == 0 ? r.p50Us() : i == 1 ? r.p99Us() : r.p999Us();
        y.add(Math.max(v, 0.1));
      }
      c.addSeries(names[i], engines, y);
    }
    return save(c, dir, "latency-" + key);
  }

  private static String footprint(Path dir, List<Result> fp) throws IOException {
    List<String> engines = engines(fp);
    CategoryChart c = chart("footprint: allocated disk / live bytes (lower is better)", "ratio");
    for (String phase : List.of("after-load", "after-update")) {
      List<Double> y = new ArrayList<>();
      for (String e : engines) {
        y.add(
            fp.stream()
                .filter(r -> r.engine().equals(e) && r.phase().equals(phase))
                .mapToDouble(Result::amplification)
                .findFirst()
                .orElse(0));
      }
      c.addSeries(phase, engines, y);
    }
    return save(c, dir, "footprint");
  }

  private static List<String> engines(List<Result> rs) {
    Set<String> s = new LinkedHashSet<>();
    rs.forEach(r -> s.add(r.engine()));
    return new ArrayList<>(s);
  }

  private static String save(CategoryChart c, Path dir, String name) throws IOException {
    Path charts = dir.resolve("charts");
    java.nio.file.Files.createDirectories(charts);
    BitmapEncoder.saveBitmap(c, charts.resolve(name).toString(), BitmapFormat.PNG);
    return "charts/" + name + ".png";
  }
}
