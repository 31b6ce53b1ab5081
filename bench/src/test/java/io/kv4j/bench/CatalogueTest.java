package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.bench.Scenario.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The scenario catalogue: the standard file, and what a changed file is checked for. */
class CatalogueTest {
  private static final Catalogue STANDARD = Catalogue.standard();

  /** The two scenarios every catalogue needs, then {@code extra}. */
  private static Catalogue parse(String extra) {
    return Catalogue.parse(
        "[fillrandom]\nkind = load\ndescription = d\nthreads = largest\n\n"
            + "[footprint]\nkind = footprint\ndescription = d\ntable = own\n"
            + "phases = after-load, after-update, after-fillbatch, after-fixed-updates\n\n"
            + extra);
  }

  @Test
  void standard_idsInReportOrder_longOnesOutOfTheDefaults() {
    assertThat(Catalogue.ids(STANDARD.all()))
        .containsExactly(
            "fillrandom",
            "fillbatch",
            "readrandom",
            "multiget",
            "ycsb-a",
            "ycsb-b",
            "ycsb-c",
            "ycsb-d",
            "ycsb-e",
            "ycsb-f",
            "overwrite",
            "scan",
            "single-op",
            "durable-put",
            "footprint",
            "churn",
            "churn-reads",
            "churn-scans",
            "scale");
    assertThat(Catalogue.ids(STANDARD.defaults()))
        .doesNotContain("churn", "churn-reads", "churn-scans", "scale")
        .contains("fillbatch", "footprint", "durable-put");
    assertThat(STANDARD.order("ycsb-a")).isLessThan(STANDARD.order("scan"));
    assertThat(STANDARD.order("open")).isEqualTo(Integer.MAX_VALUE);
    assertThat(STANDARD.ownTable("footprint")).isTrue();
    assertThat(STANDARD.ownTable("churn-reads")).isTrue();
    assertThat(STANDARD.ownTable("durable-put")).isFalse();
    assertThat(STANDARD.ownTable("open")).isFalse();
  }

  @Test
  void standard_valuesOfTheScenarios() {
    Scenario e = STANDARD.byId(" YCSB-E ");
    assertThat(e.kind()).isEqualTo(Kind.TIMED);
    assertThat(e.mix()).hasToString("95% scan 1-100, 5% insert");
    assertThat(e.distribution()).isEqualTo(Scenario.Distribution.ZIPFIAN);
    assertThat(e.needsOrderedScan()).isTrue();
    assertThat(e.threads().counts(List.of(1, 2, 8))).containsExactly(1, 2, 8);
    Scenario durable = STANDARD.byId("durable-put");
    assertThat(durable.freshStore()).isTrue();
    assertThat(durable.storeName()).isEqualTo("durable");
    assertThat(durable.durability(Durability.BUFFERED)).isEqualTo(Durability.SYNC);
    assertThat(STANDARD.byId("readrandom").durability(Durability.BUFFERED))
        .isEqualTo(Durability.BUFFERED);
    assertThat(STANDARD.load().threads().counts(List.of(1, 8, 2))).containsExactly(8);
    assertThat(STANDARD.byId("single-op").keysOption()).isEqualTo("--single-op-count");
    assertThat(STANDARD.byId("single-op").title("insert")).startsWith("Single inserts");
    assertThat(STANDARD.byId("scale").valueSizeOption()).isEqualTo("--scale-value-size");
    assertThat(STANDARD.byId("churn").phases()).containsExactly("uniform", "zipfian");
    assertThat(STANDARD.footprint().phases()).isEqualTo(Footprint.PHASES);
    for (Scenario s : STANDARD.ofKind(Kind.TIMED)) {
      assertThat(s.title("")).as(s.id()).isNotBlank();
      assertThat(s.mix().isEmpty()).as(s.id()).isFalse();
    }
  }

  @Test
  void byId_unknown_namesTheValidOnes() {
    assertThatThrownBy(() -> STANDARD.byId("ycsb-z"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown scenario 'ycsb-z'; valid: fillrandom, fillbatch");
  }

  @Test
  void parse_aNewTimedScenario_isDataAlone() {
    Catalogue c =
        parse(
            "[ycsb-g]\nkind = timed\ndescription = 70% read / 30% update, uniform\n"
                + "mix = 70% read, 30% update\ndistribution = uniform\n");
    Scenario g = c.byId("ycsb-g");
    assertThat(g.mix().steps()).hasSize(2);
    assertThat(g.onMainStore()).isTrue();
    assertThat(g.inDefaultSet()).isTrue();
    assertThat(g.threads().fixed()).isEqualTo(Scenario.Threads.EACH);
    assertThat(c.defaults()).extracting(Scenario::id).endsWith("ycsb-g");
  }

  @Test
  void parse_mistakes_areRefusedWithTheLine() {
    assertThatThrownBy(() -> parse("[x]\nkind = timed\ndescripton = d\n"))
        .hasMessageContaining("line 14: unknown field 'descripton'");
    assertThatThrownBy(() -> parse("[x]\nkind = fast\ndescription = d\n"))
        .hasMessageContaining("line 12: scenario 'x': unknown kind 'fast'");
    assertThatThrownBy(() -> parse("[x]\nkind = timed\n"))
        .hasMessageContaining("the field 'description' is missing");
    assertThatThrownBy(
            () ->
                parse(
                    "[x]\nkind = timed\ndescription = d\nmix = 90% read\ndistribution = uniform\n"))
        .hasMessageContaining("add up to 100, got 90");
    assertThatThrownBy(() -> parse("[x]\nkind = timed\ndescription = d\nmix = 100% read\n"))
        .hasMessageContaining("needs a distribution");
    assertThatThrownBy(() -> parse("[fillrandom]\nkind = load\ndescription = d\n"))
        .hasMessageContaining("'fillrandom' is defined twice");
    assertThatThrownBy(
            () -> parse("[x]\nkind = single-op\ndescription = d\nstore = fresh\nthreads = 1\n"))
        .hasMessageContaining("a single-op scenario has the phases insert, read");
    assertThatThrownBy(
            () ->
                parse(
                    "[x]\nkind = timed\ndescription = d\nmix = 100% update\n"
                        + "distribution = uniform\ndurability = sync\n"))
        .hasMessageContaining("the main store holds --keys keys with the run's durability");
    assertThatThrownBy(
            () ->
                parse(
                    "[x]\nkind = timed\ndescription = d\nmix = 100% read\ndistribution = uniform\n"
                        + "value-size = --scale-value-size\n"))
        .hasMessageContaining("only a scale scenario takes another value size");
    assertThatThrownBy(() -> Catalogue.parse("[x]\nkind = timed\n= y\n"))
        .hasMessageContaining("line 3: expected '[id]' or 'field = value'");
    assertThatThrownBy(() -> Catalogue.parse("# nothing\n"))
        .hasMessageContaining("exactly one scenario of kind load");
  }
}
