package io.kv4j.bench.jmh;

import io.kv4j.Store;
import io.kv4j.bench.Data;
import io.kv4j.bench.Scenario;
import io.kv4j.bench.Workload;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * {@code durable-put}: uniform random puts acknowledged with durability SYNC, on a fresh store.
 * Reported on its own, never next to BUFFERED numbers. Run at 1 and 2 threads ({@code -t}) to see
 * group commit.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {
      JvmFlags.HEAP_MIN,
      JvmFlags.HEAP_MAX,
      JvmFlags.OPEN_NIO,
      JvmFlags.OPEN_NIO_CH,
      JvmFlags.NATIVE,
      JvmFlags.EXPORT_REF,
      JvmFlags.EXPORT_NIO_CH,
      JvmFlags.EXPORT_JAVAC,
      JvmFlags.OPEN_LANG,
      JvmFlags.OPEN_REFLECT,
      JvmFlags.NO_ANALYTICS
    })
public class DurableWriteBenchmark {
  /** Creates the benchmark; JMH instantiates it. */
  public DurableWriteBenchmark() {}

  /** A fresh store opened with durability SYNC. */
  @State(Scope.Benchmark)
  public static class SyncStore {
    /** The engine id. */
    @Param({"memory"})
    public String engine;

    /** Key space of the puts. */
    @Param({"100000"})
    public long keys;

    /** Value size in bytes. */
    @Param({"1024"})
    public int valueSize;

    private Path dir;
    private Store store;
    private Workload workload;

    /** Creates the state; JMH instantiates it. */
    public SyncStore() {}

    /** Opens the store. */
    @Setup(Level.Trial)
    public void setUp() {
      dir = Fixture.tempDir(engine);
      store = Fixture.open(engine, dir, "sync");
      workload = new Workload(store, new Data(16, valueSize, false, Fixture.SEED), keys);
    }

    /** Closes and deletes the store. */
    @TearDown(Level.Trial)
    public void tearDown() {
      Fixture.close(store, dir);
    }
  }

  /** One thread's worker on the SYNC store. */
  @State(Scope.Thread)
  public static class SyncWorker {
    private static final AtomicLong SEEDS = new AtomicLong(Fixture.SEED);
    private Workload.Worker worker;

    /** Creates the state; JMH instantiates it. */
    public SyncWorker() {}

    /**
     * Creates the worker.
     *
     * @param s the store
     */
    @Setup(Level.Trial)
    public void setUp(SyncStore s) {
      worker = s.workload.worker(SEEDS.getAndAdd(0x9E3779B97F4A7C15L));
    }
  }

  /**
   * One durable put.
   *
   * @param w the thread's worker
   * @return the slot written
   */
  @Benchmark
  public long durablePut(SyncWorker w) {
    return w.worker.op(Scenario.DURABLE_PUT);
  }
}
