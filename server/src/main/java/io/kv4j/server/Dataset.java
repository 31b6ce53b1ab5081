package io.kv4j.server;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.WriteBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The data the commands read and write: the store (replaced when a failed store is reopened), its
 * databases, the key stripe locks and the WATCH versions.
 *
 * <p>Every command reads through {@link #get}/{@link #contains} and writes through {@link #put},
 * {@link #delete}, {@link #update} or {@link #apply}: that is where a transaction's overlay, an
 * asynchronous FLUSHALL's hiding of old keys and the WATCH versions are handled, once.
 */
final class Dataset {
  /** Databases SELECT accepts where the engine has keyspaces (Redis's default count). */
  static final int DATABASES = 16;

  /** Returned by a {@link Change} that leaves the key as it is. Compared by identity. */
  static final byte[] KEEP = new byte[0];

  /** A read-modify-write's decision: the new value, {@link #KEEP}, or null to delete the key. */
  interface Change {
    byte[] apply(byte[] old);
  }

  final StoreInfo info;
  final boolean atomicBatch;

  /**
   * Whether single-key read-modify-writes are compare-and-sets: the engine declares
   * CONDITIONAL_WRITE and others may write the store ({@link Writers#SHARED}).
   */
  final boolean conditional;

  final boolean ordered;
  final boolean keyspaces;

  /**
   * Whether the engine declares CONDITIONAL_BATCH: then transactions and multi-key commands commit
   * with {@link Store#writeIf} on conditions over what they read, which makes them atomic against
   * other servers (or applications) writing the same store, not only against this server's clients.
   */
  final boolean shared;

  /** Whether a batch may name keyspaces (a condition on a key of another database). */
  final boolean keyspaceBatch;

  final KeyLocks locks = new KeyLocks(1024);
  final WatchVersions versions = new WatchVersions();

  // Handles of the keyspaces "db<n>" serving SELECTed databases n > 0, opened on first SELECT.
  private final Map<Integer, Store> databases = new ConcurrentHashMap<>();
  private volatile Store store;
  private volatile AsyncFlush flushing;

  Dataset(Store store, Writers writers) {
    this.store = store;
    this.info = store.info();
    this.atomicBatch = info.has(Feature.ATOMIC_BATCH);
    this.conditional = writers == Writers.SHARED && info.has(Feature.CONDITIONAL_WRITE);
    this.ordered = info.has(Feature.ORDERED_SCAN);
    this.keyspaces = info.has(Feature.KEYSPACES);
    this.shared = info.has(Feature.CONDITIONAL_BATCH);
    this.keyspaceBatch = info.has(Feature.KEYSPACE_BATCH);
  }

  /** The store being served now (database 0). */
  Store store() {
    return store;
  }

  /** Serves {@code fresh} from now on, after the failed store was closed. */
  void replace(Store fresh) {
    databases.clear(); // the old store closed its keyspace handles
    store = fresh;
  }

  /**
   * The store holding the session's database: the store itself for database 0, else the keyspace
   * {@code db<n>} (opened, and created, by SELECT).
   */
  Store of(Session s) {
    return s.db == 0 ? store : database(s.db);
  }

  /** Whether database {@code db} is open (the first use of a database opens its keyspace). */
  boolean isOpen(int db) {
    return db == 0 || databases.containsKey(db);
  }

  Store database(int db) {
    if (db == 0) {
      return store;
    }
    Store current = store;
    return databases.computeIfAbsent(db, n -> current.keyspace("db" + n));
  }

  /** The databases n > 0 whose keyspace {@code db<n>} exists in the store. */
  List<Integer> existingDatabases() {
    List<Integer> dbs = new ArrayList<>();
    for (String name : store.keyspaces()) {
      if (name.matches("db[1-9][0-9]{0,8}")) {
        int n = Integer.parseInt(name.substring(2));
        if (n < DATABASES) {
          dbs.add(n);
        }
      }
    }
    return dbs;
  }

  // ---- asynchronous FLUSHALL ----

  /** The FLUSHALL ASYNC in progress, or null. */
  AsyncFlush flushing() {
    return flushing;
  }

  /** Starts hiding old keys behind {@code f} (null: stop); the caller holds every stripe lock. */
  void flushing(AsyncFlush f) {
    flushing = f;
  }

  /**
   * Whether an asynchronous FLUSHALL hides this stored key of database 0 (it existed before the
   * flush). Other databases are flushed synchronously: nothing is hidden there.
   */
  boolean hidden(Session s, byte[] key) {
    AsyncFlush f = flushing;
    return f != null && s.db == 0 && f.hides(key);
  }

  /** A key was written: bumps its WATCH version and keeps it from an asynchronous FLUSHALL. */
  void touched(Session s, byte[] key) {
    versions.bump(key);
    AsyncFlush f = flushing;
    if (f != null && s.db == 0) {
      f.kept.add(new Key(key));
    }
  }

  // ---- reads ----

  byte[] get(Session s, byte[] key) {
    Overlay o = s.overlay;
    if (o != null) {
      byte[] v = o.get(key);
      if (v != null) {
        return v == Overlay.DELETED ? null : v;
      }
      if (o.recordsReads()) {
        return recordedRead(s, o, key);
      }
    }
    if (hidden(s, key)) {
      return null;
    }
    return of(s).get(key);
  }

  boolean contains(Session s, byte[] key) {
    Overlay o = s.overlay;
    if (o != null) {
      byte[] v = o.get(key);
      if (v != null) {
        return v != Overlay.DELETED;
      }
      if (o.recordsReads()) {
        return recordedRead(s, o, key) != null;
      }
    }
    return !hidden(s, key) && of(s).contains(key);
  }

  /**
   * Reads a key from the store for a transaction that commits on condition that nothing it read has
   * changed: records the stored value (also of a key an async FLUSHALL hides, which another server
   * may write) and returns what the client sees.
   */
  private byte[] recordedRead(Session s, Overlay o, byte[] key) {
    byte[] stored = of(s).get(key);
    o.read(key, stored);
    return hidden(s, key) ? null : stored;
  }

  // ---- writes ----

  /**
   * Read-modify-write of one key (SETNX, SET NX/XX/GET, GETSET, GETDEL, APPEND, SETRANGE, INCR*).
   * This server's writers of the key are serialised by its stripe lock. Where others may write the
   * store and the engine declares CONDITIONAL_WRITE ({@link #conditional}) the write is also a
   * compare-and-set against the value read, retried when it changed in between, so two servers (or
   * any other application) sharing one postgres, mysql or redis store lose no update; for a sole
   * writer ({@link Writers#SOLE}), without CONDITIONAL_WRITE, or inside MULTI (whose overlay
   * commits as one batch under the stripe locks), the stripe lock is all there is, which protects
   * only this server's clients. {@code change} may run more than once and must not write replies.
   *
   * @return the value the change was applied to (null when absent)
   */
  byte[] update(Session s, byte[] key, Change change) {
    ReentrantLock l = locks.lockFor(s, key);
    try {
      if (s.overlay != null || !conditional) {
        byte[] old = get(s, key);
        byte[] next = change.apply(old);
        if (next == null) {
          if (old != null) {
            delete(s, key);
          }
        } else if (next != KEEP) {
          put(s, key, next);
        }
        return old;
      }
      return compareAndSet(s, key, change);
    } finally {
      if (l != null) {
        l.unlock();
      }
    }
  }

  private byte[] compareAndSet(Session s, byte[] key, Change change) {
    Store st = of(s);
    while (true) {
      byte[] stored = st.get(key);
      byte[] old = hidden(s, key) ? null : stored; // a key an async FLUSHALL hides reads as absent
      byte[] next = change.apply(old);
      if (next == KEEP) {
        return old;
      }
      boolean done;
      if (stored == null) {
        done = next == null || st.putIfAbsent(key, next);
      } else if (next == null) {
        done = st.delete(key, stored);
      } else {
        done = st.replace(key, stored, next);
      }
      if (done) {
        touched(s, key);
        return old;
      }
      // Another writer of the shared store changed the key since we read it: read again.
    }
  }

  /** Writes one key; the caller holds the key's stripe lock. */
  void put(Session s, byte[] key, byte[] value) {
    Overlay o = s.overlay;
    if (o != null) {
      checkSizes(key, value);
      o.put(key, value);
      return;
    }
    of(s).put(key, value);
    touched(s, key);
  }

  /** Deletes one key; the caller holds the key's stripe lock. */
  void delete(Session s, byte[] key) {
    Overlay o = s.overlay;
    if (o != null) {
      o.delete(key);
      return;
    }
    of(s).delete(key);
    touched(s, key);
  }

  /**
   * Writes several keys together (value null = delete): one WriteBatch where the engine has
   * ATOMIC_BATCH. The caller holds the keys' stripe locks.
   */
  void apply(Session s, List<byte[]> keys, List<byte[]> values) {
    Overlay o = s.overlay;
    if (o != null) {
      for (int i = 0; i < keys.size(); i++) {
        if (values.get(i) == null) {
          o.delete(keys.get(i));
        } else {
          checkSizes(keys.get(i), values.get(i));
          o.put(keys.get(i), values.get(i));
        }
      }
      return;
    }
    Store st = of(s);
    if (atomicBatch && keys.size() > 1) {
      WriteBatch b = new WriteBatch();
      for (int i = 0; i < keys.size(); i++) {
        if (values.get(i) == null) {
          b.delete(keys.get(i));
        } else {
          b.put(keys.get(i), values.get(i));
        }
      }
      st.write(b);
    } else {
      for (int i = 0; i < keys.size(); i++) {
        if (values.get(i) == null) {
          st.delete(keys.get(i));
        } else {
          st.put(keys.get(i), values.get(i));
        }
      }
    }
    for (byte[] k : keys) {
      touched(s, k);
    }
  }

  /** Whether a key and a value of these lengths are within the engine's limits. */
  boolean fits(int keyLength, int valueLength) {
    return keyLength > 0
        && keyLength <= info.limits().maxKeySize()
        && valueLength <= info.limits().maxValueSize();
  }

  /** Inside a transaction the engine checks sizes only at commit: check them when queued. */
  void checkSizes(byte[] key, byte[] value) {
    if (key.length == 0 || key.length > info.limits().maxKeySize()) {
      throw new CommandException(
          "ERR key of "
              + key.length
              + " bytes: engine '"
              + info.engine()
              + "' takes 1 to "
              + info.limits().maxKeySize()
              + " bytes");
    }
    if (value.length > info.limits().maxValueSize()) {
      throw tooBig();
    }
  }

  CommandException tooBig() {
    return new CommandException(
        "ERR string exceeds maximum allowed size ("
            + info.limits().maxValueSize()
            + " bytes for engine '"
            + info.engine()
            + "')");
  }
}
