package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * The rules are public default methods of the groups' {@code Tests} interfaces, so an engine's kit
 * can override one: the kit refuses to run such a class rather than report a rule it did not run.
 */
class OverriddenRuleTest {

  /** Replaces rule 7.1 with a test that always passes. */
  static final class ReplacesARule extends StoreTck {
    @Override
    protected StoreConfig config(Path directory, Durability durability) {
      return StoreConfig.builder("memory").durability(durability).build();
    }

    @Test
    @Override
    public void required_r7_1_killSyncKeepsAcknowledgedWrites() {}
  }

  /** Overrides rule 1.1 without {@code @Test}: JUnit would no longer find the rule at all. */
  static final class RemovesARule extends StoreTck {
    @Override
    protected StoreConfig config(Path directory, Durability durability) {
      return StoreConfig.builder("memory").durability(durability).build();
    }

    @Override
    public void required_r1_1_putThenGet() {}
  }

  private static void assertRefused(Class<?> kit, String rule) {
    EngineExecutionResults r =
        EngineTestKit.engine("junit-jupiter").selectors(selectClass(kit)).execute();
    assertThat(r.testEvents().started().count()).as("no rule of %s ran", kit).isZero();
    Throwable t =
        r.containerEvents().failed().stream()
            .findFirst()
            .orElseThrow(() -> new AssertionError(kit + " ran; it must be refused"))
            .getRequiredPayload(TestExecutionResult.class)
            .getThrowable()
            .orElseThrow();
    assertThat(t)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(kit.getName() + " overrides the kit's rule " + rule);
  }

  @Test
  void replacedRule_refusesTheWholeClass() {
    assertRefused(ReplacesARule.class, "required_r7_1_killSyncKeepsAcknowledgedWrites");
  }

  @Test
  void ruleOverriddenWithoutTest_refusesTheWholeClass() {
    assertRefused(RemovesARule.class, "required_r1_1_putThenGet");
  }
}
