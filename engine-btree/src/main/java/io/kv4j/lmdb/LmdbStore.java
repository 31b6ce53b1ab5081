package io.kv4j.lmdb;

import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.EnvInfo;
import org.lmdbjava.LmdbException;
import org.lmdbjava.LmdbNativeException;
import org.lmdbjava.Stat;
import org.lmdbjava.Txn;

/**
 * One LMDB environment with its unnamed database, behind {@link AbstractStore}. Opening is {@link
 * LmdbOpening}'s job, writing {@link GroupCommit}'s, pooling read transactions {@link
 * ReadTxnPool}'s and {@code verify()} {@link Verification}'s; this class routes the store's calls.
 *
 * <p>Native safety: every call into LMDB happens inside a {@link TxnGate} section (or while a
 * cursor, counted by the gate, holds its transaction), and {@link #doClose()} closes the gate and
 * waits for the sections to drain before it frees the environment; so a close racing with other
 * threads never frees memory under a running native call, and later calls fail with {@link
 * io.kv4j.StoreClosedException}.
 *
 * <p>Damage: the data file is checked before LMDB maps it ({@link MetaPages}, {@link PageWalk}),
 * values carry a {@link ValueFrame} in format-2 stores, every record is bounds-checked before it is
 * copied ({@link MapBounds}), and {@link #doVerify()} walks every page; see the README. Write
 * errors of the environment fail writes until reopened ({@link #fail}).
 */
final class LmdbStore extends AbstractStore {
  static {
    JffiSettings.apply(); // before anything here loads lmdbjava and with it jffi
  }

  static final String DATA_FILE = "data.mdb";
  static final String LOCK_FILE = "lock.mdb";

  /** Format 1: values stored raw (stores made before identities, or with checksums=false). */
  static final int FORMAT_RAW = 1;

  /** Format 2: every value stored in a {@link ValueFrame} (checksum, then value). */
  static final int FORMAT_FRAMED = 2;

  /**
   * Format 3: values raw, the store's keys in the named database {@code default} and each keyspace
   * in a named database of its name; the unnamed main database holds only those names.
   */
  static final int FORMAT_NAMED_RAW = 3;

  /** Format 4 (new stores' default): format 3 with every value in a {@link ValueFrame}. */
  static final int FORMAT_NAMED_FRAMED = 4;

  /**
   * Zero bytes kept after the last page in use: LMDB reads node offsets and key sizes (16 bits
   * each) from a page without checking them, so a damaged page near the end of the file could make
   * it read up to 128 KiB past the page; inside the file that is garbage LMDB or the frame check
   * reports, past its end it would be a SIGBUS. Sparse, so it costs no disk space.
   */
  static final long TAIL = 160L << 10;

  private final Path directory;
  private final Path dataFile;
  private final StoreDirectory storeDir;
  private final Env<byte[]> env;
  private final Space space; // this store's or handle's database
  private final Space own; // the store's own keys
  private final Keyspaces keyspaces; // null in formats 1 and 2
  private final TxnGate gate;
  private final boolean framed;
  private final MapBounds bounds;
  private final ReadTxnPool readers;
  private final GroupCommit writes;
  private final BatchWrites batches;

  LmdbStore(
      StoreInfo info,
      StoreDirectory storeDir,
      Env<byte[]> env,
      Dbi<byte[]> db,
      Dbi<byte[]> main,
      StoreConfig config,
      boolean framed,
      int pageSize,
      boolean noLock,
      MapBounds bounds) {
    super(info);
    this.directory = storeDir.path();
    this.dataFile = directory.resolve(DATA_FILE);
    this.storeDir = storeDir;
    this.env = env;
    this.space = new Space(null, db, info.describe());
    this.own = space;
    this.framed = framed;
    this.gate = new TxnGate(info.describe());
    this.bounds = bounds;
    this.readers = new ReadTxnPool(env, config.get(LmdbProvider.MAX_READERS));
    this.writes =
        new GroupCommit(
            this,
            env,
            gate,
            bounds,
            dataFile,
            pageSize,
            LmdbOpening.roundUp(config.get(LmdbProvider.MAP_GROWTH_STEP)),
            config.get(LmdbProvider.MAP_GROWTH_TIMEOUT),
            info.readOnly());
    if (main != null) {
      this.keyspaces = new Keyspaces(env, main, readers, bounds, info.describe(), info.readOnly());
      keyspaces.attach(writes);
    } else {
      this.keyspaces = null;
    }
    this.batches = new BatchWrites(own, space, keyspaces, framed);
    bounds.refresh();
  }

