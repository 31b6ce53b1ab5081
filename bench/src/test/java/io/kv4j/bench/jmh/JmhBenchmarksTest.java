package io.kv4j.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

class JmhBenchmarksTest {
  private static final Set<String> EXPECTED =
      Set.of(
          "ScenarioBenchmarks.readrandom",
          "ScenarioBenchmarks.ycsbA",
          "ScenarioBenchmarks.ycsbB",
          "ScenarioBenchmarks.ycsbC",
          "ScenarioBenchmarks.ycsbD",
          "ScenarioBenchmarks.ycsbE",
          "ScenarioBenchmarks.ycsbF",
          "ScenarioBenchmarks.overwrite",
          "ScenarioBenchmarks.scan",
          "FillBenchmark.fillrandom",
          "SingleOpBenchmarks.insertThenRead",
          "DurableWriteBenchmark.durablePut");

  @Test
  void benchmarkList_wasGeneratedByTheAnnotationProcessor() throws IOException {
    String list;
    try (InputStream in = getClass().getResourceAsStream("/META-INF/BenchmarkList")) {
      assertThat(in).as("META-INF/BenchmarkList").isNotNull();
      list = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    for (String b : EXPECTED) {
      String[] parts = b.split("\\.");
      assertThat(list).contains("io.kv4j.bench.jmh.jmh_generated." + parts[0] + "_" + parts[1]);
    }
  }

  @Test
  void everyBenchmark_runsBrieflyOnTheMemoryEngine() throws RunnerException {
    Options opt =
        new OptionsBuilder()
            .include("io\\.kv4j\\.bench\\.jmh\\..*")
            .forks(0)
            .warmupIterations(0)
            .measurementIterations(1)
            .measurementTime(TimeValue.milliseconds(50))
            .threads(1)
            .param("engine", "memory")
            .param("keys", "1000")
            .shouldFailOnError(true)
            .verbosity(org.openjdk.jmh.runner.options.VerboseMode.SILENT)
            .build();
    Collection<RunResult> results = new Runner(opt).run();
    Set<String> ran = new TreeSet<>();
    for (RunResult r : results) {
      String label = r.getParams().getBenchmark();
      ran.add(label.substring("io.kv4j.bench.jmh.".length()));
      assertThat(r.getPrimaryResult().getSampleCount()).as(label).isPositive();
    }
    assertThat(ran).containsExactlyInAnyOrderElementsOf(EXPECTED);
  }
}
