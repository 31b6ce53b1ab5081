package io.kv4j.spring;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreStats;
import io.kv4j.StoreStats.Health;
import io.kv4j.Stores;
import io.kv4j.micrometer.MeteredStore;
import io.kv4j.spring.FakeEngine.FakeStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class Kv4jAutoConfigurationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  Kv4jAutoConfiguration.class,
                  Kv4jMetricsAutoConfiguration.class,
                  Kv4jHealthAutoConfiguration.class));

  private final ApplicationContextRunner metered =
      runner
          .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
          // the gauges read stats afresh, so that they follow each change at once
          .withPropertyValues("kv4j.metrics.stats-max-age=0s");

  @TempDir Path dir;

  @AfterEach
  void forget() {
    FakeEngine.OPENED.clear();
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static HealthIndicator health(AssertableApplicationContext context, String store) {
    return (HealthIndicator)
        context
            .getBean("kv4jHealthContributor", CompositeHealthContributor.class)
            .getContributor(store);
  }

  private String[] twoStores() {
    return new String[] {
      "kv4j.stores.orders.uri=hashlog:" + dir.resolve("orders"),
      "kv4j.stores.orders.options.segment-size=1MiB",
      "kv4j.stores.sessions.uri=sqlite:" + dir.resolve("sessions"),
      "kv4j.stores.sessions.durability=buffered"
    };
  }

  @Test
  void twoStoresOfTwoEngines_usableHealthyMeteredAndClosedAtShutdown() {
    Store[] seen = new Store[2];
    metered
        .withPropertyValues(twoStores())
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              Store orders = context.getBean("orders", Store.class);
              Store sessions = context.getBean("sessions", Store.class);
              seen[0] = orders;
              seen[1] = sessions;
              assertThat(orders.info().engine()).isEqualTo("hashlog");
              assertThat(sessions.info().engine()).isEqualTo("sqlite");
              assertThat(sessions.info().durability()).isEqualTo(Durability.BUFFERED);
              orders.put(b("o1"), b("pizza"));
              sessions.put(b("s1"), b("alice"));
              assertThat(orders.get(b("o1"))).isEqualTo(b("pizza"));
              assertThat(sessions.get(b("s1"))).isEqualTo(b("alice"));
              assertThat(orders.get(b("s1"))).isNull();

              for (String name : List.of("orders", "sessions")) {
                var h = health(context, name).health();
                assertThat(h.getStatus()).as(name).isEqualTo(Status.UP);
                assertThat(h.getDetails()).containsEntry("keys", "1").containsKey("location");
              }
              assertThat(health(context, "orders").health().getDetails())
                  .containsEntry("engine", "hashlog");

              MeterRegistry registry = context.getBean(MeterRegistry.class);
              assertThat(orders).isInstanceOf(MeteredStore.class);
              for (String name : List.of("orders", "sessions")) {
                assertThat(
                        registry
                            .get("kv4j.store.operations")
                            .tags("store", name, "operation", "put", "result", "success")
                            .timer()
                            .count())
                    .as(name)
                    .isEqualTo(1);
                assertThat(registry.get("kv4j.store.keys").tag("store", name).gauge().value())
                    .as(name)
                    .isEqualTo(1);
                assertThat(registry.get("kv4j.store.health").tag("store", name).gauge().value())
                    .as(name)
                    .isZero();
              }
            });
    for (Store s : seen) {
      assertThatThrownBy(() -> s.get(b("x"))).isInstanceOf(StoreClosedException.class);
    }
    // closed means the locations are free again: both reopen, with what was written
    try (Store orders = Stores.open("hashlog:" + dir.resolve("orders"));
        Store sessions = Stores.open("sqlite:" + dir.resolve("sessions"))) {
      assertThat(orders.get(b("o1"))).isEqualTo(b("pizza"));
      assertThat(sessions.get(b("s1"))).isEqualTo(b("alice"));
    }
  }

  @Test
  void shutdown_closesEachStoreExactlyOnce() {
    metered
        .withPropertyValues("kv4j.stores.a.uri=fake:a", "kv4j.stores.b.uri=fake:b")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(FakeEngine.OPENED.get("a").closes.get()).isZero();
              assertThat(FakeEngine.OPENED.get("b").closes.get()).isZero();
            });
    assertThat(FakeEngine.OPENED.get("a").closes.get()).isEqualTo(1);
    assertThat(FakeEngine.OPENED.get("b").closes.get()).isEqualTo(1);
  }

  @Test
  void failedStore_downWithTheReason_degradedUpWithAWarning() {
    metered
        .withPropertyValues("kv4j.stores.a.uri=fake:a")
        .run(
            context -> {
              FakeStore fake = FakeEngine.OPENED.get("a");
              assertThat(health(context, "a").health().getStatus()).isEqualTo(Status.UP);

              fake.stats =
                  new StoreStats(3, true, 0, Map.of(), Health.DEGRADED, "compaction fails");
              var degraded = health(context, "a").health();
              assertThat(degraded.getStatus()).isEqualTo(Status.UP);
              assertThat(degraded.getDetails())
                  .containsEntry("warning", "compaction fails")
                  .containsEntry("state", "DEGRADED");

              fake.stats = new StoreStats(3, true, 0, Map.of(), Health.FAILED, "fsync failed: EIO");
              var failed = health(context, "a").health();
              assertThat(failed.getStatus()).isEqualTo(Status.DOWN);
              assertThat(failed.getDetails())
                  .containsEntry("problem", "fsync failed: EIO")
                  .containsEntry("engine", "fake")
                  .containsEntry("location", "fake:a")
                  .containsEntry("state", "FAILED");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .get("kv4j.store.health")
                          .tag("store", "a")
                          .gauge()
                          .value())
                  .isEqualTo(2);
            });
  }

  @Test
  void storeClosedUnderneath_down() {
    runner
        .withPropertyValues(twoStores())
        .run(
            context -> {
              context.getBean("sessions", Store.class).close();
              var h = health(context, "sessions").health();
              assertThat(h.getStatus()).isEqualTo(Status.DOWN);
              assertThat(h.getDetails())
                  .containsEntry("state", "CLOSED")
                  .containsEntry("engine", "sqlite")
                  .containsKey("problem");
              assertThat(health(context, "orders").health().getStatus()).isEqualTo(Status.UP);
            });
  }

  @Test
  void singleStore_isThePrimaryBean() {
    runner
        .withPropertyValues("kv4j.stores.only.uri=fake:only")
        // a store bean of the application's own: the configured one still injects as Store
        .withBean("mine", Store.class, () -> Stores.open("memory:"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBeansOfType(Store.class)).containsOnlyKeys("only", "mine");
              assertThat(context.getBean(Store.class).info().location()).isEqualTo("fake:only");
            });
  }

  @Test
  void severalStores_injectedByQualifierOrTheOneMarkedPrimary() {
    runner
        .withPropertyValues("kv4j.stores.a.uri=fake:a", "kv4j.stores.b.uri=fake:b")
        .withUserConfiguration(Consumer.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThatThrownBy(() -> context.getBean(Store.class))
                  .isInstanceOf(NoUniqueBeanDefinitionException.class);
              assertThat(context.getBean("location", String.class)).isEqualTo("fake:b");
              assertThat(context.getBeansOfType(Store.class)).containsOnlyKeys("a", "b");
            });
    runner
        .withPropertyValues(
            "kv4j.stores.a.uri=fake:a", "kv4j.stores.b.uri=fake:b", "kv4j.stores.b.primary=true")
        .run(
            context ->
                assertThat(context.getBean(Store.class).info().location()).isEqualTo("fake:b"));
  }

  @Configuration(proxyBeanMethods = false)
  static class Consumer {
    @Bean
    String location(@Qualifier("b") Store store) {
      return store.info().location();
    }
  }

  @Test
  void unknownEngine_failsStartupNamingTheProperty() {
    runner
        .withPropertyValues(
            "kv4j.stores.good.uri=fake:good", "kv4j.stores.bad.uri=nosuch:/x?password=hunter2")
        .run(
            context -> {
              assertThat(context).hasFailed();
              Throwable failure = context.getStartupFailure();
              assertThat(failure).isInstanceOf(InvalidConfigurationPropertyValueException.class);
              var invalid = (InvalidConfigurationPropertyValueException) failure;
              assertThat(invalid.getName()).isEqualTo("kv4j.stores.bad.uri");
              assertThat(invalid.getMessage())
                  .contains("kv4j.stores.bad.uri", "unknown engine 'nosuch'", "available:")
                  .doesNotContain("hunter2");
              assertThat(FakeEngine.OPENED).isEmpty(); // checked before any store opened
            });
  }

  @Test
  void badSettings_failStartupNamingTheProperty() {
    runner
        .withPropertyValues("kv4j.stores.x.durability=sync")
        .run(context -> assertThat(failedProperty(context)).isEqualTo("kv4j.stores.x.uri"));
    runner
        .withPropertyValues("kv4j.stores.x.uri=hashlog")
        .run(context -> assertThat(failedProperty(context)).isEqualTo("kv4j.stores.x.uri"));
    runner
        .withPropertyValues(
            "kv4j.stores.x.uri=hashlog:" + dir.resolve("x"), "kv4j.stores.x.options.no-such=1")
        .run(
            context -> {
              assertThat(failedProperty(context)).isEqualTo("kv4j.stores.x.options");
              assertThat(context.getStartupFailure())
                  .hasMessageContaining("unknown option 'no-such'");
            });
    runner
        .withPropertyValues(
            "kv4j.stores.a.uri=fake:a",
            "kv4j.stores.a.primary=true",
            "kv4j.stores.b.uri=fake:b",
            "kv4j.stores.b.primary=true")
        .run(context -> assertThat(failedProperty(context)).isEqualTo("kv4j.stores.b.primary"));
  }

  private static String failedProperty(AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    assertThat(context.getStartupFailure())
        .isInstanceOf(InvalidConfigurationPropertyValueException.class);
    return ((InvalidConfigurationPropertyValueException) context.getStartupFailure()).getName();
  }

  @Test
  void withoutRegistryOrKv4jMicrometerOrWhenDisabled_storesUnmetered() {
    runner
        .withPropertyValues("kv4j.stores.a.uri=fake:a")
        .run(
            context ->
                assertThat(context.getBean(Store.class)).isNotInstanceOf(MeteredStore.class));
    metered
        .withPropertyValues("kv4j.stores.a.uri=fake:a", "kv4j.metrics.enabled=false")
        .run(
            context -> {
              assertThat(context.getBean(Store.class)).isNotInstanceOf(MeteredStore.class);
              assertThat(context.getBean(MeterRegistry.class).find("kv4j.store.keys").gauge())
                  .isNull();
            });
    metered
        .withPropertyValues("kv4j.stores.a.uri=fake:a")
        .withClassLoader(new FilteredClassLoader(MeteredStore.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(StoreMetering.class);
              assertThat(context.getBean(Store.class)).isNotInstanceOf(MeteredStore.class);
            });
  }

  @Test
  void withoutActuator_storesWithoutHealth() {
    runner
        .withPropertyValues("kv4j.stores.a.uri=fake:a")
        .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(Store.class);
              assertThat(context).doesNotHaveBean("kv4jHealthContributor");
            });
  }

  @Test
  void storeName_keptAsWrittenForTheBeanName() {
    runner
        .withPropertyValues("kv4j.stores.userCache.uri=fake:u", "kv4j.stores.order-log.uri=fake:o")
        .run(
            context ->
                assertThat(context.getBeansOfType(Store.class))
                    .containsOnlyKeys("userCache", "order-log"));
  }

  @Test
  void noStoresConfigured_nothingAdded() {
    metered.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(Store.class);
          assertThat(context).doesNotHaveBean("kv4jHealthContributor");
        });
  }
}