  /** A keyspace's handle: shares everything of the store but the database. */
  private LmdbStore(LmdbStore store, String name, Space space) {
    super(store, name);
    this.directory = store.directory;
    this.dataFile = store.dataFile;
    this.storeDir = store.storeDir;
    this.env = store.env;
    this.space = space;
    this.own = store.own;
    this.keyspaces = store.keyspaces;
    this.framed = store.framed;
    this.gate = store.gate;
    this.bounds = store.bounds;
    this.readers = store.readers;
    this.writes = store.writes;
    this.batches = new BatchWrites(own, space, keyspaces, framed);
  }

  static StoreDirectory.Layout layout(int format) {
    return new StoreDirectory.Layout(
        LmdbProvider.ID,
        format,
        n -> n.equals(DATA_FILE) || n.equals(LOCK_FILE),
        Set.of(DATA_FILE));
  }

  static LmdbStore open(StoreConfig config) {
    return LmdbOpening.open(config);
  }

  /** The failure policy, for the writer: fails the store's writes until reopened. */
  StoreIOException fail(String what, Throwable cause) {
    return failWrites(what, cause);
  }

  /** The failure that failed the store's writes, or null. */
  StoreIOException failure() {
    return writeFailure();
  }

  // ---- reads ----

  @Override
  protected byte[] doGet(byte[] key) {
    return read(LmdbStore::readIn, key);
  }

