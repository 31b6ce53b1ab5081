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
    return stripeOfHash(Arrays.hashCode(key));
  }

  /** The stripe of a key whose {@link Arrays#hashCode(byte[])} is {@code h}. */
  int stripeOfHash(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    return h & mask;
  }

  /**
   * Locks the first {@code n} stripes of {@code s} (sorted and made distinct in place) if none is
   * held by another thread, without waiting: the number of distinct stripes now held, or -1 with
   * none held.
   */
  int tryLockAll(int[] s, int n) {
    if (n > 1) {
      Arrays.sort(s, 0, n);
    }
    int d = 0;
    for (int i = 0; i < n; i++) {
      if (i == 0 || s[i] != s[i - 1]) {
        s[d++] = s[i];
      }
    }
    for (int i = 0; i < d; i++) {
      if (!locks[s[i]].tryLock()) {
        unlock(s, i);
        return -1;
      }
    }
    return d;
  }

  /** Unlocks the first {@code n} stripes of {@code s}. */
  void unlock(int[] s, int n) {
    for (int i = n - 1; i >= 0; i--) {
      locks[s[i]].unlock();
    }
  }

  /**
   * Locks the stripe of {@code key}, one of the keys of the request {@code s} is running, unless
   * its thread already holds them all ({@link Session#keysLocked}): the lock to unlock, or null
   * when nothing was taken. Saves the hash and the lock's two atomic operations a second time.
   */
  ReentrantLock lockFor(Session s, byte[] key) {
    return s.keysLocked ? null : lockFor(key);
  }

  ReentrantLock lockFor(byte[] key) {
    ReentrantLock l = locks[stripe(key)];
    l.lock();
    return l;
  }

  /** Whether a thread waits for the stripe of {@code key} (for INFO-style probes and tests). */
  boolean contended(byte[] key) {
    return locks[stripe(key)].hasQueuedThreads();
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
