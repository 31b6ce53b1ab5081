package io.kv4j.bench;

import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * How long the values a run writes are: YCSB's {@code fieldcount} fields of {@code fieldlength}
 * bytes each, every field's length constant, or drawn per write uniform in 1..fieldlength or
 * zipfian (0.99, short fields most frequent, not scrambled) as YCSB's {@code
 * fieldlengthdistribution} does. A kv4j value has no fields: a value is the fields' lengths added
 * up, and never shorter than {@link Data#MIN_VALUE_SIZE} (the bench's value header, the key index
 * and the pool slot, must fit), so drawn sizes below it are raised to it.
 *
 * @param fieldCount fields per value, at least 1
 * @param fieldLength the bytes of a field (constant) or the most (uniform, zipfian), at least 1
 * @param shape how each field's length is chosen
 */
record ValueSizes(int fieldCount, int fieldLength, Shape shape) {
  /** How a field's length is chosen per write. */
  enum Shape {
    /** Always {@code fieldlength}. */
    CONSTANT,
    /** Uniform in 1..fieldlength. */
    UNIFORM,
    /** Zipfian in 1..fieldlength, 1 the most frequent (YCSB's ZipfianGenerator(1, fieldlength)). */
    ZIPFIAN;

    /**
     * The shape's word in a workload file.
     *
     * @return such as {@code constant}
     */
    String word() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The largest value a run writes: room for a few per thread, never a whole heap. */
  static final int MAX_VALUE_BYTES = 256 << 20;

  /**
   * Checks the sizes.
   *
   * @param fieldCount fields per value
   * @param fieldLength bytes per field, or the most
   * @param shape how each field's length is chosen
   */
  ValueSizes {
    Objects.requireNonNull(shape, "shape");
    if (fieldCount < 1 || fieldLength < 1) {
      throw new IllegalArgumentException(
          "fieldcount and fieldlength must be at least 1, got " + fieldCount + ", " + fieldLength);
    }
    long max = (long) fieldCount * fieldLength;
    if (max > MAX_VALUE_BYTES) {
      throw new IllegalArgumentException(
          "values of fieldcount x fieldlength = "
              + max
              + " bytes are above the bench's limit of "
              + MAX_VALUE_BYTES
              + " bytes");
    }
    if (max < Data.MIN_VALUE_SIZE) {
      throw new IllegalArgumentException(
          "values of fieldcount x fieldlength = "
              + max
              + " bytes are below the bench's minimum of "
              + Data.MIN_VALUE_SIZE
              + " bytes (its value header: key index and pool slot)");
    }
  }

  /**
   * Values of one fixed size.
   *
   * @param bytes the size
   * @return one field of {@code bytes}, constant
   */
  static ValueSizes constant(int bytes) {
    return new ValueSizes(1, bytes, Shape.CONSTANT);
  }

  /**
   * Whether every value has the same size.
   *
   * @return true for {@link Shape#CONSTANT}
   */
  boolean fixed() {
    return shape == Shape.CONSTANT;
  }

  /**
   * The largest value.
   *
   * @return fieldcount x fieldlength bytes
   */
  int max() {
    return fieldCount * fieldLength;
  }

  /**
   * The smallest value.
   *
   * @return the constant size, else fieldcount (each field at least 1 byte) raised to {@link
   *     Data#MIN_VALUE_SIZE}
   */
  int min() {
    return fixed() ? max() : Math.max(Data.MIN_VALUE_SIZE, fieldCount);
  }

  /**
   * The mean value size, about (draws raised to the minimum are counted at their drawn size): what
   * a footprint's live bytes assume per key.
   *
   * @return bytes
   */
  double mean() {
    double field =
        switch (shape) {
          case CONSTANT -> fieldLength;
          case UNIFORM -> (fieldLength + 1) / 2.0;
          case ZIPFIAN -> 1 + zipfianMeanRank(fieldLength);
        };
    return Math.max(Data.MIN_VALUE_SIZE, fieldCount * field);
  }

  private static double zipfianMeanRank(int items) {
    double zetan = Zipfian.zeta(items, Zipfian.THETA);
    double sum = 0;
    for (int i = 0; i < items; i++) {
      sum += i / Math.pow(i + 1, Zipfian.THETA);
    }
    return sum / zetan;
  }

  /**
   * A generator of sizes for one thread.
   *
   * @return a drawer; not thread-safe, each worker has its own
   */
  Drawer drawer() {
    return new Drawer();
  }

  /** Draws value sizes; holds the zipfian of the field lengths. */
  final class Drawer {
    private final Zipfian zipf =
        shape == Shape.ZIPFIAN ? new Zipfian(fieldLength, Zipfian.THETA) : null;

    private Drawer() {}

    /**
     * The size of the next value written.
     *
     * @param random the thread's random numbers
     * @return bytes, in {@link #min()}..{@link #max()}
     */
    int next(SplittableRandom random) {
      if (shape == Shape.CONSTANT) {
        return max();
      }
      int sum = 0;
      for (int f = 0; f < fieldCount; f++) {
        sum +=
            shape == Shape.UNIFORM
                ? 1 + random.nextInt(fieldLength)
                : 1 + (int) zipf.next(random.nextDouble());
      }
      return Math.max(Data.MIN_VALUE_SIZE, sum);
    }
  }

  @Override
  public String toString() {
    if (fixed() && fieldCount == 1) {
      return "values of " + max() + " bytes";
    }
    return fixed()
        ? String.format(
            Locale.ROOT,
            "values of %d bytes (%d fields x %d bytes)",
            max(),
            fieldCount,
            fieldLength)
        : String.format(
            Locale.ROOT,
            "values of %,d to %,d bytes, about %,.0f on average (%d fields of 1 to %,d bytes, %s)",
            min(),
            max(),
            mean(),
            fieldCount,
            fieldLength,
            shape.word());
  }
}