  /**
   * Reads every key in one read transaction: one pooled transaction for the whole list instead of
   * one per key, and one point in time (no commit lands between two of the keys). LMDB has no batch
   * get; each key is a B-tree lookup in the map, checked as a get is.
   */
  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return read(LmdbStore::readAllIn, keys);
  }

  /**
   * What a read does in a pooled read transaction. The store comes as an argument so that every
   * body is a method reference that captures nothing: the JVM makes it once, and a get allocates
   * nothing for it.
   */
  @FunctionalInterface
  private interface ReadBody<A, R> {
    R run(LmdbStore store, Txn<byte[]> txn, A arg);
  }

  /**
   * The frame of every read that needs no transaction beyond its own call (get, getAll, stats):
   * enters the space's gate and the store's, borrows a pooled read transaction, runs {@code body},
   * then gives the transaction back and leaves the gates, whatever happened. lmdbjava's exceptions,
   * a full reader table's included, become kv4j's.
   */
  private <A, R> R read(ReadBody<A, R> body, A arg) {
    int spaceToken = space.enter();
    int token = enterGate(spaceToken);
    Txn<byte[]> txn = null;
    try {
      txn = readers.borrow();
      return body.run(this, txn, arg);
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      release(txn, token, spaceToken);
    }
  }

  /**
   * Reads one key in an active read transaction (the caller holds it and a gate section or a
   * snapshot's share of the gate): bounds and frame checked, the value copied out.
   */
  byte[] readIn(Txn<byte[]> txn, byte[] key) {
    try {
      ArrayProxy.beginGet(bounds, framed, key);
      return space.dbi().get(txn, key);
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      ArrayProxy.release();
    }
  }

  /** {@link #readIn} for each key, in order, in the same transaction. */
  List<byte[]> readAllIn(Txn<byte[]> txn, List<byte[]> keys) {
    List<byte[]> values = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      values.add(readIn(txn, key));
    }
    return values;
  }

  /**
   * Opens a snapshot: a read transaction taken from the pool and kept active until the snapshot
   * closes. It counts in the gate as an open cursor does (taken here, given back by {@link
   * LmdbSnapshot#release()}), so the environment is neither remapped (map growth) nor freed (close)
   * under it; the store closes its snapshots before {@link #doClose()}.
   */
  @Override
  protected AbstractSnapshot doSnapshot() {
    return hold(
        true,
        (txn, token, spaceToken, owner) -> new LmdbSnapshot(this, txn, token, spaceToken, owner));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return hold(
        !range.isEmpty(),
        (txn, token, spaceToken, owner) ->
            new LmdbCursor(this, range, txn, token, spaceToken, owner));
  }

  /** A reader that keeps its transaction and gate sections until its own release. */
  @FunctionalInterface
  private interface Holder<R> {
    R start(Txn<byte[]> txn, int token, int spaceToken, AtomicInteger ownerCursors);
  }

  /**
   * The frame of a cursor or snapshot: enters the gates and borrows a read transaction (none when
   * {@code needsTxn} is false: an empty range reads nothing) for the reader {@code holder} starts,
   * which gives them back through {@link #release} when it closes; if starting it fails, they are
   * given back here.
   */
  private <R> R hold(boolean needsTxn, Holder<R> holder) {
    int spaceToken = space.enter();
    int token = enterGate(spaceToken);
    Txn<byte[]> txn = null;
    boolean ok = false;
    try {
      txn = needsTxn ? readers.borrow() : null;
      R reader = holder.start(txn, token, spaceToken, gate.cursorsOfCurrentThread());
      ok = true;
      return reader;
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      if (!ok) {
        release(txn, token, spaceToken);
      }
    }
  }

  Dbi<byte[]> db() {
    return space.dbi();
  }

  MapBounds bounds() {
    return bounds;
  }

  boolean framed() {
    return framed;
  }

  Path dataFile() {
    return dataFile;
  }

  /** Enters the store's gate after the space's; leaves the space's if the store's is closed. */
  private int enterGate(int spaceToken) {
    try {
      return gate.enter();
    } catch (RuntimeException e) {
      space.exit(spaceToken);
      throw e;
    }
  }

  /**
   * The end of every read frame (a get's, or a cursor's or snapshot's release): gives the
   * transaction back, if any, and leaves the gates.
   */
  void release(Txn<byte[]> txn, int token, int spaceToken) {
    try {
      if (txn != null) {
        readers.giveBack(txn);
      }
    } finally {
      try {
        gate.exit(token);
      } finally {
        space.exit(spaceToken);
      }
    }
  }

  /** Submits a write to this store's or handle's database, counted in the space's gate. */
  private void submit(GroupCommit.WriteBody body, long bytes) {
    int spaceToken = space.enter();
    try {
      writes.submit(body, bytes);
    } finally {
      space.exit(spaceToken);
    }
  }

  // ---- writes ----

  @Override
  protected void doPut(byte[] key, byte[] value) {
    byte[] stored = batches.stored(key, value);
    Dbi<byte[]> db = space.dbi();
    submit(txn -> db.put(txn, key, stored), key.length + (long) stored.length);
  }

  @Override
  protected void doDelete(byte[] key) {
    Dbi<byte[]> db = space.dbi();
    submit(txn -> db.delete(txn, key), key.length);
  }

  /**
   * Compare-and-set as one more member of the group commit: the comparison runs inside the write
   * transaction that commits the write ({@link Conditions}), after the group members queued before
   * it and before those queued after it, and is acknowledged only once that transaction committed
   * with the store's durability.
   */
  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    byte[] stored = value == null ? null : batches.stored(key, value);
    boolean[] swapped = new boolean[1];
    Dbi<byte[]> db = space.dbi();
    submit(
        txn -> {
          // Set on every run: a group that failed runs its members again, alone.
          swapped[0] = Conditions.matches(Conditions.current(txn, db, key, framed), expected);
          if (swapped[0]) {
            if (stored == null) {
              db.delete(txn, key);
            } else {
              db.put(txn, key, stored);
            }
          }
        },
        key.length + (stored == null ? 0L : stored.length));
    return swapped[0]; // written under the writer lock, which this thread took after
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    String[] names = operationKeyspaces(batch);
    submit(txn -> batches.apply(txn, batch, names), batch.byteSize());
  }

  /**
   * A conditional batch as one more member of the group commit, like a compare-and-set: its
   * conditions are read in the write transaction that then applies its operations ({@link
   * Conditions}), before any of them. If one fails, the batch writes nothing (its share of the
   * transaction is empty: the group's other members still commit), so no trace is left. A condition
   * on a keyspace whose database does not exist holds no key and does not create it.
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    String[] spaces = new String[batch.conditionCount()];
    Arrays.setAll(spaces, i -> conditionKeyspaceOf(batch, i));
    String[] names = operationKeyspaces(batch);
    boolean[] held = new boolean[1];
    submit(
        txn -> {
          // Set on every run: a group that failed runs its members again, alone.
          held[0] = Conditions.hold(txn, batch, i -> batches.existing(txn, spaces[i]), framed);
          if (held[0]) {
            batches.apply(txn, batch, names);
          }
        },
        batch.byteSize());
    return held[0]; // written under the writer lock, which this thread took after
  }

  /** Each operation's keyspace, resolved; null when no operation names one (see BatchWrites). */
  private String[] operationKeyspaces(WriteBatch batch) {
    if (!batch.namesKeyspaces()) {
      return null;
    }
    String[] names = new String[batch.size()];
    Arrays.setAll(names, i -> keyspaceOf(batch, i));
    return names;
  }

  // ---- keyspaces ----

  @Override
  protected AbstractStore doKeyspace(String name) {
    Space s;
    if (info().readOnly()) {
      int token = gate.enter();
      try {
        s = keyspaces.open(name);
      } catch (RuntimeException e) {
        throw Errors.translate(info().describe(), dataFile, e);
      } finally {
        gate.exit(token);
      }
    } else {
      s = keyspaces.open(name); // a write transaction of its own, which enters the gate
    }
    return new LmdbStore(this, name, s);
  }

  @Override
  protected List<String> doKeyspaces() {
    int token = gate.enter();
    try {
      return keyspaces.names();
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    return keyspaces.drop(name);
  }

  // ---- misc ----

  /** Copies the environment, every keyspace included: see {@link EnvCopy}. */
  @Override
  protected void doBackup(Path target) throws IOException {
    EnvCopy.copy(env, gate, info().describe(), dataFile, directory, target);
  }

  @Override
  protected void doSync() {
    if (info().readOnly()) {
      return;
    }
    int token = gate.enter();
    try {
      env.sync(true);
    } catch (RuntimeException e) {
      if (e instanceof LmdbNativeException) {
        throw failWrites("fsync of " + dataFile, e);
      }
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected StoreStats doStats() {
    return read(LmdbStore::figuresIn, null);
  }

  /**
   * The stats of this store's or keyspace's database (the main one in formats 1 and 2) and of the
   * map, read in {@code txn}.
   */
  private StoreStats figuresIn(Txn<byte[]> txn, Void unused) {
    Stat stat = space.dbi().stat(txn);
    EnvInfo envInfo = env.info();
    return StoreFigures.of(directory, stat, envInfo, writes.growths(), readers.live());
  }

  /**
   * Verifies the store (see {@link Verification}) inside a gate section, so the environment is
   * neither remapped nor freed under the walk.
   */
  @Override
  protected void doVerify() {
    int token = gate.enter();
    try {
      Verification.run(this);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected void doClose() {
    if (keyspaceName() != null) {
      return; // a handle holds nothing of its own: its cursors and snapshots are closed already
    }
    try {
      gate.closeAndDrain();
      readers.closeAll();
      try {
        env.close();
      } catch (LmdbException ignored) {
        // Closing is best effort; the OS reclaims the map with the process anyway.
      }
    } finally {
      LmdbOpening.closed(directory);
      writes.closeTail();
      storeDir.close();
    }
  }

  /** The keyspaces of a store of format 3 or 4, else null. */
  Keyspaces namedSpaces() {
    return keyspaces;
  }

  /** The store's own keys. */
  Space own() {
    return own;
  }

  ReadTxnPool readers() {
    return readers;
  }

  /** For tests (and verify): the lock writers and group commits serialize on. */
  ReentrantLock writerLock() {
    return writes.writerLock();
  }

  /** For tests: writes waiting for a group commit. */
  int queuedWrites() {
    return writes.queued();
  }

  /** For tests: runs {@code hook} inside every write transaction just before its commit. */
  void beforeCommit(Runnable hook) {
    writes.beforeCommit(hook);
  }
}
