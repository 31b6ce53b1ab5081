package io.kv4j.memory;

import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * The memory engine's point index: keys to their entries in an {@link Arena}, in an open-addressing
 * hash table with linear probing. A slot is two longs side by side in {@link #slots}: the key's
 * hash word (0 = empty; a key's word is never 0) and its entry's location, so a probe loads one
 * cache line for both. No object per entry: the collector neither traces nor copies the table's
 * contents.
 *
 * <p>A value overwritten with one of the same length is written over in place: no garbage, so a
 * workload of fixed-size values or counters never cleans. Deletion shifts the following run back
 * (no tombstones). The table doubles above a load of 3/4 and halves below 1/8 (never below {@link
 * #MIN_CAPACITY}). After each write that leaves the arena's shared pages more than a third dead, up
 * to two pages are cleaned: their live entries move to the current page, found by hash word and
 * location, so a page is walked without comparing a key. Memory held is therefore at most about 1.5
 * times the live entries, plus the current page and the slack. Not thread-safe: the store's lock
 * guards it.
 */
final class KeyTable {
  static final int MIN_CAPACITY = 16;

  /** Most slots: two longs each in one array, which holds fewer than 2^31. */
  private static final int MAX_CAPACITY = 1 << 29;

  /** Most keys: the largest table filled to 7/8, so that a probe always meets an empty slot. */
  static final int MAX_KEYS = MAX_CAPACITY - MAX_CAPACITY / 8;

  /** Pages cleaned at most after one write: bounds the write's extra work to about 2 MiB. */
  private static final int CLEANINGS_PER_WRITE = 2;

  private final Arena arena = new Arena();
  private long[] slots; // hash word at 2i, location at 2i + 1
  private int mask;
  private int size;

  KeyTable() {
    allocate(MIN_CAPACITY);
  }

  int size() {
    return size;
  }

  /** A copy of the value stored for {@code key}, or null. */
  byte[] get(byte[] key) {
    int i = find(key);
    return i < 0 ? null : arena.value(slots[2 * i + 1]);
  }

  /** Whether {@code key} holds {@code value} (null: whether it is absent), copying nothing. */
  boolean holds(byte[] key, byte[] value) {
    int i = find(key);
    return i < 0 ? value == null : value != null && arena.valueEquals(slots[2 * i + 1], value);
  }

  /**
   * Stores copies of {@code key} and {@code value}.
   *
   * @return the length of the value replaced, or -1 if there was none
   */
  int put(byte[] key, byte[] value) {
    int h = hash(key);
    int m = mask;
    for (int i = h & m; ; i = (i + 1) & m) {
      int w = (int) slots[2 * i];
      if (w == 0) {
        if (size >= MAX_KEYS) {
          throw new IllegalStateException(
              "the memory engine holds at most " + MAX_KEYS + " keys per keyspace");
        }
        long loc = arena.append(key, value); // first: if it throws, no slot names it
        slots[2 * i] = h;
        slots[2 * i + 1] = loc;
        if (++size > (m + 1) / 4 * 3 && m + 1 < MAX_CAPACITY) {
          resize((m + 1) * 2);
        }
        clean();
        return -1;
      }
      if (w == h && arena.keyEquals(slots[2 * i + 1], key)) {
        long old = slots[2 * i + 1];
        int length = arena.valueLength(old);
        if (length == value.length) {
          arena.overwrite(old, value); // no reader shares the entry: the tree holds copies
          return length;
        }
        slots[2 * i + 1] = arena.append(key, value);
        arena.free(old);
        clean();
        return length;
      }
    }
  }

  /**
   * Removes {@code key}.
   *
   * @return the length of the value removed, or -1 if there was none
   */
  int remove(byte[] key) {
    int i = find(key);
    if (i < 0) {
      return -1;
    }
    long old = slots[2 * i + 1];
    int length = arena.valueLength(old);
    int m = mask;
    // Backward shift: move each later entry of the run whose home is not in (i, j] into the gap.
    for (int j = (i + 1) & m; ; j = (j + 1) & m) {
      int w = (int) slots[2 * j];
      if (w == 0) {
        break;
      }
      int home = w & m;
      boolean stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        slots[2 * i] = w;
        slots[2 * i + 1] = slots[2 * j + 1];
        i = j;
      }
    }
    slots[2 * i] = 0;
    slots[2 * i + 1] = 0;
    size--;
    int capacity = m + 1;
    if (capacity > MIN_CAPACITY && size < capacity / 8) {
      resize(capacity / 2);
    }
    arena.free(old);
    clean();
    return length;
  }

  /** Calls {@code action} with a copy of each key and value, in no particular order. */
  void forEach(BiConsumer<byte[], byte[]> action) {
    for (int i = 0; i <= mask; i++) {
      if ((int) slots[2 * i] != 0) {
        action.accept(arena.key(slots[2 * i + 1]), arena.value(slots[2 * i + 1]));
      }
    }
  }

  /** Removes every key. */
  void clear() {
    allocate(MIN_CAPACITY);
    size = 0;
    arena.clear();
  }

  /** Slots of the table (tests). */
  int capacity() {
    return mask + 1;
  }

  /** The arena holding the entries (tests and stats). */
  Arena arena() {
    return arena;
  }

  /** The slot of {@code key}, or -1. */
  private int find(byte[] key) {
    int h = hash(key);
    long[] sl = slots;
    int m = mask;
    for (int i = h & m; ; i = (i + 1) & m) {
      int w = (int) sl[2 * i];
      if (w == 0) {
        return -1;
      }
      if (w == h && arena.keyEquals(sl[2 * i + 1], key)) {
        return i;
      }
    }
  }

  /**
   * Moves the live entries of the arena's emptiest shared pages to its current page, while it wants
   * cleaning, at most {@link #CLEANINGS_PER_WRITE} pages. An entry at location L is live if the
   * slot on its key's probe path holds L; no key is compared.
   */
  private void clean() {
    for (int n = 0; n < CLEANINGS_PER_WRITE && arena.wantsCleaning(); n++) {
      int p = arena.victim();
      if (p < 0) {
        return;
      }
      arena.startCleaning(p);
      int end = arena.fill(p);
      for (int off = 0; off < end; ) {
        long loc = Arena.location(p, off);
        off += arena.size(loc);
        int m = mask;
        for (int i = arena.keyHash(loc) & m; (int) slots[2 * i] != 0; i = (i + 1) & m) {
          if (slots[2 * i + 1] == loc) {
            slots[2 * i + 1] = arena.move(loc);
            break;
          }
        }
      }
      arena.endCleaning();
    }
  }

  private void resize(int capacity) {
    long[] old = slots;
    allocate(capacity);
    int m = mask;
    for (int j = 0; j < old.length; j += 2) {
      int w = (int) old[j];
      if (w != 0) {
        int i = w & m;
        while (slots[2 * i] != 0) {
          i = (i + 1) & m;
        }
        slots[2 * i] = w;
        slots[2 * i + 1] = old[j + 1];
      }
    }
  }

  private void allocate(int capacity) {
    slots = new long[2 * capacity];
    mask = capacity - 1;
  }

  /** The key's hash word: its bytes' hash, mixed so that the low bits vary; never 0. */
  static int hash(byte[] key) {
    return mix(Arrays.hashCode(key));
  }

  /**
   * The hash word of the key in {@code bytes[from, to)} (a key in an arena page): equal to {@link
   * #hash(byte[])} of those bytes, {@link Arrays#hashCode(byte[])} being specified as this loop.
   */
  static int hash(byte[] bytes, int from, int to) {
    int h = 1;
    for (int i = from; i < to; i++) {
      h = 31 * h + bytes[i];
    }
    return mix(h);
  }

  private static int mix(int bytesHash) {
    int h = bytesHash * 0x9E3779B9;
    h ^= h >>> 15;
    return h == 0 ? 1 : h;
  }
}
