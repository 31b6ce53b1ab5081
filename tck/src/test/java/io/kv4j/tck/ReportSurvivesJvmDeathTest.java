package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.kv4j.tck.ref.Defect;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * An engine that kills the JVM in the middle of a rule leaves a report naming that rule (issue 28):
 * a child JVM runs three rules of the kit on the {@code ref} engine that halts the JVM on a value
 * over 8 MiB; rule 9.2 stores 16 MiB. The test then reads the child's report and progress file.
 */
class ReportSurvivesJvmDeathTest {

  /** The rules the child runs: two that pass, and 9.2, during which the JVM dies. */
  static final List<String> RULES =
      List.of(
          "required_r1_1_putThenGet",
          "required_r9_2_sixteenMiBValue",
          "required_r1_2_overwriteReplacesValue");

  /**
   * The child: runs {@link #RULES} of {@link Defect#HALTS_ON_HUGE_VALUE}; exits 0 only if the JVM
   * survived.
   *
   * @param args unused
   */
  public static void main(String[] args) {
    List<DiscoverySelector> selectors = new ArrayList<>();
    for (String name : RULES) {
      selectors.add(selectMethod(BrokenEnginesTest.Broken.class, name));
    }
    EngineTestKit.engine("junit-jupiter")
        .selectors(selectors.toArray(new DiscoverySelector[0]))
        .configurationParameter(BrokenEnginesTest.Broken.DEFECT, Defect.HALTS_ON_HUGE_VALUE.name())
        .execute();
    System.exit(0);
  }

  @Test
  void engineThatHaltsTheJvm_leavesAReportNamingTheRuleThatRan(@TempDir Path dir)
      throws IOException, InterruptedException {
    Path reports = dir.resolve("reports");
    try (ChildProcess c =
        ChildProcess.java(ReportSurvivesJvmDeathTest.class)
            .jvmOptions("-Xmx512m", "-Dkv4j.tck.reportDir=" + reports)
            .start()) {
      int exit = c.await(Duration.ofSeconds(300)); // fails with the child's state if it hangs
      assertThat(exit)
          .as("the engine halted the child JVM (exit %d): %s", Defect.HALT_STATUS, c.describe())
          .isEqualTo(Defect.HALT_STATUS);
    }

    String base = BrokenEnginesTest.Broken.class.getSimpleName();
    List<String> progress =
        Files.readAllLines(reports.resolve(base + ".progress"), StandardCharsets.UTF_8);
    assertThat(progress.get(progress.size() - 1))
        .as("the progress file's last line names the rule during which the JVM died")
        .startsWith("started r9.2 sixteenMiBValue");
    for (int i = 1; i < progress.size() - 1; i++) {
      if (progress.get(i).startsWith("started ")) {
        String rule = progress.get(i).split(" ")[1];
        assertThat(progress.get(i + 1))
            .as("a rule that ended before the JVM died has its result line: %s", progress)
            .startsWith("passed " + rule);
      }
    }

    List<String> md = Files.readAllLines(reports.resolve(base + ".md"), StandardCharsets.UTF_8);
    assertThat(md.get(md.size() - 1))
        .as("the markdown report's last line names the rule during which the JVM died")
        .startsWith("started r9.2 sixteenMiBValue")
        .contains("no result: the JVM died");
    assertThat(md)
        .as("the markdown report has 9.2's row, unfinished")
        .anyMatch(l -> l.startsWith("| r9.2 | required | sixteenMiBValue | unfinished |"));
    String json = Files.readString(reports.resolve(base + ".json"), StandardCharsets.UTF_8);
    assertThat(json)
        .as("the JSON report has 9.2 unfinished")
        .contains(
            "{\"rule\": \"r9.2\", \"level\": \"required\", \"name\": \"sixteenMiBValue\","
                + " \"status\": \"unfinished\"")
        .contains("\"unfinished\": 1,");
  }
}
