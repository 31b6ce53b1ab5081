package io.kv4j.bench.jmh;

import io.kv4j.Store;
import io.kv4j.bench.Catalogue;
import io.kv4j.bench.Data;
import io.kv4j.bench.Scenario;
import io.kv4j.bench.Workload;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A store of {@link #engine} for one timed scenario of the catalogue, once per trial: loaded with
 * {@link #keys} keys when the scenario runs on the main store, empty when it runs on a fresh one
 * ({@code durable-put}); opened with the scenario's durability when it has one (SYNC), else with
 * {@link #durability}.
 */
@State(Scope.Benchmark)
public class LoadedStore {
  /**
   * The scenario id: a timed scenario of {@code scenarios.conf}. The default list is every timed
   * one (CatalogueTest checks it against the catalogue).
   */
  @Param({
    "readrandom",
    "multiget",
    "ycsb-a",
    "ycsb-b",
    "ycsb-c",
    "ycsb-d",
    "ycsb-e",
    "ycsb-f",
    "overwrite",
    "scan",
    "durable-put"
  })
  public String scenario;

  /** The engine id, resolved through {@link io.kv4j.bench.Instruments#provider(String)}. */
  @Param({"memory"})
  public String engine;

  /** Number of keys loaded. */
  @Param({"100000"})
  public long keys;

  /** Value size in bytes. */
  @Param({"1024"})
  public int valueSize;

  /** Whether values compress about 2:1. */
  @Param({"false"})
  public boolean compressible;

  /** Durability of writes: buffered or sync (a SYNC scenario is always sync). */
  @Param({"buffered"})
  public String durability;

  private Path dir;
  private Store store;
  private Workload workload;
  private Scenario resolved;

  /** Creates the state; JMH instantiates it. */
  public LoadedStore() {}

  /** Resolves the scenario, opens the store and loads it if the scenario needs that. */
  @Setup(Level.Trial)
  public void setUp() {
    resolved = timed(scenario);
    Data data = new Data(16, valueSize, compressible, Fixture.SEED);
    dir = Fixture.tempDir(engine);
    store = Fixture.open(engine, dir, resolved.sync() ? "sync" : durability);
    if (resolved.onMainStore()) {
      Fixture.load(store, data, keys);
    }
    workload = new Workload(store, data, keys);
  }

  /** The timed scenario with an id; refuses the others, naming the timed ones. */
  static Scenario timed(String id) {
    Scenario s = Catalogue.standard().byId(id);
    if (s.kind() != Scenario.Kind.TIMED) {
      throw new IllegalArgumentException(
          "scenario '"
              + id
              + "' is not a per-operation (timed) scenario; valid: "
              + Catalogue.standard().ofKind(Scenario.Kind.TIMED).stream()
                  .map(Scenario::id)
                  .collect(Collectors.joining(", ")));
    }
    return s;
  }

  /** Closes and deletes the store. */
  @TearDown(Level.Trial)
  public void tearDown() {
    Fixture.close(store, dir);
  }

  Workload workload() {
    return workload;
  }

  Scenario resolved() {
    return resolved;
  }
}
