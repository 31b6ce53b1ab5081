package io.kv4j;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A key and its value, as returned by a {@link Cursor}. The arrays belong to the caller: the engine
 * made fresh copies and never looks at them again.
 *
 * @param key the key, 1 or more bytes
 * @param value the value, 0 or more bytes
 */
public record Entry(byte[] key, byte[] value) {
  /**
   * Checks that neither array is null.
   *
   * @param key the key
   * @param value the value
   * @throws NullPointerException if key or value is null
   */
  public Entry {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Entry e && Arrays.equals(key, e.key) && Arrays.equals(value, e.value);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
  }

  @Override
  public String toString() {
    String v = value.length > 32 ? value.length + " bytes" : HexFormat.of().formatHex(value);
    return "Entry[" + HexFormat.of().formatHex(key) + " = " + v + "]";
  }
}
