package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

class TckRunnerTest {
  @TempDir Path dir;

  @Test
  void run_memoryEngine_passesAndWritesTheReportWhereTold() throws Exception {
    AtomicLong seen = new AtomicLong();
    TckEnvironment env = TckEnvironment.builder().ops(200).manyKeys(2000).stressOps(200).build();
    TckRunner.Result r =
        TckRunner.forUri("memory:")
            .environment(env)
            .reportDir(dir.resolve("reports"))
            .childJvmOptions(List.of("-Dkv4j.test.child=1"))
            .listener(
                new TestExecutionListener() {
                  @Override
                  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                    if (id.isTest()) {
                      seen.incrementAndGet();
                    }
                  }
                })
            .run();
    assertThat(r.failures()).as("failures").isEmpty();
    assertThat(r.failed()).isZero();
    assertThat(r.passed()).as("rules passed").isGreaterThan(20);
    assertThat(r.found()).isEqualTo(r.passed() + r.skipped());
    assertThat(seen.get()).as("the listener saw every rule").isEqualTo(r.found());
    assertThat(r.environment()).isEqualTo(env);
    assertThat(r.report()).isEqualTo(dir.resolve("reports").resolve("UriTck.md"));
    String json = Files.readString(dir.resolve("reports/UriTck.json"), StandardCharsets.UTF_8);
    assertThat(json).contains("\"engine\": \"memory\"", "\"failed\": 0");
    assertThat(System.getProperty(UriTck.PROPERTY)).as("no global state is set").isNull();
  }

  /** Small enough for a quick run of the memory engine. */
  private static final TckEnvironment QUICK =
      TckEnvironment.builder().ops(200).manyKeys(2000).stressOps(200).build();

  /** Runs {@code run} with system properties set, then restores them. */
  private static <T> T withProperties(Map<String, String> properties, Supplier<T> run) {
    Map<String, String> before = new HashMap<>();
    properties.keySet().forEach(k -> before.put(k, System.getProperty(k)));
    properties.forEach(System::setProperty);
    try {
      return run.get();
    } finally {
      before.forEach(
          (k, v) -> {
            if (v == null) {
              System.clearProperty(k);
            } else {
              System.setProperty(k, v);
            }
          });
    }
  }

  /**
   * kv4j tck --seed 5 with -Dkv4j.tck.seed=7: the seed the caller set is the one the rules get. The
   * other properties hold values no rule could use, so a rule reading one would fail.
   */
  @Test
  void run_givenEnvironment_winsOverSystemProperties() {
    TckEnvironment mine = QUICK.toBuilder().seed(5).build();
    TckRunner.Result r =
        withProperties(
            Map.of(
                TckEnvironment.SEED, "7",
                TckEnvironment.OPS, "not-a-number",
                TckEnvironment.THREAD_TIMEOUT, "-1"),
            () -> TckRunner.forUri("memory:").environment(mine).reportDir(dir).run());
    assertThat(r.environment()).as("the environment the rules ran in").isEqualTo(mine);
    assertThat(r.environment().seed()).hasValue(5);
    assertThat(r.failures()).as("no rule read a system property").isEmpty();
    assertThat(r.passed()).isGreaterThan(20);
  }

  /** An environment without a seed keeps none: each rule its own, not the property's. */
  @Test
  void run_givenEnvironmentWithoutSeed_ignoresTheSeedProperty() {
    TckRunner.Result r =
        withProperties(
            Map.of(TckEnvironment.SEED, "not-a-seed"),
            () -> TckRunner.forUri("memory:").environment(QUICK).reportDir(dir).run());
    assertThat(r.environment().seed()).isEmpty();
    assertThat(r.failures())
        .as("no rule saw the property (its value is no seed, so one that did would fail)")
        .isEmpty();
    assertThat(r.passed()).isGreaterThan(20);
  }

  /** Given no environment, the run is the defaults with the kit's system properties: a replay. */
  @Test
  void run_noEnvironment_appliesSystemProperties() {
    Map<String, String> props = new HashMap<>(QUICK.toOverrides());
    props.put(TckEnvironment.SEED, "7");
    TckRunner.Result r =
        withProperties(props, () -> TckRunner.forUri("memory:").reportDir(dir).run());
    assertThat(r.environment()).isEqualTo(QUICK.toBuilder().seed(7).build());
    assertThat(r.failures()).isEmpty();
  }

  @Test
  void run_noEnvironmentAndABadProperty_failsNamingItBeforeAnyRule() {
    assertThatThrownBy(
            () ->
                withProperties(
                    Map.of(TckEnvironment.OPS, "many"),
                    () -> TckRunner.forUri("memory:").reportDir(dir).run()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kv4j.tck.ops must be a whole number, not 'many'");
    assertThat(dir.resolve("UriTck.progress")).as("no rule started").doesNotExist();
  }
}
