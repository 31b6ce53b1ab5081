package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.EnvInfo;
import org.lmdbjava.LmdbException;
import org.lmdbjava.Stat;
import org.lmdbjava.Txn;

/**
 * One LMDB environment with its unnamed database, behind {@link AbstractStore}.
 *
 * <p>Native safety: every call into LMDB happens inside a {@link TxnGate} section (or while a
 * cursor, counted by the gate, holds its transaction), and {@link #doClose()} closes the gate and
 * waits for the sections to drain before it frees the environment; so a close racing with other
 * threads never frees memory under a running native call, and later calls fail with {@link
 * io.kv4j.StoreClosedException}.
 *
 * <p>Writes: a Java lock serializes writers (LMDB allows one write transaction; waiting on the Java
 * lock instead of LMDB's mutex keeps blocked writers out of the gate). A write that hits
 * MDB_MAP_FULL is aborted, the map grows by {@code map-growth-step} with no transaction active, and
 * the write is retried.
 *
 * <p>Reads: read transactions are kept in a bounded LIFO pool (MDB_NOTLS, so a transaction is not
 * bound to the thread that created it), reset when returned and renewed when borrowed. No
 * transaction belongs to a thread, so threads that die leak no reader slot.
 */
final class LmdbStore extends AbstractStore {
  static final String DATA_FILE = "data.mdb";
  static final String LOCK_FILE = "lock.mdb";

  private final Path directory;
  private final Path dataFile;
  private final DirectoryLock dirLock;
  private final Env<byte[]> env;
  private final Dbi<byte[]> db;
  private final TxnGate gate;
  private final ReentrantLock writerLock = new ReentrantLock();
  private final long growthStep;
  private final long growthTimeoutMillis;
  private final int maxReaders;
  private final int poolCapacity;
  // Idle read transactions (reset, keeping their reader slot): first one parked per thread stripe,
  // padded apart, so a get on each core takes and returns its own without a shared lock; the
  // overflow in a deque under its monitor. Together at most poolCapacity.
  private static final int PARK_PAD = 16;
  private final int parkSlots;
  private final AtomicReferenceArray<Txn<byte[]>> parked;
  private final ArrayDeque<Txn<byte[]>> idleReadTxns = new ArrayDeque<>();
  private final AtomicLong liveReadTxns = new AtomicLong();
  private final AtomicLong growths = new AtomicLong();
  private volatile long mapSize;

  private LmdbStore(
      StoreInfo info,
      Path directory,
      DirectoryLock dirLock,
      Env<byte[]> env,
      Dbi<byte[]> db,
      StoreConfig config) {
    super(info);
    this.directory = directory;
    this.dataFile = directory.resolve(DATA_FILE);
    this.dirLock = dirLock;
    this.env = env;
    this.db = db;
    this.gate = new TxnGate(info.describe());
    this.growthStep = roundUp(config.get(LmdbProvider.MAP_GROWTH_STEP));
    this.growthTimeoutMillis = config.get(LmdbProvider.MAP_GROWTH_TIMEOUT);
    this.maxReaders = config.get(LmdbProvider.MAX_READERS);
    this.poolCapacity = Math.max(1, Math.min(64, maxReaders / 2));
    this.parkSlots = Integer.highestOneBit(Math.min(16, poolCapacity));
    this.parked = new AtomicReferenceArray<>((parkSlots + 1) * PARK_PAD);
    this.mapSize = env.info().mapSize;
  }

