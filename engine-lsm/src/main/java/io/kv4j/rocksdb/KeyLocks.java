package io.kv4j.rocksdb;

import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.BitSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Striped write locks by key hash, which order conditional writes with every other write of the
 * same key. RocksDB has no compare-and-set on a plain database, so a conditional write reads the
 * key and writes it under its stripe's lock; a plain {@code put} or {@code delete} takes that same
 * lock (one uncontended lock in the common case), and a batch takes the locks of all its keys'
 * stripes in ascending order, so no write lands between a conditional write's read and its write.
 * The store directory's lock makes this process the only writer, so in-process locks suffice.
 *
 * <p>Deadlock freedom: a thread holds either one stripe (put, delete, conditional write) or a set
 * taken in ascending stripe order (batch), and never asks for another stripe while holding one out
 * of that order.
 */
final class KeyLocks {
  /**
   * 1024 stripes: two of 16 writers on different keys share a stripe with a chance of about 11%,
   * and then only wait for each other's write (a synced write holds its lock through the WAL's
   * fsync). About 48 KiB per store.
   */
  static final int STRIPES = 1024;

  private final ReentrantLock[] locks = new ReentrantLock[STRIPES];

  KeyLocks() {
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  /**
   * The stripe of a key: its content hash, spread so that short keys differing late still land
   * apart.
   */
  static int stripe(byte[] key) {
    int h = Arrays.hashCode(key);
    h ^= h >>> 16;
    h *= 0x85ebca6b; // murmur3's finaliser: every input bit reaches the low bits used here
    h ^= h >>> 13;
    return h & (STRIPES - 1);
  }

  /** The lock of a key's stripe; the caller locks and unlocks it. */
  ReentrantLock of(byte[] key) {
    return locks[stripe(key)];
  }

  /**
   * Locks the stripes of every key of a batch, in ascending order.
   *
   * @return the stripes taken, for {@link #unlock(int[])}
   */
  int[] lock(WriteBatch batch) {
    BitSet set = new BitSet(STRIPES);
    for (int i = 0, n = batch.size(); i < n; i++) {
      set.set(stripe(batch.key(i)));
    }
    int[] stripes = set.stream().toArray();
    int taken = 0;
    try {
      for (int s : stripes) {
        locks[s].lock();
        taken++;
      }
    } finally {
      if (taken != stripes.length) {
        unlock(Arrays.copyOf(stripes, taken)); // only an Error can get here
      }
    }
    return stripes;
  }

  /** Unlocks stripes taken by {@link #lock(WriteBatch)}. */
  void unlock(int[] stripes) {
    for (int i = stripes.length - 1; i >= 0; i--) {
      locks[stripes[i]].unlock();
    }
  }
}
