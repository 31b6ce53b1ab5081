package io.kv4j.tck;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A set of rules chosen by number ({@code "4.6"}) or by group ({@code "13"}): what {@link TckRules}
 * and {@link TckRunner#rules(String...)} hold.
 */
final class RuleSelection {
  private static final Pattern ENTRY = Pattern.compile("\\d+(\\.\\d+)?");
  private static final Pattern RULE = Pattern.compile("(?:required|optional)_r(\\d+)_(\\d+)_\\w+");

  private final Set<String> entries;

  private RuleSelection(Set<String> entries) {
    this.entries = entries;
  }

  /**
   * A selection of these entries.
   *
   * @throws IllegalArgumentException if there are none, or one is neither {@code "g"} nor {@code
   *     "g.n"}
   */
  static RuleSelection of(String... entries) {
    Set<String> set = new LinkedHashSet<>();
    for (String e : entries) {
      if (e == null || !ENTRY.matcher(e).matches()) {
        throw new IllegalArgumentException(
            "not a rule or group number: '" + e + "' (expected e.g. \"4.6\" or \"13\")");
      }
      set.add(e);
    }
    if (set.isEmpty()) {
      throw new IllegalArgumentException("no rule selected (expected e.g. \"4.6\" or \"13\")");
    }
    return new RuleSelection(set);
  }

  /** The selection a kit class carries in {@link TckRules}, or null for every rule. */
  static RuleSelection of(Class<?> kit) {
    TckRules r = kit.getAnnotation(TckRules.class);
    return r == null ? null : of(r.value());
  }

  /** The rule a test method runs ({@code "4.6"}), or null if the method is no rule. */
  static String ruleOf(String methodName) {
    Matcher m = RULE.matcher(methodName);
    return m.matches() ? m.group(1) + "." + m.group(2) : null;
  }

  /** Whether the rule (e.g. {@code "4.6"}) is selected: named, or its group is. */
  boolean selects(String rule) {
    return entries.contains(rule) || entries.contains(rule.substring(0, rule.indexOf('.')));
  }

  /**
   * Checks that each entry names at least one rule of a kit class.
   *
   * @throws IllegalArgumentException naming the entries that select nothing
   */
  void check(Class<?> kit) {
    Set<String> rules = new LinkedHashSet<>();
    for (Method m : kit.getMethods()) {
      String r = ruleOf(m.getName());
      if (r != null) {
        rules.add(r);
      }
    }
    List<String> unknown = new ArrayList<>();
    for (String e : entries) {
      boolean found =
          e.contains(".") ? rules.contains(e) : rules.stream().anyMatch(r -> r.startsWith(e + "."));
      if (!found) {
        unknown.add(e);
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          kit.getName()
              + " selects rules the kit does not have: "
              + unknown
              + " (rule numbers are those of tck/SPEC.md)");
    }
  }

  @Override
  public String toString() {
    return String.join(", ", entries);
  }
}
