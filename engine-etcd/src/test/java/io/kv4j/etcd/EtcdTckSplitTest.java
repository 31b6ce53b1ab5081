package io.kv4j.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.StoreTck;
import io.kv4j.tck.TckRules;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link EtcdTckTest} and {@link EtcdLifecycleTckTest} split the kit by group: together they must
 * select every group of it, each once, so a group added to the kit runs on etcd (this fails until
 * one of them names it) and none runs twice.
 */
class EtcdTckSplitTest {
  private static final Pattern RULE = Pattern.compile("(?:required|optional)_r(\\d+)_\\d+_\\w+");

  @Test
  void theTwoKitClasses_selectEveryGroupOfTheKitOnce() {
    Set<Integer> kit = new TreeSet<>();
    for (Method m : StoreTck.class.getMethods()) {
      Matcher r = RULE.matcher(m.getName());
      if (r.matches()) {
        kit.add(Integer.parseInt(r.group(1)));
      }
    }
    List<Integer> selected = new ArrayList<>();
    for (Class<?> c : List.of(EtcdTckTest.class, EtcdLifecycleTckTest.class)) {
      for (String entry : c.getAnnotation(TckRules.class).value()) {
        assertThat(entry).as("%s selects whole groups only", c.getSimpleName()).matches("\\d+");
        selected.add(Integer.parseInt(entry));
      }
    }
    assertThat(kit).as("the kit's groups").hasSizeGreaterThanOrEqualTo(19);
    assertThat(selected)
        .as("the groups the two classes select, together")
        .containsExactlyInAnyOrderElementsOf(kit);
  }
}
