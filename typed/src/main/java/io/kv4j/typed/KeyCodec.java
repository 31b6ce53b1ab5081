package io.kv4j.typed;

import io.kv4j.KeyRange;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;
import java.util.function.Function;

/**
 * Turns keys of type {@code K} into store keys and back, <em>preserving order</em>: for any two
 * keys, {@code Arrays.compareUnsigned(encode(a), encode(b))} has the sign of their intended order,
 * and {@code decode(encode(k))} equals {@code k}. That is what makes a scan of a typed range return
 * the keys in typed order, and what {@link StoreMap} relies on to be a sorted map.
 *
 * <p>Encodings must be 1 or more bytes (a store refuses an empty key) and at most the engine's key
 * limit. Implementations must be stateless and thread-safe.
 *
 * @param <K> the key type
 */
public interface KeyCodec<K> {

  /**
   * Encodes a key.
   *
   * @param key the key, not null
   * @return its bytes; the caller does not modify them
   * @throws IllegalArgumentException if the key cannot be encoded
   */
  byte[] encode(K key);

  /**
   * Decodes a key.
   *
   * @param bytes bytes made by {@link #encode}
   * @return the key
   * @throws IllegalArgumentException if the bytes are not such an encoding
   */
  K decode(byte[] bytes);

  /**
   * The store keys a typed prefix stands for. The default is every key whose encoding starts with
   * the prefix's encoding, which is right for byte arrays and strings; the tuple codecs narrow it
   * to tuples that start with the prefix's elements ({@link Tuple#range()}).
   *
   * @param prefix the prefix
   * @return an ascending, unlimited range
   */
  default KeyRange prefixRange(K prefix) {
    return KeyRange.prefix(encode(Objects.requireNonNull(prefix, "prefix")));
  }

  /**
   * The order this codec preserves: that of the encodings, as unsigned bytes.
   *
   * @return a comparator of keys (it encodes both on each call)
   */
  default Comparator<K> comparator() {
    return (a, b) -> Arrays.compareUnsigned(encode(a), encode(b));
  }

  /**
   * Byte arrays as they are: the store's own order.
   *
   * @return the codec
   */
  static KeyCodec<byte[]> bytes() {
    return ByteArrays.INSTANCE;
  }

  /**
   * Strings as UTF-8: ordered by Unicode code point (not by {@link String#compareTo}, which differs
   * above U+FFFF). A string with an unpaired surrogate is refused.
   *
   * @return the codec
   */
  static KeyCodec<String> utf8() {
    return Utf8.INSTANCE;
  }

  /**
   * Signed longs in numeric order: 8 bytes, big-endian, sign bit flipped, so {@link Long#MIN_VALUE}
   * is {@code 00 00 00 00 00 00 00 00} and -1 sorts before 0.
   *
   * @return the codec
   */
  static KeyCodec<Long> longs() {
    return OrderedLongKey.INSTANCE;
  }

  /**
   * Tuples in tuple order (see {@link Tuple}).
   *
   * @return the codec
   */
  static KeyCodec<Tuple> tuple() {
    return TupleKey.TUPLES;
  }

  /**
   * Keys of the caller's own type, stored as tuples: {@code KeyCodec.tuple(o -> Tuple.of(o.user(),
   * o.id()), t -> new OrderId(t.getString(0), t.getLong(1)))}. Keys sort in the order of their
   * tuples; {@code fromTuple(toTuple(k))} must equal {@code k}.
   *
   * @param toTuple the key's tuple
   * @param fromTuple the key of a tuple
   * @param <K> the key type
   * @return the codec
   */
  static <K> KeyCodec<K> tuple(
      Function<? super K, Tuple> toTuple, Function<? super Tuple, ? extends K> fromTuple) {
    return new TupleKey<>(
        Objects.requireNonNull(toTuple, "toTuple"), Objects.requireNonNull(fromTuple, "fromTuple"));
  }
}
