package io.kv4j.micrometer;

import io.kv4j.Store;
import io.kv4j.StoreStats;
import io.kv4j.StoreStats.Health;
import io.kv4j.spi.AbstractStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Gauges over a store's {@link Store#stats()}, tagged {@code store} and {@code engine}:
 *
 * <ul>
 *   <li>{@code kv4j.store.keys}: live keys, exact or estimated as {@code kv4j.store.keys.exact} (1
 *       or 0) says;
 *   <li>{@code kv4j.store.disk} (bytes): what the store occupies on disk;
 *   <li>{@code kv4j.store.live} and {@code kv4j.store.dead} (bytes): live and garbage payload,
 *       where the engine reports them ({@code live-bytes}, {@code dead-bytes});
 *   <li>{@code kv4j.store.cursors.open} and {@code kv4j.store.snapshots.open}, where reported;
 *   <li>{@code kv4j.store.health}: 0 OK, 1 DEGRADED, 2 FAILED, and {@code kv4j.store.health.state}
 *       tagged {@code state=ok|degraded|failed}: 1 for the current state, 0 for the others;
 *   <li>{@code kv4j.store.figure}, one per engine figure (tag {@code figure}, such as {@code
 *       compaction-runs}, {@code running-compactions}, {@code write-amplification}).
 * </ul>
 *
 * <p>The engine-specific gauges are those whose figures the store reports when the binder is bound;
 * a figure missing later reads NaN. A store whose {@code stats()} throws (closed, or failing to
 * answer) reads FAILED, and NaN for every figure.
 *
 * <p>The gauges read {@code stats()} lazily, when the registry publishes, and share one answer for
 * {@code maxAge}: a publication reads a dozen gauges, and some engines' {@code stats()} walks files
 * or asks a server.
 */
public final class StoreMetrics implements MeterBinder {
  /** How long one {@code stats()} answer serves the gauges unless told otherwise. */
  public static final Duration DEFAULT_MAX_AGE = Duration.ofSeconds(1);

  private final Store store;
  private final Tags tags;
  private final long maxAgeNanos;
  private final Object lock = new Object();
  private StoreStats cached; // guarded by lock; null when the last read failed
  private long readAt; // guarded by lock
  private boolean read; // guarded by lock

  /**
   * Gauges over a store, reading its stats at most once per {@link #DEFAULT_MAX_AGE}.
   *
   * @param store the store
   * @param name the value of the {@code store} tag
   * @throws NullPointerException if an argument is null
   * @throws io.kv4j.StoreClosedException if the store is closed (its engine cannot be read)
   */
  public StoreMetrics(Store store, String name) {
    this(store, name, DEFAULT_MAX_AGE);
  }

  /**
   * Gauges over a store, reading its stats at most once per {@code maxAge}.
   *
   * @param store the store
   * @param name the value of the {@code store} tag
   * @param maxAge how long one {@code stats()} answer serves; zero reads it for every gauge
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code maxAge} is negative
   * @throws io.kv4j.StoreClosedException if the store is closed (its engine cannot be read)
   */
  public StoreMetrics(Store store, String name, Duration maxAge) {
    this.store = Objects.requireNonNull(store, "store");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(maxAge, "maxAge");
    if (maxAge.isNegative()) {
      throw new IllegalArgumentException("maxAge is negative: " + maxAge);
    }
    this.maxAgeNanos = maxAge.toNanos();
    this.tags = Tags.of("store", name, "engine", store.info().engine());
  }

  /**
   * Registers the gauges; they hold this binder strongly, so it lives as long as the registry.
   *
   * @param registry the registry
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(
        registry, "kv4j.store.keys", null, "Live keys", s -> s == null ? Double.NaN : s.keyCount());
    gauge(
        registry,
        "kv4j.store.keys.exact",
        null,
        "1 if kv4j.store.keys is exact, 0 if estimated",
        s -> s == null ? Double.NaN : s.keyCountExact() ? 1 : 0);
    gauge(
        registry,
        "kv4j.store.disk",
        BaseUnits.BYTES,
        "Bytes the store occupies on disk",
        s -> s == null ? Double.NaN : s.diskBytes());
    gauge(
        registry,
        "kv4j.store.health",
        null,
        "0 OK, 1 DEGRADED, 2 FAILED (also when the store is closed)",
        s -> health(s).ordinal());
    for (Health h : Health.values()) {
      Gauge.builder("kv4j.store.health.state", this, m -> health(m.stats()) == h ? 1 : 0)
          .description("1 when the store's health is this state, else 0")
          .tags(tags)
          .tag("state", h.name().toLowerCase(Locale.ROOT))
          .strongReference(true)
          .register(registry);
    }
    StoreStats now = stats();
    if (now == null) {
      return;
    }
    figure(registry, now, "live-bytes", "kv4j.store.live", BaseUnits.BYTES, "Live payload bytes");
    figure(registry, now, "dead-bytes", "kv4j.store.dead", BaseUnits.BYTES, "Garbage bytes");
    figure(
        registry, now, AbstractStore.OPEN_CURSORS, "kv4j.store.cursors.open", null, "Open cursors");
    figure(
        registry,
        now,
        AbstractStore.OPEN_SNAPSHOTS,
        "kv4j.store.snapshots.open",
        null,
        "Open snapshots");
    for (String f : now.figures().keySet()) {
      Gauge.builder("kv4j.store.figure", this, m -> m.figure(f))
          .description("An engine-specific figure of the store's stats()")
          .tags(tags)
          .tag("figure", f)
          .strongReference(true)
          .register(registry);
    }
  }

  private void figure(
      MeterRegistry registry,
      StoreStats now,
      String figure,
      String name,
      String unit,
      String description) {
    if (now.figures().containsKey(figure)) {
      gauge(registry, name, unit, description, s -> value(s, figure));
    }
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String unit,
      String description,
      ToDoubleFunction<StoreStats> value) {
    Gauge.builder(name, this, m -> value.applyAsDouble(m.stats()))
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .strongReference(true)
        .register(registry);
  }

  private double figure(String figure) {
    return value(stats(), figure);
  }

  private static double value(StoreStats s, String figure) {
    Number n = s == null ? null : s.figures().get(figure);
    return n == null ? Double.NaN : n.doubleValue();
  }

  private static Health health(StoreStats s) {
    return s == null ? Health.FAILED : s.health();
  }

  /** The store's stats no older than maxAge, or null if reading them failed. */
  private StoreStats stats() {
    synchronized (lock) {
      long now = System.nanoTime();
      if (!read || now - readAt >= maxAgeNanos) {
        try {
          cached = store.stats();
        } catch (RuntimeException e) {
          cached = null; // closed or failing: the gauges say FAILED until it answers again
        }
        readAt = now;
        read = true;
      }
      return cached;
    }
  }
}
