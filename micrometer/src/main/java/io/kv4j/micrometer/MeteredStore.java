package io.kv4j.micrometer;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A store that times and counts every call to the store it wraps, then answers exactly as that
 * store does (same values, same exceptions). The {@link Store} interface has no hooks, so metering
 * is a decorator:
 *
 * <pre>{@code
 * Store store = MeteredStore.wrap(Stores.open(uri), registry, "orders");
 * new StoreMetrics(store, "orders").bindTo(registry); // the gauges: size, keys, health
 * }</pre>
 *
 * <p>Meters, each tagged {@code store} (the name given) and {@code engine} (the engine's id):
 *
 * <ul>
 *   <li>{@code kv4j.store.operations}, a timer per {@code operation} ({@code get}, {@code put},
 *       {@code delete}, {@code get-all}, {@code put-if-absent}, {@code replace}, {@code delete-if},
 *       {@code batch}, {@code batch-if}, {@code scan}, {@code snapshot} and the rest: see the
 *       module's README), {@code result} ({@code success} or {@code error}) and {@code exception}
 *       ({@code none} or the simple name of the exception's class);
 *   <li>{@code kv4j.store.errors}, a counter per {@code operation} and {@code kind}: {@code
 *       closed}, {@code corrupted}, {@code io}, {@code locked} (the {@link io.kv4j.StoreException}
 *       cases) or {@code other};
 *   <li>{@code kv4j.store.conditional.writes}, a counter per conditional {@code operation} and
 *       {@code outcome} ({@code applied} or {@code rejected});
 *   <li>{@code kv4j.store.cursors.opened} and {@code .closed}, {@code kv4j.store.snapshots.opened}
 *       and {@code .closed}: a cursor counts as closed once, when closed, read to the end, or when
 *       the store or snapshot it came from is closed through this wrapper.
 * </ul>
 *
 * <p>A scan's timer measures opening the cursor; reading it is not timed, and its errors count
 * toward the scan's. {@link #info()}, {@link #stats()} and {@link #close()} are passed through
 * unmetered. A keyspace handle opened through {@link #keyspace(String)} is metered too, under this
 * store's meters: keyspace names are data, unbounded, and make poor tag values.
 *
 * <p>Thread-safe as the wrapped store is.
 */
public final class MeteredStore implements Store {
  private final Store delegate;
  private final Meters meters;
  private final String name;
  private final Set<Runnable> owner;
  private final Set<Runnable> open = ConcurrentHashMap.newKeySet();
  private final Runnable closer = this::close;

  private MeteredStore(Store delegate, Meters meters, String name, Set<Runnable> owner) {
    this.delegate = delegate;
    this.meters = meters;
    this.name = name;
    this.owner = owner;
    if (owner != null) {
      owner.add(closer);
    }
  }

  /**
   * Wraps a store, registering its meters in {@code registry} tagged {@code store=name} and {@code
   * engine=store.info().engine()}. Wrapping two stores under one name in one registry shares their
   * meters.
   *
   * @param store the store to meter, open
   * @param registry where the meters go
   * @param name the store's name in the {@code store} tag, such as the bean or configuration name
   * @return the metered store; closing it closes {@code store}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code name} is blank
   * @throws io.kv4j.StoreClosedException if {@code store} is closed (its engine cannot be read)
   */
  public static MeteredStore wrap(Store store, MeterRegistry registry, String name) {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a metered store needs a name for its 'store' tag");
    }
    return new MeteredStore(store, new Meters(registry, name, store.info().engine()), name, null);
  }

  /**
   * The store this one meters.
   *
   * @return the wrapped store
   */
  public Store delegate() {
    return delegate;
  }

  /**
   * The value of this store's {@code store} tag.
   *
   * @return the name given to {@link #wrap(Store, MeterRegistry, String)}
   */
  public String name() {
    return name;
  }

  @Override
  public byte[] get(byte[] key) {
    return meters.time(Operation.GET, () -> delegate.get(key));
  }

  @Override
  public boolean contains(byte[] key) {
    return meters.time(Operation.CONTAINS, () -> delegate.contains(key));
  }

  @Override
  public List<byte[]> getAll(List<byte[]> keys) {
    return meters.time(Operation.GET_ALL, () -> delegate.getAll(keys));
  }

  @Override
  public void put(byte[] key, byte[] value) {
    meters.run(Operation.PUT, () -> delegate.put(key, value));
  }

  @Override
  public void delete(byte[] key) {
    meters.run(Operation.DELETE, () -> delegate.delete(key));
  }

  @Override
  public boolean putIfAbsent(byte[] key, byte[] value) {
    return meters.time(Operation.PUT_IF_ABSENT, () -> delegate.putIfAbsent(key, value));
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    return meters.time(Operation.REPLACE, () -> delegate.replace(key, expected, value));
  }

  @Override
  public boolean delete(byte[] key, byte[] expected) {
    return meters.time(Operation.DELETE_IF, () -> delegate.delete(key, expected));
  }

  @Override
  public Snapshot snapshot() {
    Snapshot s = meters.time(Operation.SNAPSHOT, delegate::snapshot);
    return new MeteredSnapshot(s, meters, open);
  }

  @Override
  public void backup(Path target) {
    meters.run(Operation.BACKUP, () -> delegate.backup(target));
  }

  @Override
  public Store keyspace(String keyspace) {
    Store handle = meters.time(Operation.KEYSPACE, () -> delegate.keyspace(keyspace));
    return new MeteredStore(handle, meters, name, open);
  }

  @Override
  public List<String> keyspaces() {
    return meters.time(Operation.KEYSPACES, delegate::keyspaces);
  }

  @Override
  public boolean dropKeyspace(String keyspace) {
    return meters.time(Operation.DROP_KEYSPACE, () -> delegate.dropKeyspace(keyspace));
  }

  @Override
  public Cursor scan(KeyRange range) {
    Cursor c = meters.time(Operation.SCAN, () -> delegate.scan(range));
    return new MeteredCursor(c, meters, Operation.SCAN, open);
  }

  @Override
  public void write(WriteBatch batch) {
    meters.run(Operation.BATCH, () -> delegate.write(batch));
  }

  @Override
  public boolean writeIf(WriteBatch batch) {
    return meters.time(Operation.BATCH_IF, () -> delegate.writeIf(batch));
  }

  @Override
  public void sync() {
    meters.run(Operation.SYNC, delegate::sync);
  }

  @Override
  public void compact() {
    meters.run(Operation.COMPACT, delegate::compact);
  }

  @Override
  public void verify() {
    meters.run(Operation.VERIFY, delegate::verify);
  }

  @Override
  public StoreInfo info() {
    return delegate.info();
  }

  @Override
  public StoreStats stats() {
    return delegate.stats();
  }

  /**
   * Closes the cursors, snapshots and keyspace handles opened through this wrapper, then the store.
   */
  @Override
  public void close() {
    try {
      Closing.all(open);
    } finally {
      delegate.close();
      if (owner != null) {
        owner.remove(closer);
      }
    }
  }

  @Override
  public String toString() {
    return "metered '" + name + "': " + delegate;
  }
}
