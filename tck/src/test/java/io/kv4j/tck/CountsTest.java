package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kv4j.tck.ref.Defect;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The numbers the documents state — rules, groups, broken variants — are the kit's own: counted
 * from the {@code required_r*} tests JUnit discovers in a kit and the {@link Defect} values, so the
 * documents cannot drift from the code.
 */
class CountsTest {
  private static final Path MODULE = Path.of("").toAbsolutePath();

  /**
   * The rule tests JUnit discovers in a kit class, by method name, in discovery order: what a run
   * of that class holds.
   */
  private static List<String> discovered(Class<?> kit) {
    TestPlan plan =
        LauncherFactory.create()
            .discover(
                LauncherDiscoveryRequestBuilder.request().selectors(selectClass(kit)).build());
    List<String> names = new ArrayList<>();
    for (TestIdentifier root : plan.getRoots()) {
      for (TestIdentifier id : plan.getDescendants(root)) {
        if (id.isTest() && id.getSource().orElse(null) instanceof MethodSource m) {
          names.add(m.getMethodName());
        }
      }
    }
    return names;
  }

  private static Set<String> rules() {
    return new TreeSet<>(discovered(MemoryTckTest.class));
  }

  private static int groups() {
    Set<String> groups = new TreeSet<>();
    for (String rule : rules()) {
      Matcher x = Pattern.compile("required_r(\\d+)_.*").matcher(rule);
      if (x.matches()) {
        groups.add(x.group(1));
      }
    }
    return groups.size();
  }

  private static int brokenVariants() {
    return Defect.values().length - 1; // NONE is the control
  }

  private static int number(Path file, String regex) throws IOException {
    String text = Files.readString(file).replaceAll("\\s+", " ");
    Matcher x = Pattern.compile(regex).matcher(text);
    assertThat(x.find()).as("%s states '%s'", file, regex).isTrue();
    return Integer.parseInt(x.group(1));
  }

  private static Set<String> ruleIds() {
    Set<String> ids = new TreeSet<>();
    for (String rule : rules()) {
      Matcher x = Pattern.compile("required_r(\\d+)_(\\d+)_.*").matcher(rule);
      if (x.matches()) {
        ids.add(x.group(1) + "." + x.group(2));
      }
    }
    return ids;
  }

  private static Set<String> specIds() throws IOException {
    Set<String> ids = new TreeSet<>();
    Matcher x =
        Pattern.compile("(?m)^- \\*\\*(\\d+\\.\\d+)\\*\\*")
            .matcher(Files.readString(MODULE.resolve("SPEC.md")));
    while (x.find()) {
      ids.add(x.group(1));
    }
    return ids;
  }

  @Test
  void specStatesTheRuleAndGroupCounts() throws IOException {
    Path spec = MODULE.resolve("SPEC.md");
    Set<String> listed = specIds();
    assertThat(ruleIds())
        .as("every rule listed in SPEC.md has its test, every test its SPEC line")
        .isEqualTo(listed);
    assertThat(number(spec, "There are (\\d+) numbered rules"))
        .as("numbered rules in SPEC.md")
        .isEqualTo(listed.size());
    assertThat(number(spec, "run by (\\d+) tests"))
        .as("tests in SPEC.md")
        .isEqualTo(rules().size());
    assertThat(number(spec, "rules in (\\d+) groups")).as("groups in SPEC.md").isEqualTo(groups());
  }

  @Test
  void everyKit_discoversEveryRuleOnce() {
    List<String> memory = discovered(MemoryTckTest.class);
    assertThat(memory).as("no rule is discovered twice").doesNotHaveDuplicates();
    assertThat(memory).as("every rule of SPEC.md").hasSize(rules().size());
    assertThat(discovered(UriTck.class))
        .as("TckRunner's kit (UriTck) holds the same rules")
        .containsExactlyInAnyOrderElementsOf(memory);
    assertThat(discovered(BrokenEnginesTest.Broken.class))
        .as("the broken engines' kit holds the same rules")
        .containsExactlyInAnyOrderElementsOf(memory);
  }

  @Test
  void readmesStateTheBrokenVariantAndRuleCounts() throws IOException {
    assertThat(number(MODULE.resolve("README.md"), "and (\\d+) deliberately broken variants"))
        .as("broken variants in tck/README.md")
        .isEqualTo(brokenVariants());
    Path root = MODULE.resolveSibling("README.md");
    assertThat(number(root, "(\\d+) numbered rules"))
        .as("rules in README.md")
        .isEqualTo(specIds().size());
    assertThat(number(root, "proven against (\\d+) deliberately broken engines"))
        .as("broken engines in README.md")
        .isEqualTo(brokenVariants());
  }
}
