package io.kv4j.hashlog;

import io.kv4j.StoreException;
import java.util.Arrays;

/**
 * The index from key to newest record: an open-addressing hash table with linear probing over one
 * {@code long[]}, two longs per slot: a hash word and the record location ({@code segment id << 32
 * | offset}, never 0). No Java object per key: a key is not stored here at all; a hash match is
 * confirmed by comparing the full key, which the {@link KeySource} reads from the segment, so keys
 * with equal hashes never overwrite each other.
 *
 * <p>The hash word holds the key's hash in its low 60 bits (never 0 once {@link #fix fixed}; a word
 * of 0 marks an empty slot) and, in its top 4 bits, the record's {@link #span span}: how far the
 * record reaches past its first cache line, in 128-byte steps. A reader learns it with the
 * location, so it can start loading the whole record at once instead of waiting for the header to
 * say how long it is (see {@link KeySource#keyEquals}).
 *
 * <p>Deletion uses backward shifting (no tombstone slots). The table doubles above a load of 3/4
 * and halves below 1/8 (never below its initial capacity), so it shrinks back after mass deletes.
 * Its size is bounded by Java's arrays: at most {@link #MAX_CAPACITY} slots (2^30 longs, 8 GiB),
 * which it fills to 7/8 (469,762,048 keys) before it refuses a new key with a {@link
 * StoreException} (an open loading the log fills it further, see {@link #recovering}); slot indexes
 * stay below 2^29, so {@code 2 * i + 1} never overflows an int. A store that knows how many keys
 * are coming ({@link #reserve}, at open) sizes the table once instead of doubling through every
 * size below it.
 *
 * <p>Concurrency: one writer at a time (the caller serialises mutations and brackets them with a
 * sequence lock); {@link #find} may run concurrently with a mutation and then returns garbage,
 * which the caller discards when its optimistic stamp fails to validate. {@link #find} never loops
 * forever and never indexes out of bounds on a racing table.
 */
final class KeyDir {
  /** Confirms that the record at a location holds a given key. */
  interface KeySource {
    /**
     * Whether the record at {@code location} holds {@code key}.
     *
     * @param span the record's {@link #span span} as stored with the location (a hint only: a
     *     record is never read past its end because of it)
     */
    boolean keyEquals(long location, byte[] key, int span);
  }

  /** Computes a key's 64-bit hash; 0 is remapped by the table. */
  interface Hasher {
    long hash(byte[] key);
  }

  /** Most slots a table may have: two longs each, and a Java array holds fewer than 2^31. */
  static final int MAX_CAPACITY = 1 << 29;

  private final int minCapacity;
  private final int maxCapacity;
  private long[] table; // [hash, location] pairs
  private int size;

  KeyDir(int initialKeys) {
    this(initialKeys, MAX_CAPACITY);
  }

  /**
   * A table with room for {@code initialKeys} that grows to at most {@code maxCapacity} slots (a
   * power of two of at least 16; below {@link #MAX_CAPACITY} only in tests, which thereby reach the
   * limits without gigabytes of heap).
   */
  KeyDir(int initialKeys, int maxCapacity) {
    if (maxCapacity < 16 || maxCapacity > MAX_CAPACITY || Integer.bitCount(maxCapacity) != 1) {
      throw new IllegalArgumentException("max capacity must be a power of two 16..2^29");
    }
    this.maxCapacity = maxCapacity;
    int cap = capacityFor(initialKeys, maxCapacity);
    this.minCapacity = cap;
    this.table = new long[cap * 2];
  }

  /** Bits of the hash word that hold the hash; the rest hold the span. */
  static final long HASH_BITS = (1L << 60) - 1;

  private static final int SPAN_SHIFT = 60;

  /** Largest span: records longer than 64 + 15 * 128 bytes are loaded ahead only that far. */
  static final int MAX_SPAN = 15;

  /** A hash as the table keeps it: 60 bits, never 0. */
  static long fix(long hash) {
    long h = hash & HASH_BITS;
    return h == 0 ? 1 : h;
  }

  /**
   * The span of a record of {@code size} bytes: the number of 128-byte steps it reaches past its
   * first 64 bytes, rounded up, at most {@link #MAX_SPAN}. A record of up to 64 bytes has span 0.
   */
  static int span(long size) {
    return size <= 64 ? 0 : (int) Math.min(MAX_SPAN, (size - 64 + 127) >>> 7);
  }

  private static int home(long word, int mask) {
    long hash = word & HASH_BITS;
    long h = hash ^ (hash >>> 32);
    return (int) h & mask;
  }

  int size() {
    return size;
  }

  /** The slot a key of this {@link #fix fixed} hash probes first, in the table as it is now. */
  int slot(long hash) {
    return home(hash, (table.length >> 1) - 1);
  }

