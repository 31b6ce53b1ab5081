package io.kv4j.lmdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.EnvInfo;
import org.lmdbjava.LmdbNativeException;
import org.lmdbjava.Txn;

/**
 * The store's writer: group commit, map growth and the data file's zero tail.
 *
 * <p>A Java lock serializes writers (LMDB allows one write transaction; waiting on the Java lock
 * instead of LMDB's mutex keeps blocked writers out of the gate). The writer queues its operation
 * and takes the lock; whoever holds it applies every queued operation (up to a limit) in one write
 * transaction with one commit (one fsync under SYNC) and marks them done, so concurrent writers
 * share a commit. If the group's transaction fails for any reason (a full map included), nothing of
 * it was committed, and each member retries alone through {@link #write(WriteBody)}, which grows
 * the map when needed and reports errors to the operation that caused them. The queue and its
 * leader are the SPI's {@link io.kv4j.spi.GroupCommit}; this class is its committer.
 */
final class GroupCommit implements io.kv4j.spi.GroupCommit.Committer<GroupCommit.PendingWrite> {
  /** The body of a write transaction; run again alone when its group's transaction failed. */
  interface WriteBody {
    void apply(Txn<byte[]> txn);
  }

  /** What runs after each successful commit, under the writer lock. */
  interface AfterCommit {
    void committed();
  }

  /** Most operations (puts, deletes, batches) one group commit applies. */
  private static final int MAX_GROUP_OPS = 512;

  /** Most payload bytes one group commit applies, so a group never builds a huge transaction. */
  private static final long MAX_GROUP_BYTES = 8L << 20;

  /** A write waiting for a group commit. */
  static final class PendingWrite {
    final WriteBody body;
    final long bytes;

    PendingWrite(WriteBody body, long bytes) {
      this.body = body;
      this.bytes = bytes;
    }
  }

  private final LmdbStore store; // the root store: its failed state and its description
  private final Env<byte[]> env;
  private final TxnGate gate;
  private final MapBounds bounds;
  private final Path dataFile;
  private final int pageSize;
  private final long growthStep;
  private final long growthTimeoutMillis;
  private final io.kv4j.spi.GroupCommit<PendingWrite> groups;
  private final ReentrantLock writerLock;
  private final AtomicLong growths = new AtomicLong();
  // Read-write stores: the data file, to keep TAIL zero bytes after the last page (see TAIL).
  private final RandomAccessFile tailFile;
  private long tailLastPage = -1; // under writerLock
  private volatile long mapSize;
  private volatile Runnable beforeCommit; // test hook, inside the write transaction
  private volatile AfterCommit afterCommit; // under the writer lock, after each commit
  private volatile Runnable afterAbort; // under the writer lock, after each aborted transaction

  GroupCommit(
      LmdbStore store,
      Env<byte[]> env,
      TxnGate gate,
      MapBounds bounds,
      Path dataFile,
      int pageSize,
      long growthStep,
      long growthTimeoutMillis,
      boolean readOnly) {
    this.store = store;
    this.env = env;
    this.gate = gate;
    this.bounds = bounds;
    this.dataFile = dataFile;
    this.pageSize = pageSize;
    this.growthStep = growthStep;
    this.growthTimeoutMillis = growthTimeoutMillis;
    this.groups = new io.kv4j.spi.GroupCommit<>(this, MAX_GROUP_OPS, MAX_GROUP_BYTES);
    this.writerLock = groups.lock();
    EnvInfo envInfo = env.info();
    this.mapSize = envInfo.mapSize;
    RandomAccessFile tail = null;
    if (!readOnly) {
      try {
        tail = new RandomAccessFile(dataFile.toFile(), "rw");
      } catch (IOException e) {
        throw new StoreIOException(describe() + ": cannot open " + dataFile + ": " + e, e);
      }
    }
    this.tailFile = tail;
    try {
      keepTail(envInfo.lastPageNumber);
    } catch (RuntimeException e) {
      closeTail();
      throw e;
    }
  }

  private String describe() {
    return store.info().describe();
  }

  /** The lock writers and group commits serialize on. */
  ReentrantLock writerLock() {
    return writerLock;
  }

  /** Writes waiting for a group commit. */
  int queued() {
    return groups.queued();
  }

  long growths() {
    return growths.get();
  }

  void beforeCommit(Runnable hook) {
    this.beforeCommit = hook;
  }

  /** Sets what runs after every commit and after every aborted write transaction. */
  void onOutcome(AfterCommit committed, Runnable aborted) {
    this.afterCommit = committed;
    this.afterAbort = aborted;
  }

  /**
   * Keeps {@link LmdbStore#TAIL} zero bytes after the last page in use (read-write stores; under
   * the writer lock or at open). LMDB writes pages at their offsets, so a commit that allocates
   * pages past the tail extends the file to them, and the tail is restored here after it.
   */
  private void keepTail(long lastPage) {
    if (tailFile == null || lastPage == tailLastPage) {
      return;
    }
    long want = (lastPage + 1) * pageSize + LmdbStore.TAIL;
    try {
      if (tailFile.length() < want) {
        tailFile.setLength(want);
      }
      tailLastPage = lastPage;
    } catch (IOException e) {
      throw store.fail("extend " + dataFile + " to " + want + " bytes", e);
    }
  }

  void closeTail() {
    if (tailFile != null) {
      try {
        tailFile.close();
      } catch (IOException ignored) {
        // Nothing was written through it that a close could lose.
      }
    }
  }

