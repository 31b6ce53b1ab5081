package io.kv4j.cli;

import java.util.Locale;

/** Number, size and duration formatting for humans. */
final class Format {
  private Format() {}

  static String bytes(double b) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < units.length - 1) {
      b /= 1024;
      u++;
    }
    return u == 0
        ? String.format(Locale.ROOT, "%.0f B", b)
        : String.format(Locale.ROOT, "%.1f %s", b, units[u]);
  }

  static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
  }

  static String clock(long nanos) {
    long s = Math.max(0, Math.round(nanos / 1e9));
    return s >= 3600
        ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
  }

  /**
   * An engine figure for people: whole numbers with thousands separators, fractions with at most
   * three decimals ({@code 1.492}, not {@code 1.4923076923076923}).
   */
  static String number(Number n) {
    if (n instanceof Double || n instanceof Float || n instanceof java.math.BigDecimal) {
      double d = n.doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        return String.valueOf(d);
      }
      if (d == Math.rint(d) && Math.abs(d) < 1e15) {
        return count((long) d);
      }
      return new java.math.BigDecimal(String.format(Locale.ROOT, "%.3f", d))
          .stripTrailingZeros()
          .toPlainString();
    }
    return count(n.longValue());
  }
}
