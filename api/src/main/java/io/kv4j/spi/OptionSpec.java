package io.kv4j.spi;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * One engine option: its name, type, default, unit and meaning, and the parser that validates a
 * value given as text (in a URI, a properties file or a builder). Engines declare their options as
 * constants and read them with {@link io.kv4j.StoreConfig#get(OptionSpec)}.
 *
 * @param <T> the parsed type
 */
public final class OptionSpec<T> {
  private final String name;
  private final String type;
  private final T defaultValue;
  private final String unit;
  private final String description;
  private final Function<String, T> parser;

  private OptionSpec(
      String name,
      String type,
      T defaultValue,
      String unit,
      String description,
      Function<String, T> parser) {
    if (!name.matches("[a-z][a-z0-9]*(-[a-z0-9]+)*")) {
      throw new IllegalArgumentException("option name must be kebab-case, got '" + name + "'");
    }
    this.name = name;
    this.type = type;
    this.defaultValue = defaultValue;
    this.unit = unit;
    this.description = Objects.requireNonNull(description, "description");
    this.parser = parser;
  }

  /**
   * A size in bytes. Accepts a plain number or a number with a binary suffix: {@code 4096}, {@code
   * 64KiB}, {@code 256MiB}, {@code 1GiB} (also {@code k}, {@code m}, {@code g}, {@code KB}, {@code
   * MB}, {@code GB}, all powers of 1024).
   *
   * @param name option name, kebab-case
   * @param defaultBytes default in bytes
   * @param min smallest accepted value
   * @param max largest accepted value
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<Long> size(
      String name, long defaultBytes, long min, long max, String description) {
    return new OptionSpec<>(
        name,
        "size",
        defaultBytes,
        "bytes",
        description,
        raw -> checkRange(name, raw, parseSize(name, raw), min, max));
  }

  /**
   * An integer.
   *
   * @param name option name, kebab-case
   * @param defaultValue default
   * @param min smallest accepted value
   * @param max largest accepted value
   * @param unit unit, such as {@code ms} or {@code threads}
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<Integer> integer(
      String name, int defaultValue, int min, int max, String unit, String description) {
    return new OptionSpec<>(
        name,
        "int",
        defaultValue,
        unit,
        description,
        raw -> (int) checkRange(name, raw, parseLong(name, raw, "an integer"), min, max));
  }

  /**
   * A long integer.
   *
   * @param name option name, kebab-case
   * @param defaultValue default
   * @param min smallest accepted value
   * @param max largest accepted value
   * @param unit unit, such as {@code ms}
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<Long> longInteger(
      String name, long defaultValue, long min, long max, String unit, String description) {
    return new OptionSpec<>(
        name,
        "long",
        defaultValue,
        unit,
        description,
        raw -> checkRange(name, raw, parseLong(name, raw, "an integer"), min, max));
  }

  /**
   * A decimal number.
   *
   * @param name option name, kebab-case
   * @param defaultValue default
   * @param min smallest accepted value
   * @param max largest accepted value
   * @param unit unit, such as {@code ratio}
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<Double> decimal(
      String name, double defaultValue, double min, double max, String unit, String description) {
    return new OptionSpec<>(
        name,
        "decimal",
        defaultValue,
        unit,
        description,
        raw -> {
          double v;
          try {
            v = Double.parseDouble(raw.trim());
          } catch (NumberFormatException e) {
            throw bad(name, raw, "a decimal number");
          }
          if (!(v >= min && v <= max)) {
            throw bad(name, raw, "a number between " + min + " and " + max);
          }
          return v;
        });
  }

  /**
   * A boolean: {@code true} or {@code false}, any case.
   *
   * @param name option name, kebab-case
   * @param defaultValue default
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<Boolean> bool(String name, boolean defaultValue, String description) {
    return new OptionSpec<>(
        name,
        "boolean",
        defaultValue,
        "",
        description,
        raw -> {
          String s = raw.trim().toLowerCase(Locale.ROOT);
          if (s.equals("true")) {
            return true;
          }
          if (s.equals("false")) {
            return false;
          }
          throw bad(name, raw, "true or false");
        });
  }

  /**
   * One of a fixed list of lowercase words.
   *
   * @param name option name, kebab-case
   * @param defaultValue default, one of {@code choices}
   * @param choices accepted values
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<String> choice(
      String name, String defaultValue, List<String> choices, String description) {
    List<String> valid = List.copyOf(choices);
    if (!valid.contains(defaultValue)) {
      throw new IllegalArgumentException("default '" + defaultValue + "' not in " + valid);
    }
    return new OptionSpec<>(
        name,
        "one of " + String.join("|", valid),
        defaultValue,
        "",
        description,
        raw -> {
          String s = raw.trim().toLowerCase(Locale.ROOT);
          if (!valid.contains(s)) {
            throw bad(name, raw, "one of " + String.join(", ", valid));
          }
          return s;
        });
  }

  /**
   * Free text, accepted as given.
   *
   * @param name option name, kebab-case
   * @param defaultValue default, may be empty
   * @param description what it does
   * @return the spec
   */
  public static OptionSpec<String> text(String name, String defaultValue, String description) {
    return new OptionSpec<>(
        name, "string", Objects.requireNonNull(defaultValue), "", description, raw -> raw);
  }

  /**
   * Parses and validates a value.
   *
   * @param raw the text
   * @return the parsed value
   * @throws IllegalArgumentException naming the option, the value and what is expected
   */
  public T parse(String raw) {
    Objects.requireNonNull(raw, name);
    return parser.apply(raw);
  }

  /**
   * The option name, kebab-case.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * The value type as shown to users: {@code size}, {@code int}, {@code boolean}, {@code one of
   * a|b}, ...
   *
   * @return the type
   */
  public String type() {
    return type;
  }

  /**
   * The default value.
   *
   * @return the default
   */
  public T defaultValue() {
    return defaultValue;
  }

  /**
   * The unit of the value, empty when it has none.
   *
   * @return the unit
   */
  public String unit() {
    return unit;
  }

  /**
   * What the option does.
   *
   * @return the description
   */
  public String description() {
    return description;
  }

  @Override
  public String toString() {
    return name
        + " ("
        + type
        + ", default "
        + defaultValue
        + (unit.isEmpty() ? "" : " " + unit)
        + ")";
  }

  private static long checkRange(String name, String raw, long v, long min, long max) {
    if (v < min || v > max) {
      throw bad(name, raw, "a value between " + min + " and " + max);
    }
    return v;
  }

  private static long parseLong(String name, String raw, String expected) {
    try {
      return Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw bad(name, raw, expected);
    }
  }

  private static long parseSize(String name, String raw) {
    String s = raw.trim();
    int i = 0;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    if (i == 0) {
      throw bad(name, raw, "a size in bytes such as 4096, 64KiB, 256MiB or 1GiB");
    }
    long shift;
    switch (s.substring(i).trim().toLowerCase(Locale.ROOT)) {
      case "", "b" -> shift = 0;
      case "k", "kb", "kib" -> shift = 10;
      case "m", "mb", "mib" -> shift = 20;
      case "g", "gb", "gib" -> shift = 30;
      case "t", "tb", "tib" -> shift = 40;
      default -> throw bad(name, raw, "a size in bytes such as 4096, 64KiB, 256MiB or 1GiB");
    }
    long n;
    try {
      n = Long.parseLong(s.substring(0, i));
    } catch (NumberFormatException e) {
      throw bad(name, raw, "a size that fits in 63 bits");
    }
    if (n > (Long.MAX_VALUE >> shift)) {
      throw bad(name, raw, "a size that fits in 63 bits");
    }
    return n << shift;
  }

  private static IllegalArgumentException bad(String name, String raw, String expected) {
    return new IllegalArgumentException(
        "option '" + name + "' has invalid value '" + raw + "': expected " + expected);
  }
}
