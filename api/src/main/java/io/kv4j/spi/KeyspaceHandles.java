package io.kv4j.spi;

import io.kv4j.Feature;
import io.kv4j.StoreInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open keyspace handles of one store: opened and dropped under one lock (an engine never sees
 * {@code doKeyspace} and {@code doDropKeyspace} at once), closed with the store, and a dropped
 * keyspace's handles closed before the engine drops it. Also what a handle's info is, and the
 * store's keyspace names in order.
 */
final class KeyspaceHandles {
  private final AbstractStore store;
  private final Set<AbstractStore> open = ConcurrentHashMap.newKeySet();

  KeyspaceHandles(AbstractStore store) {
    this.store = store;
  }

  /**
   * A keyspace handle's info: the store's, located at {@code location#name}, without {@link
   * Feature#KEYSPACES} (keyspaces do not nest) and {@link Feature#BACKUP} (the store is backed up
   * whole).
   */
  static StoreInfo handleInfo(StoreInfo store, String name) {
    EnumSet<Feature> features = EnumSet.noneOf(Feature.class);
    features.addAll(store.features());
    features.remove(Feature.KEYSPACES);
    features.remove(Feature.BACKUP);
    return new StoreInfo(
        store.engine(),
        features,
        store.limits(),
        store.durability(),
        store.location() + "#" + name,
        store.readOnly());
  }

  /** Opens (or creates) a keyspace's handle; the caller checked the name and the feature. */
  AbstractStore open(String name) {
    synchronized (open) {
      store.checkOpen();
      if (store.info().readOnly()) {
        List<String> existing = store.keyspaces();
        if (!existing.contains(name)) {
          throw new UnsupportedOperationException(
              store.info().describe()
                  + " is open read-only and has no keyspace '"
                  + name
                  + "' (it has "
                  + existing
                  + ")");
        }
      }
      AbstractStore h = store.doKeyspace(name);
      if (h == null || !h.belongsTo(store) || !name.equals(h.keyspaceName())) {
        throw new IllegalStateException(
            store.info().describe()
                + " returned a wrong handle for keyspace '"
                + name
                + "' (an engine bug)");
      }
      open.add(h);
      if (store.isClosed()) { // close() ran concurrently and may have missed this handle
        h.close();
        store.checkOpen();
      }
      return h;
    }
  }

  /** Closes the keyspace's handles, then drops it; the caller checked the name and feature. */
  boolean drop(String name, Runnable checkWritable) {
    synchronized (open) {
      checkWritable.run();
      for (AbstractStore h : new ArrayList<>(open)) {
        if (name.equals(h.keyspaceName())) {
          h.close();
        }
      }
      return store.doDropKeyspace(name);
    }
  }

  /** The store's named keyspaces, sorted; the caller checked the feature. */
  List<String> names() {
    store.checkOpen();
    List<String> names = new ArrayList<>(store.doKeyspaces());
    Collections.sort(names);
    return Collections.unmodifiableList(names);
  }

  /** Closes every open handle (the store is closing). */
  void closeAll() {
    RuntimeException failed = OpenReaders.closeEach(open, AbstractStore::close, null);
    if (failed != null) { // every handle was closed: one that throws keeps none of the rest open
      throw failed;
    }
  }

  /** Forgets a handle that closed. */
  void closed(AbstractStore h) {
    open.remove(h);
  }
}
