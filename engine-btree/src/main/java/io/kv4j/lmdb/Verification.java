package io.kv4j.lmdb;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.Txn;

/**
 * {@code verify()}: checks what a scan does not — both meta pages, the file's length against the
 * last page in use, and the structure of every page of one snapshot (see {@link PageWalk}), read
 * from the file rather than the map; then walks every entry through LMDB over the same snapshot,
 * checking key order and, in a store with checksums, every value's frame.
 *
 * <p>Last, the salvage walk ({@link SalvageWalk}) reads the same pinned snapshot with plain file
 * reads, which checks every value's frame in every keyspace, also those not opened in this process
 * (LMDB's walk reads only opened ones). Damage found by any of the checks is reported with every
 * damaged region of the snapshot, not just the first: the salvage walk steps over each damaged page
 * and entry, and its regions become {@link StoreCorruptedException#damage()}; the message is the
 * first finding's, then the list (the first {@value #LISTED} regions and how many more).
 */
final class Verification {
  /** Regions spelled out in the message; {@code damage()} holds them all. */
  static final int LISTED = 3;

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
    Keyspaces keyspaces = store.namedSpaces();
    // Keyspaces opened before the snapshot is pinned: a read transaction knows only the database
    // handles that existed when it was renewed.
    Map<String, Space> spaces = new LinkedHashMap<>();
    Map<Space, Integer> tokens = new LinkedHashMap<>();
    MetaPages.Meta[] snapshot = new MetaPages.Meta[1];
    List<DamagedRegion> found;
    try {
      if (keyspaces != null) {
        for (String name : keyspaces.names()) {
          Space s = keyspaces.opened(name);
          if (s != null) {
            try {
              tokens.put(s, s.enter()); // no drop frees its handle during the walk
              spaces.put(name, s);
            } catch (io.kv4j.StoreClosedException dropped) {
              // Dropped meanwhile: the page walk still checks whatever the snapshot holds.
            }
          }
        }
      }
      PageWalk.Walked[] walked = new PageWalk.Walked[1];
      txn = pinWalked(walked, snapshot);
      if (keyspaces == null) {
        compare("the store", walkEntries(txn, store.own().dbi()), walked[0].mainEntries());
        if (!walked[0].named().isEmpty()) {
          throw new StoreCorruptedException(
              describe + ": " + dataFile + ": the main database names databases", dataFile, -1);
        }
      } else {
        compare("the names", walked[0].named().size(), walked[0].mainEntries());
        Long own = walked[0].named().get(Keyspaces.OWN);
        compare(
            "the store's own keys", walkEntries(txn, store.own().dbi()), own == null ? -1 : own);
        for (Map.Entry<String, Long> e : walked[0].named().entrySet()) {
          Space s = spaces.get(e.getKey());
          if (s != null) {
            compare("keyspace '" + e.getKey() + "'", walkEntries(txn, s.dbi()), e.getValue());
          }
        }
      }
      // What LMDB's walk did not read: the values of keyspaces not opened in this process.
      found = regions(snapshot[0]);
    } catch (RuntimeException e) {
      RuntimeException t = Errors.translate(describe, dataFile, e);
      if (t instanceof StoreCorruptedException c && snapshot[0] != null) {
        throw everyRegion(c, snapshot[0]); // the snapshot is still pinned
      }
      throw t;
    } finally {
      ArrayProxy.release();
      if (txn != null) {
        store.readers().giveBack(txn);
      }
      for (Map.Entry<Space, Integer> t : tokens.entrySet()) {
        t.getKey().exit(t.getValue());
      }
    }
    if (!found.isEmpty()) {
      throw new StoreCorruptedException(describe + ": " + dataFile + ": " + listing(found), found);
    }
  }

  /**
   * The first damage found, with every damaged region of the snapshot: the salvage walk's regions,
   * or the first finding alone when the walk finds none (a check only the page walk makes).
   */
  private StoreCorruptedException everyRegion(StoreCorruptedException first, MetaPages.Meta snap) {
    List<DamagedRegion> found;
    try {
      found = regions(snap);
    } catch (RuntimeException e) {
      first.addSuppressed(e);
      return first;
    }
    if (found.isEmpty()) {
      return first;
    }
    StoreCorruptedException all =
        new StoreCorruptedException(first.getMessage() + "; " + listing(found), found);
    all.initCause(first);
    return all;
  }

  /** The damaged regions the salvage walk finds in a pinned snapshot. */
  private List<DamagedRegion> regions(MetaPages.Meta snap) {
    try (FileChannel ch = FileChannel.open(dataFile, StandardOpenOption.READ)) {
      return SalvageWalk.run(
              ch,
              dataFile,
              snap,
              ch.size(),
              store.framed(),
              store.namedSpaces() != null,
              (keyspace, key, value) -> {})
          .damage();
    } catch (IOException e) {
      throw new StoreIOException(describe + ": cannot read " + dataFile + ": " + e, e);
    }
  }

  /** How many regions, the first {@value #LISTED} described, and how many more. */
  private static String listing(List<DamagedRegion> found) {
    StringBuilder m =
        new StringBuilder()
            .append(found.size())
            .append(found.size() == 1 ? " damaged region: " : " damaged regions: ");
    for (int i = 0; i < Math.min(LISTED, found.size()); i++) {
      m.append(i == 0 ? "" : "; ").append(found.get(i).describe());
    }
    if (found.size() > LISTED) {
      m.append("; and ").append(found.size() - LISTED).append(" more");
    }
    return m.toString();
  }

  private void compare(String what, long seen, long inPages) {
    if (seen != inPages) {
      throw new StoreCorruptedException(
          describe
              + ": "
              + dataFile
              + ": a walk through LMDB met "
              + seen
              + " entries of "
              + what
              + ", the pages hold "
              + inPages,
          dataFile,
          -1);
    }
  }

  /**
   * Pins a snapshot with a read transaction (its pages are not reused while it lives), finds the
   * meta page that describes it and walks its pages; commits in between move it, so it tries again
   * then. Returns the transaction, and the main database's entry count in {@code entries}.
   */
  private Txn<byte[]> pinWalked(PageWalk.Walked[] walked, MetaPages.Meta[] snapshot) {
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
            snapshot[0] = snap;
            walked[0] = PageWalk.walk(ch, dataFile, describe, snap, ch.size());
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
