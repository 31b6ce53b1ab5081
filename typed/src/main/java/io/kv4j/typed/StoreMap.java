package io.kv4j.typed;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.WriteBatch;
import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.function.Function;

/**
 * An ordered store as a {@link ConcurrentNavigableMap}: typed keys in the order of their encodings
 * ({@link KeyCodec}), every call a read, write or scan of the store. It holds no entries and no
 * cache: two maps over one store, or a map and direct store calls, see each other's writes at once.
 * It needs {@link Feature#ORDERED_SCAN}; descending views and {@code last}/{@code floor}/{@code
 * lower} need {@link Feature#REVERSE_SCAN}. Null keys and values are refused ({@link
 * NullPointerException}), as in {@link java.util.concurrent.ConcurrentSkipListMap}, whose behaviour
 * this map follows method for method, views included (a test runs both side by side).
 *
 * <pre>{@code
 * ConcurrentNavigableMap<Tuple, String> m = StoreMap.of(store, KeyCodec.tuple(), ValueCodec.utf8());
 * m.put(Tuple.of("user", 42), "Ada");
 * m.subMap(Tuple.of("user", 0), Tuple.of("user", 100)).descendingMap().firstKey();
 * }</pre>
 *
 * <h2>What is atomic</h2>
 *
 * <ul>
 *   <li>{@link #putIfAbsent}, {@link #remove(Object, Object)}, {@link #replace(Object, Object)} and
 *       {@link #replace(Object, Object, Object)} are atomic, through the store's conditional writes
 *       ({@link Store#putIfAbsent}, {@link Store#replace}, {@link Store#delete(byte[], byte[])}),
 *       against every other writer of the store. They need {@link Feature#CONDITIONAL_WRITE}: on a
 *       store without it they throw {@link UnsupportedOperationException} rather than pretend. So
 *       do {@code computeIfAbsent}, {@code computeIfPresent}, {@code compute}, {@code merge} and
 *       {@code replaceAll}, which are {@link java.util.concurrent.ConcurrentMap}'s retry loops over
 *       them: atomic per key, the function may run more than once.
 *   <li>{@link #put} and {@link #remove(Object)} write atomically on every store. Their answer, the
 *       previous value, is exact on a store with conditional writes (a compare-and-set loop);
 *       without, it is read just before the write and another writer may slip in between.
 *   <li>{@link #pollFirstEntry} and {@link #pollLastEntry} remove exactly the entry they return
 *       (retrying if it changed) with conditional writes; without, they read, then delete.
 *   <li>Not atomic as a whole: {@link #putAll} (one put per entry; use a {@link TypedBatch} for an
 *       atomic group), {@link #clear} (deletes page by page, each page as one batch where the store
 *       has {@link Feature#ATOMIC_BATCH}; a key put meanwhile may survive), and every whole-map
 *       read below.
 * </ul>
 *
 * <h2>Cost and consistency of whole-map reads</h2>
 *
 * {@link #size()} counts every entry of the map (or view) with one scan: O(n) reads of keys and
 * values, each call. It is exact for a map no one writes; under concurrent writes it is a count of
 * one point in time only on engines with {@link Feature#SNAPSHOT_SCAN}. {@code containsValue},
 * {@code equals}, {@code hashCode} and {@code toString} iterate. Iterators (of {@link #entrySet()},
 * {@link #keySet()}, {@link #values()}) read in pages of 256 entries, each page a fresh short scan
 * after the last key seen, so an abandoned iterator holds nothing open. Like the skip list's they
 * are weakly consistent: never {@link java.util.ConcurrentModificationException}, each key at most
 * once and in order, some writes made during the iteration seen and others not; {@code
 * Iterator.remove} deletes the last key returned.
 *
 * <p>Keys and values compare by their encodings: a value matches another when their encodings are
 * equal, which is {@code equals} for the built-in codecs.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class StoreMap<K, V> extends AbstractMap<K, V>
    implements ConcurrentNavigableMap<K, V> {
  /** Entries per scan when iterating or clearing. */
  static final int PAGE = 256;

  private final Store store;
  private final KeyCodec<K> keys;
  private final ValueCodec<V> values;
  private final Entries<K, V> entries;
  private final boolean conditional;
  private final boolean atomicBatch;
  private final int page;
  // The view's bounds as encoded keys, null when unbounded, in ascending key order whatever the
  // view's direction.
  private final byte[] lo;
  private final boolean loInclusive;
  private final byte[] hi;
  private final boolean hiInclusive;
  private final boolean descending;

  private StoreMap(
      StoreMap<K, V> base,
      byte[] lo,
      boolean loInclusive,
      byte[] hi,
      boolean hiInclusive,
      boolean descending) {
    this.store = base.store;
    this.keys = base.keys;
    this.values = base.values;
    this.entries = base.entries;
    this.conditional = base.conditional;
    this.atomicBatch = base.atomicBatch;
    this.page = base.page;
    this.lo = lo;
    this.loInclusive = loInclusive;
    this.hi = hi;
    this.hiInclusive = hiInclusive;
    this.descending = descending;
  }

  private StoreMap(Store store, KeyCodec<K> keys, ValueCodec<V> values, int page) {
    StoreInfo info = store.info();
    if (!info.has(Feature.ORDERED_SCAN)) {
      throw new UnsupportedOperationException(
          info.describe() + " does not support " + Feature.ORDERED_SCAN + ", which a map needs");
    }
    this.store = store;
    this.keys = keys;
    this.values = values;
    this.entries = new Entries<>(keys, values);
    this.conditional = info.has(Feature.CONDITIONAL_WRITE);
    this.atomicBatch = info.has(Feature.ATOMIC_BATCH);
    this.page = page;
    this.lo = null;
    this.loInclusive = false;
    this.hi = null;
    this.hiInclusive = false;
    this.descending = false;
  }

  /**
   * A map over every key of a store (or keyspace). Every key in it must decode with {@code keys}.
   *
   * @param store the store, with {@link Feature#ORDERED_SCAN}
   * @param keys the key codec
   * @param values the value codec
   * @param <K> the key type
   * @param <V> the value type
   * @return the map
   * @throws UnsupportedOperationException if the store lacks {@link Feature#ORDERED_SCAN}
   */
  public static <K, V> StoreMap<K, V> of(Store store, KeyCodec<K> keys, ValueCodec<V> values) {
    return of(store, keys, values, PAGE);
  }

  /** As {@link #of(Store, KeyCodec, ValueCodec)} with another page size, for tests of paging. */
  static <K, V> StoreMap<K, V> of(
      Store store, KeyCodec<K> keys, ValueCodec<V> values, int pageSize) {
    if (pageSize < 1) {
      throw new IllegalArgumentException("page size must be >= 1, got " + pageSize);
    }
    return new StoreMap<>(
        Objects.requireNonNull(store, "store"),
        Objects.requireNonNull(keys, "keys"),
        Objects.requireNonNull(values, "values"),
        pageSize);
  }

  // ---- bounds ------------------------------------------------------------------------------

  private KeyRange bounds() {
    KeyRange r = KeyRange.all();
    if (lo != null) {
      r = loInclusive ? r.gte(lo) : r.gt(lo);
    }
    if (hi != null) {
      r = hiInclusive ? r.lte(hi) : r.lt(hi);
    }
    return r;
  }

  private boolean inBounds(byte[] k) {
    if (lo != null) {
      int c = Arrays.compareUnsigned(k, lo);
      if (c < 0 || (c == 0 && !loInclusive)) {
        return false;
      }
    }
    if (hi != null) {
      int c = Arrays.compareUnsigned(k, hi);
      return c < 0 || (c == 0 && hiInclusive);
    }
    return true;
  }

  @SuppressWarnings("unchecked")
  private byte[] encodeKey(Object key) {
    return keys.encode((K) Objects.requireNonNull(key, "key"));
  }

  private byte[] encodeKeyInRange(K key) {
    byte[] k = encodeKey(key);
    if (!inBounds(k)) {
      throw new IllegalArgumentException("key out of range: " + key + " is outside " + bounds());
    }
    return k;
  }

  private byte[] encodeValue(V value) {
    return values.encode(Objects.requireNonNull(value, "value"));
  }

  private void requireConditional(String method) {
    if (!conditional) {
      throw new UnsupportedOperationException(
          store.info().describe()
              + " does not support "
              + Feature.CONDITIONAL_WRITE
              + ", which StoreMap."
              + method
              + " needs to be atomic");
    }
  }

  // ---- single keys -------------------------------------------------------------------------

  /**
   * The value of a key, one store read; null for a key outside this view.
   *
   * @param key the key
   * @return the value, or null when absent
   * @throws NullPointerException if key is null
   * @throws ClassCastException if key is not a {@code K}
   */
  @Override
  public V get(Object key) {
    byte[] k = encodeKey(key);
    return inBounds(k) ? entries.value(store.get(k)) : null;
  }

  /**
   * Whether a key is present, one store read; false for a key outside this view.
   *
   * @param key the key
   * @return true if present
   * @throws NullPointerException if key is null
   */
  @Override
  public boolean containsKey(Object key) {
    byte[] k = encodeKey(key);
    return inBounds(k) && store.contains(k);
  }

  /**
   * Stores a value (see the class comment for the atomicity of the answer).
   *
   * @param key the key, inside this view
   * @param value the value
   * @return the previous value, or null
   * @throws NullPointerException if key or value is null
   * @throws IllegalArgumentException if the key is outside this view
   */
  @Override
  public V put(K key, V value) {
    byte[] k = encodeKeyInRange(key);
    byte[] v = encodeValue(value);
    if (!conditional) {
      byte[] old = store.get(k);
      store.put(k, v);
      return entries.value(old);
    }
    while (true) {
      byte[] old = store.get(k);
      if (old == null ? store.putIfAbsent(k, v) : store.replace(k, old, v)) {
        return entries.value(old);
      }
    }
  }

  /**
   * Removes a key (see the class comment for the atomicity of the answer).
   *
   * @param key the key
   * @return the removed value, or null (also for a key outside this view)
   * @throws NullPointerException if key is null
   */
  @Override
  public V remove(Object key) {
    byte[] k = encodeKey(key);
    if (!inBounds(k)) {
      return null;
    }
    if (!conditional) {
      byte[] old = store.get(k);
      if (old != null) {
        store.delete(k);
      }
      return entries.value(old);
    }
    while (true) {
      byte[] old = store.get(k);
      if (old == null || store.delete(k, old)) {
        return entries.value(old);
      }
    }
  }

  /**
   * Stores a value if the key is absent, atomically.
   *
   * @param key the key, inside this view
   * @param value the value
   * @return null if stored, else the value present
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   * @throws IllegalArgumentException if the key is outside this view
   */
  @Override
  public V putIfAbsent(K key, V value) {
    requireConditional("putIfAbsent");
    byte[] k = encodeKeyInRange(key);
    byte[] v = encodeValue(value);
    while (true) {
      if (store.putIfAbsent(k, v)) {
        return null;
      }
      byte[] present = store.get(k);
      if (present != null) { // else removed in between: try again
        return entries.value(present);
      }
    }
  }

  /**
   * Removes a key if it holds {@code value} (compared encoded), atomically.
   *
   * @param key the key
   * @param value the value it must hold; null never matches
   * @return true if removed
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   */
  @Override
  @SuppressWarnings("unchecked")
  public boolean remove(Object key, Object value) {
    requireConditional("remove");
    byte[] k = encodeKey(key);
    if (value == null || !inBounds(k)) {
      return false;
    }
    byte[] v;
    try {
      v = values.encode((V) value);
    } catch (ClassCastException notAValue) {
      return false; // a value of another type equals none stored
    }
    return store.delete(k, v);
  }

  /**
   * Replaces a key's value if it holds {@code oldValue} (compared encoded), atomically.
   *
   * @param key the key, inside this view
   * @param oldValue the value it must hold
   * @param newValue the new value
   * @return true if replaced
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   * @throws IllegalArgumentException if the key is outside this view
   */
  @Override
  public boolean replace(K key, V oldValue, V newValue) {
    requireConditional("replace");
    byte[] k = encodeKeyInRange(key);
    return store.replace(k, encodeValue(oldValue), encodeValue(newValue));
  }

  /**
   * Replaces a key's value if it has one, atomically.
   *
   * @param key the key, inside this view
   * @param value the new value
   * @return the previous value, or null if the key was absent (nothing stored)
   * @throws UnsupportedOperationException if the store lacks {@link Feature#CONDITIONAL_WRITE}
   * @throws IllegalArgumentException if the key is outside this view
   */
  @Override
  public V replace(K key, V value) {
    requireConditional("replace");
    byte[] k = encodeKeyInRange(key);
    byte[] v = encodeValue(value);
    while (true) {
      byte[] old = store.get(k);
      if (old == null) {
        return null;
      }
      if (store.replace(k, old, v)) {
        return entries.value(old);
      }
    }
  }

  // ---- whole map ---------------------------------------------------------------------------

  /**
   * Counts the entries with one scan of this view: O(n), every call (see the class comment).
   *
   * @return the count, at most {@link Integer#MAX_VALUE}
   */
  @Override
  public int size() {
    long n = 0;
    try (Cursor c = store.scan(bounds())) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    return (int) Math.min(n, Integer.MAX_VALUE);
  }

  /**
   * Whether this view is empty: a scan of one entry.
   *
   * @return true if no key is in this view
   */
  @Override
  public boolean isEmpty() {
    return find(null, true, true) == null;
  }

  /**
   * Removes every key of this view, page by page (not atomic as a whole; see the class comment).
   */
  @Override
  public void clear() {
    byte[] after = null;
    while (true) {
      KeyRange r = after == null ? bounds() : bounds().gt(after);
      List<byte[]> batch = new ArrayList<>();
      try (Cursor c = store.scan(r.limit(page))) {
        while (c.hasNext()) {
          batch.add(c.next().key());
        }
      }
      if (atomicBatch && !batch.isEmpty()) {
        WriteBatch w = new WriteBatch();
        batch.forEach(w::delete);
        store.write(w);
      } else {
        batch.forEach(store::delete);
      }
      if (batch.size() < page) {
        return;
      }
      after = batch.get(batch.size() - 1);
    }
  }

  /**
   * Whether some key of this view holds {@code value}: a scan of the view.
   *
   * @param value the value
   * @return true if found
   * @throws NullPointerException if value is null
   */
  @Override
  public boolean containsValue(Object value) {
    Objects.requireNonNull(value, "value");
    for (V v : values()) {
      if (value.equals(v)) {
        return true;
      }
    }
    return false;
  }

  // ---- navigation --------------------------------------------------------------------------

  /**
   * The first stored entry of this view's bounds narrowed by {@code k}, in store order: upward
   * finds the lowest key {@code >= k} (or {@code > k}), downward the highest {@code <= k} (or
   * {@code < k}); a null {@code k} adds no bound.
   */
  private io.kv4j.Entry find(byte[] k, boolean upward, boolean inclusive) {
    KeyRange r = bounds();
    if (k != null) {
      r = upward ? (inclusive ? r.gte(k) : r.gt(k)) : (inclusive ? r.lte(k) : r.lt(k));
    }
    if (!upward) {
      r = r.reverse();
    }
    try (Cursor c = store.scan(r.limit(1))) {
      return c.hasNext() ? c.next() : null;
    }
  }

  private Map.Entry<K, V> near(Object key, boolean upward, boolean inclusive) {
    io.kv4j.Entry e = find(encodeKey(key), upward, inclusive);
    return e == null ? null : entries.decode(e);
  }

  private static <K> K keyOf(Map.Entry<K, ?> e) {
    return e == null ? null : e.getKey();
  }

  private Map.Entry<K, V> poll(boolean upward) {
    while (true) {
      io.kv4j.Entry e = find(null, upward, true);
      if (e == null) {
        return null;
      }
      if (!conditional) {
        store.delete(e.key());
        return entries.decode(e);
      }
      if (store.delete(e.key(), e.value())) {
        return entries.decode(e);
      }
    }
  }

  @Override
  public Map.Entry<K, V> firstEntry() {
    io.kv4j.Entry e = find(null, !descending, true);
    return e == null ? null : entries.decode(e);
  }

  @Override
  public Map.Entry<K, V> lastEntry() {
    io.kv4j.Entry e = find(null, descending, true);
    return e == null ? null : entries.decode(e);
  }

  @Override
  public K firstKey() {
    Map.Entry<K, V> e = firstEntry();
    if (e == null) {
      throw new NoSuchElementException("the map is empty");
    }
    return e.getKey();
  }

  @Override
  public K lastKey() {
    Map.Entry<K, V> e = lastEntry();
    if (e == null) {
      throw new NoSuchElementException("the map is empty");
    }
    return e.getKey();
  }

  @Override
  public Map.Entry<K, V> pollFirstEntry() {
    return poll(!descending);
  }

  @Override
  public Map.Entry<K, V> pollLastEntry() {
    return poll(descending);
  }

  @Override
  public Map.Entry<K, V> ceilingEntry(K key) {
    return near(key, !descending, true);
  }

  @Override
  public K ceilingKey(K key) {
    return keyOf(ceilingEntry(key));
  }

  @Override
  public Map.Entry<K, V> higherEntry(K key) {
    return near(key, !descending, false);
  }

  @Override
  public K higherKey(K key) {
    return keyOf(higherEntry(key));
  }

  @Override
  public Map.Entry<K, V> floorEntry(K key) {
    return near(key, descending, true);
  }

  @Override
  public K floorKey(K key) {
    return keyOf(floorEntry(key));
  }

  @Override
  public Map.Entry<K, V> lowerEntry(K key) {
    return near(key, descending, false);
  }

  @Override
  public K lowerKey(K key) {
    return keyOf(lowerEntry(key));
  }

  /**
   * The order of this view: the codec's ({@link KeyCodec#comparator()}), reversed for a descending
   * view.
   *
   * @return the comparator
   */
  @Override
  public Comparator<? super K> comparator() {
    Comparator<K> c = keys.comparator();
    return descending ? Collections.reverseOrder(c) : c;
  }

  // ---- views -------------------------------------------------------------------------------

  /**
   * A view narrowed to the given bounds (a null key adds no bound), with the checks of {@link
   * java.util.concurrent.ConcurrentSkipListMap}'s views: bounds are given in this view's direction,
   * must lie inside this view's bounds and must not cross.
   */
  private StoreMap<K, V> view(K fromKey, boolean fromInclusive, K toKey, boolean toInclusive) {
    byte[] from = fromKey == null ? null : keys.encode(fromKey);
    byte[] to = toKey == null ? null : keys.encode(toKey);
    if (descending) { // bounds given in descending order: swap them into key order
      byte[] t = from;
      from = to;
      to = t;
      boolean ti = fromInclusive;
      fromInclusive = toInclusive;
      toInclusive = ti;
    }
    if (lo != null) {
      if (from == null) {
        from = lo;
        fromInclusive = loInclusive;
      } else {
        int c = Arrays.compareUnsigned(from, lo);
        if (c < 0 || (c == 0 && !loInclusive && fromInclusive)) {
          throw new IllegalArgumentException("key out of range: outside " + bounds());
        }
      }
    }
    if (hi != null) {
      if (to == null) {
        to = hi;
        toInclusive = hiInclusive;
      } else {
        int c = Arrays.compareUnsigned(to, hi);
        if (c > 0 || (c == 0 && !hiInclusive && toInclusive)) {
          throw new IllegalArgumentException("key out of range: outside " + bounds());
        }
      }
    }
    if (from != null && to != null && Arrays.compareUnsigned(from, to) > 0) {
      throw new IllegalArgumentException("inconsistent range: the lower bound is above the upper");
    }
    return new StoreMap<>(this, from, fromInclusive, to, toInclusive, descending);
  }

  @Override
  public StoreMap<K, V> subMap(K fromKey, boolean fromInclusive, K toKey, boolean toInclusive) {
    Objects.requireNonNull(fromKey, "fromKey");
    Objects.requireNonNull(toKey, "toKey");
    return view(fromKey, fromInclusive, toKey, toInclusive);
  }

  @Override
  public StoreMap<K, V> headMap(K toKey, boolean inclusive) {
    Objects.requireNonNull(toKey, "toKey");
    return view(null, false, toKey, inclusive);
  }

  @Override
  public StoreMap<K, V> tailMap(K fromKey, boolean inclusive) {
    Objects.requireNonNull(fromKey, "fromKey");
    return view(fromKey, inclusive, null, false);
  }

  @Override
  public StoreMap<K, V> subMap(K fromKey, K toKey) {
    return subMap(fromKey, true, toKey, false);
  }

  @Override
  public StoreMap<K, V> headMap(K toKey) {
    return headMap(toKey, false);
  }

  @Override
  public StoreMap<K, V> tailMap(K fromKey) {
    return tailMap(fromKey, true);
  }

  @Override
  public StoreMap<K, V> descendingMap() {
    return new StoreMap<>(this, lo, loInclusive, hi, hiInclusive, !descending);
  }

  @Override
  public NavigableSet<K> keySet() {
    return new KeySet<>(this);
  }

  @Override
  public NavigableSet<K> navigableKeySet() {
    return new KeySet<>(this);
  }

  @Override
  public NavigableSet<K> descendingKeySet() {
    return new KeySet<>(descendingMap());
  }

  @Override
  public Set<Map.Entry<K, V>> entrySet() {
    return new EntrySet<>(this);
  }

  @Override
  public Collection<V> values() {
    return new Values<>(this);
  }

  // ---- iteration ---------------------------------------------------------------------------

  /** Entries of this view in its direction, a page at a time (see the class comment). */
  private final class Pages implements Iterator<Map.Entry<K, V>> {
    private final ArrayDeque<io.kv4j.Entry> buffer = new ArrayDeque<>();
    private byte[] lastFetched;
    private boolean exhausted;
    private byte[] lastReturned;

    @Override
    public boolean hasNext() {
      if (buffer.isEmpty() && !exhausted) {
        KeyRange r = bounds();
        if (lastFetched != null) {
          r = descending ? r.lt(lastFetched) : r.gt(lastFetched);
        }
        if (descending) {
          r = r.reverse();
        }
        int n = 0;
        try (Cursor c = store.scan(r.limit(page))) {
          while (c.hasNext()) {
            io.kv4j.Entry e = c.next();
            buffer.add(e);
            lastFetched = e.key();
            n++;
          }
        }
        exhausted = n < page;
      }
      return !buffer.isEmpty();
    }

    @Override
    public Map.Entry<K, V> next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      io.kv4j.Entry e = buffer.poll();
      lastReturned = e.key();
      return entries.decode(e);
    }

    @Override
    public void remove() {
      if (lastReturned == null) {
        throw new IllegalStateException("next() has not returned an entry since the last remove");
      }
      store.delete(lastReturned);
      lastReturned = null;
    }
  }

  private static final class EntrySet<K, V> extends AbstractSet<Map.Entry<K, V>> {
    private final StoreMap<K, V> m;

    EntrySet(StoreMap<K, V> m) {
      this.m = m;
    }

    @Override
    public Iterator<Map.Entry<K, V>> iterator() {
      return m.new Pages();
    }

    @Override
    public int size() {
      return m.size();
    }

    @Override
    public boolean isEmpty() {
      return m.isEmpty();
    }

    @Override
    public void clear() {
      m.clear();
    }

    @Override
    public boolean contains(Object o) {
      if (!(o instanceof Map.Entry<?, ?> e)) {
        return false;
      }
      V v = m.get(e.getKey());
      return v != null && v.equals(e.getValue());
    }

    @Override
    public boolean remove(Object o) {
      return o instanceof Map.Entry<?, ?> e && m.remove(e.getKey(), e.getValue());
    }
  }

  private static final class Values<K, V> extends AbstractCollection<V> {
    private final StoreMap<K, V> m;

    Values(StoreMap<K, V> m) {
      this.m = m;
    }

    @Override
    public Iterator<V> iterator() {
      Iterator<Map.Entry<K, V>> it = m.new Pages();
      return new Mapped<>(it, Map.Entry::getValue);
    }

    @Override
    public int size() {
      return m.size();
    }

    @Override
    public boolean isEmpty() {
      return m.isEmpty();
    }

    @Override
    public void clear() {
      m.clear();
    }

    @Override
    public boolean contains(Object o) {
      return m.containsValue(o);
    }
  }

  /** An iterator of one part of each entry, removal passed through. */
  private static final class Mapped<E, T> implements Iterator<T> {
    private final Iterator<E> it;
    private final Function<E, T> part;

    Mapped(Iterator<E> it, Function<E, T> part) {
      this.it = it;
      this.part = part;
    }

    @Override
    public boolean hasNext() {
      return it.hasNext();
    }

    @Override
    public T next() {
      return part.apply(it.next());
    }

    @Override
    public void remove() {
      it.remove();
    }
  }

  /** The keys of a map view, every call delegated to the map. */
  private static final class KeySet<K, V> extends AbstractSet<K> implements NavigableSet<K> {
    private final StoreMap<K, V> m;

    KeySet(StoreMap<K, V> m) {
      this.m = m;
    }

    @Override
    public Iterator<K> iterator() {
      Iterator<Map.Entry<K, V>> it = m.new Pages();
      return new Mapped<>(it, Map.Entry::getKey);
    }

    @Override
    public int size() {
      return m.size();
    }

    @Override
    public boolean isEmpty() {
      return m.isEmpty();
    }

    @Override
    public boolean contains(Object o) {
      return m.containsKey(o);
    }

    @Override
    public boolean remove(Object o) {
      return m.remove(o) != null;
    }

    @Override
    public void clear() {
      m.clear();
    }

    @Override
    public K lower(K e) {
      return m.lowerKey(e);
    }

    @Override
    public K floor(K e) {
      return m.floorKey(e);
    }

    @Override
    public K ceiling(K e) {
      return m.ceilingKey(e);
    }

    @Override
    public K higher(K e) {
      return m.higherKey(e);
    }

    @Override
    public K first() {
      return m.firstKey();
    }

    @Override
    public K last() {
      return m.lastKey();
    }

    @Override
    public K pollFirst() {
      return keyOf(m.pollFirstEntry());
    }

    @Override
    public K pollLast() {
      return keyOf(m.pollLastEntry());
    }

    @Override
    public Comparator<? super K> comparator() {
      return m.comparator();
    }

    @Override
    public NavigableSet<K> descendingSet() {
      return new KeySet<>(m.descendingMap());
    }

    @Override
    public Iterator<K> descendingIterator() {
      return descendingSet().iterator();
    }

    @Override
    public NavigableSet<K> subSet(
        K fromElement, boolean fromInclusive, K toElement, boolean toInclusive) {
      return new KeySet<>(m.subMap(fromElement, fromInclusive, toElement, toInclusive));
    }

    @Override
    public NavigableSet<K> headSet(K toElement, boolean inclusive) {
      return new KeySet<>(m.headMap(toElement, inclusive));
    }

    @Override
    public NavigableSet<K> tailSet(K fromElement, boolean inclusive) {
      return new KeySet<>(m.tailMap(fromElement, inclusive));
    }

    @Override
    public SortedSet<K> subSet(K fromElement, K toElement) {
      return subSet(fromElement, true, toElement, false);
    }

    @Override
    public SortedSet<K> headSet(K toElement) {
      return headSet(toElement, false);
    }

    @Override
    public SortedSet<K> tailSet(K fromElement) {
      return tailSet(fromElement, true);
    }
  }
}
