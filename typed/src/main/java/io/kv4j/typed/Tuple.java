package io.kv4j.typed;

import io.kv4j.KeyRange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * An immutable list of elements whose byte encoding ({@link #pack()}) sorts, as unsigned bytes,
 * exactly like the tuples themselves: the key layer for ordered stores. {@code ("user", 42,
 * "orders", 7)} and {@code ("user", 42, "profile")} are neighbours, and {@link #range()} of {@code
 * ("user", 42)} is every key of that user.
 *
 * <h2>Elements</h2>
 *
 * {@code null}, {@code byte[]}, {@link String}, {@code long} (also given as {@code int}, {@code
 * short} or {@code byte}, always read back as {@link Long}), {@code float}, {@code double}, {@code
 * boolean}, {@link UUID} and nested tuples (a {@code Tuple}, or a {@link List} of elements, read
 * back as {@code Tuple}). Byte arrays are copied in and out. A string must be valid Unicode (no
 * unpaired surrogate), since it is stored as UTF-8.
 *
 * <h2>Order</h2>
 *
 * Tuples compare element by element from the first; the first unequal element decides, and a tuple
 * that is a prefix of another sorts first: {@code () < ("a") < ("a", null) < ("a", 0) < ("b")}.
 * Elements of different types compare by type, in this order (FoundationDB's type code order):
 *
 * <ol>
 *   <li>null
 *   <li>byte arrays: unsigned bytes, lexicographically, a prefix first
 *   <li>strings: by Unicode code point, lexicographically, a prefix first. This is UTF-8 byte
 *       order, <em>not</em> {@link String#compareTo}, which compares UTF-16 units and puts a
 *       character above U+FFFF before one in U+E000..U+FFFF
 *   <li>nested tuples: this same order, recursively
 *   <li>integers: numerically, {@link Long#MIN_VALUE} to {@link Long#MAX_VALUE}
 *   <li>floats: IEEE 754 total order: negative NaNs, {@code -Infinity}, negative numbers, {@code
 *       -0.0}, {@code 0.0}, positive numbers, {@code Infinity}, positive NaNs ({@code Float.NaN} is
 *       one), NaNs ordered by their bits (the larger payload further from zero)
 *   <li>doubles: the same total order
 *   <li>booleans: {@code false < true}
 *   <li>UUIDs: as 128-bit unsigned numbers, most significant half first (<em>not</em> {@link
 *       UUID#compareTo}, which compares signed halves)
 * </ol>
 *
 * <p>Numbers of different types do not compare by value: every integer sorts before every float and
 * double ({@code (2) < (0.5)}). Two tuples are {@link #equals equal} exactly when their encodings
 * are: byte arrays by content, floats and doubles by their bits ({@code 0.0} is not {@code -0.0}; a
 * NaN equals a NaN with the same bits), {@code 1} equals {@code 1L}. {@link #compareTo} is this
 * order and is consistent with equals.
 *
 * <h2>Encoding, and FoundationDB compatibility</h2>
 *
 * The encoding is FoundationDB's tuple layer (its {@code design/tuple.md}) for every type above,
 * byte for byte: type codes {@code 0x00} null, {@code 0x01} bytes and {@code 0x02} UTF-8 strings
 * (each ended by {@code 0x00}, an inner {@code 0x00} written {@code 0x00 0xFF}), {@code 0x05}
 * nested tuples (ended by {@code 0x00}, a null inside written {@code 0x00 0xFF}), {@code
 * 0x0C..0x1C} integers (the code says sign and byte length; magnitude big-endian, one's complement
 * for negatives, shortest form), {@code 0x20} float and {@code 0x21} double (big-endian IEEE bits,
 * all bits flipped when the sign is set, else only the sign bit), {@code 0x26}/{@code 0x27}
 * false/true, {@code 0x30} UUID (16 bytes, big-endian). So keys written here are readable by a
 * FoundationDB tuple decoder and the other way round, for these types. Not supported, and refused
 * on decode with an error naming the offset: integers beyond the 64-bit signed range (FoundationDB
 * codes {@code 0x0B} and {@code 0x1D}, and unsigned 64-bit values above {@link Long#MAX_VALUE}),
 * versionstamps, the deprecated and reserved codes and user type codes. Decoding is strict: it
 * accepts only what {@link #pack()} produces (shortest integers, valid UTF-8, every terminator), so
 * {@code unpack(b).pack()} is {@code b}.
 *
 * <p>The encoding is self-delimiting element by element, so the encoding of {@code (a, b)} is that
 * of {@code (a)} followed by that of {@code (b)}; the empty tuple encodes to no bytes (which is not
 * a valid store key on its own).
 */
public final class Tuple implements Comparable<Tuple> {
  private static final Tuple EMPTY = new Tuple(List.of(), new byte[0]);

  /**
   * Normalized elements: null, byte[] (owned), String, Long, Float, Double, Boolean, UUID, Tuple.
   */
  private final List<Object> items;

  /** The encoding, computed once: equality, hashing and order all use it. */
  private final byte[] packed;

  private Tuple(List<Object> items, byte[] packed) {
    this.items = items;
    this.packed = packed;
  }

  private static Tuple create(List<Object> normalized) {
    List<Object> items = Collections.unmodifiableList(normalized);
    return new Tuple(items, TupleFormat.encode(items));
  }

  /**
   * A tuple of the given elements.
   *
   * @param items the elements, in order; each of a type listed in the class comment
   * @return the tuple
   * @throws IllegalArgumentException if an element has another type, or a string is not valid
   *     Unicode
   */
  public static Tuple of(Object... items) {
    Objects.requireNonNull(items, "items");
    return fromList(Arrays.asList(items));
  }

  /**
   * A tuple of the elements of a list.
   *
   * @param items the elements, in order; may contain null
   * @return the tuple
   * @throws NullPointerException if {@code items} is null
   * @throws IllegalArgumentException if an element has a type not listed in the class comment, or a
   *     string is not valid Unicode
   */
  public static Tuple fromList(List<?> items) {
    Objects.requireNonNull(items, "items");
    if (items.isEmpty()) {
      return EMPTY;
    }
    List<Object> normalized = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      normalized.add(normalize(items.get(i), i));
    }
    return create(normalized);
  }

  /** A nested tuple just decoded: its elements are normalized already. */
  static Tuple fromDecoded(List<Object> items) {
    return items.isEmpty() ? EMPTY : create(items);
  }

  private static Object normalize(Object item, int index) {
    if (item == null
        || item instanceof String
        || item instanceof Long
        || item instanceof Double
        || item instanceof Float
        || item instanceof Boolean
        || item instanceof UUID
        || item instanceof Tuple) {
      return item;
    }
    if (item instanceof byte[] b) {
      return b.clone();
    }
    if (item instanceof Integer || item instanceof Short || item instanceof Byte) {
      return ((Number) item).longValue();
    }
    if (item instanceof List<?> list) {
      return fromList(list);
    }
    throw new IllegalArgumentException(
        "element "
            + index
            + " is a "
            + item.getClass().getName()
            + "; a tuple holds null, byte[], String, long/int/short/byte, float, double,"
            + " boolean, UUID or a nested Tuple/List");
  }

  /**
   * Decodes a tuple.
   *
   * @param bytes an encoding made by {@link #pack()} (or by a FoundationDB tuple encoder, for the
   *     supported types)
   * @return the tuple; {@code unpack(t.pack()).equals(t)}
   * @throws IllegalArgumentException if the bytes are not such an encoding, naming the offset and
   *     what was expected there
   */
  public static Tuple unpack(byte[] bytes) {
    Objects.requireNonNull(bytes, "bytes");
    return unpack(bytes, 0, bytes.length);
  }

  /**
   * Decodes a tuple from part of an array.
   *
   * @param bytes the array
   * @param offset where the encoding starts
   * @param length how many bytes it takes
   * @return the tuple
   * @throws IndexOutOfBoundsException if the part is not inside the array
   * @throws IllegalArgumentException if the bytes are not an encoding, naming the offset (in {@code
   *     bytes}) and what was expected there
   */
  public static Tuple unpack(byte[] bytes, int offset, int length) {
    Objects.requireNonNull(bytes, "bytes");
    Objects.checkFromIndexSize(offset, length, bytes.length);
    List<Object> items = TupleFormat.decode(bytes, offset, length);
    if (items.isEmpty()) {
      return EMPTY;
    }
    return new Tuple(
        Collections.unmodifiableList(items), Arrays.copyOfRange(bytes, offset, offset + length));
  }

  /**
   * The order-preserving encoding of this tuple, for use as a store key.
   *
   * @return a fresh array; empty for the empty tuple
   */
  public byte[] pack() {
    return packed.clone();
  }

  /**
   * The keys of every tuple that starts with this one (this tuple included): {@code ("user", 42)}
   * covers {@code ("user", 42)}, {@code ("user", 42, "orders", 7)} and so on, but not {@code
   * ("user", 420)} nor {@code ("user\0")}. It is {@code [pack(), pack() + 0xFF)}: after a complete
   * element the next byte is a type code, never {@code 0xFF}. For the empty tuple it is every tuple
   * key: {@code [-inf, 0xFF)}.
   *
   * @return the ascending, unlimited range of the keys that start with this tuple
   */
  public KeyRange range() {
    byte[] upper = Arrays.copyOf(packed, packed.length + 1);
    upper[packed.length] = (byte) 0xFF;
    KeyRange r = KeyRange.all().lt(upper);
    return packed.length == 0 ? r : r.gte(packed);
  }

  /**
   * Whether this tuple's first elements are those of {@code prefix}.
   *
   * @param prefix the prefix
   * @return true if {@code prefix} is empty, equal to this tuple or a prefix of it
   */
  public boolean startsWith(Tuple prefix) {
    Objects.requireNonNull(prefix, "prefix");
    int n = prefix.packed.length;
    // The encoding is self-delimiting: a byte prefix ends on an element boundary unless the next
    // byte is 0xFF, which continues an escaped 0x00 (a type code is never 0xFF).
    return n <= packed.length
        && Arrays.equals(packed, 0, n, prefix.packed, 0, n)
        && (n == packed.length || packed[n] != (byte) 0xFF);
  }

  /**
   * A tuple with one more element.
   *
   * @param item the element to append
   * @return a new tuple
   * @throws IllegalArgumentException if the element has an unsupported type
   */
  public Tuple add(Object item) {
    List<Object> all = new ArrayList<>(items.size() + 1);
    all.addAll(items);
    all.add(normalize(item, items.size()));
    return create(all);
  }

  /**
   * A tuple with the elements of {@code other} appended.
   *
   * @param other the elements to append
   * @return a new tuple
   */
  public Tuple addAll(Tuple other) {
    Objects.requireNonNull(other, "other");
    List<Object> all = new ArrayList<>(items.size() + other.size());
    all.addAll(items);
    all.addAll(other.items);
    return create(all);
  }

  /**
   * Number of elements.
   *
   * @return the size
   */
  public int size() {
    return items.size();
  }

  /**
   * Whether the tuple has no element.
   *
   * @return true for the empty tuple
   */
  public boolean isEmpty() {
    return items.isEmpty();
  }

  /**
   * An element: null, {@code byte[]} (a copy), {@link String}, {@link Long}, {@link Float}, {@link
   * Double}, {@link Boolean}, {@link UUID} or {@link Tuple}.
   *
   * @param index the position
   * @return the element
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public Object get(int index) {
    Object item = items.get(index);
    return item instanceof byte[] b ? b.clone() : item;
  }

  /**
   * A string element.
   *
   * @param index the position
   * @return the string
   * @throws ClassCastException if the element is not a string (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public String getString(int index) {
    return typed(index, String.class, "a string");
  }

  /**
   * An integer element.
   *
   * @param index the position
   * @return the value
   * @throws ClassCastException if the element is not an integer (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public long getLong(int index) {
    return typed(index, Long.class, "an integer");
  }

  /**
   * A byte array element.
   *
   * @param index the position
   * @return a copy of the bytes
   * @throws ClassCastException if the element is not a byte array (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public byte[] getBytes(int index) {
    return typed(index, byte[].class, "a byte array").clone();
  }

  /**
   * A double element.
   *
   * @param index the position
   * @return the value
   * @throws ClassCastException if the element is not a double (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public double getDouble(int index) {
    return typed(index, Double.class, "a double");
  }

  /**
   * A float element.
   *
   * @param index the position
   * @return the value
   * @throws ClassCastException if the element is not a float (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public float getFloat(int index) {
    return typed(index, Float.class, "a float");
  }

  /**
   * A boolean element.
   *
   * @param index the position
   * @return the value
   * @throws ClassCastException if the element is not a boolean (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public boolean getBoolean(int index) {
    return typed(index, Boolean.class, "a boolean");
  }

  /**
   * A UUID element.
   *
   * @param index the position
   * @return the UUID
   * @throws ClassCastException if the element is not a UUID (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public UUID getUuid(int index) {
    return typed(index, UUID.class, "a UUID");
  }

  /**
   * A nested tuple element.
   *
   * @param index the position
   * @return the nested tuple
   * @throws ClassCastException if the element is not a tuple (or is null)
   * @throws IndexOutOfBoundsException if there is no such position
   */
  public Tuple getTuple(int index) {
    return typed(index, Tuple.class, "a tuple");
  }

  private <T> T typed(int index, Class<T> type, String what) {
    Object item = items.get(index);
    if (!type.isInstance(item)) {
      throw new ClassCastException(
          "element "
              + index
              + " is "
              + (item == null ? "null" : "a " + item.getClass().getSimpleName())
              + ", not "
              + what);
    }
    return type.cast(item);
  }

  /**
   * The elements, as {@link #get(int)} returns them.
   *
   * @return an unmodifiable list (byte arrays in it are copies)
   */
  public List<Object> items() {
    List<Object> copy = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      copy.add(get(i));
    }
    return Collections.unmodifiableList(copy);
  }

  /** The elements without copying, for the encoder. */
  List<Object> itemsView() {
    return items;
  }

  /**
   * Compares in the order described in the class comment (the unsigned order of the encodings).
   *
   * @param other another tuple
   * @return negative, zero or positive as this tuple sorts before, with, or after {@code other}
   */
  @Override
  public int compareTo(Tuple other) {
    return Arrays.compareUnsigned(packed, other.packed);
  }

  /**
   * Equal when the encodings are equal (see the class comment).
   *
   * @param o another object
   * @return true for a tuple with the same encoding
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof Tuple t && Arrays.equals(packed, t.packed);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(packed);
  }

  /**
   * A readable form: {@code ("user", 42, b"00ff", 1.5, 1.5f, true, null, (nested))}.
   *
   * @return the elements in parentheses
   */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("(");
    for (int i = 0; i < items.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      Object item = items.get(i);
      if (item instanceof byte[] b) {
        sb.append("b\"").append(HexFormat.of().formatHex(b)).append('"');
      } else if (item instanceof String s) {
        sb.append('"').append(s.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
      } else if (item instanceof Float f) {
        sb.append(f).append('f');
      } else {
        sb.append(item);
      }
    }
    return sb.append(')').toString();
  }
}
