package com.example.springapp;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.CompositeHealth;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Starts the whole application on a fresh data directory. */
@SpringBootTest
class SpringAppTest {
  @TempDir static Path dataDir;

  @DynamicPropertySource
  static void dataDir(DynamicPropertyRegistry registry) {
    registry.add("app.data-dir", dataDir::toString);
    // The gauges share one stats() answer for kv4j.metrics.stats-max-age (1 s by default), the
    // first read when they were bound to the empty stores: read the stores' figures now instead.
    registry.add("kv4j.metrics.stats-max-age", () -> "0s");
  }

  @Autowired OrderBook orders;
  @Autowired HealthEndpoint health;
  @Autowired MeterRegistry registry;

  @Test
  void application_storesHealthyAndMetered() {
    assertThat(orders.lastOrderOf("alice")).isEqualTo("pizza"); // placed by the demo runner
    orders.place("bob", "order-2", "soup");
    assertThat(orders.lastOrderOf("bob")).isEqualTo("soup");

    CompositeHealth kv4j = (CompositeHealth) health.healthForPath("kv4j");
    assertThat(kv4j.getStatus()).isEqualTo(Status.UP);
    assertThat(kv4j.getComponents()).containsOnlyKeys("orders", "sessions");
    assertThat(health.health().getStatus()).isEqualTo(Status.UP);

    for (String store : new String[] {"orders", "sessions"}) {
      assertThat(
              registry
                  .get("kv4j.store.operations")
                  .tags("store", store, "operation", "put", "result", "success")
                  .timer()
                  .count())
          .as(store)
          .isEqualTo(2);
      assertThat(registry.get("kv4j.store.keys").tag("store", store).gauge().value())
          .as(store)
          .isEqualTo(2);
    }
    assertThat(
            registry.get("kv4j.store.keys").tag("store", "orders").gauge().getId().getTag("engine"))
        .isEqualTo("hashlog");
  }
}
