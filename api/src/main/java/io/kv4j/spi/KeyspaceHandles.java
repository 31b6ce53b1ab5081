package io.kv4j.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open keyspace handles of one store: opened and dropped under one lock (an engine never sees
 * {@code doKeyspace} and {@code doDropKeyspace} at once), closed with the store, and a dropped
 * keyspace's handles closed before the engine drops it.
 */
final class KeyspaceHandles {
  private final AbstractStore store;
  private final Set<AbstractStore> open = ConcurrentHashMap.newKeySet();

  KeyspaceHandles(AbstractStore store) {
    this.store = store;
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

  /** Closes every open handle (the store is closing). */
  void closeAll() {
    for (AbstractStore h : new ArrayList<>(open)) {
      h.close();
    }
  }

  /** Forgets a handle that closed. */
  void closed(AbstractStore h) {
    open.remove(h);
  }
}
