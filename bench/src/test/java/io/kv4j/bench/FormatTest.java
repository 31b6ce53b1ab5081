package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** How numbers and strings look in every output. */
class FormatTest {
  @Test
  void micros_switchesUnitsAndPrecisionBySize() {
    assertThat(Format.micros(0)).isEqualTo("-");
    assertThat(Format.micros(3.1)).isEqualTo("3.10 µs");
    assertThat(Format.micros(21.4)).isEqualTo("21 µs");
    assertThat(Format.micros(9_999)).isEqualTo("9999 µs");
    assertThat(Format.micros(12_500)).isEqualTo("12.5 ms");
  }

  @Test
  void rate_thousandsSeparators_andTheRangeOfRounds() {
    assertThat(Format.rate(1_234_567.4)).isEqualTo("1,234,567");
    Result rounds =
        ReportTest.ok("e", "scan", "", 2_000)
            .with(0, 0, Map.of("ops-per-sec-min", 1_000.0, "ops-per-sec-max", 3_000.0));
    assertThat(Format.rate(rounds)).isEqualTo("2,000 (1,000–3,000)");
  }

  @Test
  void bytesAndMib_asTheReadmesWriteThem() {
    assertThat(Format.bytes(511)).isEqualTo("511 B");
    assertThat(Format.bytes(64 << 10)).isEqualTo("64 KiB");
    assertThat(Format.bytes(256 << 20)).isEqualTo("256 MiB");
    assertThat(Format.bytes((64 << 10) + 1)).isEqualTo("65,537 B");
    assertThat(Format.mib(3 << 19)).isEqualTo("1.5 MiB");
  }

  @Test
  void ratioSecondsNumber_dashForNaN() {
    assertThat(Format.ratio(1.256)).isEqualTo("1.26x");
    assertThat(Format.ratio(Double.NaN)).isEqualTo("-");
    assertThat(Format.seconds(120)).isEqualTo("120");
    assertThat(Format.seconds(0.05)).isEqualTo("0.050");
    assertThat(Format.number(Double.NaN, "%.1f")).isEqualTo("-");
  }

  @Test
  void json_numbersAndStrings() {
    assertThat(Format.jsonNumber(2)).isEqualTo("2");
    assertThat(Format.jsonNumber(0.125)).isEqualTo("0.125000");
    assertThat(Format.jsonNumber(Double.NaN)).isEqualTo("null");
    assertThat(Format.jsonNumber(Double.POSITIVE_INFINITY)).isEqualTo("null");
    assertThat(Format.str("a \"b\" \\ c\nd\u0001")).isEqualTo("\"a \\\"b\\\" \\\\ c\\nd\\u0001\"");
  }
}
