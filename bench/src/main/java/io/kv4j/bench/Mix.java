package io.kv4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A scenario's operation mix: steps with the percent of operations each takes, as the catalogue
 * writes it ({@code 95% read, 5% insert}, {@code 95% scan 1-100, 5% insert}, {@code 100% multiget
 * 16}). A worker draws one step per operation ({@link #pick}); the keys the step uses come from the
 * scenario's {@link Scenario.Distribution}.
 *
 * @param steps the steps, their percents adding up to 100; empty for scenarios without a mix
 */
public record Mix(List<Step> steps) {
  /** No operations: the mix of scenarios whose procedure does its own (loads, footprint). */
  public static final Mix NONE = new Mix(List.of());

  /**
   * What one step of a mix does.
   *
   * <p>{@link #READ} and {@link #MULTIGET} verify every value they read; {@link #SCAN} checks
   * order, contiguity and every value; {@link #INSERT} writes a key past the loaded ones, which
   * reads of the {@code latest} distribution may pick once it is complete.
   */
  public enum Operation {
    /** A get of one key. */
    READ("read", false),
    /** One {@link io.kv4j.Store#getAll} of {@code length} keys. */
    MULTIGET("multiget", true),
    /** A put of a fresh value to an existing key. */
    UPDATE("update", false),
    /** A put of a new key. */
    INSERT("insert", false),
    /** An ordered scan of {@code length} keys (a fixed count or a uniform range) from a key. */
    SCAN("scan", true),
    /** A get, then a put of the same key. */
    READ_MODIFY_WRITE("read-modify-write", false);

    private final String word;
    private final boolean hasLength;

    Operation(String word, boolean hasLength) {
      this.word = word;
      this.hasLength = hasLength;
    }

    /**
     * The operation's word in the catalogue.
     *
     * @return such as {@code read-modify-write}
     */
    public String word() {
      return word;
    }

    static Operation of(String word) {
      for (Operation o : values()) {
        if (o.word.equals(word)) {
          return o;
        }
      }
      List<String> words = new ArrayList<>();
      for (Operation o : values()) {
        words.add(o.word);
      }
      throw new IllegalArgumentException(
          "unknown operation '" + word + "'; valid: " + String.join(", ", words));
    }
  }

  /**
   * One step of a mix.
   *
   * @param share the share of operations, in (0, 1]: a percent of the catalogue / 100, or a YCSB
   *     proportion
   * @param operation what it does
   * @param minLength keys per scan or multiget (the least, for a range); 0 for the others
   * @param maxLength the most keys per scan or multiget; 0 for the others
   * @param zipfianLengths true when a range's lengths are zipfian (the shortest most frequent, as
   *     YCSB's {@code scanlengthdistribution=zipfian}), false when uniform
   */
  public record Step(
      double share, Operation operation, int minLength, int maxLength, boolean zipfianLengths) {
    /**
     * Checks the values.
     *
     * @param share the share of operations, in (0, 1]
     * @param operation what it does
     * @param minLength keys per scan or multiget (the least); 0 for the others
     * @param maxLength the most keys per scan or multiget; 0 for the others
     * @param zipfianLengths true for zipfian lengths of a range
     */
    public Step {
      Objects.requireNonNull(operation, "operation");
      if (!(share > 0 && share <= 1)) {
        throw new IllegalArgumentException("a step's share must be in (0, 1], got " + share);
      }
      if (operation.hasLength ? minLength < 1 || maxLength < minLength : minLength != 0) {
        throw new IllegalArgumentException(
            operation.hasLength
                ? operation.word + " needs a key count of at least 1 (N or MIN-MAX)"
                : operation.word + " takes no key count");
      }
    }

    /**
     * A step as the catalogue writes it: a whole percent, uniform lengths.
     *
     * @param percent the share of operations, 1..100
     * @param operation what it does
     * @param minLength keys per scan or multiget (the least); 0 for the others
     * @param maxLength the most keys per scan or multiget; 0 for the others
     */
    public Step(int percent, Operation operation, int minLength, int maxLength) {
      this(percentShare(percent), operation, minLength, maxLength, false);
    }

    private static double percentShare(int percent) {
      if (percent < 1 || percent > 100) {
        throw new IllegalArgumentException("a step's percent must be 1..100, got " + percent);
      }
      return percent / 100.0;
    }

    /**
     * The share as a percent.
     *
     * @return such as {@code 95.0}
     */
    public double percent() {
      return share * 100;
    }

    @Override
    public String toString() {
      String length =
          !operation.hasLength
              ? ""
              : minLength == maxLength
                  ? " " + minLength
                  : " " + minLength + "-" + maxLength + (zipfianLengths ? " zipfian" : "");
      return Format.percent(percent()) + "% " + operation.word + length;
    }
  }

  /**
   * Checks that the shares add up to 1 (within 1e-9) or that there are no steps.
   *
   * @param steps the steps
   */
  public Mix {
    steps = List.copyOf(steps);
    double sum = steps.stream().mapToDouble(Step::share).sum();
    if (!steps.isEmpty() && Math.abs(sum - 1) > 1e-9) {
      throw new IllegalArgumentException(
          "the percents of a mix must add up to 100, got " + Format.percent(sum * 100));
    }
  }

  /**
   * Parses a mix as the catalogue writes it.
   *
   * @param text such as {@code 95% scan 1-100, 5% insert}; blank for {@link #NONE}
   * @return the mix
   * @throws IllegalArgumentException naming what is wrong
   */
  public static Mix parse(String text) {
    if (text.isBlank()) {
      return NONE;
    }
    List<Step> steps = new ArrayList<>();
    for (String part : text.split(",")) {
      String[] w = part.trim().toLowerCase(Locale.ROOT).split("\\s+");
      if (w.length < 2 || w.length > 3 || !w[0].endsWith("%")) {
        throw new IllegalArgumentException(
            "a mix step is '<percent>% <operation> [<keys>]', got '" + part.trim() + "'");
      }
      int percent = number(w[0].substring(0, w[0].length() - 1), part);
      Operation op = Operation.of(w[1]);
      int min = 0;
      int max = 0;
      if (w.length == 3) {
        int dash = w[2].indexOf('-');
        min = number(dash < 0 ? w[2] : w[2].substring(0, dash), part);
        max = dash < 0 ? min : number(w[2].substring(dash + 1), part);
      }
      steps.add(new Step(percent, op, min, max));
    }
    return new Mix(steps);
  }

  private static int number(String s, String part) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "not a number: '" + s + "' in mix step '" + part.trim() + "'", e);
    }
  }

  /**
   * Whether a step of the mix is an operation.
   *
   * @param op the operation
   * @return true if some step does it
   */
  public boolean has(Operation op) {
    return steps.stream().anyMatch(s -> s.operation() == op);
  }

  /**
   * Whether the mix has no steps.
   *
   * @return true for {@link #NONE}
   */
  public boolean isEmpty() {
    return steps.isEmpty();
  }

  /**
   * The step a percent draw picks: the first whose running sum of percents exceeds it (the draw
   * stands for the middle of its percent, so rounding of the shares never moves a boundary).
   *
   * @param draw a uniform draw in 0..99
   * @return the step
   */
  public Step pick(int draw) {
    if (draw < 0 || draw > 99) {
      throw new IllegalArgumentException("draw must be 0..99, got " + draw);
    }
    return pick((draw + 0.5) / 100);
  }

  /**
   * The step a uniform draw picks: the first whose running sum of shares exceeds it; the last step
   * when rounding leaves the sum just below the draw.
   *
   * @param u a uniform draw in [0, 1)
   * @return the step
   */
  public Step pick(double u) {
    double sum = 0;
    for (Step s : steps) {
      sum += s.share();
      if (u < sum) {
        return s;
      }
    }
    if (steps.isEmpty()) {
      throw new IllegalStateException("an empty mix has no step to pick");
    }
    return steps.get(steps.size() - 1);
  }

  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    steps.forEach(s -> parts.add(s.toString()));
    return String.join(", ", parts);
  }
}
