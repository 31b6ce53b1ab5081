package io.kv4j;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.NavigableMap;
import java.util.Objects;

/**
 * An immutable description of which keys a {@link Store#scan(KeyRange) scan} visits, in which
 * direction and how many. Bounds compare as unsigned bytes, lexicographically, exactly like keys.
 *
 * <pre>{@code
 * KeyRange.all();                              // every key, ascending
 * KeyRange.prefix(bytes("user:"));             // keys starting with "user:"
 * KeyRange.between(a, b);                      // a <= key < b
 * KeyRange.all().gt(a).lte(b).reverse().limit(10); // the 10 highest keys in (a, b]
 * }</pre>
 *
 * <p>Each method returns a new range; bound arrays are copied on the way in and out. An inverted
 * range (lower bound above the upper one) is legal and empty.
 *
 * <p><b>Composing bounds.</b> {@link #gte}, {@link #gt}, {@link #lte} and {@link #lt} only ever
 * <em>narrow</em> a range: each intersects the range with its condition, so a bound added to a
 * {@link #prefix(byte[]) prefix} or to a range that already has that bound keeps every earlier
 * bound in force. {@code prefix(p).gte(s)} is "keys with prefix p that are {@code >= s}" for every
 * {@code s}: all of the prefix when {@code s} sorts before it, nothing when after. Pagination
 * composes the same way: {@code prefix(p).gt(lastSeen).limit(n)} forward, {@code
 * prefix(p).lt(lastSeen).reverse().limit(n)} backward. No composition can return a key outside any
 * bound that was set; to widen a range, build a new one.
 */
public final class KeyRange {
  private static final KeyRange ALL = new KeyRange(null, true, null, true, false, Long.MAX_VALUE);

  private final byte[] lower;
  private final boolean lowerInclusive;
  private final byte[] upper;
  private final boolean upperInclusive;
  private final boolean reverse;
  private final long limit;

  private KeyRange(
      byte[] lower,
      boolean lowerInclusive,
      byte[] upper,
      boolean upperInclusive,
      boolean reverse,
      long limit) {
    this.lower = lower;
    this.lowerInclusive = lowerInclusive;
    this.upper = upper;
    this.upperInclusive = upperInclusive;
    this.reverse = reverse;
    this.limit = limit;
  }

  /**
   * Every key, ascending, without limit.
   *
   * @return the range of all keys
   */
  public static KeyRange all() {
    return ALL;
  }

  /**
   * Keys that start with {@code prefix}. The empty prefix means every key. A prefix of only 0xFF
   * bytes has no upper bound, so it is handled without overflow.
   *
   * @param prefix the common prefix
   * @return the range {@code [prefix, next(prefix))}
   */
  public static KeyRange prefix(byte[] prefix) {
    Objects.requireNonNull(prefix, "prefix");
    if (prefix.length == 0) {
      return ALL;
    }
    return new KeyRange(prefix.clone(), true, successor(prefix), false, false, Long.MAX_VALUE);
  }

  /**
   * Keys from {@code fromInclusive} up to but excluding {@code toExclusive}. When {@code
   * toExclusive <= fromInclusive} the range is empty.
   *
   * @param fromInclusive lower bound, included
   * @param toExclusive upper bound, excluded
   * @return the half-open range
   */
  public static KeyRange between(byte[] fromInclusive, byte[] toExclusive) {
    return ALL.gte(fromInclusive).lt(toExclusive);
  }

  /**
   * Narrows the range to keys {@code >= key}: the result holds the keys of this range that are also
   * {@code >= key} (see "Composing bounds" in the class comment).
   *
   * @param key keys {@code >= key} stay in range
   * @return a new range, never wider than this one
   */
  public KeyRange gte(byte[] key) {
    return narrowLower(copy(key), true);
  }

  /**
   * Narrows the range to keys {@code > key}: the result holds the keys of this range that are also
   * {@code > key}, as in resuming after the last key seen.
   *
   * @param key keys {@code > key} stay in range
   * @return a new range, never wider than this one
   */
  public KeyRange gt(byte[] key) {
    return narrowLower(copy(key), false);
  }

  /**
   * Narrows the range to keys {@code <= key}: the result holds the keys of this range that are also
   * {@code <= key}.
   *
   * @param key keys {@code <= key} stay in range
   * @return a new range, never wider than this one
   */
  public KeyRange lte(byte[] key) {
    return narrowUpper(copy(key), true);
  }

  /**
   * Narrows the range to keys {@code < key}: the result holds the keys of this range that are also
   * {@code < key}, as in resuming a reverse scan before the last key seen.
   *
   * @param key keys {@code < key} stay in range
   * @return a new range, never wider than this one
   */
  public KeyRange lt(byte[] key) {
    return narrowUpper(copy(key), false);
  }

  /** Intersects the lower bound with {@code >= key} (inclusive) or {@code > key}. */
  private KeyRange narrowLower(byte[] key, boolean inclusive) {
    if (lower != null) {
      int c = Arrays.compareUnsigned(key, lower);
      if (c < 0 || (c == 0 && (inclusive || !lowerInclusive))) {
        return this; // the bound already set is at least as tight
      }
    }
    return new KeyRange(key, inclusive, upper, upperInclusive, reverse, limit);
  }

  /** Intersects the upper bound with {@code <= key} (inclusive) or {@code < key}. */
  private KeyRange narrowUpper(byte[] key, boolean inclusive) {
    if (upper != null) {
      int c = Arrays.compareUnsigned(key, upper);
      if (c > 0 || (c == 0 && (inclusive || !upperInclusive))) {
        return this;
      }
    }
    return new KeyRange(lower, lowerInclusive, key, inclusive, reverse, limit);
  }

