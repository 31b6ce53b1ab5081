package io.kv4j.typed;

import java.util.Objects;

/**
 * Longs as values.
 *
 * <pre>
 * offset  width  field
 * 0       8      value, big-endian two's complement
 * </pre>
 */
final class LongValue implements ValueCodec<Long> {
  static final LongValue INSTANCE = new LongValue();

  private LongValue() {}

  @Override
  public byte[] encode(Long value) {
    return bytes(Objects.requireNonNull(value, "value"));
  }

  @Override
  public Long decode(byte[] bytes) {
    return read(bytes, "long value");
  }

  static byte[] bytes(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return b;
  }

  static long read(byte[] b, String what) {
    if (b.length != 8) {
      throw new IllegalArgumentException(
          "expected the 8 bytes of a " + what + ", found " + b.length);
    }
    long v = 0;
    for (byte x : b) {
      v = (v << 8) | (x & 0xFF);
    }
    return v;
  }

  @Override
  public String toString() {
    return "longs";
  }
}
