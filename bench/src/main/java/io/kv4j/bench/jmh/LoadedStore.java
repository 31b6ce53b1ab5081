package io.kv4j.bench.jmh;

import io.kv4j.Store;
import io.kv4j.bench.Data;
import io.kv4j.bench.Workload;
import java.nio.file.Path;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** A store of {@link #engine}, loaded with {@link #keys} keys once per trial. */
@State(Scope.Benchmark)
public class LoadedStore {
  /** The engine id, resolved through {@link io.kv4j.Stores}. */
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

  /** Durability of writes: buffered or sync. */
  @Param({"buffered"})
  public String durability;

  private Path dir;
  private Store store;
  private Workload workload;

  /** Creates the state; JMH instantiates it. */
  public LoadedStore() {}

  /** Opens and loads the store. */
  @Setup(Level.Trial)
  public void setUp() {
    Data data = new Data(16, valueSize, compressible, Fixture.SEED);
    dir = Fixture.tempDir(engine);
    store = Fixture.open(engine, dir, durability);
    Fixture.load(store, data, keys);
    workload = new Workload(store, data, keys);
  }

  /** Closes and deletes the store. */
  @TearDown(Level.Trial)
  public void tearDown() {
    Fixture.close(store, dir);
  }

  Workload workload() {
    return workload;
  }
}
