package io.kv4j.spi;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The checks every engine owes its users, done once: null and empty arguments, key and value limits
 * (the message gives the length, the limit, the engine and the location), closed and read-only
 * state (also for {@link #compact()}), features a call needs, whole-batch validation before
 * anything is applied, and closing open cursors when the store closes. An engine implements the
 * {@code do*} methods and receives only valid arguments.
 *
 * <p>The {@code do*} methods may be called concurrently. Arrays passed to them belong to the
 * caller: copy what you keep. Arrays returned from {@link #doGet(byte[])} must be fresh.
 */
public abstract class AbstractStore implements Store {
  private final StoreInfo info;
  private final OpenReaders readers = new OpenReaders(this);
  // The store this handle belongs to: this, for a store; the store, for a keyspace handle.
  private final AbstractStore root;
  private final String keyspace; // null for the store itself
  private final KeyspaceHandles handles = new KeyspaceHandles(this); // on the root only
  private volatile boolean closed;
  private final WriteFailure failure; // the root's: one failed state per store
  private final Arguments args;

  /**
   * Creates the store's shell.
   *
   * @param info the store's engine, features, limits, durability and location
   */
  protected AbstractStore(StoreInfo info) {
    this.info = Objects.requireNonNull(info, "info");
    this.root = this;
    this.keyspace = null;
    this.failure = new WriteFailure(info);
    this.args = new Arguments(info, null);
  }

  /**
   * Creates the shell of a keyspace handle, for {@link #doKeyspace(String)}. Its {@link #info()} is
   * the store's, located at {@code location#name}, without {@link Feature#KEYSPACES} (keyspaces do
   * not nest) and {@link Feature#BACKUP} (the store is backed up whole). It shares the store's
   * failed state (see {@link #failWrites(String, Throwable)}).
   *
   * @param store the store, not itself a keyspace handle
   * @param keyspace the keyspace name, valid and not {@link Store#DEFAULT_KEYSPACE}
   */
  protected AbstractStore(AbstractStore store, String keyspace) {
    Objects.requireNonNull(store, "store");
    if (store.root != store) {
      throw new IllegalArgumentException("keyspaces do not nest: " + store.info.describe());
    }
    this.root = store;
    this.keyspace = Arguments.keyspaceName(keyspace);
    this.info = KeyspaceHandles.handleInfo(store.info, keyspace);
    this.failure = store.failure;
    this.args = new Arguments(info, keyspace);
  }

  /** Whether this is a keyspace handle of {@code store}. */
  final boolean belongsTo(AbstractStore store) {
    return root == store && root != this;
  }

  /**
   * The keyspace this handle serves.
   *
   * @return the name, or null for the store itself (its default keyspace)
   */
  protected final String keyspaceName() {
    return keyspace;
  }

  /**
   * The keyspace operation {@code i} of a batch written to this handle applies to, resolved: a
   * batch operation without a name applies to this handle's keyspace, and {@link
   * Store#DEFAULT_KEYSPACE} means the store's own keys.
   *
   * @param batch a batch passed to {@link #doWrite(WriteBatch)}
   * @param i the operation
   * @return the keyspace name, or null for the store's own keys
   */
  protected final String keyspaceOf(WriteBatch batch, int i) {
    return resolved(batch.keyspace(i));
  }

  /**
   * The keyspace condition {@code i} of a batch written to this handle applies to, resolved as
   * {@link #keyspaceOf(WriteBatch, int)} resolves operations.
   *
   * @param batch a batch passed to {@link #doWriteIf(WriteBatch)}
   * @param i the condition
   * @return the keyspace name, or null for the store's own keys
   */
  protected final String conditionKeyspaceOf(WriteBatch batch, int i) {
    return resolved(batch.conditionKeyspace(i));
  }

  private String resolved(String k) {
    if (k == null) {
      return keyspace;
    }
    return Store.DEFAULT_KEYSPACE.equals(k) ? null : k;
  }

  /**
   * Reads a valid key.
   *
   * @param key a key within limits
   * @return a fresh copy of the value, or null
   */
  protected abstract byte[] doGet(byte[] key);

  /**
   * Writes a valid key and value.
   *
   * @param key a key within limits
   * @param value a value within limits
   */
  protected abstract void doPut(byte[] key, byte[] value);

  /**
   * Deletes a valid key.
   *
   * @param key a key within limits
   */
  protected abstract void doDelete(byte[] key);

  /**
   * Opens a cursor over a range the engine's features allow.
   *
   * @param range the range
   * @return the cursor
   */
  protected abstract AbstractCursor doScan(KeyRange range);

  /**
   * Applies a non-empty batch whose every operation is valid, atomically.
   *
   * @param batch the batch
   */
  protected abstract void doWrite(WriteBatch batch);

  /** Makes everything acknowledged so far durable. */
  protected abstract void doSync();

  /**
   * Reclaims space and tidies the engine's files, blocking until done; called only on an open store
   * that is not read-only. It must not change what is stored or its order, and must not break open
   * cursors. The default does nothing, which is right for an engine with nothing to reclaim (one in
   * memory, or one that reuses free space by itself).
   */
  protected void doCompact() {
    // Nothing to reclaim by default.
  }

  /**
   * Checks the engine's files beyond what a scan reads (see {@link Store#verify()}); called only on
   * an open store. The default checks nothing, which is right for an engine whose scan reads and
   * checks every stored byte.
   */
  protected void doVerify() {
    // A scan reads every byte: nothing more to check.
  }

  /**
   * Reads valid keys. The default calls {@link #doGet(byte[])} for each; override to use the
   * engine's native batch read.
   *
   * @param keys keys within limits; duplicates possible
   * @return fresh copies of the values, one per key in order, null where absent
   */
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    List<byte[]> values = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      values.add(doGet(key));
    }
    return values;
  }

  /**
   * Compares and writes one key atomically against every other writer of the store (see {@link
   * Feature#CONDITIONAL_WRITE}); called only when the engine declares that feature, on an open,
   * writable store, with valid arguments. Durable as a {@code put} of the store's durability.
   *
   * @param key a key within limits
   * @param expected the value the key must hold now, or null: the key must be absent
   * @param value the value to store, or null: delete the key
   * @return true if the key held {@code expected} (and the write was done), false otherwise
   */
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    throw args.notImplemented(Feature.CONDITIONAL_WRITE);
  }

  /**
   * Checks a batch's conditions and applies its operations as one atomic step against every other
   * writer of the store (see {@link Feature#CONDITIONAL_BATCH}); called only when the engine
   * declares that feature, on an open, writable store, with a batch that has at least one condition
   * and valid keys and values (operations may be none). Conditions are evaluated before any
   * operation applies; on false nothing may be left behind (no partial write, nothing recovery
   * would replay). Resolve names with {@link #keyspaceOf(WriteBatch, int)} and {@link
   * #conditionKeyspaceOf(WriteBatch, int)}. Durable as {@link #doWrite(WriteBatch)}.
   *
   * @param batch the batch
   * @return true if every condition held and the operations were applied, false otherwise
   */
  protected boolean doWriteIf(WriteBatch batch) {
    throw args.notImplemented(Feature.CONDITIONAL_BATCH);
  }

  /**
   * Opens a snapshot as of now; called only when the engine declares {@link Feature#SNAPSHOT_READ},
   * on an open store.
   *
   * @return the snapshot, constructed with this store
   */
  protected AbstractSnapshot doSnapshot() {
    throw args.notImplemented(Feature.SNAPSHOT_READ);
  }

  /**
   * Writes a consistent, openable copy of the store into {@code target}, an empty directory that
   * exists; called only when the engine declares {@link Feature#BACKUP}, on an open store. Sync
   * what you write: once this returns, the copy is renamed into place and its directory synced.
   *
   * @param target an empty directory beside the caller's target
   * @throws IOException if the copy cannot be written
   */
  protected void doBackup(Path target) throws IOException {
    throw args.notImplemented(Feature.BACKUP);
  }

  /**
   * Opens a handle on a named keyspace, creating the keyspace if absent; called only when the
   * engine declares {@link Feature#KEYSPACES}, on an open store (never on a keyspace handle), never
   * concurrently with {@link #doDropKeyspace(String)}. On a read-only store it is called only for a
   * keyspace {@link #doKeyspaces()} lists.
   *
   * @param name a valid name, not {@link Store#DEFAULT_KEYSPACE}
   * @return a handle constructed with {@link #AbstractStore(AbstractStore, String)} on this store
   */
  protected AbstractStore doKeyspace(String name) {
    throw args.notImplemented(Feature.KEYSPACES);
  }

  /**
   * Lists the named keyspaces; called only when the engine declares {@link Feature#KEYSPACES}, on
   * an open store.
   *
   * @return the names, in any order
   */
  protected List<String> doKeyspaces() {
    throw args.notImplemented(Feature.KEYSPACES);
  }

  /**
   * Removes a named keyspace and its keys; called only when the engine declares {@link
   * Feature#KEYSPACES}, on an open writable store, after every open handle of the keyspace was
   * closed, never concurrently with {@link #doKeyspace(String)}. A call on a closed handle may
   * still be running in the engine: the engine must keep it from reaching freed native resources.
   *
   * @param name a valid name, not {@link Store#DEFAULT_KEYSPACE}
   * @return true if the keyspace existed
   */
  protected boolean doDropKeyspace(String name) {
    throw args.notImplemented(Feature.KEYSPACES);
  }

  /**
   * Gathers figures.
   *
   * @return the stats
   */
  protected abstract StoreStats doStats();

  /**
   * Releases the engine's resources; called once, after open keyspace handles, snapshots and
   * cursors were closed, also when closing one of them threw. On a keyspace handle it releases only
   * what the handle holds.
   */
  protected abstract void doClose();

  @Override
  public final byte[] get(byte[] key) {
    args.key(key);
    checkOpen();
    return doGet(key);
  }

  @Override
  public final void put(byte[] key, byte[] value) {
    args.key(key);
    args.value(value);
    checkWritable();
    doPut(key, value);
  }

  @Override
  public final void delete(byte[] key) {
    args.key(key);
    checkWritable();
    doDelete(key);
  }

  @Override
  public final Cursor scan(KeyRange range) {
    Objects.requireNonNull(range, "range");
    checkOpen();
    args.scan(range);
    AbstractCursor c = doScan(range);
    readers.add(c);
    return c;
  }

  @Override
  public final List<byte[]> getAll(List<byte[]> keys) {
    args.keys(keys);
    checkOpen();
    if (keys.isEmpty()) {
      return Collections.emptyList();
    }
    return args.values(keys, doGetAll(keys));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the arguments, the feature and that the store is writable, then calls {@link
   * #doCompareAndSet(byte[], byte[], byte[])} with {@code expected} null.
   */
  @Override
  public final boolean putIfAbsent(byte[] key, byte[] value) {
    args.key(key);
    args.value(value);
    args.feature(Feature.CONDITIONAL_WRITE);
    checkWritable();
    return doCompareAndSet(key, null, value);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the arguments, the feature and that the store is writable, then calls {@link
   * #doCompareAndSet(byte[], byte[], byte[])}. An {@code expected} longer than the value limit
   * cannot be held by any key: the answer is false.
   */
  @Override
  public final boolean replace(byte[] key, byte[] expected, byte[] value) {
    args.key(key);
    Objects.requireNonNull(expected, "expected");
    args.value(value);
    args.feature(Feature.CONDITIONAL_WRITE);
    checkWritable();
    if (!args.holdable(expected)) {
      return false;
    }
    return doCompareAndSet(key, expected, value);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the arguments, the feature and that the store is writable, then calls {@link
   * #doCompareAndSet(byte[], byte[], byte[])} with {@code value} null.
   */
  @Override
  public final boolean delete(byte[] key, byte[] expected) {
    args.key(key);
    Objects.requireNonNull(expected, "expected");
    args.feature(Feature.CONDITIONAL_WRITE);
    checkWritable();
    if (!args.holdable(expected)) {
      return false;
    }
    return doCompareAndSet(key, expected, null);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the feature and that the store is open, then calls {@link #doSnapshot()} and tracks
   * the snapshot so that {@link #close()} closes it.
   */
  @Override
  public final Snapshot snapshot() {
    args.feature(Feature.SNAPSHOT_READ);
    checkOpen();
    AbstractSnapshot s = doSnapshot();
    readers.add(s);
    return s;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the target and the feature, calls {@link #doBackup(Path)} on an empty directory
   * beside {@code target}, then renames it to {@code target} and syncs the parent directory; on any
   * failure the partial copy is deleted.
   */
  @Override
  public final void backup(Path target) {
    Objects.requireNonNull(target, "target");
    args.feature(Feature.BACKUP);
    checkOpen();
    BackupCopy.run(info, target, this::doBackup, this::checkOpen);
  }

  @Override
  public final void write(WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    args.feature(Feature.ATOMIC_BATCH);
    args.noConditions(batch);
    args.operations(batch);
    checkWritable();
    if (!batch.isEmpty()) {
      doWrite(batch);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the feature, the keyspace feature for names other than this handle's, every key and
   * value, and that the store is writable, then calls {@link #doWriteIf(WriteBatch)}. A condition
   * whose value is longer than the value limit can hold for no key: the answer is false without
   * calling the engine. A batch without conditions goes to {@link #doWrite(WriteBatch)}.
   */
  @Override
  public final boolean writeIf(WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    args.feature(Feature.CONDITIONAL_BATCH);
    args.operations(batch);
    boolean satisfiable = args.conditions(batch);
    checkWritable();
    if (!satisfiable) {
      return false;
    }
    if (!batch.hasConditions()) {
      if (!batch.isEmpty()) {
        doWrite(batch);
      }
      return true;
    }
    return doWriteIf(batch);
  }

  @Override
  public final void sync() {
    checkOpen();
    failure.check();
    doSync();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks that the store is open and writable, then calls {@link #doCompact()}.
   */
  @Override
  public final void compact() {
    checkWritable();
    doCompact();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks that the store is open, then calls {@link #doVerify()}.
   */
  @Override
  public final void verify() {
    checkOpen();
    doVerify();
    String problem = failure.problem();
    if (problem != null) {
      throw new StoreIOException(
          problem + " (the data checked is intact; the store is not healthy)", failure.first());
    }
  }

  @Override
  public final StoreInfo info() {
    return info;
  }

  @Override
  public final StoreStats stats() {
    checkOpen();
    // Every engine on this class reports its open cursors (and snapshots, if it has them).
    return failure.withHealth(readers.counted(doStats(), info.has(Feature.SNAPSHOT_READ)));
  }

  /** The {@link StoreStats#figures()} key under which every engine reports its open cursors. */
  public static final String OPEN_CURSORS = "open-cursors";

  /**
   * The {@link StoreStats#figures()} key under which every engine declaring {@link
   * Feature#SNAPSHOT_READ} reports its open snapshots.
   */
  public static final String OPEN_SNAPSHOTS = "open-snapshots";

  @Override
  public final void close() {
    synchronized (readers) { // only so that one close() wins: readers takes no lock of its own
      if (closed) {
        return;
      }
      closed = true;
    }
    // Each step runs even if one before it threw (a cursor whose release fails must not leak the
    // engine's native handles); the first exception is thrown at the end, later ones suppressed.
    List<Runnable> steps = List.of(handles::closeAll, readers::closeAll, this::doClose);
    RuntimeException failed = OpenReaders.closeEach(steps, Runnable::run, null);
    if (root != this) {
      root.handles.closed(this);
    }
    if (failed != null) {
      throw failed;
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the name, the feature and that the store is open (and, read-only, that the keyspace
   * exists), then calls {@link #doKeyspace(String)} and tracks the handle so that {@link #close()}
   * and {@link #dropKeyspace(String)} close it.
   */
  @Override
  public final Store keyspace(String name) {
    Arguments.keyspaceName(name);
    args.feature(Feature.KEYSPACES);
    return handles.open(name);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the feature and that the store is open, then sorts what {@link #doKeyspaces()} lists.
   */
  @Override
  public final List<String> keyspaces() {
    args.feature(Feature.KEYSPACES);
    return handles.names();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Checks the name, the feature and that the store is writable, closes the keyspace's open
   * handles, then calls {@link #doDropKeyspace(String)}.
   */
  @Override
  public final boolean dropKeyspace(String name) {
    Arguments.keyspaceName(name);
    args.feature(Feature.KEYSPACES);
    return handles.drop(name, this::checkWritable);
  }

  /**
   * What a log line or a debugger shows of a store: its engine and location as a URI starts ({@code
   * hashlog:/data/app}; a keyspace handle's location ends in {@code #name}), then, in parentheses,
   * {@code read-only} and {@code closed} when they hold.
   *
   * @return e.g. {@code lmdb:/data/app (read-only, closed)}
   */
  @Override
  public String toString() {
    String location = info.location();
    StringBuilder b = new StringBuilder();
    if (!location.startsWith(info.engine() + ":")) {
      b.append(info.engine()).append(':');
    }
    b.append(location);
    if (info.readOnly() || closed) {
      b.append(" (");
      if (info.readOnly()) {
        b.append("read-only");
      }
      if (closed) {
        b.append(info.readOnly() ? ", " : "").append("closed");
      }
      b.append(')');
    }
    return b.toString();
  }

  /**
   * Whether {@link #close()} was called.
   *
   * @return true once closed
   */
  protected final boolean isClosed() {
    return closed;
  }

  /**
   * Number of cursors open right now.
   *
   * @return the open cursor count
   */
  protected final int openCursors() {
    return readers.cursors();
  }

  /**
   * Throws if the store is closed.
   *
   * @throws StoreClosedException naming the engine and location
   */
  protected final void checkOpen() {
    if (closed) {
      throw new StoreClosedException(info.describe() + " is closed");
    }
  }

  /** The argument checks, for this store's snapshots. */
  final Arguments arguments() {
    return args;
  }

  /** The open cursors and snapshots, for one to leave when it closes. */
  final OpenReaders readers() {
    return readers;
  }

  private void checkWritable() {
    checkOpen();
    if (info.readOnly()) {
      throw new UnsupportedOperationException(info.describe() + " is open read-only");
    }
    failure.check();
  }

  /**
   * Puts the store into its failed state after an environmental error on a write path, and returns
   * the exception to throw. This is the one failure policy of every kv4j engine: after an I/O error
   * while writing or syncing (disk full, EIO, a failed {@code fsync}, a native write error) the
   * store stays <b>failed until reopened</b>. Every later {@code put}, {@code delete}, {@code
   * write}, {@code compact} and {@code sync} throws {@link StoreIOException} whose message says so
   * and whose cause is the first failure; reads, scans, {@code stats} and {@code close} go on
   * working. Only the first failure is kept; later calls return an exception naming it.
   *
   * <p>Why not recover by itself once space is freed: after a failed {@code fsync} the OS may have
   * dropped the dirty pages it could not write, so the engine can no longer tell what is on disk;
   * reopening runs recovery, which can. Misuse (a key over the limit) and a full map of a fixed
   * size that the caller may enlarge are not failures of this kind.
   *
   * @param what what failed, e.g. {@code "append to segment 7"}
   * @param cause the environmental error
   * @return the exception to throw, a {@link StoreIOException} saying "failed until reopened"
   */
  protected final StoreIOException failWrites(String what, Throwable cause) {
    return failure.fail(what, cause);
  }

  /**
   * Reports that the background task {@code task} failed and will be retried: the store is {@link
   * io.kv4j.StoreStats.Health#DEGRADED} in {@link #stats()}, and {@link #verify()} says so, until
   * {@link #backgroundRecovered(String)} for the same task. For work that can recover by itself
   * (compaction on a disk that was full); work that cannot ends in {@link #failWrites}.
   *
   * @param task what fails, e.g. {@code "background compaction"}
   * @param cause why
   */
  protected final void backgroundFailing(String task, Throwable cause) {
    failure.taskFailing(task, String.valueOf(cause));
  }

  /**
   * The background task {@code task} works again (see {@link #backgroundFailing}).
   *
   * @param task what recovered
   */
  protected final void backgroundRecovered(String task) {
    failure.taskRecovered(task);
  }

  /**
   * Starts a daemon thread for the engine's background work that never dies unseen: if {@code body}
   * ends by throwing anything ({@code Error}s included), the store becomes failed until reopened
   * ({@link #failWrites}), saying which thread died and why, and the death is logged. A {@code
   * body} that recovers from its own failures catches them itself (and may report them with {@link
   * #backgroundFailing}).
   *
   * @param name the thread's name
   * @param body the work; returning normally ends the thread quietly
   * @return the started thread
   */
  protected final Thread startBackground(String name, Runnable body) {
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (Throwable e) {
                StoreIOException f = failWrites("its background thread '" + name + "' died", e);
                BACKGROUND_LOG.log(System.Logger.Level.ERROR, f.getMessage(), e);
              }
            },
            name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static final EngineLog BACKGROUND_LOG = new EngineLog("io.kv4j.spi");

  /**
   * The failure that put this store into its failed state (see {@link #failWrites(String,
   * Throwable)}).
   *
   * @return the first failure, or null while the store accepts writes
   */
  protected final StoreIOException writeFailure() {
    return failure.first();
  }
}
