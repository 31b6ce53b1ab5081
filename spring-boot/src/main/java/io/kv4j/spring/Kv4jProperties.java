package io.kv4j.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code kv4j.*} settings: the stores, by name, and how they are metered.
 *
 * <pre>{@code
 * kv4j:
 *   stores:
 *     orders:
 *       uri: hashlog:/var/lib/app/orders
 *     sessions:
 *       uri: sqlite:/var/lib/app/sessions
 *       durability: buffered
 *   metrics:
 *     stats-max-age: 5s
 * }</pre>
 */
@ConfigurationProperties(prefix = Kv4jProperties.PREFIX)
public class Kv4jProperties {
  /** The prefix of every kv4j setting. */
  public static final String PREFIX = "kv4j";

  private Map<String, StoreProperties> stores = new LinkedHashMap<>();
  private final Metrics metrics = new Metrics();

  /** Creates empty settings, for binding. */
  public Kv4jProperties() {}

  /**
   * The stores, by name: each becomes a {@code Store} bean of that name.
   *
   * @return the stores, mutable, for binding
   */
  public Map<String, StoreProperties> getStores() {
    return stores;
  }

  /**
   * Sets the stores.
   *
   * @param stores the stores by name
   */
  public void setStores(Map<String, StoreProperties> stores) {
    this.stores = stores;
  }

  /**
   * How the stores are metered, when Micrometer and kv4j-micrometer are present.
   *
   * @return the metrics settings
   */
  public Metrics getMetrics() {
    return metrics;
  }

  /** The {@code kv4j.metrics.*} settings. */
  public static class Metrics {
    private boolean enabled = true;
    private Duration statsMaxAge = Duration.ofSeconds(1);

    /** Creates the defaults, for binding. */
    public Metrics() {}

    /**
     * Whether the stores are metered. Default true.
     *
     * @return true to meter
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the stores are metered.
     *
     * @param enabled true to meter
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * How long one {@code stats()} answer serves the gauges. Default one second.
     *
     * @return the age
     */
    public Duration getStatsMaxAge() {
      return statsMaxAge;
    }

    /**
     * Sets how long one {@code stats()} answer serves the gauges.
     *
     * @param statsMaxAge the age, zero to read stats for every gauge
     */
    public void setStatsMaxAge(Duration statsMaxAge) {
      this.statsMaxAge = statsMaxAge;
    }
  }
}
