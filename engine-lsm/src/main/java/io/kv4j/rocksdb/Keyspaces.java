package io.kv4j.rocksdb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The store's keyspace table: the column family of its own keys, one per named keyspace, and any
 * other column family found at open (opened because RocksDB requires it, never listed or written).
 * Every column family is created with the same {@link ColumnFamilyOptions} as the default one.
 * Creation and removal are serialised on this object; lookups are lock-free.
 */
final class Keyspaces {
  private final Column own;
  private final ConcurrentHashMap<String, Column> named = new ConcurrentHashMap<>();
  private final List<Column> others = new ArrayList<>();
  private final Map<String, Column> dropping = new HashMap<>(); // guarded by this
  private final ColumnFamilyOptions options;

  /**
   * The table of a database just opened.
   *
   * @param families the column families opened, {@code default} first
   * @param handles their handles, in the same order
   * @param options the column family options every new keyspace gets
   */
  Keyspaces(
      List<ColumnFamilyDescriptor> families,
      List<ColumnFamilyHandle> handles,
      ColumnFamilyOptions options) {
    this.options = options;
    this.own = new Column(null, handles.get(0));
    for (int i = 1; i < families.size(); i++) {
      String name = Column.keyspaceOf(families.get(i).getName());
      if (name == null || name.isEmpty()) {
        others.add(new Column(null, handles.get(i)));
      } else {
        named.put(name, new Column(name, handles.get(i)));
      }
    }
  }

  /** The column of the store's own keys. */
  Column own() {
    return own;
  }

  /**
   * The column of a keyspace.
   *
   * @param name the name, or null for the store's own keys
   * @return the column, or null if the keyspace does not exist
   */
  Column get(String name) {
    return name == null ? own : named.get(name);
  }

  /**
   * The column of a keyspace, created if absent (a column family written durably to the MANIFEST
   * before this returns). The caller is inside the store's gate.
   *
   * @return the column, or null while a drop of the same name is still under way (the caller leaves
   *     the gate and asks again)
   */
  synchronized Column create(RocksDB db, String name) throws RocksDBException {
    Column c = named.get(name);
    if (c == null) {
      if (dropping.containsKey(name)) {
        return null;
      }
      ColumnFamilyHandle h =
          db.createColumnFamily(new ColumnFamilyDescriptor(Column.familyName(name), options));
      c = new Column(name, h);
      named.put(name, c);
    }
    return c;
  }

  /**
   * The columns of several keyspaces, each created if absent, or none created at all while a drop
   * of any of them is under way: a conditional batch creates the keyspaces it writes only once its
   * conditions held, and must not leave a created keyspace behind when it has to wait and check
   * them again. The caller is inside the store's gate.
   *
   * @param names keyspace names
   * @return the column of each name, or null while one of them is being dropped (the caller leaves
   *     the gate and asks again)
   */
  synchronized Map<String, Column> createAll(RocksDB db, Set<String> names)
      throws RocksDBException {
    for (String name : names) {
      if (!named.containsKey(name) && dropping.containsKey(name)) {
        return null;
      }
    }
    Map<String, Column> out = new HashMap<>();
    for (String name : names) {
      out.put(name, create(db, name)); // not null: checked above, and drops wait for this monitor
    }
    return out;
  }

  /**
   * Takes a keyspace out of the table and marks it dropped, so no new call finds or uses it; the
   * caller then waits for earlier calls, drops the column family and calls {@link #dropped}. Until
   * then the name cannot be created again, and the store's close frees the handle if the drop never
   * gets to.
   *
   * @return the column, or null if there was none
   */
  synchronized Column retire(String name) {
    Column c = named.remove(name);
    if (c != null) {
      c.dropped = true;
      dropping.put(name, c);
    }
    return c;
  }

  /** Ends a drop that {@link #retire} began. */
  synchronized void dropped(Column c) {
    dropping.remove(c.keyspace, c);
  }

  /** The keyspace names. */
  List<String> names() {
    return new ArrayList<>(named.keySet());
  }

  /** Every column family handle still open, {@code default} first (for flush and close). */
  synchronized List<Column> all() {
    List<Column> out = new ArrayList<>();
    out.add(own);
    out.addAll(named.values());
    out.addAll(dropping.values());
    out.addAll(others);
    return out;
  }
}
