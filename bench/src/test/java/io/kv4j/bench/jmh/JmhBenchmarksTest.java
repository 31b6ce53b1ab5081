package io.kv4j.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.bench.Catalogue;
import io.kv4j.bench.Scenario;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

class JmhBenchmarksTest {
  private static final Set<String> EXPECTED =
      Set.of(
          "ScenarioBenchmarks.op", "FillBenchmark.fillrandom", "SingleOpBenchmarks.insertThenRead");

  private static List<String> timedIds() {
    return Catalogue.standard().ofKind(Scenario.Kind.TIMED).stream()
        .map(Scenario::id)
        .collect(Collectors.toList());
  }

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
    // The fork's JVM flags come from ForkedBenchmark (@Fork is @Inherited): every benchmark has
    // them, the last one included.
    List<String> lines = list.lines().filter(l -> l.startsWith("JMH ")).toList();
    assertThat(lines).hasSize(EXPECTED.size());
    assertThat(lines)
        .allSatisfy(
            l ->
                assertThat(l)
                    .contains(" " + JvmFlags.HEAP_MAX + " ")
                    .contains(" " + JvmFlags.NATIVE + " ")
                    .contains(" " + JvmFlags.NO_ANALYTICS + " "));
  }

  @Test
  void scenarioParam_listsEveryTimedScenarioOfTheCatalogue() throws Exception {
    Param p = LoadedStore.class.getField("scenario").getAnnotation(Param.class);
    assertThat(p.value()).containsExactlyElementsOf(timedIds());
  }

  @Test
  void timed_otherKindOrUnknownId_isRefusedNamingTheTimedOnes() {
    assertThatThrownBy(() -> LoadedStore.timed("footprint"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a per-operation (timed) scenario")
        .hasMessageContaining("ycsb-a");
    assertThatThrownBy(() -> LoadedStore.timed("ycsb-z"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown scenario 'ycsb-z'");
    assertThat(LoadedStore.timed("durable-put").sync()).isTrue();
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
    Set<String> scenarios = new TreeSet<>();
    for (RunResult r : results) {
      String label = r.getParams().getBenchmark();
      ran.add(label.substring("io.kv4j.bench.jmh.".length()));
      if (label.endsWith("ScenarioBenchmarks.op")) {
        scenarios.add(r.getParams().getParam("scenario"));
      }
      assertThat(r.getPrimaryResult().getSampleCount()).as(label).isPositive();
    }
    assertThat(ran).containsExactlyInAnyOrderElementsOf(EXPECTED);
    assertThat(scenarios).containsExactlyInAnyOrderElementsOf(timedIds());
  }
}
