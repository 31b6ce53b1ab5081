package io.kv4j.bench.jmh;

import io.kv4j.bench.Scenario;
import io.kv4j.bench.Workload;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** One benchmark thread's random numbers and buffers, and the scenario it runs. */
@State(Scope.Thread)
public class ThreadWorker {
  private static final AtomicLong SEEDS = new AtomicLong(Fixture.SEED);

  private Workload.Worker worker;
  private Scenario scenario;

  /** Creates the state; JMH instantiates it. */
  public ThreadWorker() {}

  /**
   * Creates this thread's worker on the loaded store.
   *
   * @param store the shared store
   */
  @Setup(Level.Trial)
  public void setUp(LoadedStore store) {
    worker = store.workload().worker(SEEDS.getAndAdd(0x9E3779B97F4A7C15L));
    scenario = store.resolved();
  }

  /**
   * Runs one operation of the scenario.
   *
   * @return a value for the blackhole
   */
  long op() {
    return worker.op(scenario);
  }
}
