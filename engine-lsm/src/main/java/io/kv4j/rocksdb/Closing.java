package io.kv4j.rocksdb;

import io.kv4j.StoreIOException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDBException;

/**
 * Closing a store: its native objects in order, then its directory. Keyspace handles hold nothing
 * native of their own; only the store itself closes.
 *
 * <p>Close order: running manual compactions are cancelled (their options stay alive until their
 * own call returns), then iterators (with their read options and bound slices), snapshots still
 * registered in {@link RocksDbStore#liveSnapshots} (one whose release raced with close), the shared
 * read and write options, every column family handle, the database, then {@link NativeOptions}
 * (options, then block cache and filter). {@link io.kv4j.spi.AbstractStore#close()} closes the
 * user's snapshots and cursors before {@link RocksDbStore#doClose()}, so those normally free
 * themselves through the open gate first.
 */
final class Closing {
  private Closing() {}

  /**
   * Closes the store. A read-write store that has not failed flushes its memtable first (RocksDB
   * does not on close while the WAL is on), so a clean close leaves every write in table files and
   * an empty WAL, then records the files in {@link CleanClose} once the database is closed.
   *
   * @param flush whether to flush the memtable first; false only through {@link
   *     RocksDbStore#closeWithoutFlush()}
   */
  static void close(RocksDbStore store, boolean flush) {
    store.compactions.cancelAll();
    RuntimeException failure = null;
    try {
      if (store.gate.isClosed()) {
        return;
      }
      if (store.recorder != null) {
        store.recorder.stop(); // no record is written from here on
      }
      store.gate.close(); // waits for the calls in flight; later ones throw StoreClosedException
      for (RocksDbCursor c : store.liveCursors) {
        c.freeNative();
      }
      store.liveCursors.clear();
      for (RocksDbSnapshot s : store.liveSnapshots) {
        s.freeNative(store.db); // after the cursors, which may read through it
      }
      store.liveSnapshots.clear();
      store.readOptions.close();
      store.writeOptions.close();
      List<Column> columns = store.keyspaces.all();
      boolean clean = !store.info().readOnly() && store.writeFailureNow() == null;
      if (clean && flush) {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
          List<ColumnFamilyHandle> all = new ArrayList<>();
          for (Column c : columns) {
            all.add(c.handle);
          }
          store.db.flush(fo, all); // every column family, so the WAL holds nothing
        } catch (RocksDBException e) {
          clean = false;
          failure = Failures.translate(store.dir, "flush on close", e);
        }
      }
      for (Column c : columns) {
        c.free(); // column family handles before the database
      }
      try {
        store.db.closeE();
      } catch (RocksDBException e) {
        clean = false;
        failure = Failures.translate(store.dir, "close", e);
      }
      store.nativeOptions.close();
      if (clean) {
        try {
          SyncedWals.remove(store.dir); // the clean-close record checks every file more strictly
          CleanClose.write(store.dir);
        } catch (IOException e) {
          failure =
              new StoreIOException(
                  "engine '"
                      + RocksDbProvider.ID
                      + "' at "
                      + store.dir
                      + ": cannot replace "
                      + SyncedWals.FILE_NAME
                      + " by "
                      + CleanClose.FILE_NAME
                      + " (the next open checks less): "
                      + e,
                  e);
        }
      }
    } finally {
      store.storeDir.close();
    }
    if (failure != null) {
      throw failure;
    }
  }
}
