package io.kv4j.lmdb;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.Txn;

/**
 * The keyspaces of a store of format 3 or 4: one LMDB named database per keyspace, in the same
 * environment as the store's own keys (the database named {@value #OWN}), so one write transaction
 * spans them. The unnamed main database holds only the databases' names (LMDB's own records); no
 * user key is ever written to it.
 *
 * <p>Handles (dbis) opened in a write transaction are private to it until it commits: they are kept
 * in {@link #created} and published by {@link #committed()}, or forgotten by {@link #aborted()}
 * (LMDB closes them with the aborted transaction). Every write transaction runs under the writer
 * lock, which also guards {@link #created}.
 */
final class Keyspaces {
  /** The most keyspaces a store holds. */
  static final int MAX_KEYSPACES = 1000;

  /**
   * LMDB's maxdbs: the keyspaces, the store's own database and one spare handle, which looking up
   * an absent name needs (LMDB refuses any lookup when every handle is taken).
   */
  static final int MAX_DBS = MAX_KEYSPACES + 2;

  /** The named database holding the store's own keys. Not a valid keyspace name to users. */
  static final String OWN = "default";

  private final Env<byte[]> env;
  private final Dbi<byte[]> main;
  private final ReadTxnPool readers;
  private final MapBounds bounds;
  private final String describe;
  private final boolean readOnly;
  private final Map<String, Space> open = new ConcurrentHashMap<>();
  private final Map<String, Space> created = new HashMap<>(); // under the writer lock
  private GroupCommit writes;

  Keyspaces(
      Env<byte[]> env,
      Dbi<byte[]> main,
      ReadTxnPool readers,
      MapBounds bounds,
      String describe,
      boolean readOnly) {
    this.env = env;
    this.main = main;
    this.readers = readers;
    this.bounds = bounds;
    this.describe = describe;
    this.readOnly = readOnly;
  }

  /** Attaches the writer, which publishes and forgets handles with its transactions' outcome. */
  void attach(GroupCommit writes) {
    this.writes = writes;
    writes.onOutcome(this::committed, this::aborted);
  }

  private static byte[] bytes(String name) {
    return name.getBytes(StandardCharsets.US_ASCII);
  }

  /** The keyspace's space, opened (and created) in {@code txn}. Caller holds the writer lock. */
  Space resolve(Txn<byte[]> txn, String name) {
    Space s = find(txn, name);
    if (s != null) {
      return s;
    }
    long names = main.stat(txn).entries;
    if (names - 1 >= MAX_KEYSPACES) {
      throw new IllegalStateException(
          describe
              + " holds "
              + (names - 1)
              + " keyspaces, the most this engine supports ("
              + MAX_KEYSPACES
              + "); cannot create keyspace '"
              + name
              + "': drop one first");
    }
    Dbi<byte[]> dbi = env.openDbi(txn, bytes(name), null, false, DbiFlags.MDB_CREATE);
    s = new Space(name, dbi, describe);
    created.put(name, s);
    return s;
  }

  /**
   * The keyspace's space if its database exists, opened in {@code txn} if it was not open yet, or
   * null: never creates one (a condition of a conditional batch reads an absent keyspace as holding
   * no key). Caller holds the writer lock.
   */
  Space find(Txn<byte[]> txn, String name) {
    Space s = open.get(name);
    if (s == null) {
      s = created.get(name);
    }
    if (s != null) {
      return s;
    }
    Dbi<byte[]> dbi = openIn(txn, name);
    if (dbi == null) {
      return null;
    }
    s = new Space(name, dbi, describe);
    created.put(name, s);
    return s;
  }

  /** An existing database's handle opened in {@code txn}, or null when there is none. */
  private Dbi<byte[]> openIn(Txn<byte[]> txn, String name) {
    try {
      return env.openDbi(txn, bytes(name), null, false);
    } catch (Dbi.KeyNotFoundException e) {
      return null;
    }
  }

  private void committed() {
    open.putAll(created);
    created.clear();
  }

  private void aborted() {
    created.clear();
  }

  /**
   * Opens a keyspace, creating it in a write transaction of its own when absent (read-write), or
   * opening an existing one through a read transaction (read-only: nothing writes then). The caller
   * holds a gate section (read-only) or none (read-write: the write enters it).
   */
  Space open(String name) {
    Space s = open.get(name);
    if (s != null) {
      return s;
    }
    if (readOnly) {
      synchronized (open) {
        s = open.get(name);
        if (s == null) {
          s = new Space(name, env.openDbi(bytes(name)), describe);
          open.put(name, s);
        }
        return s;
      }
    }
    writes.submit(txn -> resolve(txn, name), 0);
    return open.get(name);
  }

  /** The opened space of a keyspace, or null. */
  Space opened(String name) {
    return open.get(name);
  }

  /** The names of the keyspaces; the caller holds a gate section. */
  List<String> names() {
    List<String> names = new ArrayList<>();
    Txn<byte[]> txn = readers.borrow();
    try (Cursor<byte[]> c = main.openCursor(txn)) {
      ArrayProxy.beginCursor(bounds, false);
      for (boolean found = c.first(); found; found = c.next()) {
        String n = new String(c.key(), StandardCharsets.US_ASCII);
        if (!n.equals(OWN)) {
          names.add(n);
        }
      }
    } finally {
      ArrayProxy.release();
      readers.giveBack(txn);
    }
    return names;
  }

  /**
   * Drops a keyspace: refuses new calls on its space and waits for those in flight (no gate section
   * held, so a call waiting for map growth can finish), then deletes the database with {@code
   * mdb_drop(del=1)} in a write transaction. LMDB closes the handle inside that call, even if the
   * transaction then fails, so the space is forgotten either way; a retry opens the database anew.
   */
  boolean drop(String name) {
    Space s = open.get(name);
    if (s != null) {
      s.retire();
    }
    boolean[] existed = new boolean[1];
    writes.write(
        txn -> {
          Space cur = open.remove(name);
          Dbi<byte[]> dbi = cur != null ? cur.dbi() : openIn(txn, name);
          existed[0] = dbi != null;
          if (dbi != null) {
            dbi.drop(txn, true);
          }
        });
    return existed[0];
  }
}
