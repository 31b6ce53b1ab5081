package io.kv4j;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Figures about a store at one moment.
 *
 * @param keyCount number of live keys, exact or estimated (see {@code keyCountExact})
 * @param keyCountExact whether {@code keyCount} is exact
 * @param diskBytes bytes the store occupies on disk, 0 for in-memory engines
 * @param figures engine-specific figures by name, in a stable order; names are kebab-case and end
 *     in their unit where they have one ({@code index-bytes-per-key}, {@code wal-bytes})
 */
public record StoreStats(
    long keyCount, boolean keyCountExact, long diskBytes, Map<String, Number> figures) {

  /**
   * Copies the figures into an unmodifiable map keeping their order.
   *
   * @param keyCount live keys
   * @param keyCountExact whether keyCount is exact
   * @param diskBytes bytes on disk
   * @param figures engine figures
   */
  public StoreStats {
    figures = Collections.unmodifiableMap(new LinkedHashMap<>(figures));
  }
}
