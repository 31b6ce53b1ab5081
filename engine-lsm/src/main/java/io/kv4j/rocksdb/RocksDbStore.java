package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.CallGate;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;
import org.rocksdb.Status;
import org.rocksdb.WriteOptions;

/**
 * A RocksDB database in a directory the store owns, or a keyspace handle on one (the same native
 * objects, another {@link Column}).
 *
 * <p>Parts, one job each, in this package: {@link Opening} (directory, checks, options, open),
 * {@link Writes} (the write path under {@link KeyLocks}), {@link NativeBatches} (batches as native
 * ones), {@link Scans} (cursors), {@link Keyspaces} and {@link Column} (the keyspace table), {@link
 * Figures} (stats), {@link Verification}, {@link Checkpoints} (backup), {@link ManualCompactions}
 * (compact, cancelled by close), {@link WalRecorder} (the {@link SyncedWals} record, written in the
 * background, stopped first by close), {@link Closing} (close, in order) and {@link Failures}
 * (RocksDB errors as kv4j exceptions). This class keeps the shared state, reads, snapshots and the
 * keyspace calls; its fields are package-private for those parts.
 *
 * <p>Native safety: every call into RocksDB runs inside {@link #gate}; {@link #doClose()} closes
 * the gate, which waits for calls in flight, and no call starts on freed handles afterwards (the
 * gate refuses it and it throws {@link StoreClosedException}). The gate, unlike the read side of a
 * read-write lock, lets gets on different cores proceed without contending for one cache line.
 * Cursors are registered in {@link #liveCursors} while they hold native objects; close frees any
 * still registered (one created concurrently with close) before the database.
 *
 * <p>Close: {@link Closing}, which states the order in which the native objects are freed.
 *
 * <p>Writes: conditional writes and conditional batches hold the stripe locks of their keys in
 * {@link KeyLocks} from read to write; plain writes take them only while one runs, which orders
 * them with the conditional writes reading the same key.
 */
final class RocksDbStore extends AbstractStore {
  final Path dir;
  final StoreDirectory storeDir;
  final NativeOptions nativeOptions;
  final RocksDB db;
  final ReadOptions readOptions;
  final WriteOptions writeOptions;
  final CallGate gate;

  /**
   * Run by a conditional write on this store between its compare and its write, holding its stripe;
   * null except in tests that race a plain write against that moment (per store, so no other store
   * in the JVM ever runs it).
   */
  volatile Runnable betweenReadAndWrite;

  final Set<RocksDbCursor> liveCursors;
  final Set<RocksDbSnapshot> liveSnapshots;
  final KeyLocks keyLocks;
  final Keyspaces keyspaces;

  /** The column family this object serves: the store's own keys, or its keyspace's. */
  final Column column;

  /** The store: this, or the store a keyspace handle was opened on. */
  private final RocksDbStore store;

  /** The manual compactions running now, which close cancels. */
  final ManualCompactions compactions;

  /** The directory of the WAL files: the store directory unless {@code wal_dir} names another. */
  final Path walDir;

  /** Writes the {@link SyncedWals} record; null for a read-only store. */
  final WalRecorder recorder;

  /** Whether close flushes the memtable first; false only through {@link #closeWithoutFlush()}. */
  private volatile boolean flushOnClose = true;

  RocksDbStore(
      StoreInfo info,
      StoreDirectory storeDir,
      NativeOptions nativeOptions,
      RocksDB db,
      ReadOptions readOptions,
      WriteOptions writeOptions,
      Keyspaces keyspaces) {
    super(info);
    this.dir = storeDir.path();
    this.storeDir = storeDir;
    this.nativeOptions = nativeOptions;
    this.db = db;
    this.readOptions = readOptions;
    this.writeOptions = writeOptions;
    this.gate = new CallGate();
    this.liveCursors = ConcurrentHashMap.newKeySet();
    this.liveSnapshots = ConcurrentHashMap.newKeySet();
    this.keyLocks = new KeyLocks();
    this.compactions = new ManualCompactions();
    this.keyspaces = keyspaces;
    this.column = keyspaces.own();
    this.store = this;
    this.walDir = Opening.walDir(nativeOptions, dir);
    this.recorder =
        info.readOnly()
            ? null
            : new WalRecorder(this, info.durability() == Durability.SYNC, walDir);
  }