  static LmdbStore open(StoreConfig config) {
    Path path = config.path();
    if (path == null) {
      throw new IllegalArgumentException(
          "engine '" + LmdbProvider.ID + "' needs a path: the directory that holds the store");
    }
    String where = "engine '" + LmdbProvider.ID + "' at " + path;
    boolean readOnly = config.readOnly();
    if (!Files.isDirectory(path)) {
      if (Files.exists(path)) {
        throw new StoreIOException(
            where + ": the path exists and is not a directory", (Throwable) null);
      }
      if (!config.createIfMissing() || readOnly) {
        throw new StoreIOException(
            where
                + ": the directory does not exist"
                + (readOnly
                    ? " (read-only stores are never created)"
                    : " and createIfMissing is false"),
            (Throwable) null);
      }
      try {
        Files.createDirectories(path);
      } catch (IOException e) {
        throw new StoreIOException(where + ": cannot create the directory: " + e, e);
      }
    }
    DirectoryLock lock = DirectoryLock.acquire(path, LmdbProvider.ID);
    Env<byte[]> env = null;
    try {
      Path dir = lock.directory();
      where = "engine '" + LmdbProvider.ID + "' at " + dir;
      Path data = dir.resolve(DATA_FILE);
      if (readOnly && !Files.isRegularFile(data)) {
        throw new StoreIOException(
            where + ": no LMDB data file " + data + " to open read-only", (Throwable) null);
      }
      List<EnvFlags> flags = new ArrayList<>();
      flags.add(EnvFlags.MDB_NOTLS);
      if (config.durability() == Durability.BUFFERED) {
        flags.add(EnvFlags.MDB_NOSYNC);
      }
      if (readOnly) {
        flags.add(EnvFlags.MDB_RDONLY_ENV);
      }
      try {
        env =
            Env.create(ArrayProxy.INSTANCE)
                .setMapSize(roundUp(config.get(LmdbProvider.MAP_SIZE)))
                .setMaxReaders(config.get(LmdbProvider.MAX_READERS))
                .setMaxDbs(1)
                .open(dir.toFile(), 0644, flags.toArray(new EnvFlags[0]));
      } catch (LinkageError e) {
        throw Errors.initFailure(where, e);
      } catch (RuntimeException e) {
        if (e instanceof java.lang.reflect.InaccessibleObjectException) {
          throw Errors.initFailure(where, e);
        }
        throw Errors.translate(where, data, e);
      }
      int nativeMax = env.getMaxKeySize();
      if (nativeMax < LmdbProvider.MAX_KEY_SIZE) {
        throw new IllegalStateException(
            where
                + ": the LMDB native library accepts keys up to "
                + nativeMax
                + " bytes, fewer than the "
                + LmdbProvider.MAX_KEY_SIZE
                + " this engine declares");
      }
      Dbi<byte[]> db;
      try {
        if (!readOnly) {
          env.readerCheck(); // frees slots left by dead processes
        }
        db =
            readOnly ? env.openDbi((byte[]) null) : env.openDbi((byte[]) null, DbiFlags.MDB_CREATE);
      } catch (RuntimeException e) {
        throw Errors.translate(where, data, e);
      }
      StoreInfo info =
          new StoreInfo(
              LmdbProvider.ID,
              LmdbProvider.FEATURES,
              LmdbProvider.LIMITS,
              config.durability(),
              dir.toString(),
              readOnly);
      LmdbStore store = new LmdbStore(info, dir, lock, env, db, config);
      env = null;
      return store;
    } catch (RuntimeException | Error e) {
      try {
        if (env != null) {
          env.close();
        }
      } finally {
        lock.close();
      }
      throw e;
    }
  }

  // ---- reads ----

