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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
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
  /** What the store and its keyspace handles share: one lock, so a batch spans keyspaces. */
  private static final class Spaces {
    final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    final Space own = new Space();
    final Map<String, Space> named = new TreeMap<>();

    Space get(String name, boolean create) {
      if (name == null) {
        return own;
      }
      Space s = named.get(name);
      if (s == null && create) {
        s = new Space();
        named.put(name, s);
      }
      return s;
    }
  }

  /** One keyspace's keys. Guarded by {@link Spaces#lock}. */
  private static final class Space {
    TreeMap<byte[], byte[]> map = new TreeMap<>(Arrays::compareUnsigned);
    volatile boolean shared;
    long bytes;
    boolean dropped;

    TreeMap<byte[], byte[]> mutable() {
      if (shared) {
        map = new TreeMap<>(map);
        shared = false;
      }
      return map;
    }
  }

  private final Spaces spaces;
  private final Space space;
  private final ReentrantReadWriteLock lock;

  MemoryStore(Durability durability, boolean readOnly) {
    super(
        new StoreInfo(
            "memory",
            MemoryProvider.FEATURES,
            MemoryProvider.LIMITS,
            durability,
            "memory:",
            readOnly));
    this.spaces = new Spaces();
    this.space = spaces.own;
    this.lock = spaces.lock;
  }

  private MemoryStore(MemoryStore store, String name, Space space) {
    super(store, name);
    this.spaces = store.spaces;
    this.space = space;
    this.lock = spaces.lock;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    lock.readLock().lock();
    try {
      // close() empties the map under the write lock after marking the store closed: a get that
      // raced it must not answer "absent" from the emptied map.
      checkOpen();
      byte[] v = space.map.get(key);
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
      putLocked(space, key, value);
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected void doDelete(byte[] key) {
    lock.writeLock().lock();
    try {
      checkOpen();
      deleteLocked(space, key);
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    lock.writeLock().lock();
    try {
      checkOpen();
      applyLocked(batch);
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    lock.writeLock().lock();
    try {
      checkOpen();
      for (int i = 0, n = batch.conditionCount(); i < n; i++) {
        String name = conditionKeyspaceOf(batch, i);
        Space s = name == null ? spaces.own : spaces.get(name, false);
        byte[] current = s == null ? null : s.map.get(batch.conditionKey(i));
        byte[] expected = batch.conditionValue(i);
        if (expected == null ? current != null : !Arrays.equals(current, expected)) {
          return false;
        }
      }
      applyLocked(batch);
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void applyLocked(WriteBatch batch) {
    for (int i = 0, n = batch.size(); i < n; i++) {
      Space s = batch.namesKeyspaces() ? spaces.get(keyspaceOf(batch, i), true) : space;
      if (batch.isDelete(i)) {
        deleteLocked(s, batch.key(i));
      } else {
        putLocked(s, batch.key(i), batch.value(i));
      }
    }
  }

  @Override
  protected AbstractStore doKeyspace(String name) {
    lock.writeLock().lock();
    try {
      return new MemoryStore(this, name, spaces.get(name, true));
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  protected List<String> doKeyspaces() {
    lock.readLock().lock();
    try {
      return new ArrayList<>(spaces.named.keySet());
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    lock.writeLock().lock();
    try {
      Space s = spaces.named.remove(name);
      if (s != null) {
        s.dropped = true;
      }
      return s != null;
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
      space.shared = true;
      snapshot = space.map;
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
      byte[] current = space.map.get(key);
      if (expected == null ? current != null : !Arrays.equals(current, expected)) {
        return false;
      }
      if (value == null) {
        deleteLocked(space, key);
      } else {
        putLocked(space, key, value);
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
      space.shared = true; // the next write copies the map: this one stays as it is now
      frozen = space.map;
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
      return new StoreStats(space.map.size(), true, 0, Map.of("memory-payload-bytes", space.bytes));
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  protected void doClose() {
    if (keyspaceName() != null) {
      return; // a keyspace handle holds nothing of its own; its keys live as long as the store
    }
    lock.writeLock().lock();
    try {
      spaces.own.map = new TreeMap<>(Arrays::compareUnsigned);
      spaces.own.bytes = 0;
      spaces.named.clear();
    } finally {
      lock.writeLock().unlock();
    }
  }

  private static void putLocked(Space s, byte[] key, byte[] value) {
    byte[] old = s.mutable().put(key.clone(), value.clone());
    s.bytes += value.length - (old == null ? -key.length : old.length);
  }

  private static void deleteLocked(Space s, byte[] key) {
    byte[] old = s.mutable().remove(key);
    if (old != null) {
      s.bytes -= key.length + old.length;
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
