package io.kv4j.typed;

import io.kv4j.KeyRange;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Which keys a typed scan visits, in which direction and how many: {@link KeyRange} with typed
 * bounds, turned into store keys by a {@link KeyCodec} when the scan runs. Bounds compose as in
 * {@link KeyRange}: each one only narrows.
 *
 * <pre>{@code
 * TypedRange.prefix(Tuple.of("user", 42));               // every key of user 42
 * TypedRange.between(10L, 20L);                          // 10 <= key < 20
 * TypedRange.<String>all().gt(last).limit(100);          // the next page after last
 * TypedRange.prefix(Tuple.of("log")).reverse().limit(5); // the 5 highest keys
 * }</pre>
 *
 * Immutable; every method returns a new range.
 *
 * @param <K> the key type
 */
public final class TypedRange<K> {
  private enum Kind {
    GTE,
    GT,
    LTE,
    LT
  }

  private record Bound<K>(Kind kind, K key) {}

  private final K prefix;
  private final List<Bound<K>> bounds;
  private final boolean reverse;
  private final long limit;

  private TypedRange(K prefix, List<Bound<K>> bounds, boolean reverse, long limit) {
    this.prefix = prefix;
    this.bounds = bounds;
    this.reverse = reverse;
    this.limit = limit;
  }

  /**
   * Every key, ascending, without limit.
   *
   * @param <K> the key type
   * @return the range
   */
  public static <K> TypedRange<K> all() {
    return new TypedRange<>(null, List.of(), false, Long.MAX_VALUE);
  }

  /**
   * The keys that start with {@code prefix}, as the codec defines it ({@link
   * KeyCodec#prefixRange}): for tuples, every tuple starting with the prefix's elements.
   *
   * @param prefix the prefix
   * @param <K> the key type
   * @return the range
   */
  public static <K> TypedRange<K> prefix(K prefix) {
    return new TypedRange<>(
        Objects.requireNonNull(prefix, "prefix"), List.of(), false, Long.MAX_VALUE);
  }

  /**
   * Keys from {@code fromInclusive} up to but excluding {@code toExclusive}.
   *
   * @param fromInclusive the lower bound, included
   * @param toExclusive the upper bound, excluded
   * @param <K> the key type
   * @return the range
   */
  public static <K> TypedRange<K> between(K fromInclusive, K toExclusive) {
    return TypedRange.<K>all().gte(fromInclusive).lt(toExclusive);
  }

  /**
   * Narrows to keys {@code >= key}.
   *
   * @param key the bound
   * @return a new range
   */
  public TypedRange<K> gte(K key) {
    return with(Kind.GTE, key);
  }

  /**
   * Narrows to keys {@code > key}.
   *
   * @param key the bound
   * @return a new range
   */
  public TypedRange<K> gt(K key) {
    return with(Kind.GT, key);
  }

  /**
   * Narrows to keys {@code <= key}.
   *
   * @param key the bound
   * @return a new range
   */
  public TypedRange<K> lte(K key) {
    return with(Kind.LTE, key);
  }

  /**
   * Narrows to keys {@code < key}.
   *
   * @param key the bound
   * @return a new range
   */
  public TypedRange<K> lt(K key) {
    return with(Kind.LT, key);
  }

  private TypedRange<K> with(Kind kind, K key) {
    List<Bound<K>> b = new ArrayList<>(bounds);
    b.add(new Bound<>(kind, Objects.requireNonNull(key, "bound")));
    return new TypedRange<>(prefix, Collections.unmodifiableList(b), reverse, limit);
  }

  /**
   * Visits the keys in descending order; the limit then keeps the highest.
   *
   * @return a new range
   */
  public TypedRange<K> reverse() {
    return new TypedRange<>(prefix, bounds, !reverse, limit);
  }

  /**
   * Stops after {@code n} entries.
   *
   * @param n the maximum number of entries, {@code >= 0}
   * @return a new range
   * @throws IllegalArgumentException if n is negative
   */
  public TypedRange<K> limit(long n) {
    if (n < 0) {
      throw new IllegalArgumentException("limit must be >= 0, got " + n);
    }
    return new TypedRange<>(prefix, bounds, reverse, n);
  }

  /**
   * The store key range this range stands for under a codec.
   *
   * @param codec the key codec
   * @return the key range
   * @throws IllegalArgumentException if a bound cannot be encoded
   */
  public KeyRange toKeyRange(KeyCodec<K> codec) {
    Objects.requireNonNull(codec, "codec");
    KeyRange r = prefix == null ? KeyRange.all() : codec.prefixRange(prefix);
    for (Bound<K> b : bounds) {
      byte[] k = codec.encode(b.key());
      r =
          switch (b.kind()) {
            case GTE -> r.gte(k);
            case GT -> r.gt(k);
            case LTE -> r.lte(k);
            case LT -> r.lt(k);
          };
    }
    if (reverse) {
      r = r.reverse();
    }
    return limit == Long.MAX_VALUE ? r : r.limit(limit);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(prefix == null ? "all" : "prefix " + prefix);
    for (Bound<K> b : bounds) {
      sb.append(' ').append(b.kind().name().toLowerCase(java.util.Locale.ROOT)).append(' ');
      sb.append(b.key());
    }
    return sb.append(reverse ? " reverse" : "")
        .append(limit == Long.MAX_VALUE ? "" : " limit " + limit)
        .toString();
  }
}
