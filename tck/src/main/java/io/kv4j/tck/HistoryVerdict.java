package io.kv4j.tck;

import java.time.Duration;

/**
 * What {@link History#check(Duration)} found: the history is linearizable, it is not (with the
 * shortest prefix that cannot be linearized, as a timeline), or the check could not decide within
 * its time budget. An undecided check is never a pass: {@link #linearizable()} is then false and
 * {@link #explanation()} starts with {@code could not decide in N ms}.
 */
public final class HistoryVerdict {
  private final boolean decided;
  private final boolean linearizable;
  private final int operations;
  private final int partitions;
  private final long elapsedNanos;
  private final String explanation;
  private final long largestSearch;

  private HistoryVerdict(
      boolean decided,
      boolean linearizable,
      int operations,
      int partitions,
      long elapsedNanos,
      String explanation,
      long largestSearch) {
    this.decided = decided;
    this.linearizable = linearizable;
    this.operations = operations;
    this.partitions = partitions;
    this.elapsedNanos = elapsedNanos;
    this.explanation = explanation;
    this.largestSearch = largestSearch;
  }

  static HistoryVerdict linearizable(
      int ops, int partitions, long nanos, String text, long largestSearch) {
    return new HistoryVerdict(true, true, ops, partitions, nanos, text, largestSearch);
  }

  static HistoryVerdict notLinearizable(
      int ops, int partitions, long nanos, String text, long largestSearch) {
    return new HistoryVerdict(true, false, ops, partitions, nanos, text, largestSearch);
  }

  static HistoryVerdict undecided(
      int ops, int partitions, long nanos, String text, long largestSearch) {
    return new HistoryVerdict(false, false, ops, partitions, nanos, text, largestSearch);
  }

  /**
   * The most configurations one partition's search visited: how close the check came to its memo
   * bound ({@link LinearizabilityCheck#MAX_CONFIGURATIONS}).
   */
  long largestSearch() {
    return largestSearch;
  }

  /**
   * Whether the check decided, either way, within its budget.
   *
   * @return false when it ran out of time (or of memo space) before deciding
   */
  public boolean decided() {
    return decided;
  }

  /**
   * Whether the history was found linearizable.
   *
   * @return true only when the check decided and found an order explaining every answer
   */
  public boolean linearizable() {
    return linearizable;
  }

  /**
   * How many operations the history held (an operation that threw without effect, such as one
   * refused with {@code IllegalArgumentException}, is not recorded).
   *
   * @return the number of operations
   */
  public int operations() {
    return operations;
  }

  /**
   * How many independent partitions (connected sets of keys) the history was split into.
   *
   * @return the number of partitions
   */
  public int partitions() {
    return partitions;
  }

  /**
   * How long the check took.
   *
   * @return the check's duration
   */
  public Duration elapsed() {
    return Duration.ofNanos(elapsedNanos);
  }

  /**
   * What was found, for a message: for a linearizable history one line with its size and the
   * check's duration; for one that is not, the partition's keys, the shortest failing prefix's
   * length, and its tail as a timeline (client, invocation and return in milliseconds since the
   * history started, operation and answer) marking the operation no order explains; for an
   * undecided check {@code could not decide in N ms ...} and where it stopped.
   *
   * @return the explanation
   */
  public String explanation() {
    return explanation;
  }

  @Override
  public String toString() {
    return explanation;
  }
}