  int capacity() {
    return table.length >> 1;
  }

  long memoryBytes() {
    return (long) table.length * Long.BYTES;
  }

  /** Marks a {@link #find} result as a suspect: not found, but an entry of the hash disagreed. */
  static final long SUSPECT = Long.MIN_VALUE;

  /**
   * The location for a key, or 0. Safe to call concurrently with a writer (see class comment).
   *
   * <p>When the key is not found but an entry with its hash pointed at a record holding another
   * key, the result is that entry's location with {@link #SUSPECT} set (negative): usually two keys
   * sharing a 60-bit hash, but also what a damaged key in a segment looks like, which the caller
   * then checks. Only a failed key comparison costs anything extra.
   *
   * @param hash {@link #fix fixed} hash of the key
   * @param readAhead whether to hand the record's span to {@code src} (0 otherwise)
   */
  long find(long hash, byte[] key, KeySource src, boolean readAhead) {
    long[] t = table;
    int cap = t.length >> 1;
    int mask = cap - 1;
    int i = home(hash, mask);
    long suspect = 0;
    for (int probes = 0; probes < cap; probes++) {
      long h = t[2 * i];
      if (h == 0) {
        break;
      }
      if ((h & HASH_BITS) == hash) {
        long loc = t[2 * i + 1];
        if (loc != 0) {
          if (src.keyEquals(loc, key, readAhead ? (int) (h >>> SPAN_SHIFT) : 0)) {
            return loc;
          }
          if (suspect == 0) {
            suspect = loc | SUSPECT;
          }
        }
      }
      i = (i + 1) & mask;
    }
    return suspect;
  }

  /** Heap bytes of the table a {@code KeyDir(initialKeys)} allocates. */
  static long initialBytes(long initialKeys) {
    return 2L * Long.BYTES * capacityFor(initialKeys, MAX_CAPACITY);
  }

  /**
   * Slots for {@code keys} keys at a load of at most 3/4: the smallest power of two of at least 16
   * that holds them, at most {@code maxCapacity} (then the load may be higher).
   */
  static int capacityFor(long keys, int maxCapacity) {
    // Clamped first: 4 * keys must not overflow a long.
    long need = Math.max(16, Math.min(Math.max(0, keys), 1L << 40) * 4 / 3 + 1);
    if (need >= maxCapacity) {
      return maxCapacity;
    }
    int cap = Integer.highestOneBit((int) need);
    return cap < need ? cap << 1 : cap;
  }

  /**
   * Grows the table at once to hold {@code keys} keys at a load of at most 3/4 (never beyond the
   * maximum capacity), so that adding that many doubles it no more; never shrinks it. Caller as for
   * {@link #put}.
   *
   * @return whether the table grew
   */
  boolean reserve(long keys) {
    int cap = capacityFor(keys, maxCapacity);
    if (cap <= capacity()) {
      return false;
    }
    resize(cap);
    return true;
  }

  /**
   * Keys the table takes at its largest: 7/8 of the maximum capacity; while {@link #recovering},
   * all but one slot (an empty slot ends every probe).
   */
  long maxKeys() {
    return recovering ? maxCapacity - 1 : maxCapacity - (maxCapacity >> 3);
  }

  /**
   * Whether the open is loading the log: a put refused at 7/8 still appended its record before the
   * index refused it, so the open must take those records too, or the store could never be opened
   * again. Set by the opening thread before anything reads.
   */
  boolean recovering;

  /**
   * Whether the entry with {@code hash} points at {@code location}: no key comparison is needed,
   * since a location identifies one record and so one key. Safe to call concurrently with a writer
   * like {@link #find}.
   */
  boolean holds(long hash, long location) {
    long[] t = table;
    int cap = t.length >> 1;
    int mask = cap - 1;
    int i = home(hash, mask);
    for (int probes = 0; probes < cap; probes++) {
      long h = t[2 * i];
      if (h == 0) {
        return false;
      }
      if ((h & HASH_BITS) == hash && t[2 * i + 1] == location) {
        return true;
      }
      i = (i + 1) & mask;
    }
    return false;
  }

  /**
   * Loads the home slot of each of {@code hashes[from..to)} ({@link #fix fixed} hashes) and returns
   * a sum of the words loaded. The loads do not depend on one another, so the CPU overlaps their
   * cache misses, where one lookup after another pays them in turn; a caller about to look up many
   * keys then finds their slots in cache. Only reads: safe concurrently with a writer (a racing
   * resize only wastes the loads).
   */
  long touchHomes(long[] hashes, int from, int to) {
    long[] t = table;
    int mask = (t.length >> 1) - 1;
    long sum = 0;
    for (int i = from; i < to; i++) {
      sum += t[2 * home(hashes[i], mask)];
    }
    return sum;
  }

