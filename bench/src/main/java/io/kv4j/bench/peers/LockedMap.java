package io.kv4j.bench.peers;

import io.kv4j.WriteBatch;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write path the MapDB and MVStore adapters share: a map of byte arrays written by one writer
 * at a time (under this lock), each write followed by the store's commit, and keys and values
 * copied in and out (both maps keep the arrays they are given and hand out their own).
 */
final class LockedMap {
  private final Map<byte[], byte[]> map;
  private final Runnable commit;
  private final Runnable rollback;
  private final ReentrantLock writeLock = new ReentrantLock();

  /**
   * @param map the store's map
   * @param commit what makes a write durable as the store's settings ask (may do nothing)
   * @param rollback what undoes the uncommitted part of a batch that failed (may do nothing)
   */
  LockedMap(Map<byte[], byte[]> map, Runnable commit, Runnable rollback) {
    this.map = map;
    this.commit = commit;
    this.rollback = rollback;
  }

  byte[] get(byte[] key) {
    byte[] v = map.get(key);
    return v == null ? null : v.clone();
  }

  void put(byte[] key, byte[] value) {
    locked(
        () -> {
          map.put(key.clone(), value.clone());
          commit.run();
        });
  }

  void delete(byte[] key) {
    locked(
        () -> {
          map.remove(key);
          commit.run();
        });
  }

  /** Applies a batch in order and commits once; a failure part-way rolls back first. */
  void write(WriteBatch batch) {
    locked(
        () -> {
          try {
            for (int i = 0, n = batch.size(); i < n; i++) {
              if (batch.isDelete(i)) {
                map.remove(batch.key(i));
              } else {
                map.put(batch.key(i).clone(), batch.value(i).clone());
              }
            }
          } catch (RuntimeException e) {
            rollback.run();
            throw e;
          }
          commit.run();
        });
  }

  /** Runs {@code action} as the only writer (sync and close, too, wait for a write in progress). */
  void locked(Runnable action) {
    writeLock.lock();
    try {
      action.run();
    } finally {
      writeLock.unlock();
    }
  }
}
