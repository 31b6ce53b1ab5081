package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.StoreIOException;
import io.kv4j.tck.ref.Defect;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;

/**
 * A randomised or concurrent rule that meets an exception from the engine (not a failed assertion)
 * says where: the seed or thread, the operation's index and the operation, with the engine's
 * exception kept as the cause.
 */
class FailureContextTest {

  /** Runs a rule on the engine whose 20th write of each opened store throws; seed 123. */
  private static Throwable failure(String method) {
    var failed =
        BrokenEnginesTest.execute(Defect.WRITE_FAILS, method, Map.of(TckEnvironment.SEED, "123"))
            .failed()
            .stream()
            .toList();
    assertThat(failed).as("%s fails on an engine whose 20th write throws", method).hasSize(1);
    return failed.get(0).getRequiredPayload(TestExecutionResult.class).getThrowable().orElseThrow();
  }

  private static Throwable rootCause(Throwable t) {
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  @Test
  void modelRule_engineThrows_namesSeedOperationAndKeepsTheCause() {
    Throwable t = failure("required_r11_1_randomOperationsMatchModel");
    Matcher m =
        Pattern.compile(
                "^\\[11\\.1\\] seed=123 op #(\\d+) \\((put key=[0-9a-f]+|delete key=[0-9a-f]+|batch"
                    + " of \\d+)\\): engine threw StoreIOException: engine 'ref': cannot append to"
                    + " .*No space left on device \\(write #20\\) \\(replay with"
                    + " -Dkv4j.tck.seed=123\\)$")
            .matcher(t.getMessage());
    assertThat(m.find()).as("message: %s", t.getMessage()).isTrue();
    assertThat(t.getCause()).isInstanceOf(StoreIOException.class);
    // The seed replays: the same operation fails again (in another temporary directory).
    Throwable again = failure("required_r11_1_randomOperationsMatchModel");
    assertThat(again.getMessage()).startsWith("[11.1] seed=123 op #" + m.group(1) + " (");
  }

  @Test
  void concurrencyRule_engineThrows_namesThreadOperationAndKeepsTheCause() {
    Throwable t = failure("required_r8_8_manyWritersMatchModel");
    assertThat(t.getMessage())
        .matches(
            "(?s)^\\[8\\.8\\] 1 thread\\(s\\) failed; the first: thread \\d+ op #\\d+ \\((put key"
                + " \\d+|delete key \\d+|batch of \\d+ from key \\d+)\\): engine threw"
                + " StoreIOException: engine 'ref': cannot append to .*\\(write #20\\)$");
    assertThat(rootCause(t)).hasMessage("No space left on device");
    assertThat(t.getCause().getCause()).isInstanceOf(StoreIOException.class);
  }
}
