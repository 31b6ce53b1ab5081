package io.kv4j.micrometer;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/** A snapshot whose reads are timed as {@code snapshot-get}, {@code snapshot-get-all} and so on. */
final class MeteredSnapshot implements Snapshot {
  private final Snapshot delegate;
  private final Meters meters;
  private final Set<Runnable> owner;
  private final Set<Runnable> cursors = ConcurrentHashMap.newKeySet();
  private final Runnable closer = this::close;
  private final AtomicBoolean closed = new AtomicBoolean();

  MeteredSnapshot(Snapshot delegate, Meters meters, Set<Runnable> owner) {
    this.delegate = delegate;
    this.meters = meters;
    this.owner = owner;
    meters.snapshotsOpened.increment();
    owner.add(closer);
  }

  @Override
  public byte[] get(byte[] key) {
    return meters.time(Operation.SNAPSHOT_GET, () -> delegate.get(key));
  }

  @Override
  public List<byte[]> getAll(List<byte[]> keys) {
    return meters.time(Operation.SNAPSHOT_GET_ALL, () -> delegate.getAll(keys));
  }

  @Override
  public Cursor scan(KeyRange range) {
    Cursor c = meters.time(Operation.SNAPSHOT_SCAN, () -> delegate.scan(range));
    return new MeteredCursor(c, meters, Operation.SNAPSHOT_SCAN, cursors);
  }

  @Override
  public void close() {
    try {
      Closing.all(cursors);
      delegate.close();
    } finally {
      if (closed.compareAndSet(false, true)) {
        meters.snapshotsClosed.increment();
        owner.remove(closer);
      }
    }
  }
}
