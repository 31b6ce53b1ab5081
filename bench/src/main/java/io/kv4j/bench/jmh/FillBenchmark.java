package io.kv4j.bench.jmh;

import io.kv4j.Store;
import io.kv4j.bench.Data;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code fillrandom}: every key once, in random order, single puts, into a fresh store per
 * iteration. Single-shot: the score is the time to load all keys.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
public class FillBenchmark extends ForkedBenchmark {
  /** The engine id. */
  @Param({"memory"})
  public String engine;

  /** Number of keys loaded. */
  @Param({"100000"})
  public long keys;

  /** Value size in bytes. */
  @Param({"1024"})
  public int valueSize;

  /** Durability of writes: buffered or sync. */
  @Param({"buffered"})
  public String durability;

  private Data data;
  private long[] order;
  private Path dir;
  private Store store;

  /** Creates the benchmark; JMH instantiates it. */
  public FillBenchmark() {}

  /** Prepares the data and the load order. */
  @Setup(Level.Trial)
  public void prepare() {
    data = new Data(16, valueSize, false, Fixture.SEED);
    order = Fixture.shuffled(keys);
  }

  /** Opens a fresh, empty store. */
  @Setup(Level.Iteration)
  public void open() {
    dir = Fixture.tempDir(engine);
    store = Fixture.open(engine, dir, durability);
  }

  /** Closes and deletes the store. */
  @TearDown(Level.Iteration)
  public void close() {
    Fixture.close(store, dir);
  }

  /**
   * Loads every key.
   *
   * @return the number of keys written
   */
  @Benchmark
  public long fillrandom() {
    byte[] value = new byte[valueSize];
    for (long index : order) {
      data.value(index, (int) index, value);
      store.put(data.key(index), value);
    }
    return order.length;
  }
}
