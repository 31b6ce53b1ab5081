package io.kv4j.typed;

import io.kv4j.KeyRange;
import java.util.Comparator;
import java.util.Objects;
import java.util.function.Function;

/** Keys stored as tuples: tuples themselves, or the caller's type mapped to and from tuples. */
final class TupleKey<K> implements KeyCodec<K> {
  static final TupleKey<Tuple> TUPLES = new TupleKey<>(t -> t, t -> t);

  private final Function<? super K, Tuple> toTuple;
  private final Function<? super Tuple, ? extends K> fromTuple;

  TupleKey(Function<? super K, Tuple> toTuple, Function<? super Tuple, ? extends K> fromTuple) {
    this.toTuple = toTuple;
    this.fromTuple = fromTuple;
  }

  private Tuple tupleOf(K key) {
    return Objects.requireNonNull(
        toTuple.apply(Objects.requireNonNull(key, "key")), "toTuple returned null");
  }

  @Override
  public byte[] encode(K key) {
    return tupleOf(key).pack();
  }

  @Override
  public K decode(byte[] bytes) {
    return Objects.requireNonNull(fromTuple.apply(Tuple.unpack(bytes)), "fromTuple returned null");
  }

  /** Tuples that start with the prefix's elements, not every key sharing its bytes. */
  @Override
  public KeyRange prefixRange(K prefix) {
    return tupleOf(Objects.requireNonNull(prefix, "prefix")).range();
  }

  @Override
  public Comparator<K> comparator() {
    return (a, b) -> tupleOf(a).compareTo(tupleOf(b));
  }

  @Override
  public String toString() {
    return this == TUPLES ? "tuple" : "tuple(mapped)";
  }
}
