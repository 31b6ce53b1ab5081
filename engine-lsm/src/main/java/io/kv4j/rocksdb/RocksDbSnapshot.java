package io.kv4j.rocksdb;

import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.Snapshot;

/**
 * A RocksDB snapshot ({@code GetSnapshot}) and the {@link ReadOptions} that read through it: gets,
 * multi-gets and iterators all see the sequence number the snapshot pinned. While it is open,
 * flushes and compactions keep every version it can see, so it survives {@code compact()}.
 *
 * <p>On a read-only store that is a secondary instance ({@link ReadOnlyOpening}) there is no
 * RocksDB snapshot ({@code snapshot} is null): a secondary refuses iterators on one, and its view
 * never moves after the open (it is never told to catch up again), so plain read options already
 * read at the snapshot's point in time.
 *
 * <p>Native lifetime: {@link AbstractSnapshot} calls {@link #release()} once, after the reads in
 * flight returned and the snapshot's cursors were closed; the store frees the snapshot inside its
 * gate, or, when the store is closing, its close frees every snapshot still registered (after the
 * cursors, before the database). {@link #freeNative(RocksDB)} runs at most once either way.
 */
final class RocksDbSnapshot extends AbstractSnapshot {
  private final RocksDbStore store;
  private final Snapshot snapshot;
  private final ReadOptions readOptions;
  private final AtomicBoolean freed = new AtomicBoolean();

  RocksDbSnapshot(RocksDbStore store, Snapshot snapshot, ReadOptions readOptions) {
    super(store);
    this.store = store;
    this.snapshot = snapshot;
    this.readOptions = readOptions;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return store.read(readOptions, key);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return store.readAll(readOptions, keys);
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return store.scan(range, snapshot);
  }

  @Override
  protected void release() {
    store.release(this);
  }

  /** The snapshot's read options, for lifecycle tests: released with the snapshot. */
  ReadOptions readOptions() {
    return readOptions;
  }

  /** Releases the snapshot in the database, then its read options; once. */
  void freeNative(RocksDB db) {
    if (freed.compareAndSet(false, true)) {
      if (snapshot != null) {
        db.releaseSnapshot(snapshot);
      }
      readOptions.close();
    }
  }
}
