package io.kv4j.memory;

import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * The memory engine's point index: key bytes to value bytes in an open-addressing hash table with
 * linear probing. Two objects per entry (the key and value arrays, stored as given) instead of a
 * hash map's four (node, key wrapper, key, value): fewer cache misses per lookup, and fewer objects
 * for the collector to copy and trace while the table lives in the old generation.
 *
 * <p>A slot is a hash word in {@link #hashes} (0 = empty; a key's word is never 0) and the key and
 * value side by side in {@link #slots}, so a hash match loads one line for both. Deletion shifts
 * the following run back (no tombstones). The table doubles above a load of 3/4 and halves below
 * 1/8 (never below {@link #MIN_CAPACITY}). Not thread-safe: the store's lock guards it.
 */
final class KeyTable {
  static final int MIN_CAPACITY = 16;

  /** Most slots: two references each in one array, which holds fewer than 2^31. */
  private static final int MAX_CAPACITY = 1 << 29;

  /** Most keys: the largest table filled to 7/8, so that a probe always meets an empty slot. */
  static final int MAX_KEYS = MAX_CAPACITY - MAX_CAPACITY / 8;

  private int[] hashes;
  private Object[] slots; // key at 2i, value at 2i + 1
  private int mask;
  private int size;

  KeyTable() {
    allocate(MIN_CAPACITY);
  }

  int size() {
    return size;
  }

  /** The value stored for {@code key}, or null. */
  byte[] get(byte[] key) {
    int h = hash(key);
    int[] hs = hashes;
    int m = mask;
    for (int i = h & m; ; i = (i + 1) & m) {
      int w = hs[i];
      if (w == 0) {
        return null;
      }
      if (w == h && Arrays.equals((byte[]) slots[2 * i], key)) {
        return (byte[]) slots[2 * i + 1];
      }
    }
  }

  /**
   * Stores {@code value} for {@code key}; both arrays are kept as given (the caller copies them).
   * An existing entry keeps its key array.
   *
   * @return the value replaced, or null
   */
  byte[] put(byte[] key, byte[] value) {
    int h = hash(key);
    int m = mask;
    for (int i = h & m; ; i = (i + 1) & m) {
      int w = hashes[i];
      if (w == 0) {
        if (size >= MAX_KEYS) {
          throw new IllegalStateException(
              "the memory engine holds at most " + MAX_KEYS + " keys per keyspace");
        }
        hashes[i] = h;
        slots[2 * i] = key;
        slots[2 * i + 1] = value;
        if (++size > (m + 1) / 4 * 3 && m + 1 < MAX_CAPACITY) {
          resize((m + 1) * 2);
        }
        return null;
      }
      if (w == h && Arrays.equals((byte[]) slots[2 * i], key)) {
        byte[] old = (byte[]) slots[2 * i + 1];
        slots[2 * i + 1] = value;
        return old;
      }
    }
  }

  /**
   * Removes {@code key}.
   *
   * @return the value removed, or null
   */
  byte[] remove(byte[] key) {
    int h = hash(key);
    int m = mask;
    int i = h & m;
    while (true) {
      int w = hashes[i];
      if (w == 0) {
        return null;
      }
      if (w == h && Arrays.equals((byte[]) slots[2 * i], key)) {
        break;
      }
      i = (i + 1) & m;
    }
    byte[] old = (byte[]) slots[2 * i + 1];
    // Backward shift: move each later entry of the run whose home is not in (i, j] into the gap.
    for (int j = (i + 1) & m; ; j = (j + 1) & m) {
      int w = hashes[j];
      if (w == 0) {
        break;
      }
      int home = w & m;
      boolean stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        hashes[i] = w;
        slots[2 * i] = slots[2 * j];
        slots[2 * i + 1] = slots[2 * j + 1];
        i = j;
      }
    }
    hashes[i] = 0;
    slots[2 * i] = null;
    slots[2 * i + 1] = null;
    size--;
    int capacity = m + 1;
    if (capacity > MIN_CAPACITY && size < capacity / 8) {
      resize(capacity / 2);
    }
    return old;
  }

  /** Calls {@code action} with each key and value, in no particular order. */
  void forEach(BiConsumer<byte[], byte[]> action) {
    for (int i = 0; i <= mask; i++) {
      if (hashes[i] != 0) {
        action.accept((byte[]) slots[2 * i], (byte[]) slots[2 * i + 1]);
      }
    }
  }

  void clear() {
    allocate(MIN_CAPACITY);
    size = 0;
  }

  /** Slots of the table (tests). */
  int capacity() {
    return mask + 1;
  }

  private void resize(int capacity) {
    int[] oldHashes = hashes;
    Object[] oldSlots = slots;
    allocate(capacity);
    int m = mask;
    for (int j = 0; j < oldHashes.length; j++) {
      int w = oldHashes[j];
      if (w != 0) {
        int i = w & m;
        while (hashes[i] != 0) {
          i = (i + 1) & m;
        }
        hashes[i] = w;
        slots[2 * i] = oldSlots[2 * j];
        slots[2 * i + 1] = oldSlots[2 * j + 1];
      }
    }
  }

  private void allocate(int capacity) {
    hashes = new int[capacity];
    slots = new Object[2 * capacity];
    mask = capacity - 1;
  }

  /** The key's hash word: its bytes' hash, mixed so that the low bits vary; never 0. */
  static int hash(byte[] key) {
    int h = Arrays.hashCode(key) * 0x9E3779B9;
    h ^= h >>> 15;
    return h == 0 ? 1 : h;
  }
}
