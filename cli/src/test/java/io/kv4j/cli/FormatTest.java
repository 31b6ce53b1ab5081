package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FormatTest {
  @Test
  void number_fractionsRoundedAndWholeNumbersGrouped() {
    assertThat(Format.number(1.4923076923076923)).isEqualTo("1.492");
    assertThat(Format.number(0.5)).isEqualTo("0.5");
    assertThat(Format.number(2.0)).isEqualTo("2");
    assertThat(Format.number(1234567L)).isEqualTo("1,234,567");
    assertThat(Format.number(12345.6789f)).isEqualTo("12345.679");
    assertThat(Format.number(Double.NaN)).isEqualTo("NaN");
  }

  @Test
  void resumeKey_printsPrintableKeysAsText() {
    assertThat(new Codec().format("user:42".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .isEqualTo("user:42");
    assertThat(new Codec().format(new byte[] {0, (byte) 0xff})).isEqualTo("0x00ff");
  }
}