  /** The hash word in the home slot of {@code hash}; for tests. */
  long homeWord(long hash) {
    long[] t = table;
    return t[2 * home(hash, (t.length >> 1) - 1)];
  }

  /**
   * Sets a key's location.
   *
   * @param hash {@link #fix fixed} hash of the key
   * @param recordSize bytes of the record at {@code location} (its {@link #span span} is kept)
   * @return the previous location, or 0 if the key was absent
   */
  long put(long hash, byte[] key, long location, long recordSize, KeySource src) {
    long word = hash | (long) span(recordSize) << SPAN_SHIFT;
    long[] t = table;
    int mask = (t.length >> 1) - 1;
    int i = home(hash, mask);
    while (true) {
      long h = t[2 * i];
      if (h == 0) {
        break;
      }
      if ((h & HASH_BITS) == hash && src.keyEquals(t[2 * i + 1], key, 0)) {
        long old = t[2 * i + 1];
        t[2 * i + 1] = location;
        t[2 * i] = word;
        return old;
      }
      i = (i + 1) & mask;
    }
    int cap = t.length >> 1;
    if ((size + 1) * 4L > cap * 3L) {
      if (cap < maxCapacity) {
        resize(cap * 2);
      } else if (size + 1 > maxKeys()) {
        throw new StoreException(
            "hashlog: the index is full: "
                + size
                + " keys, the most one store holds (its table is "
                + cap
                + " slots, the largest a Java array allows); delete keys or split the data over"
                + " keyspaces or stores");
      }
      t = table;
      mask = (t.length >> 1) - 1;
      i = home(hash, mask);
      while (t[2 * i] != 0) {
        i = (i + 1) & mask;
      }
    }
    t[2 * i + 1] = location;
    t[2 * i] = word;
    size++;
    return 0;
  }

  /**
   * Moves a key from {@code expected} to {@code location} if the key's entry still points at {@code
   * expected} (locations identify records uniquely, so no key comparison is needed). Used by
   * compaction when it relocates a record: a copy of the same length, so the span stays.
   *
   * @return true if the entry was switched
   */
  boolean replace(long hash, long expected, long location) {
    long[] t = table;
    int mask = (t.length >> 1) - 1;
    int i = home(hash, mask);
    while (true) {
      long h = t[2 * i];
      if (h == 0) {
        return false;
      }
      if ((h & HASH_BITS) == hash && t[2 * i + 1] == expected) {
        t[2 * i + 1] = location;
        return true;
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * Removes a key.
   *
   * @return its location, or 0 if it was absent
   */
  long remove(long hash, byte[] key, KeySource src) {
    long[] t = table;
    int mask = (t.length >> 1) - 1;
    int i = home(hash, mask);
    while (true) {
      long h = t[2 * i];
      if (h == 0) {
        return 0;
      }
      if ((h & HASH_BITS) == hash && src.keyEquals(t[2 * i + 1], key, 0)) {
        break;
      }
      i = (i + 1) & mask;
    }
    long old = t[2 * i + 1];
    // Backward-shift deletion: move later entries of the probe run into the hole.
    int hole = i;
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      long h = t[2 * j];
      if (h == 0) {
        break;
      }
      int home = home(h, mask);
      // Move j into the hole if its home is not cyclically within (hole, j].
      boolean stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!stays) {
        t[2 * hole + 1] = t[2 * j + 1];
        t[2 * hole] = h;
        hole = j;
      }
    }
    t[2 * hole] = 0;
    t[2 * hole + 1] = 0;
    size--;
    int cap = t.length >> 1;
    if (cap > minCapacity && size * 8L < cap) {
      resize(Math.max(minCapacity, cap >> 1));
    }
    return old;
  }

  private void resize(int newCap) {
    long[] old = table;
    long[] t = new long[newCap * 2];
    int mask = newCap - 1;
    for (int s = 0; s < old.length; s += 2) {
      long h = old[s];
      if (h != 0) {
        int i = home(h, mask);
        while (t[2 * i] != 0) {
          i = (i + 1) & mask;
        }
        t[2 * i] = h;
        t[2 * i + 1] = old[s + 1];
      }
    }
    table = t; // published by the caller's sequence lock
  }

  /** Every location in the table, in no particular order. */
  long[] locations() {
    long[] t = table;
    long[] out = new long[size];
    int n = 0;
    for (int s = 0; s < t.length; s += 2) {
      if (t[s] != 0) {
        out[n++] = t[s + 1];
      }
    }
    return n == out.length ? out : Arrays.copyOf(out, n);
  }

  /** Calls {@code action} for every location; used when counting or checking. */
  void forEachLocation(java.util.function.LongConsumer action) {
    long[] t = table;
    for (int s = 0; s < t.length; s += 2) {
      if (t[s] != 0) {
        action.accept(t[s + 1]);
      }
    }
  }
}
