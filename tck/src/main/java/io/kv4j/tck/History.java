package io.kv4j.tck;

import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreLockedException;
import io.kv4j.WriteBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A recorded history of operations that concurrent clients made on a store, and the check that it
 * is linearizable (as Jepsen's Knossos and Porcupine check): that one order of all the operations,
 * each taking effect at one instant between its call and its return, explains every answer.
 *
 * <p>Clients (threads, each with its own number) make their calls through the history instead of
 * the store: {@code history.put(3, store, key, value)} calls {@code store.put(key, value)} and
 * records the invocation ({@link System#nanoTime()} just before the call, the client, the operation
 * and its arguments) and the completion (nanoTime just after it returned, and its answer). After
 * the clients stopped, {@link #check(Duration)} decides within a time budget:
 *
 * <pre>{@code
 * History h = new History();
 * // on each client thread t:
 * h.put(t, store, key, value);
 * byte[] v = h.get(t, store, key);
 * boolean won = h.replace(t, store, key, v, next);
 * // when every client has stopped:
 * HistoryVerdict verdict = h.check(Duration.ofSeconds(30));
 * assertTrue(verdict.linearizable(), verdict.explanation()); // undecided is never linearizable
 * }</pre>
 *
 * <p><b>The model.</b> Every key is a register, absent when the history starts (write initial
 * values through the history). {@code get}, {@code put} and {@code delete} read and write one;
 * {@code putIfAbsent}, {@code replace} and {@code delete(key, expected)} are compare-and-set with
 * their boolean answer; {@code write} is an atomic batch of several keys; {@code writeIf} compares
 * and writes several atomically; a snapshot read sees several keys at one instant between the call
 * of {@code snapshot()} and its return, whenever the client reads through it. {@code Store.getAll}
 * is not atomic by its contract, so each of its values is recorded as a {@code get} of its own,
 * taking effect somewhere in the call. Operations in a batch naming a keyspace are recorded under
 * that keyspace's name; every other operation applies to the store's own keys, so pass the store
 * itself, not keyspace handles.
 *
 * <p><b>Failures.</b> A call refused before it acted ({@code IllegalArgumentException}, {@code
 * NullPointerException}, {@code UnsupportedOperationException}, {@code IllegalStateException},
 * {@link StoreClosedException}, {@link StoreLockedException}) took no effect and is not recorded.
 * Any other exception — {@link io.kv4j.StoreIOException} when a server member restarts or a
 * connection drops — makes the operation <em>indeterminate</em> (Jepsen's {@code :info}): it may or
 * may not have taken effect, its return is at +infinity and its answer unknown. Either way the
 * exception is rethrown to the client, which may go on. Each indeterminate write stays in flight
 * until the end of the history, so the search grows with their number: keep them to a few dozen per
 * partition.
 *
 * <p><b>Size.</b> Keys that no operation names together are checked apart, so a history may hold
 * many keys; a partition (a set of keys joined by multi-key operations) should hold at most a few
 * hundred operations, with a handful of clients in flight at once, to decide in well under a second
 * on a busy two-core machine.
 *
 * <p>A history is safe for any number of client threads; its keys and values are copied.
 */
public final class History {
  private final long start = System.nanoTime();
  private final AtomicInteger ids = new AtomicInteger();
  private final ConcurrentLinkedQueue<Operation> ops = new ConcurrentLinkedQueue<>();

  /** An empty history; its clock starts now. */
  public History() {}

  /** What a call read, compared and wrote, given its answer (null when it threw). */
  private record Parts(
      List<Operation.Cell> reads,
      List<Operation.Cell> conditions,
      List<Operation.Cell> writes,
      Boolean answer) {}

  private <T> T record(int client, String name, Supplier<T> call, Function<T, Parts> parts) {
    int id = ids.getAndIncrement();
    long invoked = System.nanoTime();
    T result;
    try {
      result = call.get();
    } catch (RuntimeException e) {
      if (!refused(e)) {
        Parts p = parts.apply(null);
        ops.add(
            new Operation(
                id,
                client,
                name,
                p.reads(),
                p.conditions(),
                p.writes(),
                null,
                invoked,
                Long.MAX_VALUE,
                e.getClass().getSimpleName() + ": " + e.getMessage()));
      }
      throw e;
    }
    long returned = System.nanoTime();
    Parts p = parts.apply(result);
    ops.add(
        new Operation(
            id,
            client,
            name,
            p.reads(),
            p.conditions(),
            p.writes(),
            p.answer(),
            invoked,
            returned,
            null));
    return result;
  }

  /** Whether an exception says the call was refused before it acted, so it took no effect. */
  private static boolean refused(RuntimeException e) {
    return e instanceof IllegalArgumentException
        || e instanceof NullPointerException
        || e instanceof UnsupportedOperationException
        || e instanceof IllegalStateException
        || e instanceof StoreClosedException
        || e instanceof StoreLockedException;
  }

  private static Operation.Cell cell(byte[] key, byte[] value) {
    return new Operation.Cell(null, key.clone(), value == null ? null : value.clone());
  }

  private static String keyspace(String name) {
    return name == null || Store.DEFAULT_KEYSPACE.equals(name) ? null : name;
  }

  /**
   * Calls {@link Store#get(byte[])} and records it.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param key the key
   * @return what the store answered
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public byte[] get(int client, Store store, byte[] key) {
    return record(
        client,
        "get",
        () -> store.get(key),
        v -> new Parts(List.of(cell(key, v)), List.of(), List.of(), null));
  }

  /**
   * Calls {@link Store#put(byte[], byte[])} and records it.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param key the key
   * @param value the value
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public void put(int client, Store store, byte[] key, byte[] value) {
    record(
        client,
        "put",
        () -> {
          store.put(key, value);
          return null;
        },
        x -> new Parts(List.of(), List.of(), List.of(cell(key, value)), null));
  }

  /**
   * Calls {@link Store#delete(byte[])} and records it.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param key the key
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public void delete(int client, Store store, byte[] key) {
    record(
        client,
        "delete",
        () -> {
          store.delete(key);
          return null;
        },
        x -> new Parts(List.of(), List.of(), List.of(cell(key, null)), null));
  }

  /**
   * Calls {@link Store#putIfAbsent(byte[], byte[])} and records it: a compare-and-set expecting
   * absence.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param key the key
   * @param value the value
   * @return what the store answered
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public boolean putIfAbsent(int client, Store store, byte[] key, byte[] value) {
    return record(
        client,
        "putIfAbsent",
        () -> store.putIfAbsent(key, value),
        won -> new Parts(List.of(), List.of(cell(key, null)), List.of(cell(key, value)), won));
  }

  /**
   * Calls {@link Store#replace(byte[], byte[], byte[])} and records it: a compare-and-set.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param key the key
   * @param expected the value the key must hold
   * @param value the new value
   * @return what the store answered
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public boolean replace(int client, Store store, byte[] key, byte[] expected, byte[] value) {
    Objects.requireNonNull(expected, "expected");
    return record(
        client,
        "replace",
        () -> store.replace(key, expected, value),
        won -> new Parts(List.of(), List.of(cell(key, expected)), List.of(cell(key, value)), won));
  }

  /**
   * Calls {@link Store#delete(byte[], byte[])} and records it: a compare-and-delete.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param key the key
   * @param expected the value the key must hold
   * @return what the store answered
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public boolean delete(int client, Store store, byte[] key, byte[] expected) {
    Objects.requireNonNull(expected, "expected");
    return record(
        client,
        "delete",
        () -> store.delete(key, expected),
        won -> new Parts(List.of(), List.of(cell(key, expected)), List.of(cell(key, null)), won));
  }

  /**
   * Calls {@link Store#getAll(List)} and records one read per key, each with the call's interval:
   * the values of a {@code getAll} need not be read at one instant.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param keys the keys
   * @return what the store answered
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public List<byte[]> getAll(int client, Store store, List<byte[]> keys) {
    List<byte[]> copies = new ArrayList<>();
    for (byte[] k : keys) {
      copies.add(k.clone());
    }
    int first = ids.getAndAdd(copies.size());
    long invoked = System.nanoTime();
    List<byte[]> values = store.getAll(keys); // a read that threw constrains nothing: not recorded
    long returned = System.nanoTime();
    for (int i = 0; i < copies.size(); i++) {
      byte[] v = i < values.size() ? values.get(i) : null;
      ops.add(
          new Operation(
              first + i,
              client,
              "getAll[" + i + "]",
              List.of(cell(copies.get(i), v)),
              List.of(),
              List.of(),
              null,
              invoked,
              returned,
              null));
    }
    return values;
  }

  /**
   * Calls {@link Store#write(WriteBatch)} and records it: an atomic write of every key of the batch
   * (a key written twice takes its last value).
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param batch the batch, without conditions
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public void write(int client, Store store, WriteBatch batch) {
    List<Operation.Cell> writes = writes(batch);
    record(
        client,
        "write",
        () -> {
          store.write(batch);
          return null;
        },
        x -> new Parts(List.of(), List.of(), writes, null));
  }

  /**
   * Calls {@link Store#writeIf(WriteBatch)} and records it: an atomic compare of every condition
   * and, when all hold, write of every key.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @param batch the batch with its conditions
   * @return what the store answered
   * @throws RuntimeException whatever the store threw, after recording it
   */
  public boolean writeIf(int client, Store store, WriteBatch batch) {
    List<Operation.Cell> writes = writes(batch);
    List<Operation.Cell> conditions = new ArrayList<>();
    for (int i = 0; i < batch.conditionCount(); i++) {
      byte[] v = batch.conditionValue(i);
      conditions.add(
          new Operation.Cell(
              keyspace(batch.conditionKeyspace(i)),
              batch.conditionKey(i).clone(),
              v == null ? null : v.clone()));
    }
    return record(
        client,
        "writeIf",
        () -> store.writeIf(batch),
        won -> new Parts(List.of(), conditions, writes, won));
  }

  private static List<Operation.Cell> writes(WriteBatch batch) {
    List<Operation.Cell> writes = new ArrayList<>();
    for (int i = 0; i < batch.size(); i++) {
      byte[] v = batch.value(i);
      writes.add(
          new Operation.Cell(
              keyspace(batch.keyspace(i)), batch.key(i).clone(), v == null ? null : v.clone()));
    }
    return writes;
  }

  /**
   * Calls {@link Store#snapshot()} and returns a handle that reads through it and records, when it
   * is closed, one read of every key read through it, at one instant between the call of {@code
   * snapshot()} and its return. The client may make other calls (through this history) before it
   * reads through the snapshot: what it reads must still be the store as of {@code snapshot()}.
   *
   * @param client the calling client's number
   * @param store the store to call
   * @return the recording snapshot, to be closed by the client
   * @throws RuntimeException whatever the store threw (nothing is recorded then)
   */
  public SnapshotReads snapshot(int client, Store store) {
    int id = ids.getAndIncrement();
    long invoked = System.nanoTime();
    Snapshot snap = store.snapshot(); // a read that threw constrains nothing: not recorded
    long returned = System.nanoTime();
    return new SnapshotReads(id, client, snap, invoked, returned);
  }

  /**
   * A snapshot taken through {@link History#snapshot(int, Store)}: its reads are recorded as one
   * operation when it is closed. Used by the one client that took it.
   */
  public final class SnapshotReads implements AutoCloseable {
    private final int id;
    private final int client;
    private final Snapshot snapshot;
    private final long invoked;
    private final long returned;
    private final List<Operation.Cell> reads = new ArrayList<>();
    private String name;
    private boolean closed;

    private SnapshotReads(int id, int client, Snapshot snapshot, long invoked, long returned) {
      this.id = id;
      this.client = client;
      this.snapshot = snapshot;
      this.invoked = invoked;
      this.returned = returned;
    }

    private void read(String how) {
      name = name == null ? "snapshot " + how : name.endsWith(how) ? name : name + "+" + how;
    }

    /**
     * Calls {@link Snapshot#get(byte[])}.
     *
     * @param key the key
     * @return what the snapshot answered
     * @throws RuntimeException whatever the snapshot threw (the read is then not recorded)
     */
    public byte[] get(byte[] key) {
      byte[] k = key.clone();
      byte[] v = snapshot.get(key);
      read("gets");
      reads.add(cell(k, v));
      return v;
    }

    /**
     * Calls {@link Snapshot#getAll(List)}.
     *
     * @param keys the keys
     * @return what the snapshot answered
     * @throws RuntimeException whatever the snapshot threw (the reads are then not recorded)
     */
    public List<byte[]> getAll(List<byte[]> keys) {
      List<byte[]> copies = new ArrayList<>();
      for (byte[] k : keys) {
        copies.add(k.clone());
      }
      List<byte[]> values = snapshot.getAll(keys);
      read("getAll");
      for (int i = 0; i < copies.size(); i++) {
        reads.add(cell(copies.get(i), i < values.size() ? values.get(i) : null));
      }
      return values;
    }

    /** Closes the snapshot and records its reads (nothing when nothing was read). Idempotent. */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      snapshot.close();
      if (!reads.isEmpty()) {
        ops.add(
            new Operation(
                id,
                client,
                name,
                List.copyOf(reads),
                List.of(),
                List.of(),
                null,
                invoked,
                returned,
                null));
      }
    }
  }

  /**
   * How many operations are recorded so far.
   *
   * @return the number of operations
   */
  public int size() {
    return ops.size();
  }

  /**
   * Decides whether the history is linearizable: each independent set of keys on its own, with Wing
   * and Gong's search and Lowe's memo (as Porcupine does), all within {@code budget}. Call it after
   * every client stopped.
   *
   * @param budget how long the check may take, in the calling thread's CPU time (wall time on a JVM
   *     that cannot measure it), so that a busy machine slows the check without cutting it short;
   *     past it the verdict is undecided, never a pass
   * @return the verdict, with the shortest prefix that cannot be linearized as a timeline when the
   *     history is not linearizable
   * @throws IllegalArgumentException if {@code budget} is not positive
   */
  public HistoryVerdict check(Duration budget) {
    if (budget.isNegative() || budget.isZero()) {
      throw new IllegalArgumentException("the budget must be positive: " + budget);
    }
    return LinearizabilityCheck.check(new ArrayList<>(ops), start, budget);
  }

  /** The recorded operations, for the kit's own tests. */
  List<Operation> operations() {
    return new ArrayList<>(ops);
  }

  /** The history's start, nanoTime. */
  long start() {
    return start;
  }
}
