package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TckEnvironmentTest {

  @Test
  void defaults_areTheDocumentedOnes() {
    TckEnvironment e = TckEnvironment.defaults();
    assertThat(e.ops()).isEqualTo(3000);
    assertThat(e.threads()).isEqualTo(4);
    assertThat(e.crashRounds()).isEqualTo(2);
    assertThat(e.manyKeys()).isEqualTo(100_000);
    assertThat(e.stressThreads()).isEqualTo(8);
    assertThat(e.stressOps()).isEqualTo(2000);
    assertThat(e.seed()).isEmpty();
    assertThat(e.threadTimeout()).isEqualTo(Duration.ofSeconds(600));
    assertThat(e.ruleTimeout()).isEqualTo(Duration.ofSeconds(1800));
    assertThat(e.childTimeout()).isEqualTo(Duration.ofSeconds(300));
    assertThat(e.dataLivesInLocationFiles()).isTrue();
  }

  @Test
  void builder_invalidValues_areRefusedNamingTheSetting() {
    assertThatThrownBy(() -> TckEnvironment.builder().ops(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kv4j.tck.ops");
    assertThatThrownBy(() -> TckEnvironment.builder().ruleTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kv4j.tck.ruleTimeoutSeconds");
    assertThatThrownBy(() -> TckEnvironment.builder().threadTimeout(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void overrides_winOverTheEnvironment_andBlankIsNone() {
    TckEnvironment mine = TckEnvironment.builder().ops(10).seed(5).build();
    Map<String, String> props =
        Map.of("kv4j.tck.ops", "77", "kv4j.tck.seed", " ", "kv4j.tck.childTimeoutSeconds", "9");
    TckEnvironment e = mine.withOverrides(props::get);
    assertThat(e.ops()).isEqualTo(77);
    assertThat(e.seed()).hasValue(5);
    assertThat(e.childTimeout()).isEqualTo(Duration.ofSeconds(9));
    assertThat(e.threads()).isEqualTo(4);
    assertThat(mine.ops()).as("immutable").isEqualTo(10);
  }

  @Test
  void overrides_badValue_namesTheOverride() {
    assertThatThrownBy(
            () -> TckEnvironment.defaults().withOverrides(Map.of("kv4j.tck.threads", "many")::get))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kv4j.tck.threads")
        .hasMessageContaining("many");
    assertThatThrownBy(
            () ->
                TckEnvironment.defaults()
                    .withOverrides(Map.of("kv4j.tck.dataLivesInLocationFiles", "no")::get))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("true or false");
  }

  @Test
  void toOverrides_reproducesTheEnvironment() {
    TckEnvironment e =
        TckEnvironment.builder()
            .ops(11)
            .threads(3)
            .seed(-4)
            .ruleTimeout(Duration.ofSeconds(12))
            .dataLivesInLocationFiles(false)
            .build();
    assertThat(TckEnvironment.defaults().withOverrides(e.toOverrides()::get)).isEqualTo(e);
    assertThat(e.toBuilder().build()).isEqualTo(e).hasSameHashCodeAs(e);
    assertThat(e.toBuilder().noSeed().build().seed()).isEmpty();
  }
}
