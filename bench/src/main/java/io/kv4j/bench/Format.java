package io.kv4j.bench;

import java.util.Locale;

/** How numbers and strings look in every output: tables, progress lines, CSV and JSON. */
final class Format {
  private Format() {}

  /**
   * A latency: {@code 3.10 µs}, {@code 21 µs}, {@code 12.5 ms}; {@code -} for 0.
   *
   * @param us microseconds
   * @return the text
   */
  static String micros(double us) {
    if (us == 0) {
      return "-";
    }
    if (us < 10) {
      return String.format(Locale.ROOT, "%.2f µs", us);
    }
    if (us < 10_000) {
      return String.format(Locale.ROOT, "%.0f µs", us);
    }
    return String.format(Locale.ROOT, "%.1f ms", us / 1000);
  }

  /**
   * A rate with thousands separators: {@code 123,456}.
   *
   * @param ops operations per second
   * @return the text
   */
  static String rate(double ops) {
    return String.format(Locale.ROOT, "%,.0f", ops);
  }

  /**
   * A row's ops/s; with {@code --rounds}, the median window and the range of the windows.
   *
   * @param r the row
   * @return such as {@code 2,000 (1,000–3,000)}
   */
  static String rate(Result r) {
    double lo = r.figure("ops-per-sec-min");
    double hi = r.figure("ops-per-sec-max");
    if (Double.isNaN(lo) || Double.isNaN(hi)) {
      return rate(r.opsPerSec());
    }
    return rate(r.opsPerSec()) + " (" + rate(lo) + "–" + rate(hi) + ")";
  }

  /**
   * A percent without needless decimals: {@code 95}, {@code 33.3333}, never {@code 95.0} or a
   * rounding tail such as {@code 94.99999999999999}.
   *
   * @param pct the percent
   * @return the text, without the sign
   */
  static String percent(double pct) {
    double whole = Math.rint(pct);
    if (Math.abs(pct - whole) < 1e-7) {
      return String.format(Locale.ROOT, "%.0f", whole);
    }
    return new java.math.BigDecimal(pct)
        .round(new java.math.MathContext(6))
        .stripTrailingZeros()
        .toPlainString();
  }

  /**
   * Bytes in MiB with one decimal.
   *
   * @param bytes the bytes
   * @return such as {@code 97.7 MiB}
   */
  static String mib(long bytes) {
    return String.format("%.1f MiB", bytes / 1048576.0);
  }

  /**
   * A size in bytes as the README's engine table writes it: 511 B, 64 KiB, 256 MiB.
   *
   * @param n bytes
   * @return the text
   */
  static String bytes(long n) {
    if (n >= 1 << 20 && n % (1 << 20) == 0) {
      return String.format(Locale.ROOT, "%,d MiB", n >> 20);
    }
    if (n >= 1 << 10 && n % (1 << 10) == 0) {
      return String.format(Locale.ROOT, "%,d KiB", n >> 10);
    }
    return String.format(Locale.ROOT, "%,d B", n);
  }

  /**
   * A ratio: {@code 1.25x}; {@code -} for NaN.
   *
   * @param v the ratio
   * @return the text
   */
  static String ratio(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2fx", v);
  }

  /**
   * Seconds: whole ones without decimals, else three.
   *
   * @param v seconds
   * @return the text
   */
  static String seconds(double v) {
    return v == Math.rint(v)
        ? String.format(Locale.ROOT, "%.0f", v)
        : String.format(Locale.ROOT, "%.3f", v);
  }

  /**
   * A number with a format; {@code -} for NaN.
   *
   * @param v the number
   * @param format such as {@code %.1f}
   * @return the text
   */
  static String number(double v, String format) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, format, v);
  }

  /**
   * A number as JSON has it: NaN and infinities (no JSON form) as null.
   *
   * @param v the number
   * @return the JSON text
   */
  static String jsonNumber(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    return v == Math.rint(v) && Math.abs(v) < 1e15
        ? String.valueOf((long) v)
        : String.format(Locale.ROOT, "%.6g", v);
  }

  /**
   * A JSON string literal.
   *
   * @param s the text
   * @return it quoted and escaped
   */
  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
