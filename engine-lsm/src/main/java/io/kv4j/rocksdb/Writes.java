package io.kv4j.rocksdb;

import io.kv4j.StoreClosedException;
import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.rocksdb.RocksDBException;

/**
 * The write path: puts, deletes, batches (also across keyspaces), conditional writes and
 * conditional batches, inside the store's gate. Conditional writes hold the stripe locks of their
 * (keyspace, key) pairs from read to write; plain writes take them only while a conditional write
 * runs ({@link KeyLocks}).
 */
final class Writes {
  private Writes() {}

  /*
   * Plain writes go without stripes unless a conditional write is running (KeyLocks: the
   * handshake); then they take the stripe of each key, so that a conditional write's read and
   * write are never split by another write of the same key. Stripes are taken outside the gate, so
   * close never waits for a thread that is only queued for a lock.
   */

  static void put(RocksDbStore s, byte[] key, byte[] value) {
    int unlocked = s.keyLocks.enterUnlocked();
    if (unlocked >= 0) {
      try {
        putNow(s, key, value);
      } finally {
        s.keyLocks.exitUnlocked(unlocked);
      }
      return;
    }
    ReentrantLock lock = s.keyLocks.of(s.column.salt, key);
    lock.lock();
    try {
      putNow(s, key, value);
    } finally {
      lock.unlock();
    }
  }

  private static void putNow(RocksDbStore s, byte[] key, byte[] value) {
    int l = s.enter();
    try {
      s.db.put(s.column.handle, s.writeOptions, key, value);
    } catch (RocksDBException e) {
      throw s.writeError("put", e);
    } finally {
      s.gate.exit(l);
    }
  }

  static void delete(RocksDbStore s, byte[] key) {
    int unlocked = s.keyLocks.enterUnlocked();
    if (unlocked >= 0) {
      try {
        deleteNow(s, key);
      } finally {
        s.keyLocks.exitUnlocked(unlocked);
      }
      return;
    }
    ReentrantLock lock = s.keyLocks.of(s.column.salt, key);
    lock.lock();
    try {
      deleteNow(s, key);
    } finally {
      lock.unlock();
    }
  }

  private static void deleteNow(RocksDbStore s, byte[] key) {
    int l = s.enter();
    try {
      s.db.delete(s.column.handle, s.writeOptions, key);
    } catch (RocksDBException e) {
      throw s.writeError("delete", e);
    } finally {
      s.gate.exit(l);
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
      // Built before taking any lock; it names column families by id, so once built it no longer
      // reads their handles.
      try (org.rocksdb.WriteBatch wb = build(s, batch, columns)) {
        if (wb == null) {
          continue; // one of its keyspaces was dropped meanwhile: ask for the columns again
        }
        int unlocked = s.keyLocks.enterUnlocked();
        long[] stripes = unlocked >= 0 ? null : s.keyLocks.lock(batch, s.column.salt, columns);
        try {
          if (writeNow(s, wb, columns)) {
            return;
          }
        } finally {
          if (stripes != null) {
            s.keyLocks.unlock(stripes);
          } else {
            s.keyLocks.exitUnlocked(unlocked);
          }
        }
      }
    }
  }

  /**
   * The native batch for {@code batch}; null if one of its keyspaces was dropped meanwhile. RocksDB
   * reads a column family's id through its native handle as each record is appended, so a batch
   * that names a keyspace other than {@code default} is built inside the gate, after checking that
   * no drop retired its columns: a drop frees a handle only after every call that entered the gate
   * before it left (building outside, a drop racing the batch let RocksDB read a freed handle and
   * crash the JVM).
   */
  private static org.rocksdb.WriteBatch build(RocksDbStore s, WriteBatch batch, Column[] columns) {
    if (columns == null && s.column.id == 0) {
      return NativeBatches.nativeBatch(batch, s.column, null, s.dir); // no handle is read
    }
    int l = s.enter();
    try {
      if (columns != null && anyDropped(columns)) {
        return null;
      }
      return NativeBatches.nativeBatch(batch, s.column, columns, s.dir);
    } finally {
      s.gate.exit(l);
    }
  }

