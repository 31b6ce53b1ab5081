package io.kv4j.typed;

import java.util.Objects;

/**
 * Signed longs as order-preserving keys.
 *
 * <pre>
 * offset  width  field
 * 0       8      value XOR 0x8000000000000000, big-endian
 * </pre>
 */
final class OrderedLongKey implements KeyCodec<Long> {
  static final OrderedLongKey INSTANCE = new OrderedLongKey();

  private OrderedLongKey() {}

  @Override
  public byte[] encode(Long key) {
    return LongValue.bytes(Objects.requireNonNull(key, "key") ^ Long.MIN_VALUE);
  }

  @Override
  public Long decode(byte[] bytes) {
    return LongValue.read(bytes, "long key") ^ Long.MIN_VALUE;
  }

  @Override
  public String toString() {
    return "longs";
  }
}
