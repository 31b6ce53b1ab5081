package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
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
    assertThat(r.environment()).isEqualTo(env.withOverrides(System::getProperty));
    assertThat(r.report()).isEqualTo(dir.resolve("reports").resolve("UriTck.md"));
    String json = Files.readString(dir.resolve("reports/UriTck.json"), StandardCharsets.UTF_8);
    assertThat(json).contains("\"engine\": \"memory\"", "\"failed\": 0");
    assertThat(System.getProperty(UriTck.PROPERTY)).as("no global state is set").isNull();
  }
}
