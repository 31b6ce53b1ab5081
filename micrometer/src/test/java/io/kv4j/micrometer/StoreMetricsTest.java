package io.kv4j.micrometer;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreStats;
import io.kv4j.StoreStats.Health;
import io.kv4j.Stores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @TempDir Path dir;

  private double gauge(String name, String... tags) {
    return registry.get(name).tags(tags).gauge().value();
  }

  @Test
  void gauges_followStatsOfARealStore() {
    long seed = 47;
    Random random = new Random(seed);
    try (Store store = Stores.open("hashlog:" + dir.resolve("h") + "?durability=buffered")) {
      new StoreMetrics(store, "h", Duration.ZERO).bindTo(registry);
      assertThat(gauge("kv4j.store.keys")).isZero();

      byte[] value = new byte[300];
      for (int i = 0; i < 20; i++) {
        random.nextBytes(value);
        store.put(("key" + i).getBytes(UTF_8), value);
      }
      assertThat(gauge("kv4j.store.keys")).as("seed %d", seed).isEqualTo(20);
      assertThat(gauge("kv4j.store.keys.exact")).isEqualTo(1);
      double live = gauge("kv4j.store.live");
      assertThat(live).isGreaterThanOrEqualTo(20 * 300);
      assertThat(gauge("kv4j.store.dead")).isZero();
      assertThat(gauge("kv4j.store.disk")).isGreaterThanOrEqualTo(live);
      assertThat(registry.get("kv4j.store.disk").gauge().getId().getBaseUnit()).isEqualTo("bytes");

      for (int i = 0; i < 10; i++) {
        random.nextBytes(value);
        store.put(("key" + i).getBytes(UTF_8), value); // replaces: the old values are dead
      }
      assertThat(gauge("kv4j.store.keys")).isEqualTo(20);
      assertThat(gauge("kv4j.store.dead")).isGreaterThanOrEqualTo(10 * 300);

      Cursor c = store.scan(KeyRange.all());
      assertThat(gauge("kv4j.store.cursors.open")).isEqualTo(1);
      c.close();
      assertThat(gauge("kv4j.store.cursors.open")).isZero();
      assertThat(gauge("kv4j.store.figure", "figure", "compaction-runs")).isZero();
      assertThat(gauge("kv4j.store.health")).isZero();
      assertThat(registry.get("kv4j.store.keys").gauge().getId().getTag("engine"))
          .isEqualTo("hashlog");
    }
  }

  @Test
  void health_followsStatsToFailed() {
    FakeStore fake = new FakeStore();
    new StoreMetrics(fake, "fake", Duration.ZERO).bindTo(registry);
    assertThat(gauge("kv4j.store.health")).isZero();
    assertThat(gauge("kv4j.store.health.state", "state", "ok")).isEqualTo(1);

    fake.stats = new StoreStats(0, true, 0, Map.of(), Health.DEGRADED, "compaction fails");
    assertThat(gauge("kv4j.store.health")).isEqualTo(1);
    assertThat(gauge("kv4j.store.health.state", "state", "degraded")).isEqualTo(1);
    assertThat(gauge("kv4j.store.health.state", "state", "ok")).isZero();

    fake.stats = new StoreStats(0, true, 0, Map.of(), Health.FAILED, "fsync failed");
    assertThat(gauge("kv4j.store.health")).isEqualTo(2);
    assertThat(gauge("kv4j.store.health.state", "state", "failed")).isEqualTo(1);
    assertThat(gauge("kv4j.store.health.state", "state", "degraded")).isZero();
  }

  @Test
  void closedStore_readsFailedAndNaN() {
    Store store = Stores.open("memory:");
    store.put(new byte[] {1}, new byte[] {2});
    new StoreMetrics(store, "m", Duration.ZERO).bindTo(registry);
    assertThat(gauge("kv4j.store.keys")).isEqualTo(1);

    store.close();
    assertThat(gauge("kv4j.store.health")).isEqualTo(2);
    assertThat(gauge("kv4j.store.health.state", "state", "failed")).isEqualTo(1);
    assertThat(gauge("kv4j.store.keys")).isNaN();
    assertThat(gauge("kv4j.store.figure", "figure", "memory-payload-bytes")).isNaN();
  }

  @Test
  void figures_eachAGaugeNaNWhenGone() {
    FakeStore fake = new FakeStore();
    Map<String, Number> figures = new LinkedHashMap<>();
    figures.put("compaction-runs", 3);
    figures.put("write-amplification", 1.5);
    fake.stats = new StoreStats(5, false, 100, figures);
    new StoreMetrics(fake, "fake", Duration.ZERO).bindTo(registry);

    assertThat(gauge("kv4j.store.figure", "figure", "compaction-runs")).isEqualTo(3);
    assertThat(gauge("kv4j.store.figure", "figure", "write-amplification")).isEqualTo(1.5);
    assertThat(gauge("kv4j.store.keys.exact")).isZero();
    assertThat(registry.find("kv4j.store.live").gauge()).isNull(); // not reported: not registered

    fake.stats = new StoreStats(5, false, 100, Map.of("compaction-runs", 4));
    assertThat(gauge("kv4j.store.figure", "figure", "compaction-runs")).isEqualTo(4);
    assertThat(gauge("kv4j.store.figure", "figure", "write-amplification")).isNaN();
  }

  @Test
  void stats_readOncePerMaxAge() {
    FakeStore fake = new FakeStore();
    new StoreMetrics(fake, "fake", Duration.ofHours(1)).bindTo(registry);
    int afterBind = fake.statsCalls.get();
    fake.stats = new StoreStats(9, true, 0, Map.of());
    for (int i = 0; i < 5; i++) {
      registry.getMeters().forEach(m -> m.measure().forEach(ms -> ms.getValue()));
    }
    assertThat(fake.statsCalls.get()).isEqualTo(afterBind);
    assertThat(gauge("kv4j.store.keys")).isZero(); // the answer read at bind time still serves
  }

  @Test
  void storeClosedAtBind_onlyTheFixedGauges() {
    FakeStore fake = new FakeStore();
    fake.failure = new StoreClosedException("closed");
    new StoreMetrics(fake, "fake", Duration.ZERO).bindTo(registry);
    assertThat(gauge("kv4j.store.health")).isEqualTo(2);
    assertThat(registry.find("kv4j.store.figure").gauges()).isEmpty();
  }
}