  /**
   * Visits the keys in descending order. The limit then keeps the highest keys.
   *
   * @return a new range, reversed
   */
  public KeyRange reverse() {
    return new KeyRange(lower, lowerInclusive, upper, upperInclusive, !reverse, limit);
  }

  /**
   * Stops after {@code n} entries.
   *
   * @param n the maximum number of entries, {@code >= 0}
   * @return a new range with the limit
   * @throws IllegalArgumentException if n is negative
   */
  public KeyRange limit(long n) {
    if (n < 0) {
      throw new IllegalArgumentException("limit must be >= 0, got " + n);
    }
    return new KeyRange(lower, lowerInclusive, upper, upperInclusive, reverse, n);
  }

  /**
   * The lower bound.
   *
   * @return a copy of the lower bound, or null when unbounded below
   */
  public byte[] lower() {
    return lower == null ? null : lower.clone();
  }

  /**
   * Whether the lower bound itself is in range.
   *
   * @return true for {@code >=}, false for {@code >}
   */
  public boolean lowerInclusive() {
    return lowerInclusive;
  }

  /**
   * The upper bound.
   *
   * @return a copy of the upper bound, or null when unbounded above
   */
  public byte[] upper() {
    return upper == null ? null : upper.clone();
  }

  /**
   * Whether the upper bound itself is in range.
   *
   * @return true for {@code <=}, false for {@code <}
   */
  public boolean upperInclusive() {
    return upperInclusive;
  }

  /**
   * Whether keys are visited in descending order.
   *
   * @return true for descending order
   */
  public boolean isReverse() {
    return reverse;
  }

  /**
   * The maximum number of entries, {@link Long#MAX_VALUE} when unlimited.
   *
   * @return the limit
   */
  public long limitValue() {
    return limit;
  }

  /**
   * Whether {@code key} satisfies the lower bound.
   *
   * @param key a key
   * @return true if key is at or above (inclusive) or above (exclusive) the lower bound
   */
  public boolean aboveLower(byte[] key) {
    if (lower == null) {
      return true;
    }
    int c = Arrays.compareUnsigned(key, lower);
    return lowerInclusive ? c >= 0 : c > 0;
  }

  /**
   * Whether {@code key} satisfies the upper bound.
   *
   * @param key a key
   * @return true if key is at or below (inclusive) or below (exclusive) the upper bound
   */
  public boolean belowUpper(byte[] key) {
    if (upper == null) {
      return true;
    }
    int c = Arrays.compareUnsigned(key, upper);
    return upperInclusive ? c <= 0 : c < 0;
  }

  /**
   * Whether {@code key} is inside both bounds (direction and limit do not matter).
   *
   * @param key a key
   * @return true if the key is in range
   */
  public boolean contains(byte[] key) {
    return aboveLower(key) && belowUpper(key);
  }

  /**
   * Whether no key can be in range: limit 0, inverted bounds, or equal bounds not both inclusive.
   *
   * @return true if every scan of this range is empty
   */
  public boolean isEmpty() {
    if (limit == 0) {
      return true;
    }
    if (lower == null || upper == null) {
      return false;
    }
    int c = Arrays.compareUnsigned(lower, upper);
    return c > 0 || (c == 0 && !(lowerInclusive && upperInclusive));
  }

  /**
   * The part of {@code map} this range covers, in this range's direction; the limit is not applied.
   * For engines and tests backed by a {@link NavigableMap} ordered like keys ({@link
   * Arrays#compareUnsigned(byte[], byte[])}). An inverted range gives an empty view.
   *
   * @param map a map ordered by unsigned key order
   * @param <V> the value type
   * @return a live view of the covered part
   */
  public <V> NavigableMap<byte[], V> view(NavigableMap<byte[], V> map) {
    NavigableMap<byte[], V> v = map;
    if (lower != null && upper != null) {
      v =
          Arrays.compareUnsigned(lower, upper) > 0
              ? v.subMap(lower, false, lower, false)
              : v.subMap(lower, lowerInclusive, upper, upperInclusive);
    } else if (lower != null) {
      v = v.tailMap(lower, lowerInclusive);
    } else if (upper != null) {
      v = v.headMap(upper, upperInclusive);
    }
    return reverse ? v.descendingMap() : v;
  }

  /**
   * The smallest key greater than every key that starts with {@code prefix}, or null when the
   * prefix is all 0xFF (no such key exists).
   */
  private static byte[] successor(byte[] prefix) {
    for (int i = prefix.length - 1; i >= 0; i--) {
      if (prefix[i] != (byte) 0xFF) {
        byte[] next = Arrays.copyOf(prefix, i + 1);
        next[i]++;
        return next;
      }
    }
    return null;
  }

  private static byte[] copy(byte[] key) {
    return Objects.requireNonNull(key, "bound").clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyRange r
        && Arrays.equals(lower, r.lower)
        && lowerInclusive == r.lowerInclusive
        && Arrays.equals(upper, r.upper)
        && upperInclusive == r.upperInclusive
        && reverse == r.reverse
        && limit == r.limit;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        Arrays.hashCode(lower),
        lowerInclusive,
        Arrays.hashCode(upper),
        upperInclusive,
        reverse,
        limit);
  }

  @Override
  public String toString() {
    HexFormat hex = HexFormat.of();
    return (lower == null ? "(-inf" : (lowerInclusive ? "[" : "(") + hex.formatHex(lower))
        + ", "
        + (upper == null ? "+inf)" : hex.formatHex(upper) + (upperInclusive ? "]" : ")"))
        + (reverse ? " reverse" : "")
        + (limit == Long.MAX_VALUE ? "" : " limit " + limit);
  }
}
