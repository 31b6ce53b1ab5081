package io.kv4j.spring;

import io.kv4j.micrometer.MeteredStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Meters every configured store when Micrometer and kv4j-micrometer are on the class path and the
 * application has a {@link MeterRegistry} (the actuator provides one): each store bean is a {@link
 * MeteredStore} and its stats are gauges. {@code kv4j.metrics.enabled=false} turns it off.
 */
@AutoConfiguration(after = Kv4jAutoConfiguration.class)
@ConditionalOnClass({MeterRegistry.class, MeteredStore.class})
@ConditionalOnProperty(
    prefix = Kv4jProperties.PREFIX + ".metrics",
    name = "enabled",
    matchIfMissing = true)
public class Kv4jMetricsAutoConfiguration {
  /** Created by Spring. */
  public Kv4jMetricsAutoConfiguration() {}

  /**
   * The post-processor that meters the store beans. Static, as a post-processor must be created
   * before the beans it processes; it reads its one setting straight from the environment for the
   * same reason.
   *
   * @param registry the application's registry, looked up when the first store is created
   * @param environment the environment holding {@code kv4j.metrics.stats-max-age}
   * @return the post-processor
   */
  @Bean
  static StoreMetering kv4jStoreMetering(
      ObjectProvider<MeterRegistry> registry, Environment environment) {
    Duration maxAge =
        Binder.get(environment)
            .bind(Kv4jProperties.PREFIX + ".metrics.stats-max-age", Duration.class)
            .orElse(new Kv4jProperties.Metrics().getStatsMaxAge());
    return new StoreMetering(registry, maxAge);
  }
}
