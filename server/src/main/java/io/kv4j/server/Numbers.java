package io.kv4j.server;

/** Strict decimal parsing (Redis string2ll rules) without allocation. */
final class Numbers {
  /** Returned for invalid input; a real Long.MIN_VALUE is told apart by {@link #isMinValue}. */
  static final long INVALID = Long.MIN_VALUE;

  private static final byte[] MIN = Reply.ascii(Long.toString(Long.MIN_VALUE));

  private Numbers() {}

  static long parseLong(byte[] buf, int at, int length) {
    if (length == 0 || length > 20) {
      return INVALID;
    }
    int i = 0;
    boolean negative = false;
    if (buf[at] == '-') {
      negative = true;
      i = 1;
      if (length == 1) {
        return INVALID;
      }
    }
    int first = buf[at + i];
    if (first == '0' && length > i + 1) {
      return INVALID; // no leading zeros
    }
    if (first == '0' && negative) {
      return INVALID; // "-0"
    }
    long v = 0;
    for (; i < length; i++) {
      int d = buf[at + i] - '0';
      if (d < 0 || d > 9) {
        return INVALID;
      }
      if (v > (Long.MAX_VALUE - d) / 10) {
        return INVALID;
      }
      v = v * 10 + d;
    }
    return negative ? -v : v;
  }

  static boolean isMinValue(byte[] buf, int at, int length) {
    if (length != MIN.length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (buf[at + i] != MIN[i]) {
        return false;
      }
    }
    return true;
  }

  /** Parses a stored value for INCR and friends. */
  static long parseStored(byte[] value) {
    if (value.length == 0 || value.length > 20) {
      throw notInteger();
    }
    int i = 0;
    boolean negative = value[0] == '-';
    if (negative) {
      i = 1;
      if (value.length == 1) {
        throw notInteger();
      }
    }
    if (value[i] == '0' && (value.length > i + 1 || negative)) {
      throw notInteger();
    }
    long v = 0;
    for (; i < value.length; i++) {
      int d = value[i] - '0';
      if (d < 0 || d > 9) {
        throw notInteger();
      }
      // accumulate negatively so Long.MIN_VALUE parses
      if (v < (Long.MIN_VALUE + d) / 10) {
        throw notInteger();
      }
      v = v * 10 - d;
    }
    if (!negative) {
      if (v == Long.MIN_VALUE) {
        throw notInteger();
      }
      v = -v;
    }
    return v;
  }

  private static CommandException notInteger() {
    return new CommandException("ERR value is not an integer or out of range");
  }
}
