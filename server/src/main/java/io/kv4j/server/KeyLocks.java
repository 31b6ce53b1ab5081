package io.kv4j.server;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/** Striped locks that serialise writes (and read-modify-writes) of the same key. */
final class KeyLocks {
  private final ReentrantLock[] locks;
  private final int mask;

  KeyLocks(int stripes) {
    int n = Integer.highestOneBit(Math.max(1, stripes - 1)) << 1;
    locks = new ReentrantLock[n];
    for (int i = 0; i < n; i++) {
      locks[i] = new ReentrantLock();
    }
    mask = n - 1;
  }

  int stripe(byte[] key) {
    int h = Arrays.hashCode(key);
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    return h & mask;
  }

  ReentrantLock lockFor(byte[] key) {
    ReentrantLock l = locks[stripe(key)];
    l.lock();
    return l;
  }

  /** Locks the stripes of all keys in ascending stripe order (no deadlock); returns them. */
  int[] lockAll(byte[][] keys) {
    int[] s = new int[keys.length];
    for (int i = 0; i < keys.length; i++) {
      s[i] = stripe(keys[i]);
    }
    Arrays.sort(s);
    int n = 0;
    for (int i = 0; i < s.length; i++) {
      if (i == 0 || s[i] != s[i - 1]) {
        s[n++] = s[i];
      }
    }
    int[] distinct = Arrays.copyOf(s, n);
    for (int stripe : distinct) {
      locks[stripe].lock();
    }
    return distinct;
  }

  void unlockAll(int[] stripes) {
    for (int i = stripes.length - 1; i >= 0; i--) {
      locks[stripes[i]].unlock();
    }
  }

  /** Locks every stripe (FLUSHDB). */
  int[] lockEverything() {
    int[] all = new int[locks.length];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
      locks[i].lock();
    }
    return all;
  }
}