  /** Writes a native batch inside the gate; false if one of its keyspaces was dropped meanwhile. */
  private static boolean writeNow(RocksDbStore s, org.rocksdb.WriteBatch wb, Column[] columns) {
    int l = s.enter();
    try {
      if (columns != null && anyDropped(columns)) {
        return false;
      }
      s.db.write(s.writeOptions, wb);
      return true;
    } catch (RocksDBException e) {
      throw s.writeError("write batch", e);
    } finally {
      s.gate.exit(l);
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
   * A conditional batch: under the stripe locks of every key it reads or writes (conditions and
   * operations together, one ascending order: {@link KeyLocks}), inside the gate, every condition
   * is read with the store's read options (checksums verified, as by {@code get}) and compared by
   * content; if all hold, the operations go to RocksDB as one native batch through the store's
   * write options (the durability of {@code write}). While it runs every other write takes the
   * stripe of each key it writes, plain writes that went ahead without stripes have landed before
   * it reads ({@link KeyLocks#beginConditional()}), and this process is the store's only writer
   * (the directory lock), so nothing can change a condition key between its read and the batch's
   * write. On false nothing is written and no keyspace is created.
   *
   * <p>A condition on a keyspace that does not exist (or is being dropped) holds no key; it is not
   * created. A keyspace an operation names is created only once the conditions held, inside the
   * locks; if one of them is being dropped right then, everything is released and the batch is
   * tried again once the drop is over (its conditions read anew).
   *
   * @param conditionSpaces the keyspace of each condition (null: the store's own keys)
   * @param operationSpaces the keyspace of each operation, or null if the batch names none
   */
  static boolean writeIf(
      RocksDbStore s, WriteBatch batch, String[] conditionSpaces, String[] operationSpaces) {
    s.keyLocks.beginConditional(); // plain writes take their stripes until the end
    try {
      return writeIfLocked(s, batch, conditionSpaces, operationSpaces);
    } finally {
      s.keyLocks.endConditional();
    }
  }

  private static boolean writeIfLocked(
      RocksDbStore s, WriteBatch batch, String[] conditionSpaces, String[] operationSpaces) {
    for (int round = 0; ; round++) {
      long[] stripes = s.keyLocks.lock(batch, s.column.salt, operationSpaces, conditionSpaces);
      try {
        int l = s.enter();
        try {
          if (!conditionsHold(s, batch, conditionSpaces)) {
            return false;
          }
          Column[] columns = operationSpaces == null ? null : operationColumns(s, operationSpaces);
          if (operationSpaces == null || columns != null) {
            if (!batch.isEmpty()) {
              try (org.rocksdb.WriteBatch wb =
                  NativeBatches.nativeBatch(batch, s.column, columns, s.dir)) {
                s.db.write(s.writeOptions, wb);
              } catch (RocksDBException e) {
                throw s.writeError("conditional batch", e);
              }
            }
            return true;
          }
        } finally {
          s.gate.exit(l);
        }
      } finally {
        s.keyLocks.unlock(stripes);
      }
      // A keyspace the batch writes is being dropped; the drop waits for the gate, so wait outside.
      LockSupport.parkNanos(Math.min(1_000_000L, 10_000L << Math.min(round, 6)));
    }
  }

  /**
   * Whether every condition holds; the caller holds the conditions' stripes and is inside the gate.
   * A condition's column is looked up, never created, and read only if it is not dropped (read
   * after entering the gate: a drop waits for every call that saw it live).
   */
  private static boolean conditionsHold(RocksDbStore s, WriteBatch batch, String[] spaces) {
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      String name = spaces[i];
      Column c = Objects.equals(name, s.column.keyspace) ? s.column : s.keyspaces.get(name);
      byte[] current = null;
      if (c != null && !c.dropped) {
        try {
          current = s.db.get(c.handle, s.readOptions, batch.conditionKey(i));
        } catch (RocksDBException e) {
          throw Failures.translate(s.dir, "conditional batch (read)", e);
        }
      }
      byte[] expected = batch.conditionValue(i);
      if (expected == null ? current != null : !Arrays.equals(current, expected)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The live column of each operation, creating the keyspaces that do not exist, all at once; null
   * (nothing created) while one of them is being dropped. Inside the gate.
   */
  private static Column[] operationColumns(RocksDbStore s, String[] spaces) {
    Column[] out = new Column[spaces.length];
    Set<String> absent = null;
    for (int i = 0; i < spaces.length; i++) {
      String name = spaces[i];
      Column c = Objects.equals(name, s.column.keyspace) ? s.column : s.keyspaces.get(name);
      if (c == null || c.dropped) {
        if (absent == null) {
          absent = new HashSet<>();
        }
        absent.add(name);
      } else {
        out[i] = c;
      }
    }
    if (absent != null) {
      Map<String, Column> created;
      try {
        created = s.keyspaces.createAll(s.db, absent);
      } catch (RocksDBException e) {
        throw s.writeError("create keyspaces " + absent, e);
      }
      if (created == null) {
        return null;
      }
      for (int i = 0; i < spaces.length; i++) {
        if (out[i] == null) {
          out[i] = created.get(spaces[i]);
        }
      }
    }
    return out;
  }

  /**
   * Compare and write under the key's stripe lock, which every write of the key takes while a
   * conditional write runs, after every plain write that went without it has landed ({@link
   * KeyLocks#beginConditional()}): the current value is read with the store's read options (block
   * checksums verified, as by {@code get}), compared by content, and the write goes through the
   * store's write options (the same durability as {@code put}). This process is the store's only
   * writer (the directory lock), so nothing outside these locks can write the key in between.
   */
  static boolean compareAndSet(RocksDbStore s, byte[] key, byte[] expected, byte[] value) {
    s.keyLocks.beginConditional(); // plain writes take their stripes until the end
    try {
      return compareAndSetLocked(s, key, expected, value);
    } finally {
      s.keyLocks.endConditional();
    }
  }

  private static boolean compareAndSetLocked(
      RocksDbStore s, byte[] key, byte[] expected, byte[] value) {
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
        Runnable pause = s.betweenReadAndWrite;
        if (pause != null) {
          pause.run();
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
