package io.kv4j.spi;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.ArrayList;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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
  private final Set<AbstractCursor> cursors = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  private volatile StoreIOException failure;

  /**
   * Creates the store's shell.
   *
   * @param info the store's engine, features, limits, durability and location
   */
  protected AbstractStore(StoreInfo info) {
    this.info = Objects.requireNonNull(info, "info");
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
   * Gathers figures.
   *
   * @return the stats
   */
  protected abstract StoreStats doStats();

  /** Releases the engine's resources; called once, after open cursors were closed. */
  protected abstract void doClose();

  @Override
  public final byte[] get(byte[] key) {
    checkKey(key);
    checkOpen();
    return doGet(key);
  }

  @Override
  public final void put(byte[] key, byte[] value) {
    checkKey(key);
    checkValue(value);
    checkWritable();
    doPut(key, value);
  }

  @Override
  public final void delete(byte[] key) {
    checkKey(key);
    checkWritable();
    doDelete(key);
  }

  @Override
  public final Cursor scan(KeyRange range) {
    Objects.requireNonNull(range, "range");
    checkOpen();
    requireFeature(Feature.ORDERED_SCAN);
    if (range.isReverse()) {
      requireFeature(Feature.REVERSE_SCAN);
    }
    AbstractCursor c = doScan(range);
    cursors.add(c);
    if (closed) { // close() ran concurrently and may have missed this cursor
      c.closeByStore();
      checkOpen();
    }
    return c;
  }

  @Override
  public final void write(WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    requireFeature(Feature.ATOMIC_BATCH);
    for (int i = 0, n = batch.size(); i < n; i++) {
      checkKey(batch.key(i));
      if (!batch.isDelete(i)) {
        checkValue(batch.value(i));
      }
    }
    checkWritable();
    if (!batch.isEmpty()) {
      doWrite(batch);
    }
  }

  @Override
  public final void sync() {
    checkOpen();
    checkNotFailed();
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
  }

  @Override
  public final StoreInfo info() {
    return info;
  }

  @Override
  public final StoreStats stats() {
    checkOpen();
    StoreStats s = doStats();
    // Every engine on this class reports its open cursors, so a leak (a cursor a forEach or a
    // stream failed to close) shows up, and the TCK can check for it (rule 4.10).
    java.util.Map<String, Number> figures = new java.util.LinkedHashMap<>(s.figures());
    figures.put(OPEN_CURSORS, cursors.size());
    return new StoreStats(s.keyCount(), s.keyCountExact(), s.diskBytes(), figures);
  }

  /** The {@link StoreStats#figures()} key under which every engine reports its open cursors. */
  public static final String OPEN_CURSORS = "open-cursors";

  @Override
  public final void close() {
    synchronized (cursors) {
      if (closed) {
        return;
      }
      closed = true;
    }
    for (AbstractCursor c : new ArrayList<>(cursors)) {
      c.closeByStore();
    }
    doClose();
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
    return cursors.size();
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

  void forget(AbstractCursor c) {
    cursors.remove(c);
  }

  private void checkWritable() {
    checkOpen();
    if (info.readOnly()) {
      throw new UnsupportedOperationException(info.describe() + " is open read-only");
    }
    checkNotFailed();
  }

  private void checkNotFailed() {
    StoreIOException f = failure;
    if (f != null) {
      throw new StoreIOException(f.getMessage(), f);
    }
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
    synchronized (cursors) {
      if (failure == null) {
        failure =
            new StoreIOException(
                info.describe()
                    + " failed until reopened: "
                    + what
                    + (cause == null || cause.getMessage() == null
                        ? ""
                        : ": " + cause.getMessage()),
                cause);
        return failure;
      }
    }
    return new StoreIOException(failure.getMessage(), failure);
  }

  /**
   * The failure that put this store into its failed state (see {@link #failWrites(String,
   * Throwable)}).
   *
   * @return the first failure, or null while the store accepts writes
   */
  protected final StoreIOException writeFailure() {
    return failure;
  }

  private void requireFeature(Feature f) {
    if (!info.has(f)) {
      throw new UnsupportedOperationException(
          "engine '" + info.engine() + "' does not support " + f);
    }
  }

  private void checkKey(byte[] key) {
    Objects.requireNonNull(key, "key");
    if (key.length == 0) {
      throw new IllegalArgumentException(
          "key is empty; keys are 1 or more bytes (" + info.describe() + ")");
    }
    int max = info.limits().maxKeySize();
    if (key.length > max) {
      throw new IllegalArgumentException(
          "key is "
              + key.length
              + " bytes, longer than the limit of "
              + max
              + " bytes ("
              + info.describe()
              + ")");
    }
  }

  private void checkValue(byte[] value) {
    Objects.requireNonNull(value, "value");
    int max = info.limits().maxValueSize();
    if (value.length > max) {
      throw new IllegalArgumentException(
          "value is "
              + value.length
              + " bytes, longer than the limit of "
              + max
              + " bytes ("
              + info.describe()
              + ")");
    }
  }
}
