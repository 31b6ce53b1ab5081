package io.kv4j.lmdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.Txn;

/**
 * {@code verify()}: checks what a scan does not — both meta pages, the file's length against the
 * last page in use, and the structure of every page of one snapshot (see {@link PageWalk}), read
 * from the file rather than the map; then walks every entry through LMDB over the same snapshot,
 * checking key order and, in a store with checksums, every value's frame.
 */
final class Verification {
  private final LmdbStore store;
  private final String describe;
  private final Path dataFile;

  private Verification(LmdbStore store) {
    this.store = store;
    this.describe = store.info().describe();
    this.dataFile = store.dataFile();
  }

  /** Verifies the store; the caller holds a gate section. */
  static void run(LmdbStore store) {
    new Verification(store).verify();
  }

  private void verify() {
    Txn<byte[]> txn = null;
    try {
      long[] entries = new long[1];
      txn = pinWalked(entries);
      long seen = walkEntries(txn, store.db());
      if (seen != entries[0]) {
        throw new StoreCorruptedException(
            describe
                + ": "
                + dataFile
                + ": a walk through LMDB met "
                + seen
                + " entries, the pages hold "
                + entries[0],
            dataFile,
            -1);
      }
    } catch (RuntimeException e) {
      throw Errors.translate(describe, dataFile, e);
    } finally {
      ArrayProxy.release();
      if (txn != null) {
        store.readers().giveBack(txn);
      }
    }
  }

  /**
   * Pins a snapshot with a read transaction (its pages are not reused while it lives), finds the
   * meta page that describes it and walks its pages; commits in between move it, so it tries again
   * then. Returns the transaction, and the main database's entry count in {@code entries}.
   */
  private Txn<byte[]> pinWalked(long[] entries) {
    Txn<byte[]> txn = null;
    boolean ok = false;
    try {
      for (int attempt = 0; ; attempt++) {
        if (txn != null) {
          store.readers().giveBack(txn);
          txn = null;
        }
        if (attempt == 100) {
          throw new StoreException(
              describe + ": " + dataFile + " changed under every attempt to verify it");
        }
        boolean locked = !store.info().readOnly();
        if (locked) {
          store.writerLock().lock();
        }
        try (FileChannel ch = FileChannel.open(dataFile, StandardOpenOption.READ)) {
          MetaPages m;
          try {
            txn = store.readers().borrow();
            m = MetaPages.read(ch, dataFile, describe);
          } finally {
            if (locked) {
              store.writerLock().unlock();
            }
          }
          long id = txn.getId();
          MetaPages.Meta snap =
              m.current.txnId() == id ? m.current : m.other.txnId() == id ? m.other : null;
          if (snap != null) {
            entries[0] = PageWalk.check(ch, dataFile, describe, snap, ch.size());
            ok = true;
            return txn;
          }
        } catch (IOException e) {
          throw new StoreIOException(describe + ": cannot read " + dataFile + ": " + e, e);
        }
      }
    } finally {
      if (!ok && txn != null) {
        store.readers().giveBack(txn);
      }
    }
  }

  /**
   * Walks every entry of a database through LMDB, checking order (and frames); returns the count.
   */
  private long walkEntries(Txn<byte[]> txn, Dbi<byte[]> db) {
    long seen = 0;
    try (Cursor<byte[]> c = db.openCursor(txn)) {
      ArrayProxy.beginCursor(store.bounds(), store.framed());
      byte[] prev = null;
      for (boolean found = c.first(); found; found = c.next()) {
        byte[] key = c.key();
        if (prev != null && Arrays.compareUnsigned(prev, key) >= 0) {
          throw new StoreCorruptedException(
              describe + ": " + dataFile + ": LMDB returned keys out of order", dataFile, -1);
        }
        prev = key;
        seen++;
      }
    } finally {
      ArrayProxy.release();
    }
    return seen;
  }
}