  @Override
  protected byte[] doGet(byte[] key) {
    int token = gate.enter();
    Txn<byte[]> txn = null;
    try {
      txn = borrowReadTxn();
      return db.get(txn, key);
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      ArrayProxy.release();
      try {
        if (txn != null) {
          returnReadTxn(txn);
        }
      } finally {
        gate.exit(token);
      }
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    int token = gate.enter();
    Txn<byte[]> txn = null;
    boolean ok = false;
    try {
      txn = range.isEmpty() ? null : borrowReadTxn();
      LmdbCursor c = new LmdbCursor(this, range, txn, token, gate.cursorsOfCurrentThread());
      ok = true;
      return c;
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      if (!ok) {
        try {
          if (txn != null) {
            returnReadTxn(txn);
          }
        } finally {
          gate.exit(token);
        }
      }
    }
  }

  Dbi<byte[]> db() {
    return db;
  }

  Path dataFile() {
    return dataFile;
  }

  /** Called by a cursor's release: gives its transaction back and leaves the gate. */
  void cursorReleased(Txn<byte[]> txn, int token) {
    try {
      if (txn != null) {
        returnReadTxn(txn);
      }
    } finally {
      gate.exit(token);
    }
  }

  private int parkSlot() {
    // By thread id, as CallGate stripes: threads started in sequence take different slots.
    @SuppressWarnings("deprecation") // threadId() is Java 19+; getId() is the same value
    long id = Thread.currentThread().getId();
    return ((int) id & (parkSlots - 1)) * PARK_PAD;
  }

  private Txn<byte[]> borrowReadTxn() {
    Txn<byte[]> txn = parked.getAndSet(parkSlot(), null);
    if (txn == null) {
      synchronized (idleReadTxns) {
        txn = idleReadTxns.pollFirst();
      }
    }
    if (txn == null) {
      txn = env.txnRead();
      liveReadTxns.incrementAndGet();
      return txn;
    }
    try {
      txn.renew();
    } catch (RuntimeException e) {
      closeResetTxn(txn);
      throw e;
    }
    return txn;
  }

  /** Resets a read transaction and pools it, or closes it when the pool is full. Never throws. */
  private void returnReadTxn(Txn<byte[]> txn) {
    try {
      txn.reset();
    } catch (RuntimeException e) {
      closeQuietly(txn);
      return;
    }
    if (parked.compareAndSet(parkSlot(), null, txn)) {
      return;
    }
    synchronized (idleReadTxns) {
      if (idleReadTxns.size() < poolCapacity - parkSlots) {
        idleReadTxns.addFirst(txn);
        return;
      }
    }
    closeResetTxn(txn);
  }

  /**
   * Closes a reset read transaction. lmdbjava 0.9.1's {@code Txn.close()} aborts only a READY
   * transaction, so closing a reset one would leak its reader slot; renew it first.
   */
  private void closeResetTxn(Txn<byte[]> txn) {
    try {
      txn.renew();
    } catch (RuntimeException ignored) {
      // Fall through: close what can be closed.
    }
    closeQuietly(txn);
  }

  private void closeQuietly(Txn<byte[]> txn) {
    try {
      txn.close();
    } catch (RuntimeException ignored) {
      // Nothing more can be done for this transaction.
    } finally {
      liveReadTxns.decrementAndGet();
    }
  }

  // ---- writes ----

  /** The body of a write transaction. */
  private interface WriteBody {
    void apply(Txn<byte[]> txn);
  }

  private static final int QUEUED = 0;
  private static final int DONE = 1;
  private static final int RETRY_ALONE = 2;

  /** Most operations (puts, deletes, batches) one group commit applies. */
  private static final int MAX_GROUP_OPS = 512;

  /** Most payload bytes one group commit applies, so a group never builds a huge transaction. */
  private static final long MAX_GROUP_BYTES = 8L << 20;

  /** A write waiting for a group commit. {@code state} is read and written under writerLock. */
  private static final class PendingWrite {
    final WriteBody body;
    final long bytes;
    int state = QUEUED;

    PendingWrite(WriteBody body, long bytes) {
      this.body = body;
      this.bytes = bytes;
    }
  }

  private final ArrayDeque<PendingWrite> writeQueue = new ArrayDeque<>();

  @Override
  protected void doPut(byte[] key, byte[] value) {
    submit(txn -> db.put(txn, key, value), key.length + (long) value.length);
  }

  @Override
  protected void doDelete(byte[] key) {
    submit(txn -> db.delete(txn, key), key.length);
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    submit(
        txn -> {
          for (int i = 0, n = batch.size(); i < n; i++) {
            try {
              if (batch.isDelete(i)) {
                db.delete(txn, batch.key(i));
              } else {
                db.put(txn, batch.key(i), batch.value(i));
              }
            } finally {
              ArrayProxy.release();
            }
          }
        },
        batch.byteSize());
  }

  /**
   * Group commit. The writer queues its operation and takes the writer lock; whoever holds the lock
   * applies every queued operation (up to a limit) in one write transaction with one commit (one
   * fsync under SYNC) and marks them done, so concurrent writers share a commit. Each operation
   * stays atomic, and none is acknowledged before the commit that contains it. If the group's
   * transaction fails for any reason (a full map included), nothing of it was committed, and each
   * member is marked to retry alone through {@link #write(WriteBody)}, which grows the map when
   * needed and reports errors to the operation that caused them.
   */
  private void submit(WriteBody body, long bytes) {
    PendingWrite me = new PendingWrite(body, bytes);
    boolean alone;
    int token = gate.enter(); // before the writer lock: see write(WriteBody)
    try {
      synchronized (writeQueue) {
        writeQueue.addLast(me);
      }
      writerLock.lock();
      try {
        while (me.state == QUEUED) {
          commitGroup();
        }
        alone = me.state == RETRY_ALONE;
      } finally {
        writerLock.unlock();
      }
    } finally {
      gate.exit(token);
    }
    if (alone) {
      write(body);
    }
  }

  /** Applies queued writes in one transaction. Caller holds the writer lock and a gate section. */
  private void commitGroup() {
    List<PendingWrite> group = new ArrayList<>();
    synchronized (writeQueue) {
      long bytes = 0;
      while (!writeQueue.isEmpty() && group.size() < MAX_GROUP_OPS) {
        PendingWrite w = writeQueue.peekFirst();
        if (!group.isEmpty() && bytes + w.bytes > MAX_GROUP_BYTES) {
          break;
        }
        writeQueue.pollFirst();
        group.add(w);
        bytes += w.bytes;
      }
    }
    int outcome = RETRY_ALONE;
    try {
      Txn<byte[]> txn = env.txnWrite();
      try {
        for (PendingWrite w : group) {
          w.body.apply(txn);
          ArrayProxy.release();
        }
        txn.commit();
        outcome = DONE;
      } finally {
        txn.close(); // aborts unless committed
      }
    } catch (RuntimeException e) {
      // Nothing was committed; every member retries alone and reports its own error.
    } finally {
      ArrayProxy.release();
      for (PendingWrite w : group) {
        w.state = outcome;
      }
    }
  }

  /**
   * Runs one write transaction alone, growing the map and retrying while it is full. The gate is
   * entered before the writer lock, and neither is held while waiting for growth: a writer blocked
   * on the gate (growth pending) must not hold the writer lock, or a thread that holds open cursors
   * (which the grower waits for) could not write, or be told why not, until the growth timeout.
   */
  private void write(WriteBody body) {
    while (true) {
      long observed;
      int token = gate.enter();
      try {
        observed = mapSize; // stable: growth needs every section closed, and this is one
        writerLock.lock();
        try {
          Txn<byte[]> txn = env.txnWrite();
          try {
            body.apply(txn);
            txn.commit();
            return;
          } finally {
            txn.close(); // aborts unless committed
          }
        } catch (Env.MapFullException e) {
          // Leave the writer lock and the gate, grow, retry.
        } catch (RuntimeException e) {
          throw Errors.translate(info().describe(), dataFile, e);
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
                throw Errors.translate(info().describe(), dataFile, e);
              }
              mapSize = env.info().mapSize;
              growths.incrementAndGet();
            });
    if (!done) {
      throw new StoreException(
          info().describe()
              + ": the LMDB map is full at "
              + observed
              + " bytes and growing it to "
              + target
              + " bytes needs every read transaction closed, but "
              + gate.active()
              + " (open cursors) stayed open for "
              + growthTimeoutMillis
              + " ms ('map-growth-timeout'). Close cursors promptly or raise 'map-size'");
    }
  }

  /** For tests: the lock writers and group commits serialize on. */
  ReentrantLock writerLock() {
    return writerLock;
  }

  /** For tests: writes waiting for a group commit. */
  int queuedWrites() {
    synchronized (writeQueue) {
      return writeQueue.size();
    }
  }

  // ---- misc ----

  @Override
  protected void doSync() {
    if (info().readOnly()) {
      return;
    }
    int token = gate.enter();
    try {
      env.sync(true);
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected StoreStats doStats() {
    Stat stat;
    EnvInfo envInfo;
    int token = gate.enter();
    try {
      stat = env.stat();
      envInfo = env.info();
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      gate.exit(token);
    }
    long disk = 0;
    for (String f : new String[] {DATA_FILE, LOCK_FILE}) {
      try {
        disk += Files.size(directory.resolve(f));
      } catch (IOException ignored) {
        // A missing lock file (read-only media) counts as 0.
      }
    }
    long usedPages = envInfo.lastPageNumber + 1;
    Map<String, Number> figures = new LinkedHashMap<>();
    figures.put("map-size-bytes", envInfo.mapSize);
    figures.put("map-used-bytes", usedPages * stat.pageSize);
    figures.put("map-used-pages", usedPages);
    figures.put("page-size-bytes", stat.pageSize);
    figures.put("tree-depth", stat.depth);
    figures.put("branch-pages", stat.branchPages);
    figures.put("leaf-pages", stat.leafPages);
    figures.put("overflow-pages", stat.overflowPages);
    figures.put("map-growths", growths.get());
    figures.put("reader-slots-in-use", liveReadTxns.get());
    figures.put("reader-slots-high-water", envInfo.numReaders);
    figures.put("max-readers", envInfo.maxReaders);
    figures.put("last-txn-id", envInfo.lastTransactionId);
    return new StoreStats(stat.entries, true, disk, figures);
  }

  @Override
  protected void doClose() {
    try {
      gate.closeAndDrain();
      List<Txn<byte[]>> idle;
      synchronized (idleReadTxns) {
        idle = new ArrayList<>(idleReadTxns);
        idleReadTxns.clear();
      }
      for (int i = 0; i < parked.length(); i += PARK_PAD) {
        Txn<byte[]> txn = parked.getAndSet(i, null);
        if (txn != null) {
          idle.add(txn);
        }
      }
      for (Txn<byte[]> txn : idle) {
        closeResetTxn(txn);
      }
      try {
        env.close();
      } catch (LmdbException ignored) {
        // Closing is best effort; the OS reclaims the map with the process anyway.
      }
    } finally {
      dirLock.close();
    }
  }

  private static long roundUp(long bytes) {
    long unit = 1L << 16; // a multiple of every OS page size LMDB runs on
    return (bytes + unit - 1) / unit * unit;
  }
}
