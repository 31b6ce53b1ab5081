package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ref.Defect;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The numbers the documents state — rules, groups, broken variants — are the kit's own: counted
 * from the {@code required_r*} methods of {@link StoreTck} and the {@link Defect} values, so the
 * documents cannot drift from the code.
 */
class CountsTest {
  private static final Path MODULE = Path.of("").toAbsolutePath();

  private static int rules() {
    Set<String> names = new TreeSet<>();
    for (Class<?> c = StoreTck.class; c != Object.class; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        if (m.getName().startsWith("required_r")) {
          names.add(m.getName());
        }
      }
    }
    return names.size();
  }

  private static int groups() {
    Set<String> groups = new TreeSet<>();
    for (Class<?> c = StoreTck.class; c != Object.class; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        Matcher x = Pattern.compile("required_r(\\d+)_.*").matcher(m.getName());
        if (x.matches()) {
          groups.add(x.group(1));
        }
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
    for (Class<?> c = StoreTck.class; c != Object.class; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        Matcher x = Pattern.compile("required_r(\\d+)_(\\d+)_.*").matcher(m.getName());
        if (x.matches()) {
          ids.add(x.group(1) + "." + x.group(2));
        }
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
    assertThat(number(spec, "run by (\\d+) tests")).as("tests in SPEC.md").isEqualTo(rules());
    assertThat(number(spec, "rules in (\\d+) groups")).as("groups in SPEC.md").isEqualTo(groups());
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
