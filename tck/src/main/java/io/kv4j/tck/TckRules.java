package io.kv4j.tck;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs only some rules of a {@link StoreTck} subclass: a subset a slow engine (a remote server, a
 * secured transport) runs beside a class that runs the whole kit. The rules not selected are left
 * out of the run and of its report, as if the kit did not have them; the selected ones run and are
 * reported as in a full run, skips included.
 *
 * <pre>{@code
 * @TckRules({"1.1", "4.6", "7.1", "13"}) // three rules and the whole of group 13
 * class MyEngineSecureTckTest extends ServerTck { ... }
 * }</pre>
 *
 * <p>Each entry is a rule number of {@code tck/SPEC.md} ({@code "4.6"}) or a group number ({@code
 * "13"}, every rule of the group). An entry that names no rule of the kit fails the class before
 * any rule runs, so a renumbered or mistyped rule is not silently dropped.
 *
 * <p>The rules are left out by a JUnit Platform {@code PostDiscoveryFilter} ({@link TckRuleFilter})
 * that the kit's jar registers with {@code ServiceLoader}, so it works in any launcher (Maven
 * Surefire, Gradle, an IDE) that reads the jar's {@code META-INF/services}. Run from code, {@link
 * TckRunner#rules(String...)} selects rules the same way.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface TckRules {
  /**
   * The rules to run.
   *
   * @return rule numbers ({@code "4.6"}) or group numbers ({@code "13"})
   */
  String[] value();
}
