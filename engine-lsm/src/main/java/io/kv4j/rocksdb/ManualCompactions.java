package io.kv4j.rocksdb;

import io.kv4j.StoreClosedException;
import java.util.HashSet;
import java.util.Set;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.RocksDBException;

/**
 * The store's manual compactions ({@code compact()}): each runs inside the store's gate like every
 * native call, and is registered here while it runs so that close can cancel it through its {@link
 * CompactRangeOptions} before it waits for the gate; so close does not wait for a long compaction
 * to finish. One per store, shared by its keyspace handles.
 */
final class ManualCompactions {
  /** Options of the compactions running now; guarded by itself. */
  private final Set<CompactRangeOptions> running = new HashSet<>();

  /**
   * One manual compaction of the whole key space of the store object's column family, bottommost
   * level included ({@code kForceOptimized}), so overwritten values and deletion markers are
   * dropped everywhere.
   */
  void run(RocksDbStore store) {
    // setCanceled(false) now, not only at close: RocksJava wires the flag into the options on the
    // first call, and RocksDB reads the pointer when the compaction starts.
    CompactRangeOptions options =
        new CompactRangeOptions()
            .setBottommostLevelCompaction(
                CompactRangeOptions.BottommostLevelCompaction.kForceOptimized)
            .setCanceled(false);
    synchronized (running) {
      running.add(options);
    }
    try {
      // close() marks the store closed before it cancels: registered after its cancel loop means
      // closed is visible here, so no compaction starts unseen by close.
      store.checkOpenNow();
      int l = store.enter();
      try {
        store.db.compactRange(store.column.handle, null, null, options); // all keys of the family
      } catch (RocksDBException e) {
        if (store.closedNow()) { // cancelled by close()
          throw new StoreClosedException(
              store.info().describe()
                  + " was closed while compact() ran; the compaction was cancelled");
        }
        throw store.writeError("compact", e);
      } finally {
        store.gate.exit(l);
      }
    } finally {
      synchronized (running) {
        running.remove(options);
      }
      options.close(); // after its own call returned: a cancelled compaction still reads them
    }
  }

  /** Cancels every compaction running now: a running one returns soon, one not started at once. */
  void cancelAll() {
    synchronized (running) {
      for (CompactRangeOptions c : running) {
        c.setCanceled(true);
      }
    }
  }
}
