package io.kv4j.spring;

import io.kv4j.Store;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * A {@link StoreHealthIndicator} for every {@link Store} bean, grouped as the {@code kv4j} health
 * contributor ({@code /actuator/health/kv4j/<name>}), when the actuator is on the class path.
 * {@code management.health.kv4j.enabled=false} turns it off.
 */
@AutoConfiguration(after = Kv4jAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(Store.class)
@ConditionalOnProperty(prefix = "management.health.kv4j", name = "enabled", matchIfMissing = true)
public class Kv4jHealthAutoConfiguration {
  /** Created by Spring. */
  public Kv4jHealthAutoConfiguration() {}

  /**
   * The stores' indicators, by bean name.
   *
   * @param stores every store bean, by name
   * @return the {@code kv4j} contributor
   */
  @Bean
  @ConditionalOnMissingBean(name = "kv4jHealthContributor")
  public HealthContributor kv4jHealthContributor(Map<String, Store> stores) {
    Map<String, HealthIndicator> indicators = new LinkedHashMap<>();
    stores.forEach((name, store) -> indicators.put(name, new StoreHealthIndicator(store)));
    return CompositeHealthContributor.fromMap(indicators);
  }
}
