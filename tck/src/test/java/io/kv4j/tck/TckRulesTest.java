package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * A kit class runs a subset of the rules with {@link TckRules} (through the launcher's
 * auto-registered {@link TckRuleFilter}), {@link TckRunner#rules} does the same from code, and
 * {@link ServerTck#dropNamespace} is called after each rule for each directory it configured.
 */
class TckRulesTest {
  @TempDir Path reports;

  /** Directories handed to dropNamespace, by the kit class that got them. */
  static final Map<Class<?>, ConcurrentLinkedQueue<Path>> DROPPED = new ConcurrentHashMap<>();

  /** The memory engine as a server engine, recording what the kit asks it to drop. */
  abstract static class Recording extends ServerTck {
    @Override
    protected StoreConfig config(Path directory, Durability durability) {
      return StoreConfig.builder("memory").durability(durability).build();
    }

    @Override
    protected void dropNamespace(Path directory) throws Exception {
      DROPPED.computeIfAbsent(getClass(), k -> new ConcurrentLinkedQueue<>()).add(directory);
    }
  }

  @TckRules({"1.1", "1.3", "2"})
  static final class Subset extends Recording {}

  @TckRules("1.1")
  static final class FailingDrop extends ServerTck {
    @Override
    protected StoreConfig config(Path directory, Durability durability) {
      return StoreConfig.builder("memory").durability(durability).build();
    }

    @Override
    protected void dropNamespace(Path directory) throws IOException {
      throw new IOException("server gone while dropping " + directory);
    }
  }

  @TckRules({"1.1", "4.99"})
  static final class UnknownRule extends Recording {}

  /** What one launcher run of a class did: rules started, and failures by display name. */
  private record Run(List<String> rules, Map<String, Throwable> failures) {}

  private Run launch(Class<?> kit) {
    List<String> rules = new ArrayList<>();
    Map<String, Throwable> failures = new ConcurrentHashMap<>();
    TestExecutionListener listener =
        new TestExecutionListener() {
          @Override
          public void executionStarted(TestIdentifier id) {
            if (id.isTest() && id.getSource().orElse(null) instanceof MethodSource m) {
              rules.add(RuleSelection.ruleOf(m.getMethodName()));
            }
          }

          @Override
          public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            if (result.getStatus() == TestExecutionResult.Status.FAILED) {
              failures.put(id.getDisplayName(), result.getThrowable().orElseThrow());
            }
          }
        };
    LauncherFactory.create()
        .execute(
            LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(kit))
                .configurationParameter(TckReport.REPORT_DIR, reports.toString())
                .build(),
            listener);
    return new Run(rules, failures);
  }

  /** The rules of a group, as the kit declares them. */
  private static List<String> group(int g) {
    TreeSet<String> rules = new TreeSet<>();
    for (Method m : StoreTck.class.getMethods()) {
      String r = RuleSelection.ruleOf(m.getName());
      if (r != null && r.startsWith(g + ".")) {
        rules.add(r);
      }
    }
    return new ArrayList<>(rules);
  }

  @Test
  void tckRules_runsOnlyTheSelectedRulesAndGroups() {
    Run run = launch(Subset.class);
    List<String> expected = new ArrayList<>(List.of("1.1", "1.3"));
    expected.addAll(group(2));
    assertThat(group(2)).as("group 2 has rules").isNotEmpty();
    assertThat(run.failures()).as("failures").isEmpty();
    assertThat(run.rules()).as("rules run").containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void serverTck_dropsEachRulesDirectoriesAfterTheRule() {
    DROPPED.remove(Subset.class);
    Run run = launch(Subset.class);
    List<Path> dropped =
        new ArrayList<>(DROPPED.getOrDefault(Subset.class, new ConcurrentLinkedQueue<>()));
    // Each rule has its own temporary directory, whose store directory it configures.
    assertThat(dropped.stream().filter(d -> d.endsWith("store")).map(Path::getParent).distinct())
        .as("one rule directory per rule run, in %s", dropped)
        .hasSize(run.rules().size());
  }

  @Test
  void serverTck_dropThatFails_failsTheRuleWithItsException() {
    Run run = launch(FailingDrop.class);
    assertThat(run.rules()).containsExactly("1.1");
    assertThat(run.failures().values())
        .singleElement()
        .satisfies(
            t ->
                assertThat(t)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("server gone while dropping"));
  }

  @Test
  void tckRules_namingNoRule_failsTheClassBeforeAnyRule() {
    Run run = launch(UnknownRule.class);
    assertThat(run.rules()).as("rules run").isEmpty();
    assertThat(run.failures().values())
        .singleElement()
        .satisfies(
            t ->
                assertThat(t)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("[4.99]"));
  }

  @Test
  void tckRunnerRules_runsOnlyThoseRules() {
    TckRunner.Result r =
        TckRunner.forUri("memory:")
            .environment(TckEnvironment.builder().ops(200).stressOps(50).build())
            .reportDir(reports)
            .rules("1.1", "2")
            .run();
    assertThat(r.failures()).isEmpty();
    assertThat(r.found()).as("rules found").isEqualTo(1 + group(2).size());
  }

  @Test
  void tckRunnerRules_malformedOrUnknown_refused() {
    TckRunner runner = TckRunner.forUri("memory:");
    assertThatThrownBy(() -> runner.rules("4.x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("4.x");
    assertThatThrownBy(() -> runner.rules("99"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[99]");
    assertThatThrownBy(runner::rules).isInstanceOf(IllegalArgumentException.class);
  }
}