  /** A keyspace handle: the store's database, gate and locks, working in one column family. */
  private RocksDbStore(RocksDbStore store, Column column) {
    super(store, column.keyspace);
    this.dir = store.dir;
    this.storeDir = store.storeDir;
    this.nativeOptions = store.nativeOptions;
    this.db = store.db;
    this.readOptions = store.readOptions;
    this.writeOptions = store.writeOptions;
    this.gate = store.gate;
    this.liveCursors = store.liveCursors;
    this.liveSnapshots = store.liveSnapshots;
    this.keyLocks = store.keyLocks;
    this.compactions = store.compactions;
    this.keyspaces = store.keyspaces;
    this.column = column;
    this.store = store;
    this.walDir = store.walDir;
    this.recorder = store.recorder;
  }

  /** Starts the background writer of the {@link SyncedWals} record (read-write stores). */
  void startRecorder() {
    if (recorder != null) {
      recorder.start();
    }
  }

  // ---------------------------------------------------------------- guarded native calls

  /**
   * Enters a native call: counts it in the gate, or throws if the store is closed.
   *
   * @return the token for {@code gate.exit}
   */
  int enter() {
    int token = gate.enter();
    if (token < 0) {
      throw new StoreClosedException(info().describe() + " is closed");
    }
    if (column.dropped) { // read after entering: a drop waits for every call that missed it
      gate.exit(token);
      throw new StoreClosedException(info().describe() + " is closed: its keyspace was dropped");
    }
    return token;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return read(readOptions, key);
  }

  /** A get through the given read options (the store's, or a snapshot's), inside the gate. */
  byte[] read(ReadOptions ro, byte[] key) {
    int l = enter();
    try {
      // The allocating overload copies the pinned value once, straight into an exact-size array;
      // the buffer overloads would need a second copy to hand out a fresh array.
      return db.get(column.handle, ro, key);
    } catch (RocksDBException e) {
      throw Failures.translate(dir, "get", e);
    } finally {
      gate.exit(l);
    }
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return readAll(readOptions, keys);
  }

  /**
   * A multi-get ({@code MultiGet}, one batched lookup that sorts the keys and reads each block
   * once) through the given read options, inside the gate.
   *
   * <p>RocksJava's {@code multiGetAsList} returns null both for an absent key and for a key whose
   * read failed (a block failing its checksum included: the per-key status is dropped), so every
   * null is read again with a plain get through the same read options, which throws what {@link
   * #doGet} throws. An absent key therefore costs a second lookup, which the bloom filter usually
   * ends before any data block is read.
   */
  List<byte[]> readAll(ReadOptions ro, List<byte[]> keys) {
    int l = enter();
    try {
      List<byte[]> values =
          column.keyspace == null
              ? db.multiGetAsList(ro, keys)
              : db.multiGetAsList(ro, Collections.nCopies(keys.size(), column.handle), keys);
      if (values.size() != keys.size()) {
        throw new IllegalStateException(
            info().describe()
                + ": multiGetAsList returned "
                + values.size()
                + " values for "
                + keys.size()
                + " keys");
      }
      List<byte[]> out = new ArrayList<>(values);
      for (int i = 0; i < out.size(); i++) {
        if (out.get(i) == null) {
          out.set(i, db.get(column.handle, ro, keys.get(i)));
        }
      }
      return out;
    } catch (RocksDBException e) {
      throw Failures.translate(dir, "get all", e);
    } finally {
      gate.exit(l);
    }
  }

  /** The column of every operation of a batch that names keyspaces, creating absent keyspaces. */
  Column[] columns(WriteBatch batch) {
    Column[] out = new Column[batch.size()];
    Map<String, Column> seen = new HashMap<>();
    for (int i = 0; i < out.length; i++) {
      String name = keyspaceOf(batch, i);
      out[i] =
          name == null
              ? keyspaces.own()
              : name.equals(column.keyspace)
                  ? column
                  : seen.computeIfAbsent(name, n -> Writes.liveColumn(this, n));
    }
    return out;
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    Writes.put(this, key, value);
  }

  @Override
  protected void doDelete(byte[] key) {
    Writes.delete(this, key);
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    Writes.write(this, batch);
  }

