package io.kv4j.rocksdb;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * A native RocksDB iterator over a bounded range. The iterator is a point-in-time view; its {@link
 * ReadOptions} and the bound {@link Slice}s it points to are owned here and freed after it, never
 * before. {@link AbstractCursor} serialises {@link #advance()} and {@link #release()}; the store's
 * gate keeps both apart from the store's close.
 */
final class RocksDbCursor extends AbstractCursor {
  private final RocksDbStore store;
  private final boolean reverse;
  private final ReadOptions readOptions;
  private final Slice lower;
  private final Slice upper;
  private final RocksIterator iterator;
  private final AtomicBoolean freed = new AtomicBoolean();
  private boolean positioned;

  RocksDbCursor(
      RocksDbStore store,
      KeyRange range,
      ReadOptions readOptions,
      Slice lower,
      Slice upper,
      RocksIterator iterator) {
    super(store, range);
    this.store = store;
    this.reverse = range.isReverse();
    this.readOptions = readOptions;
    this.lower = lower;
    this.upper = upper;
    this.iterator = iterator;
    if (iterator == null) {
      freed.set(true); // an empty range holds nothing native
    }
  }

  @Override
  protected Entry advance() {
    if (iterator == null) {
      return null;
    }
    boolean first = !positioned;
    positioned = true;
    return store.step(this, iterator, first, reverse);
  }

  @Override
  protected void release() {
    if (iterator != null) {
      store.release(this);
    }
  }

  boolean isFreed() {
    return freed.get();
  }

  /** Frees the native objects once: iterator, then read options, then the bound slices. */
  void freeNative() {
    if (freed.compareAndSet(false, true)) {
      free(iterator, readOptions, lower, upper);
    }
  }

  static void free(RocksIterator it, ReadOptions ro, Slice lower, Slice upper) {
    if (it != null) {
      it.close();
    }
    if (ro != null) {
      ro.close();
    }
    if (lower != null) {
      lower.close();
    }
    if (upper != null) {
      upper.close();
    }
  }

  /** The native objects, for lifecycle tests. */
  AutoCloseable[] owned() {
    return new AutoCloseable[] {iterator, readOptions, lower, upper};
  }
}
