package io.kv4j;

/**
 * Size limits of an engine. Every engine supports keys of at least 511 bytes and values of at least
 * 16 MiB.
 *
 * @param maxKeySize longest key accepted, in bytes (keys are 1..maxKeySize bytes)
 * @param maxValueSize longest value accepted, in bytes (values are 0..maxValueSize bytes)
 */
public record Limits(int maxKeySize, int maxValueSize) {
  /** The smallest key limit any kv4j engine may declare: 511 bytes. */
  public static final int MIN_MAX_KEY_SIZE = 511;

  /** The smallest value limit any kv4j engine may declare: 16 MiB. */
  public static final int MIN_MAX_VALUE_SIZE = 16 << 20;

  /**
   * Validates the limits.
   *
   * @param maxKeySize longest key, in bytes
   * @param maxValueSize longest value, in bytes
   * @throws IllegalArgumentException if a limit is below the kv4j minimum
   */
  public Limits {
    if (maxKeySize < MIN_MAX_KEY_SIZE) {
      throw new IllegalArgumentException(
          "maxKeySize " + maxKeySize + " is below the kv4j minimum of " + MIN_MAX_KEY_SIZE);
    }
    if (maxValueSize < MIN_MAX_VALUE_SIZE) {
      throw new IllegalArgumentException(
          "maxValueSize " + maxValueSize + " is below the kv4j minimum of " + MIN_MAX_VALUE_SIZE);
    }
  }
}