  /**
   * Checks and writes under the stripes of every key it reads or writes ({@link Writes#writeIf}).
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    String[] conditions = new String[batch.conditionCount()];
    Arrays.setAll(conditions, i -> conditionKeyspaceOf(batch, i));
    String[] operations = batch.namesKeyspaces() ? new String[batch.size()] : null;
    if (operations != null) {
      Arrays.setAll(operations, i -> keyspaceOf(batch, i));
    }
    return Writes.writeIf(this, batch, conditions, operations);
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    return Writes.compareAndSet(this, key, expected, value);
  }

  /**
   * A RocksDB snapshot ({@code GetSnapshot}) with read options of its own; registered so that close
   * releases it if the user does not.
   */
  @Override
  protected AbstractSnapshot doSnapshot() {
    int l = enter();
    ReadOptions ro = null;
    Snapshot snap = null;
    boolean ok = false;
    try {
      if (nativeOptions.secondary == null) {
        snap = db.getSnapshot();
        ro = new ReadOptions().setSnapshot(snap); // verify_checksums stays on, as for get
      } else {
        ro = new ReadOptions(); // a secondary's view stands still: see RocksDbSnapshot
      }
      RocksDbSnapshot s = new RocksDbSnapshot(this, snap, ro);
      liveSnapshots.add(s);
      ok = true;
      return s;
    } finally {
      if (!ok) {
        if (snap != null) {
          db.releaseSnapshot(snap);
        }
        if (ro != null) {
          ro.close();
        }
      }
      gate.exit(l);
    }
  }

  /** Releases a snapshot's native objects unless close already did (or will). */
  void release(RocksDbSnapshot s) {
    int token = gate.enter();
    if (token < 0) {
      return; // close frees every snapshot still registered
    }
    try {
      s.freeNative(db);
      liveSnapshots.remove(s);
    } finally {
      gate.exit(token);
    }
  }

  /** A checkpoint of the whole database, every column family included ({@link Checkpoints}). */
  @Override
  protected void doBackup(Path target) throws IOException {
    Checkpoints.backup(this, target);
  }

  /** {@code FlushWAL(true)}, then {@link WalRecorder#synced()}. */
  @Override
  protected void doSync() {
    if (info().readOnly()) {
      return;
    }
    int l = enter();
    try {
      db.flushWal(true);
    } catch (RocksDBException e) {
      throw writeError("sync", e);
    } finally {
      gate.exit(l);
    }
    recorder.synced();
  }

  /** One manual compaction of this store object's column family: see {@link ManualCompactions}. */
  @Override
  protected void doCompact() {
    compactions.run(this);
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return scan(range, null);
  }

  /**
   * A cursor over a range, as of a snapshot or, with {@code snapshot} null, as of now (an iterator
   * is a point-in-time view by itself).
   */
  AbstractCursor scan(KeyRange range, Snapshot snapshot) {
    return Scans.open(this, range, snapshot);
  }

  /** One step of a cursor, inside the gate. */
  Entry step(RocksDbCursor c, RocksIterator it, boolean first, boolean reverse) {
    return Scans.step(this, c, it, first, reverse);
  }

