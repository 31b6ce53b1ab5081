package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class OptionSpecTest {
  private final OptionSpec<Long> size =
      OptionSpec.size("segment-size", 1 << 20, 4096, 1L << 31, "d");

  @Test
  void size_acceptsBinarySuffixes() {
    assertThat(size.parse("4096")).isEqualTo(4096);
    assertThat(size.parse("64KiB")).isEqualTo(64 << 10);
    assertThat(size.parse("256MiB")).isEqualTo(256L << 20);
    assertThat(size.parse("1g")).isEqualTo(1L << 30);
    assertThat(size.parse(" 2 MB ")).isEqualTo(2L << 20);
  }

  @Test
  void size_outOfRange_namesKeyValueAndRange() {
    assertThatThrownBy(() -> size.parse("1KiB"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'segment-size'")
        .hasMessageContaining("'1KiB'")
        .hasMessageContaining("between 4096 and 2147483648");
  }

  @Test
  void size_garbage_isRejected() {
    assertThatThrownBy(() -> size.parse("lots")).hasMessageContaining("such as 4096");
    assertThatThrownBy(() -> size.parse("12XB")).hasMessageContaining("such as 4096");
    assertThatThrownBy(() -> size.parse("99999999999999999999")).hasMessageContaining("63 bits");
    assertThatThrownBy(() -> size.parse("9999999999999T")).hasMessageContaining("63 bits");
  }

  @Test
  void integer_bool_choice_decimal_parse() {
    assertThat(OptionSpec.integer("threads", 2, 1, 8, "threads", "d").parse("4")).isEqualTo(4);
    assertThatThrownBy(() -> OptionSpec.integer("threads", 2, 1, 8, "threads", "d").parse("x"))
        .hasMessageContaining("an integer");
    assertThat(OptionSpec.bool("verify", true, "d").parse("FALSE")).isFalse();
    assertThatThrownBy(() -> OptionSpec.bool("verify", true, "d").parse("no"))
        .hasMessageContaining("true or false");
    OptionSpec<String> c = OptionSpec.choice("compression", "lz4", List.of("none", "lz4"), "d");
    assertThat(c.parse("NONE")).isEqualTo("none");
    assertThatThrownBy(() -> c.parse("gzip")).hasMessageContaining("one of none, lz4");
    assertThat(OptionSpec.decimal("ratio", 0.5, 0, 1, "ratio", "d").parse("0.25")).isEqualTo(0.25);
    assertThatThrownBy(() -> OptionSpec.decimal("ratio", 0.5, 0, 1, "ratio", "d").parse("NaN"))
        .hasMessageContaining("between");
  }

  @Test
  void name_mustBeKebabCase() {
    assertThatThrownBy(() -> OptionSpec.bool("Bad_Name", true, "d"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void choice_defaultMustBeAChoice() {
    assertThatThrownBy(() -> OptionSpec.choice("x", "c", List.of("a", "b"), "d"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void toString_showsTypeDefaultAndUnit() {
    assertThat(size.toString()).isEqualTo("segment-size (size, default 1048576 bytes)");
    assertThat(size.unit()).isEqualTo("bytes");
    assertThat(size.type()).isEqualTo("size");
  }
}
