package io.kv4j.rocksdb;

import io.kv4j.StoreClosedException;
import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.rocksdb.RocksDBException;

/**
 * The write path: puts, deletes, batches (also across keyspaces) and conditional writes, each under
 * the stripe locks of its (keyspace, key) pairs ({@link KeyLocks}) and inside the store's gate.
 */
final class Writes {
  private Writes() {}

  /*
   * Writes take the stripe lock of their key (KeyLocks), so that a conditional write's read and
   * write are never split by another write of the same key: one uncontended lock on the plain
   * write path. The lock is taken outside the gate, so close never waits for a thread that is only
   * queued for a lock.
   */

  static void put(RocksDbStore s, byte[] key, byte[] value) {
    ReentrantLock lock = s.keyLocks.of(s.column.salt, key);
    lock.lock();
    try {
      int l = s.enter();
      try {
        s.db.put(s.column.handle, s.writeOptions, key, value);
      } catch (RocksDBException e) {
        throw s.writeError("put", e);
      } finally {
        s.gate.exit(l);
      }
    } finally {
      lock.unlock();
    }
  }

  static void delete(RocksDbStore s, byte[] key) {
    ReentrantLock lock = s.keyLocks.of(s.column.salt, key);
    lock.lock();
    try {
      int l = s.enter();
      try {
        s.db.delete(s.column.handle, s.writeOptions, key);
      } catch (RocksDBException e) {
        throw s.writeError("delete", e);
      } finally {
        s.gate.exit(l);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * One native batch, also across keyspaces: each operation goes to its keyspace's column family
   * (created first if the batch names an absent keyspace), and RocksDB applies the batch as one WAL
   * record, atomically across column families and crashes. If a drop retired one of its keyspaces
   * meanwhile, the batch is built again against the keyspace as it is now.
   */
  static void write(RocksDbStore s, WriteBatch batch) {
    while (true) {
      Column[] columns = batch.namesKeyspaces() ? s.columns(batch) : null;
      // The native batch is independent of the database: build it before taking any lock.
      try (org.rocksdb.WriteBatch wb = NativeBatches.nativeBatch(batch, s.column, columns, s.dir)) {
        long[] stripes = s.keyLocks.lock(batch, s.column.salt, columns);
        try {
          int l = s.enter();
          try {
            if (columns != null && anyDropped(columns)) {
              continue;
            }
            s.db.write(s.writeOptions, wb);
            return;
          } catch (RocksDBException e) {
            throw s.writeError("write batch", e);
          } finally {
            s.gate.exit(l);
          }
        } finally {
          s.keyLocks.unlock(stripes);
        }
      }
    }
  }

  private static boolean anyDropped(Column[] columns) {
    for (Column c : columns) {
      if (c.dropped) {
        return true;
      }
    }
    return false;
  }

  /** A keyspace's column as it is now, created if absent, waiting out a drop of the same name. */
  static Column liveColumn(RocksDbStore s, String name) {
    for (int round = 0; ; round++) {
      Column c = s.keyspaces.get(name);
      if (c != null && !c.dropped) {
        return c;
      }
      int l = s.gate.enter();
      if (l < 0) {
        throw new StoreClosedException(s.info().describe() + " is closed");
      }
      try {
        c = s.keyspaces.create(s.db, name);
      } catch (RocksDBException e) {
        throw s.writeError("create keyspace '" + name + "'", e);
      } finally {
        s.gate.exit(l);
      }
      if (c != null) {
        return c;
      }
      LockSupport.parkNanos(Math.min(1_000_000L, 10_000L << Math.min(round, 6)));
    }
  }

  /**
   * Compare and write under the key's stripe lock, which every write of the key takes ({@link
   * KeyLocks}): the current value is read with the store's read options (block checksums verified,
   * as by {@code get}), compared by content, and the write goes through the store's write options
   * (the same durability as {@code put}). This process is the store's only writer (the directory
   * lock), so nothing outside these locks can write the key in between.
   */
  static boolean compareAndSet(RocksDbStore s, byte[] key, byte[] expected, byte[] value) {
    ReentrantLock lock = s.keyLocks.of(s.column.salt, key);
    lock.lock();
    try {
      int l = s.enter();
      try {
        byte[] current;
        try {
          current = s.db.get(s.column.handle, s.readOptions, key);
        } catch (RocksDBException e) {
          throw Failures.translate(s.dir, "conditional write (read)", e);
        }
        if (expected == null ? current != null : !Arrays.equals(current, expected)) {
          return false;
        }
        try {
          if (value == null) {
            s.db.delete(s.column.handle, s.writeOptions, key);
          } else {
            s.db.put(s.column.handle, s.writeOptions, key, value);
          }
        } catch (RocksDBException e) {
          throw s.writeError("conditional write", e);
        }
        return true;
      } finally {
        s.gate.exit(l);
      }
    } finally {
      lock.unlock();
    }
  }
}