  /**
   * Applies {@code body} in a group commit and returns once the transaction holding it committed.
   */
  void submit(WriteBody body, long bytes) {
    boolean alone;
    int token = gate.enter(); // before the writer lock: see write(WriteBody)
    try {
      alone = !groups.submit(new PendingWrite(body, bytes));
    } finally {
      gate.exit(token);
    }
    if (alone) {
      write(body);
    }
  }

  /** Applies queued writes in one transaction. Caller holds the writer lock and a gate section. */
  @Override
  public void commit(List<PendingWrite> group) {
    boolean done = false;
    try {
      Txn<byte[]> txn = env.txnWrite();
      try {
        for (PendingWrite w : group) {
          w.body.apply(txn);
          ArrayProxy.release();
        }
        commit(txn);
        done = true;
      } finally {
        txn.close(); // aborts unless committed
        if (!done) {
          aborted();
        }
      }
    } finally {
      ArrayProxy.release();
    }
  }

  /**
   * Nothing of a failed group was committed; every member retries alone and reports its own error,
   * except after an error of the environment: then the store is failed and the retries say so.
   */
  @Override
  public RuntimeException failure(List<PendingWrite> group, Throwable cause) {
    if (cause instanceof RuntimeException e && failsWrites(e)) {
      writeError(e);
    }
    return null;
  }

  /** The payload bytes the caller declared, for the group's byte limit. */
  @Override
  public long bytes(PendingWrite w) {
    return w.bytes;
  }

  /**
   * Runs one write transaction alone, growing the map and retrying while it is full. The gate is
   * entered before the writer lock, and neither is held while waiting for growth: a writer blocked
   * on the gate (growth pending) must not hold the writer lock, or a thread that holds open cursors
   * (which the grower waits for) could not write, or be told why not, until the growth timeout.
   */
  void write(WriteBody body) {
    while (true) {
      long observed;
      int token = gate.enter();
      try {
        observed = mapSize; // stable: growth needs every section closed, and this is one
        writerLock.lock();
        try {
          if (store.failure() != null) {
            throw store.fail("an earlier write", null); // a group member that retried alone
          }
          Txn<byte[]> txn = env.txnWrite();
          boolean done = false;
          try {
            body.apply(txn);
            commit(txn);
            done = true;
            return;
          } finally {
            txn.close(); // aborts unless committed
            if (!done) {
              aborted();
            }
          }
        } catch (Env.MapFullException e) {
          // Leave the writer lock and the gate, grow, retry.
        } catch (RuntimeException e) {
          throw writeError(e);
        } finally {
          ArrayProxy.release();
          writerLock.unlock();
        }
      } finally {
        gate.exit(token);
      }
      grow(observed);
    }
  }

  private void aborted() {
    Runnable r = afterAbort;
    if (r != null) {
      r.run();
    }
  }

  /** Commits a write transaction (caller holds the writer lock), then restores the file's tail. */
  private void commit(Txn<byte[]> txn) {
    Runnable hook = beforeCommit;
    if (hook != null) {
      hook.run();
    }
    txn.commit();
    AfterCommit after = afterCommit;
    if (after != null) {
      after.committed();
    }
    try {
      keepTail(env.info().lastPageNumber);
    } catch (StoreIOException e) {
      // The commit is durable and acknowledged; the store is failed for the writes after it.
    }
  }

  /**
   * What a failed write transaction throws, under the one failure policy ({@link
   * LmdbStore#fail(String, Throwable)}): an error of the environment (an errno from LMDB's writes
   * or fsync: ENOSPC, EIO, EFBIG; MDB_PANIC after a failed meta page write) fails the store's
   * writes until it is reopened; so does damage met while writing, which a write could spread.
   * Misuse and limits the caller can act on (a value LMDB refuses, a transaction with too many
   * dirty pages, no reader slot) are thrown as they are and leave the store writable.
   */
  private RuntimeException writeError(RuntimeException e) {
    RuntimeException t = Errors.translate(describe(), dataFile, e);
    if (!failsWrites(e)) {
      return t;
    }
    if (t instanceof StoreCorruptedException) {
      store.fail("a write found " + dataFile + " damaged", t);
      return t;
    }
    return store.fail("commit to " + dataFile, e);
  }

  /** Whether a write transaction's exception is one the failure policy applies to. */
  private static boolean failsWrites(RuntimeException e) {
    return e instanceof LmdbNativeException
        && !(e instanceof Env.MapFullException
            || e instanceof Dbi.BadValueSizeException
            || e instanceof Dbi.DbFullException
            || e instanceof Txn.TxFullException
            || e instanceof Env.ReadersFullException);
  }

  private void grow(long observed) {
    long target = observed + growthStep;
    boolean done =
        gate.runExclusive(
            growthTimeoutMillis,
            () -> {
              if (mapSize != observed) {
                return; // someone else grew it already
              }
              try {
                env.setMapSize(target);
              } catch (RuntimeException e) {
                // LMDB unmapped the file before mapping it anew; a failed map leaves it with none,
                // which no call may touch again.
                StoreIOException lost =
                    store.fail(
                        "remapping "
                            + dataFile
                            + " to "
                            + target
                            + " bytes failed; reopen the store",
                        e);
                gate.poison(lost);
                throw lost;
              }
              EnvInfo grown = env.info();
              mapSize = grown.mapSize;
              bounds.mapped(grown.mapSize);
              growths.incrementAndGet();
            });
    if (!done) {
      throw new StoreException(
          describe()
              + ": the LMDB map is full at "
              + observed
              + " bytes and growing it to "
              + target
              + " bytes needs every read transaction closed, but "
              + gate.active()
              + " (open cursors, snapshots and backups) stayed open for "
              + growthTimeoutMillis
              + " ms ('map-growth-timeout'). Close cursors and snapshots promptly or raise"
              + " 'map-size'");
    }
  }
}
