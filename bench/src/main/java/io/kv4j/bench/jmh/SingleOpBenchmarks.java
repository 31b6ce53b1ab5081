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
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code single-op}: the classic table of 5,000 single inserts (one commit each) into a fresh
 * store, then 5,000 point reads in the order {@code (i*7919)%5000}, one thread; scores in µs per
 * operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Threads(1)
public class SingleOpBenchmarks extends ForkedBenchmark {
  /** Inserts and reads per invocation. */
  static final int COUNT = 5000;

  /** The engine id. */
  @Param({"memory"})
  public String engine;

  /** Value size in bytes. */
  @Param({"1024"})
  public int valueSize;

  /** Durability of writes: buffered or sync. */
  @Param({"buffered"})
  public String durability;

  private Data data;
  private Path dir;
  private Store store;
  private final byte[][] keys = new byte[COUNT][];

  /** Creates the benchmark; JMH instantiates it. */
  public SingleOpBenchmarks() {}

  /** Prepares keys. */
  @Setup(Level.Trial)
  public void prepare() {
    data = new Data(16, valueSize, false, Fixture.SEED);
    for (int i = 0; i < COUNT; i++) {
      keys[i] = data.key(i);
    }
  }

  /** Opens a fresh store holding the 5,000 keys (inserts overwrite them: same cost shape). */
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
   * 5,000 single inserts then 5,000 verified point reads.
   *
   * @return a checksum
   */
  @Benchmark
  @OperationsPerInvocation(2 * COUNT)
  public long insertThenRead() {
    byte[] value = new byte[valueSize];
    for (int i = 0; i < COUNT; i++) {
      data.value(i, i, value);
      store.put(keys[i], value);
    }
    long sum = 0;
    for (int i = 0; i < COUNT; i++) {
      int k = (int) ((i * 7919L) % COUNT);
      byte[] v = store.get(keys[k]);
      data.verify(k, v);
      sum += v[Data.MIN_VALUE_SIZE];
    }
    return sum;
  }
}
