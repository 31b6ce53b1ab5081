package io.kv4j.tck;

import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.PostDiscoveryFilter;

/**
 * Leaves out of a run the rules that a kit class's {@link TckRules} does not select (or, made by
 * {@link TckRunner#rules(String...)}, those of its selection). The kit's jar registers it with the
 * JUnit Platform launcher through {@code META-INF/services}; engine tests never use it directly.
 * Tests that are no rule of the kit, and kit classes without {@link TckRules}, pass unfiltered.
 */
public final class TckRuleFilter implements PostDiscoveryFilter {
  private final RuleSelection selection; // null: each class's TckRules

  /** Created by the launcher through {@code ServiceLoader}: filters by each class's TckRules. */
  public TckRuleFilter() {
    this(null);
  }

  TckRuleFilter(RuleSelection selection) {
    this.selection = selection;
  }

  @Override
  public FilterResult apply(TestDescriptor descriptor) {
    if (!(descriptor.getSource().orElse(null) instanceof MethodSource source)) {
      return FilterResult.included("not a test method");
    }
    Class<?> cls;
    try {
      cls = source.getJavaClass();
    } catch (RuntimeException e) { // a class the launcher can no longer load: not ours to judge
      return FilterResult.included("class not loadable here");
    }
    String rule = RuleSelection.ruleOf(source.getMethodName());
    if (rule == null || !StoreTck.class.isAssignableFrom(cls)) {
      return FilterResult.included("not a rule of the kit");
    }
    RuleSelection chosen;
    try {
      chosen = selection != null ? selection : RuleSelection.of(cls);
    } catch (IllegalArgumentException e) { // the kit fails the class before any rule, saying why
      return FilterResult.included("invalid selection");
    }
    if (chosen == null || chosen.selects(rule)) {
      return FilterResult.included("rule " + rule + " selected");
    }
    return FilterResult.excluded("rule " + rule + " not among the selected rules: " + chosen);
  }
}
