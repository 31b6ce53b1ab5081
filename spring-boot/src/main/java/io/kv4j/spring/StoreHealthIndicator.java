package io.kv4j.spring;

import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import java.util.Objects;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * A store's health, from its {@link Store#stats()}:
 *
 * <table>
 *   <caption>How a store's state maps to a health status</caption>
 *   <tr><th>store</th><th>status</th><th>details</th></tr>
 *   <tr><td>OK</td><td>UP</td><td>engine, location, state, keys</td></tr>
 *   <tr><td>DEGRADED</td><td>UP</td><td>the same, and {@code warning}: the problem</td></tr>
 *   <tr><td>FAILED</td><td>DOWN</td><td>engine, location, state, {@code problem}</td></tr>
 *   <tr><td>closed, or {@code stats()} fails</td><td>DOWN</td><td>engine, location, state,
 *       {@code problem}</td></tr>
 * </table>
 *
 * <p>DEGRADED is UP because reads and writes still work (only background work such as compaction
 * fails and is retried): taking the instance out of service would turn a slow leak into an outage.
 * Alert on the {@code warning} detail or the {@code kv4j.store.health} gauge instead.
 */
public final class StoreHealthIndicator implements HealthIndicator {
  private final Store store;

  /**
   * An indicator of one store.
   *
   * @param store the store
   * @throws NullPointerException if store is null
   */
  public StoreHealthIndicator(Store store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /**
   * Reads the store's stats and maps its health.
   *
   * @return UP for OK and DEGRADED, DOWN for FAILED, closed or unreadable
   */
  @Override
  public Health health() {
    StoreInfo info;
    try {
      info = store.info();
    } catch (RuntimeException e) {
      return Health.down(e).withDetail("state", "UNREADABLE").build();
    }
    Health.Builder health =
        new Health.Builder()
            .withDetail("engine", info.engine())
            .withDetail("location", info.location());
    StoreStats stats;
    try {
      stats = store.stats();
    } catch (StoreClosedException e) {
      return health
          .down()
          .withDetail("state", "CLOSED")
          .withDetail("problem", e.getMessage())
          .build();
    } catch (RuntimeException e) {
      return health
          .down()
          .withDetail("state", "UNREADABLE")
          .withDetail("problem", e.getClass().getSimpleName() + ": " + e.getMessage())
          .build();
    }
    health.withDetail("state", stats.health().name());
    switch (stats.health()) {
      case OK -> health.up().withDetail("keys", keys(stats));
      case DEGRADED ->
          health.up().withDetail("keys", keys(stats)).withDetail("warning", stats.problem());
      case FAILED -> health.down().withDetail("problem", stats.problem());
    }
    return health.build();
  }

  private static String keys(StoreStats stats) {
    return stats.keyCountExact() ? Long.toString(stats.keyCount()) : "~" + stats.keyCount();
  }
}
