package io.kv4j.memory;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link TreeMap} behind a read-write lock. Snapshots are copy-on-write: a cursor keeps the map
 * as it was and marks it shared; the next write copies the map before changing it, so an open
 * cursor's map is never modified. Writes therefore cost O(n) once after each scan; fine for tests
 * and small caches, which is what this engine is for.
 */
final class MemoryStore extends AbstractStore {
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private TreeMap<byte[], byte[]> map = new TreeMap<>(Arrays::compareUnsigned);
  private volatile boolean shared;
  private long bytes;

  MemoryStore(Durability durability, boolean readOnly) {
    super(
        new StoreInfo(
            "memory",
            MemoryProvider.FEATURES,
            MemoryProvider.LIMITS,
            durability,
            "memory:",
            readOnly));
  }

  @Override
  protected byte[] doGet(byte[] key) {
    lock.readLock().lock();
    try {
      // close() empties the map under the write lock after marking the store closed: a get that
      // raced it must not answer "absent" from the emptied map.
      checkOpen();
      byte[] v = map.get(key);
      return v == null ? null : v.clone();
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    lock.writeLock().lock();
    try {
      checkOpen();
      putLocked(mutable(), key, value);
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected void doDelete(byte[] key) {
    lock.writeLock().lock();
    try {
      checkOpen();
      deleteLocked(mutable(), key);
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    lock.writeLock().lock();
    try {
      checkOpen();
      TreeMap<byte[], byte[]> m = mutable();
      for (int i = 0, n = batch.size(); i < n; i++) {
        if (batch.isDelete(i)) {
          deleteLocked(m, batch.key(i));
        } else {
          putLocked(m, batch.key(i), batch.value(i));
        }
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    TreeMap<byte[], byte[]> snapshot;
    lock.readLock().lock();
    try {
      checkOpen();
      // Writers are excluded while we hold the read lock, so marking the map shared here is safe.
      shared = true;
      snapshot = map;
    } finally {
      lock.readLock().unlock();
    }
    return new MemoryCursor(this, range, view(snapshot, range));
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    lock.writeLock().lock();
    try {
      checkOpen();
      byte[] current = map.get(key);
      if (expected == null ? current != null : !Arrays.equals(current, expected)) {
        return false;
      }
      if (value == null) {
        deleteLocked(mutable(), key);
      } else {
        putLocked(mutable(), key, value);
      }
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected AbstractSnapshot doSnapshot() {
    TreeMap<byte[], byte[]> frozen;
    lock.readLock().lock();
    try {
      checkOpen();
      shared = true; // the next write copies the map: this one stays as it is now
      frozen = map;
    } finally {
      lock.readLock().unlock();
    }
    return new MemorySnapshot(this, frozen);
  }

  @Override
  protected void doSync() {
    // Nothing is persistent; nothing to force.
  }

  @Override
  protected StoreStats doStats() {
    lock.readLock().lock();
    try {
      checkOpen();
      return new StoreStats(map.size(), true, 0, Map.of("memory-payload-bytes", bytes));
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  protected void doClose() {
    lock.writeLock().lock();
    try {
      map = new TreeMap<>(Arrays::compareUnsigned);
      bytes = 0;
    } finally {
      lock.writeLock().unlock();
    }
  }

  private TreeMap<byte[], byte[]> mutable() {
    if (shared) {
      map = new TreeMap<>(map);
      shared = false;
    }
    return map;
  }

  private void putLocked(TreeMap<byte[], byte[]> m, byte[] key, byte[] value) {
    byte[] old = m.put(key.clone(), value.clone());
    bytes += value.length - (old == null ? -key.length : old.length);
  }

  private void deleteLocked(TreeMap<byte[], byte[]> m, byte[] key) {
    byte[] old = m.remove(key);
    if (old != null) {
      bytes -= key.length + old.length;
    }
  }

  private static NavigableMap<byte[], byte[]> view(TreeMap<byte[], byte[]> m, KeyRange r) {
    return r.isEmpty() ? new TreeMap<>(Arrays::compareUnsigned) : r.view(m);
  }

  /** A frozen map: writers copy the map before changing it once it is marked shared. */
  private static final class MemorySnapshot extends AbstractSnapshot {
    private final MemoryStore store;
    private volatile TreeMap<byte[], byte[]> frozen;

    MemorySnapshot(MemoryStore store, TreeMap<byte[], byte[]> frozen) {
      super(store);
      this.store = store;
      this.frozen = frozen;
    }

    @Override
    protected byte[] doGet(byte[] key) {
      byte[] v = frozen.get(key);
      return v == null ? null : v.clone();
    }

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      return new MemoryCursor(store, range, view(frozen, range));
    }

    @Override
    protected void release() {
      frozen = new TreeMap<>(Arrays::compareUnsigned);
    }
  }

  private static final class MemoryCursor extends AbstractCursor {
    private Iterator<Map.Entry<byte[], byte[]>> it;

    MemoryCursor(MemoryStore store, KeyRange range, NavigableMap<byte[], byte[]> view) {
      super(store, range);
      this.it = view.entrySet().iterator();
    }

    @Override
    protected Entry advance() {
      if (!it.hasNext()) {
        return null;
      }
      Map.Entry<byte[], byte[]> e = it.next();
      return new Entry(e.getKey().clone(), e.getValue().clone());
    }

    @Override
    protected void release() {
      it = null;
    }
  }
}
