package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** An operation mix as the catalogue writes it. */
class MixTest {
  @Test
  void parse_stepsWithPercentsAndKeyCounts_roundTrip() {
    Mix m = Mix.parse("95% scan 1-100, 5% insert");
    assertThat(m.steps())
        .containsExactly(
            new Mix.Step(95, Mix.Operation.SCAN, 1, 100),
            new Mix.Step(5, Mix.Operation.INSERT, 0, 0));
    assertThat(m).hasToString("95% scan 1-100, 5% insert");
    assertThat(Mix.parse("100% multiget 16").steps().get(0).maxLength()).isEqualTo(16);
    assertThat(Mix.parse("50% read, 50% read-modify-write").has(Mix.Operation.READ_MODIFY_WRITE))
        .isTrue();
    assertThat(Mix.parse("  ")).isSameAs(Mix.NONE);
  }

  @Test
  void pick_theFirstStepWhoseRunningSumExceedsTheDraw() {
    Mix m = Mix.parse("95% read, 5% insert");
    assertThat(m.pick(0).operation()).isEqualTo(Mix.Operation.READ);
    assertThat(m.pick(94).operation()).isEqualTo(Mix.Operation.READ);
    assertThat(m.pick(95).operation()).isEqualTo(Mix.Operation.INSERT);
    assertThat(m.pick(99).operation()).isEqualTo(Mix.Operation.INSERT);
    assertThatThrownBy(() -> m.pick(100)).hasMessageContaining("draw must be 0..99, got 100");
  }

  @Test
  void parse_mistakes_sayWhat() {
    assertThatThrownBy(() -> Mix.parse("100% delete"))
        .hasMessageContaining("unknown operation 'delete'; valid: read, multiget");
    assertThatThrownBy(() -> Mix.parse("100% scan")).hasMessageContaining("scan needs a key count");
    assertThatThrownBy(() -> Mix.parse("100% read 5"))
        .hasMessageContaining("read takes no key count");
    assertThatThrownBy(() -> Mix.parse("read")).hasMessageContaining("'<percent>% <operation>");
    assertThatThrownBy(() -> Mix.parse("x% read")).hasMessageContaining("not a number: 'x'");
    assertThatThrownBy(() -> Mix.parse("60% read, 60% update")).hasMessageContaining("got 120");
    assertThatThrownBy(() -> Mix.parse("100% scan 9-3"))
        .hasMessageContaining("scan needs a key count");
  }
}