  /** Frees a cursor's native objects unless close already did. */
  void release(RocksDbCursor c) {
    int token = gate.enter();
    if (token < 0) {
      return; // close frees every cursor still registered
    }
    try {
      c.freeNative();
      liveCursors.remove(c);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected StoreStats doStats() {
    return Figures.of(this);
  }

  /** Closes the store's native objects and directory: see {@link Closing}. */
  @Override
  protected void doClose() {
    if (store != this) {
      return; // a keyspace handle holds nothing native of its own
    }
    Closing.close(this, flushOnClose);
  }

  /**
   * Closes like {@link #close()} but leaves the memtable unflushed, so the WAL keeps the writes (as
   * after a close whose flush failed, or a store closed by an earlier kv4j): for tests of WAL
   * damage.
   */
  void closeWithoutFlush() {
    flushOnClose = false;
    close();
  }

  @Override
  protected void doVerify() {
    Verification.verify(this);
  }

  // ---------------------------------------------------------------- keyspaces

  @Override
  protected AbstractStore doKeyspace(String name) {
    int l = enter();
    try {
      Column c = keyspaces.get(name);
      if (c == null) {
        c = keyspaces.create(db, name); // not null: drops never run beside this
      }
      return new RocksDbStore(this, c);
    } catch (RocksDBException e) {
      throw writeError("create keyspace '" + name + "'", e);
    } finally {
      gate.exit(l);
    }
  }

  @Override
  protected List<String> doKeyspaces() {
    return keyspaces.names();
  }

  /**
   * Drops a keyspace's column family: it leaves the table and is marked dropped first, so no new
   * call finds it and a call that already holds it backs out after entering the gate; then the drop
   * waits for every call that entered the gate before ({@link CallGate#awaitEarlier()}), drops the
   * family (durably, in the MANIFEST) and frees its handle once. If the store closes meanwhile, its
   * close frees the handle and the family stays (it is listed again on reopen).
   */
  @Override
  protected boolean doDropKeyspace(String name) {
    Column c = keyspaces.retire(name);
    if (c == null) {
      return false;
    }
    gate.awaitEarlier();
    int l = gate.enter();
    if (l < 0) {
      throw new StoreClosedException(
          info().describe() + " was closed while keyspace '" + name + "' was being dropped");
    }
    try {
      db.dropColumnFamily(c.handle);
    } catch (RocksDBException e) {
      throw writeError("drop keyspace '" + name + "'", e);
    } finally {
      c.free();
      keyspaces.dropped(c);
      gate.exit(l);
    }
    return true;
  }

  /**
   * {@link #checkOpen()}, for the parts of this class in other files ({@link ManualCompactions}).
   */
  void checkOpenNow() {
    checkOpen();
  }

  /** {@link #isClosed()}, for the parts of this class in other files. */
  boolean closedNow() {
    return isClosed();
  }

  /** A keyspace's column (null: the store's own keys), for tests. */
  Column column(String keyspace) {
    return keyspaces.get(keyspace);
  }

  /**
   * The stripe lock of {@code key}: conditional writes take it, and plain writes while one runs;
   * for tests of write ordering.
   */
  ReentrantLock keyLock(byte[] key) {
    return keyLocks.of(column.salt, key);
  }

  /** The native objects this store owns, in the order close frees them, for lifecycle tests. */
  List<AutoCloseable> ownedNativeObjects() {
    List<AutoCloseable> out = new ArrayList<>(List.of(readOptions, writeOptions));
    for (Column c : keyspaces.all()) {
      out.add(c.handle);
    }
    out.add(db);
    out.addAll(nativeOptions.owned());
    return out;
  }

  /** {@link #startBackground}, for {@link WalRecorder}. */
  Thread background(String name, Runnable body) {
    return startBackground(name, body);
  }

  /** {@link #backgroundFailing}, for {@link WalRecorder}. */
  void backgroundFailingNow(String task, Throwable cause) {
    backgroundFailing(task, cause);
  }

  /** {@link #backgroundFailing} with a problem in words, for {@link BackgroundErrors}. */
  void backgroundFailingNow(String task, String problem) {
    backgroundFailing(task, new Problem(problem));
  }

  /** {@link #failWrites}, for {@link BackgroundErrors}. */
  void failWritesNow(String what, Throwable cause) {
    failWrites(what, cause);
  }

  /** A problem RocksDB reported in words: shown as its message alone, without a stack. */
  private static final class Problem extends Exception {
    private static final long serialVersionUID = 1L;

    Problem(String message) {
      super(message, null, false, false);
    }

    @Override
    public String toString() {
      return getMessage();
    }
  }

  /** {@link #backgroundRecovered}, for {@link WalRecorder}. */
  void backgroundRecoveredNow(String task) {
    backgroundRecovered(task);
  }

  /** {@link #writeFailure()}, for {@link WalRecorder}. */
  StoreIOException writeFailureNow() {
    return writeFailure();
  }

  /**
   * An error on a write path: an I/O error (disk full, EIO, failed sync) puts the store into the
   * failed state of {@link #failWrites}; RocksDB itself refuses writes after such a background
   * error until it is reopened, and so does any error while a background error RocksDB reported
   * stands ({@link BackgroundErrors}). Corruption and closing keep their own exceptions otherwise.
   */
  RuntimeException writeError(String op, RocksDBException e) {
    Status s = e.getStatus();
    if (s != null && s.getCode() == Status.Code.IOError) {
      return failWrites(op + " at " + dir, e);
    }
    BackgroundErrors listener = nativeOptions.backgroundErrors;
    String standing = listener == null ? null : listener.standing();
    if (standing != null && (s == null || s.getCode() != Status.Code.ShutdownInProgress)) {
      // RocksDB refuses writes after a background error it does not retry (whatever its status).
      return failWrites(op + " at " + dir, new Problem(BackgroundErrors.refusedWrite(standing, e)));
    }
    return Failures.translate(dir, op, e);
  }
}
