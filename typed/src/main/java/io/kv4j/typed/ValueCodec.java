package io.kv4j.typed;

import java.util.Objects;
import java.util.function.Function;

/**
 * Turns values of type {@code V} into stored bytes and back; {@code decode(encode(v))} equals
 * {@code v}. Order does not matter for values, but determinism does: the conditional writes of
 * {@link TypedStore} and {@link StoreMap} compare <em>encodings</em>, so equal values must encode
 * to equal bytes (a JSON encoder must write fields in a fixed order). Implementations must be
 * stateless and thread-safe.
 *
 * <pre>{@code
 * ValueCodec<User> json = ValueCodec.of(
 *     user -> mapper.writeValueAsBytes(user),      // wrap checked exceptions
 *     bytes -> mapper.readValue(bytes, User.class));
 * }</pre>
 *
 * @param <V> the value type
 */
public interface ValueCodec<V> {

  /**
   * Encodes a value.
   *
   * @param value the value, not null
   * @return its bytes (may be empty); the caller does not modify them
   * @throws IllegalArgumentException if the value cannot be encoded
   */
  byte[] encode(V value);

  /**
   * Decodes a value.
   *
   * @param bytes bytes made by {@link #encode}
   * @return the value, not null
   * @throws IllegalArgumentException if the bytes are not such an encoding
   */
  V decode(byte[] bytes);

  /**
   * Byte arrays as they are.
   *
   * @return the codec
   */
  static ValueCodec<byte[]> bytes() {
    return ByteArrays.INSTANCE;
  }

  /**
   * Strings as UTF-8; a string with an unpaired surrogate is refused, invalid UTF-8 is refused on
   * decode.
   *
   * @return the codec
   */
  static ValueCodec<String> utf8() {
    return Utf8.INSTANCE;
  }

  /**
   * Longs as 8 bytes, big-endian two's complement (what {@code ByteBuffer.getLong} reads).
   *
   * @return the codec
   */
  static ValueCodec<Long> longs() {
    return LongValue.INSTANCE;
  }

  /**
   * A codec of the caller's own, such as JSON, from two functions.
   *
   * @param encoder the bytes of a value
   * @param decoder the value of some bytes; must not return null
   * @param <V> the value type
   * @return the codec
   */
  static <V> ValueCodec<V> of(
      Function<? super V, byte[]> encoder, Function<byte[], ? extends V> decoder) {
    Objects.requireNonNull(encoder, "encoder");
    Objects.requireNonNull(decoder, "decoder");
    return new ValueCodec<>() {
      @Override
      public byte[] encode(V value) {
        return Objects.requireNonNull(
            encoder.apply(Objects.requireNonNull(value, "value")), "encoder returned null");
      }

      @Override
      public V decode(byte[] bytes) {
        return Objects.requireNonNull(decoder.apply(bytes), "decoder returned null");
      }
    };
  }
}
