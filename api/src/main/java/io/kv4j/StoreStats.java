package io.kv4j;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Figures about a store at one moment, and its health.
 *
 * @param keyCount number of live keys, exact or estimated (see {@code keyCountExact})
 * @param keyCountExact whether {@code keyCount} is exact
 * @param diskBytes bytes the store occupies on disk, 0 for in-memory engines
 * @param figures engine-specific figures by name, in a stable order; names are kebab-case and end
 *     in their unit where they have one ({@code index-bytes-per-key}, {@code wal-bytes})
 * @param health whether the store works as it should (see {@link Health})
 * @param problem what is wrong when {@code health} is not {@link Health#OK}, else null
 */
public record StoreStats(
    long keyCount,
    boolean keyCountExact,
    long diskBytes,
    Map<String, Number> figures,
    Health health,
    String problem) {

  /** Whether a store works as it should. */
  public enum Health {
    /** Everything works. */
    OK,
    /**
     * Reads and writes work, but the store's background work (compaction, for one) fails and is
     * retried: the store may grow or slow down until the cause is fixed. {@code problem} says what
     * fails and why.
     */
    DEGRADED,
    /**
     * The store is failed until reopened (see {@link StoreIOException}): writes and {@code sync}
     * are refused, reads go on. {@code problem} is the first failure's message.
     */
    FAILED
  }

  /**
   * Copies the figures into an unmodifiable map keeping their order.
   *
   * @param keyCount live keys
   * @param keyCountExact whether keyCount is exact
   * @param diskBytes bytes on disk
   * @param figures engine figures
   * @param health the store's health
   * @param problem what is wrong, null exactly when health is OK
   */
  public StoreStats {
    figures = Collections.unmodifiableMap(new LinkedHashMap<>(figures));
    Objects.requireNonNull(health, "health");
    if ((health == Health.OK) != (problem == null)) {
      throw new IllegalArgumentException(
          "a problem is given exactly when the health is not OK: " + health + ", " + problem);
    }
  }

  /**
   * Figures of a healthy store (an engine's {@code doStats}; {@link io.kv4j.spi.AbstractStore} adds
   * the health).
   *
   * @param keyCount live keys
   * @param keyCountExact whether keyCount is exact
   * @param diskBytes bytes on disk
   * @param figures engine figures
   */
  public StoreStats(
      long keyCount, boolean keyCountExact, long diskBytes, Map<String, Number> figures) {
    this(keyCount, keyCountExact, diskBytes, figures, Health.OK, null);
  }
}
