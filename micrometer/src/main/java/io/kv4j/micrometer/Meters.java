package io.kv4j.micrometer;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The meters of one store, shared by its {@link MeteredStore}, the keyspace handles opened from it,
 * its snapshots and cursors. Success timers and the cursor and snapshot counters are registered up
 * front, so that a dashboard sees them at zero before the first call; error timers and counters on
 * the first error of their kind, since their tag values are known only then.
 */
final class Meters {
  static final String OPERATIONS = "kv4j.store.operations";
  static final String ERRORS = "kv4j.store.errors";
  static final String CONDITIONAL = "kv4j.store.conditional.writes";
  static final String CURSORS_OPENED = "kv4j.store.cursors.opened";
  static final String CURSORS_CLOSED = "kv4j.store.cursors.closed";
  static final String SNAPSHOTS_OPENED = "kv4j.store.snapshots.opened";
  static final String SNAPSHOTS_CLOSED = "kv4j.store.snapshots.closed";

  private final MeterRegistry registry;
  private final Clock clock;
  private final Tags tags;
  private final Map<Operation, Timer> succeeded = new EnumMap<>(Operation.class);
  private final Map<Operation, Counter> applied = new EnumMap<>(Operation.class);
  private final Map<Operation, Counter> rejected = new EnumMap<>(Operation.class);
  private final ConcurrentMap<String, Timer> failed = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Counter> errors = new ConcurrentHashMap<>();
  final Counter cursorsOpened;
  final Counter cursorsClosed;
  final Counter snapshotsOpened;
  final Counter snapshotsClosed;

  Meters(MeterRegistry registry, String store, String engine) {
    this.registry = registry;
    this.clock = registry.config().clock();
    this.tags = Tags.of("store", store, "engine", engine);
    for (Operation op : Operation.values()) {
      succeeded.put(op, timer(op, "success", "none"));
      if (op.conditional()) {
        applied.put(op, conditional(op, "applied"));
        rejected.put(op, conditional(op, "rejected"));
      }
    }
    cursorsOpened = counter(CURSORS_OPENED, "Cursors opened");
    cursorsClosed = counter(CURSORS_CLOSED, "Cursors closed or read to the end");
    snapshotsOpened = counter(SNAPSHOTS_OPENED, "Snapshots opened");
    snapshotsClosed = counter(SNAPSHOTS_CLOSED, "Snapshots closed");
  }

  /** Runs a call, timing it under its operation and counting it by outcome. */
  <T> T time(Operation op, Supplier<T> call) {
    long start = clock.monotonicTime();
    T answer;
    try {
      answer = call.get();
    } catch (RuntimeException | Error e) {
      failed(op, e, clock.monotonicTime() - start);
      throw e;
    }
    succeeded.get(op).record(clock.monotonicTime() - start, TimeUnit.NANOSECONDS);
    if (op.conditional()) {
      (Boolean.TRUE.equals(answer) ? applied : rejected).get(op).increment();
    }
    return answer;
  }

  void run(Operation op, Runnable call) {
    time(
        op,
        () -> {
          call.run();
          return null;
        });
  }

  /** Counts an error of a call that is not timed: a cursor's {@code hasNext} or {@code next}. */
  void error(Operation op, Throwable e) {
    ErrorKind kind = ErrorKind.of(e);
    errors
        .computeIfAbsent(
            op.tag + '/' + kind.tag,
            k ->
                Counter.builder(ERRORS)
                    .description("Store calls that threw, by the kind of error")
                    .baseUnit("errors")
                    .tags(tags)
                    .tags("operation", op.tag, "kind", kind.tag)
                    .register(registry))
        .increment();
  }

  private void failed(Operation op, Throwable e, long nanos) {
    String exception = e.getClass().getSimpleName();
    failed
        .computeIfAbsent(op.tag + '/' + exception, k -> timer(op, "error", exception))
        .record(nanos, TimeUnit.NANOSECONDS);
    error(op, e);
  }

  private Timer timer(Operation op, String result, String exception) {
    return Timer.builder(OPERATIONS)
        .description("Store calls, timed")
        .tags(tags)
        .tags("operation", op.tag, "result", result, "exception", exception)
        .register(registry);
  }

  private Counter conditional(Operation op, String outcome) {
    return Counter.builder(CONDITIONAL)
        .description("Conditional writes, by whether their condition held")
        .baseUnit("writes")
        .tags(tags)
        .tags("operation", op.tag, "outcome", outcome)
        .register(registry);
  }

  private Counter counter(String name, String description) {
    return Counter.builder(name).description(description).tags(tags).register(registry);
  }
}
