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
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A hash table ({@link KeyTable}) for point reads and writes, its entries packed in the byte-array
 * pages of an {@link Arena}, and a {@link TreeMap} brought up to date only when a scan or snapshot
 * needs the order, all behind one read-write lock. The tree holds copies of the keys and values:
 * while it exists, the store's entries are in memory twice.
 *
 * <p>Gets, puts, deletes and conditional writes use the hash table (O(1)). The tree is built by the
 * first scan or snapshot; while it exists each write also notes its key as dirty, and a scan or
 * snapshot first applies the dirty keys to the tree (O(d log n) for d dirty keys), then reads the
 * tree. When more than half as many keys as the store holds are dirty the tree is dropped instead,
 * and the next scan builds it again (O(n log n), what applying them would cost). So a workload
 * without scans never pays for order (not even a dirty set), and one that scans pays what a tree
 * would have cost at its writes, at its next scan instead.
 *
 * <p>Snapshots are copy-on-write: an open cursor or snapshot counts itself among the tree's readers
 * until it is closed; dirty keys are applied to a tree in place only when no reader is open,
 * otherwise to a copy, so an open cursor's tree is never modified. A scan that is closed before the
 * next writes (a scan-and-delete loop, FLUSHALL's) therefore costs no copy; one left open across
 * writes and another scan costs O(n).
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

  /** A key in the dirty set: the bytes, compared by content. */
  private static final class Key {
    final byte[] bytes;
    private final int hash;

    Key(byte[] bytes) {
      this.bytes = bytes;
      this.hash = Arrays.hashCode(bytes);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && hash == k.hash && Arrays.equals(bytes, k.bytes);
    }
  }

  /**
   * The ordered keys of a space and how many open cursors and snapshots read it. Writers change it
   * in place only while that count is 0 (under the store's write lock, where it is raised); a
   * reader lowers it once, when it is closed, after its last use of the map.
   */
  private static final class Tree {
    final TreeMap<byte[], byte[]> map;
    final AtomicInteger readers = new AtomicInteger();

    Tree(TreeMap<byte[], byte[]> map) {
      this.map = map;
    }

    void release() {
      readers.decrementAndGet();
    }
  }

  /**
   * One keyspace's keys. Guarded by {@link Spaces#lock}. {@link #values} holds every key; {@link
   * #ordered}, when built, holds the same keys and values except those in {@link #dirty}, whose
   * entries there may be stale or missing until {@link #acquire()} applies them; while it is not
   * built (null) nothing is dirty. The tree holds its own copies of keys and values (the arena
   * moves and reuses its bytes); they are never modified once in it, so copies of the tree share
   * them.
   */
  private static final class Space {
    final KeyTable values = new KeyTable();
    final HashSet<Key> dirty = new HashSet<>();
    Tree ordered;
    long copies; // trees copied because a reader held them (tests)
    long bytes;
    boolean dropped;

    byte[] get(byte[] key) {
      return values.get(key);
    }

    /**
     * Stores copies of {@code key} and {@code value}; returns the replaced value's length or -1.
     */
    int put(byte[] key, byte[] value) {
      int old = values.put(key, value);
      if (ordered != null) {
        written(key.clone()); // the dirty set keeps it: a copy the caller cannot change
      }
      return old;
    }

    /** Removes {@code key}; returns the removed value's length, or -1. */
    int remove(byte[] key) {
      int old = values.remove(key);
      if (old >= 0 && ordered != null) {
        written(key.clone());
      }
      return old;
    }

    /** Notes a written key for the tree, or drops the tree when rebuilding it costs no more. */
    private void written(byte[] key) {
      dirty.add(new Key(key));
      if (dirty.size() > values.size() / 2 + 1024) {
        ordered = null; // a cursor or snapshot holding it keeps its own reference
        dirty.clear();
      }
    }

    /**
     * The tree with every key in order, up to date, with one more reader, which must {@link
     * Tree#release() release} it; the caller holds the write lock. Built from the hash map when
     * there is none; copied first if an open cursor or snapshot reads it.
     */
    Tree acquire() {
      if (ordered == null) {
        TreeMap<byte[], byte[]> m = new TreeMap<>(Arrays::compareUnsigned);
        values.forEach(m::put);
        ordered = new Tree(m);
      } else if (!dirty.isEmpty()) {
        if (ordered.readers.get() > 0) {
          ordered = new Tree(new TreeMap<>(ordered.map));
          copies++;
        }
        TreeMap<byte[], byte[]> m = ordered.map;
        for (Key k : dirty) {
          byte[] v = values.get(k.bytes);
          if (v == null) {
            m.remove(k.bytes);
          } else {
            m.put(k.bytes, v);
          }
        }
        dirty.clear();
      }
      ordered.readers.incrementAndGet();
      return ordered;
    }

    void clear() {
      values.clear();
      dirty.clear();
      ordered = null;
      bytes = 0;
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
      return space.get(key); // a copy
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
        byte[] expected = batch.conditionValue(i);
        if (s == null ? expected != null : !s.values.holds(batch.conditionKey(i), expected)) {
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
    Tree tree;
    lock.writeLock().lock(); // brings the tree up to date
    try {
      checkOpen();
      tree = space.acquire();
    } finally {
      lock.writeLock().unlock();
    }
    return new MemoryCursor(this, range, view(tree.map, range), tree);
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    lock.writeLock().lock();
    try {
      checkOpen();
      if (!space.values.holds(key, expected)) {
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
    Tree tree;
    lock.writeLock().lock(); // brings the tree up to date
    try {
      checkOpen();
      tree = space.acquire(); // copied before it is next changed while this snapshot is open
    } finally {
      lock.writeLock().unlock();
    }
    return new MemorySnapshot(this, tree);
  }

  /** Keys written since the tree was last brought up to date (tests). */
  int dirtyKeys() {
    lock.readLock().lock();
    try {
      return space.dirty.size();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Trees copied because an open cursor or snapshot read them (tests). */
  long treeCopies() {
    lock.readLock().lock();
    try {
      return space.copies;
    } finally {
      lock.readLock().unlock();
    }
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
      return new StoreStats(
          space.values.size(),
          true,
          0,
          Map.of(
              "memory-payload-bytes",
              space.bytes,
              "memory-arena-bytes",
              space.values.arena().heldBytes()));
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
      spaces.own.clear();
      spaces.named.clear();
    } finally {
      lock.writeLock().unlock();
    }
  }

  private static void putLocked(Space s, byte[] key, byte[] value) {
    int old = s.put(key, value);
    s.bytes += value.length - (old < 0 ? -key.length : old);
  }

  private static void deleteLocked(Space s, byte[] key) {
    int old = s.remove(key);
    if (old >= 0) {
      s.bytes -= key.length + old;
    }
  }

  private static NavigableMap<byte[], byte[]> view(TreeMap<byte[], byte[]> m, KeyRange r) {
    return r.isEmpty() ? new TreeMap<>(Arrays::compareUnsigned) : r.view(m);
  }

  /** A frozen map: writers copy the tree before changing it while this snapshot reads it. */
  private static final class MemorySnapshot extends AbstractSnapshot {
    private final MemoryStore store;
    private final Tree tree;
    private volatile TreeMap<byte[], byte[]> frozen;

    MemorySnapshot(MemoryStore store, Tree tree) {
      super(store);
      this.store = store;
      this.tree = tree;
      this.frozen = tree.map;
    }

    @Override
    protected byte[] doGet(byte[] key) {
      byte[] v = frozen.get(key);
      return v == null ? null : v.clone();
    }

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      return new MemoryCursor(store, range, view(frozen, range), null);
    }

    @Override
    protected void release() {
      frozen = new TreeMap<>(Arrays::compareUnsigned);
      tree.release();
    }
  }

  private static final class MemoryCursor extends AbstractCursor {
    private Iterator<Map.Entry<byte[], byte[]>> it;
    private final Tree tree; // null for a snapshot's cursor: the snapshot reads the tree

    MemoryCursor(MemoryStore store, KeyRange range, NavigableMap<byte[], byte[]> view, Tree tree) {
      super(store, range);
      this.it = view.entrySet().iterator();
      this.tree = tree;
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
      if (tree != null) {
        tree.release();
      }
    }
  }
}
