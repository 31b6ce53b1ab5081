package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The report's own promises: scopes for every rule, numeric order, failures told apart. */
class TckReportTest {

  @Test
  void scopes_everyRuleOfSpecHasOne_andTheKitCarriesThem() throws IOException {
    String spec = Files.readString(Path.of("SPEC.md"));
    TreeSet<String> ids = new TreeSet<>();
    Matcher x = Pattern.compile("(?m)^- \\*\\*(\\d+\\.\\d+)\\*\\*").matcher(spec);
    while (x.find()) {
      ids.add(x.group(1));
    }
    Map<String, String> scopes = TckReport.scopes(spec);
    assertThat(new TreeSet<>(scopes.keySet()))
        .as("every rule of SPEC.md states its scope (a '*Scope:*' in its item)")
        .isEqualTo(ids);
    assertThat(scopes.values())
        .as("no scope is empty or runs into the next item")
        .allSatisfy(s -> assertThat(s).isNotBlank().doesNotContain("- **"));
    assertThat(TckReport.scopes())
        .as("the kit's jar carries SPEC.md, so the report gives the same scopes")
        .isEqualTo(scopes);
  }

  @Test
  void markdown_listsRulesInNumericOrder_andAnUnfinishedRuleLast() {
    TckReport.Outcome unfinished =
        new TckReport.Outcome("7.1", "required", "kill", TckReport.UNFINISHED, "started", "s");
    List<TckReport.Outcome> rows =
        List.of(
            new TckReport.Outcome("1.9", "required", "nine", "passed", null, "a"),
            new TckReport.Outcome("1.10", "required", "ten", "failed", "[1.10] x", "b"),
            unfinished);
    String md = TckReport.markdown("ref", TckReportTest.class, rows, unfinished);
    assertThat(md.indexOf("| r1.9 |"))
        .as("1.9 before 1.10")
        .isLessThan(md.indexOf("| r1.10 |"))
        .isPositive();
    assertThat(md)
        .as("the scope column")
        .contains("| r1.10 | required | ten | failed | [1.10] x | b |");
    String[] lines = md.strip().split("\n");
    assertThat(lines[lines.length - 1])
        .as("the last line names the rule that was running")
        .isEqualTo("started r7.1 kill (started)");
    assertThat(TckReport.json("ref", TckReportTest.class, rows))
        .as("JSON counts the unfinished rule and carries the scopes")
        .contains("\"unfinished\": 1,")
        .contains("\"scope\": \"b\"");
  }

  @Test
  void isKitCheck_tellsAFailedCheckFromTheEngine() {
    AssertionError kit = new AssertionError("x");
    kit.setStackTrace(
        new StackTraceElement[] {new StackTraceElement("io.kv4j.tck.OrderRules", "r", "f", 1)});
    AssertionError engine = new AssertionError("y");
    engine.setStackTrace(
        new StackTraceElement[] {
          new StackTraceElement("java.util.Objects", "x", "f", 1),
          new StackTraceElement("io.kv4j.tck.ref.RefStore", "get", "f", 1)
        });
    assertThat(TckReport.isKitCheck(kit)).as("an assertion of a rule class").isTrue();
    assertThat(TckReport.isKitCheck(engine)).as("an engine's own assert").isFalse();
    assertThat(TckReport.isKitCheck(new IllegalStateException())).as("an exception").isFalse();
  }
}
