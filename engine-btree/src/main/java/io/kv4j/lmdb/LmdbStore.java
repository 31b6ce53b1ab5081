package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import org.lmdbjava.CopyFlags;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.EnvInfo;
import org.lmdbjava.LmdbException;
import org.lmdbjava.LmdbNativeException;
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
 * <p>Damage: the data file is checked before LMDB maps it ({@link MetaPages}, {@link PageWalk}),
 * values carry a {@link ValueFrame} in format-2 stores, every record is bounds-checked before it is
 * copied ({@link MapBounds}), and {@link #doVerify()} walks every page; see the README. Write
 * errors of the environment fail writes until reopened ({@link #failWrites}).
 *
 * <p>Reads: read transactions are kept in a bounded LIFO pool (MDB_NOTLS, so a transaction is not
 * bound to the thread that created it), reset when returned and renewed when borrowed. No
 * transaction belongs to a thread, so threads that die leak no reader slot.
 */
final class LmdbStore extends AbstractStore {
  static {
    JffiSettings.apply(); // before anything here loads lmdbjava and with it jffi
  }

  static final String DATA_FILE = "data.mdb";
  static final String LOCK_FILE = "lock.mdb";

  private final Path directory;
  private final Path dataFile;
  private final StoreDirectory storeDir;
  private final Env<byte[]> env;
  private final Dbi<byte[]> db;
  private final TxnGate gate;
  private final boolean framed;
  private final boolean noLock;
  private final int pageSize;
  private final MapBounds bounds;
  // Read-write stores: the data file, to keep TAIL zero bytes after the last page (see TAIL).
  private final RandomAccessFile tailFile;
  private long tailLastPage = -1; // under writerLock
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
  // Test hook: runs just before each commit, inside the write transaction.
  private volatile Runnable beforeCommit;

  private LmdbStore(
      StoreInfo info,
      StoreDirectory storeDir,
      Env<byte[]> env,
      Dbi<byte[]> db,
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
    this.db = db;
    this.framed = framed;
    this.noLock = noLock;
    this.pageSize = pageSize;
    this.gate = new TxnGate(info.describe());
    this.growthStep = roundUp(config.get(LmdbProvider.MAP_GROWTH_STEP));
    this.growthTimeoutMillis = config.get(LmdbProvider.MAP_GROWTH_TIMEOUT);
    this.maxReaders = config.get(LmdbProvider.MAX_READERS);
    this.poolCapacity = Math.max(1, Math.min(64, maxReaders / 2));
    this.parkSlots = Integer.highestOneBit(Math.min(16, poolCapacity));
    this.parked = new AtomicReferenceArray<>((parkSlots + 1) * PARK_PAD);
    EnvInfo envInfo = env.info();
    this.mapSize = envInfo.mapSize;
    this.bounds = bounds;
    RandomAccessFile tail = null;
    if (!info.readOnly()) {
      try {
        tail = new RandomAccessFile(dataFile.toFile(), "rw");
      } catch (IOException e) {
        throw new StoreIOException(info.describe() + ": cannot open " + dataFile + ": " + e, e);
      }
    }
    this.tailFile = tail;
    try {
      keepTail(envInfo.lastPageNumber);
    } catch (RuntimeException e) {
      closeTail();
      throw e;
    }
    bounds.refresh();
  }

  /**
   * Keeps {@link #TAIL} zero bytes after the last page in use (read-write stores; under the writer
   * lock or at open). LMDB writes pages at their offsets, so a commit that allocates pages past the
   * tail extends the file to them, and the tail is restored here after it.
   */
  private void keepTail(long lastPage) {
    if (tailFile == null || lastPage == tailLastPage) {
      return;
    }
    long want = (lastPage + 1) * pageSize + TAIL;
    try {
      if (tailFile.length() < want) {
        tailFile.setLength(want);
      }
      tailLastPage = lastPage;
    } catch (IOException e) {
      throw failWrites("extend " + dataFile + " to " + want + " bytes", e);
    }
  }

  /** Format 1: values stored raw (stores made before identities, or with checksums=false). */
  static final int FORMAT_RAW = 1;

  /** Format 2: every value stored in a {@link ValueFrame} (checksum, then value). */
  static final int FORMAT_FRAMED = 2;

  /**
   * Zero bytes kept after the last page in use: LMDB reads node offsets and key sizes (16 bits
   * each) from a page without checking them, so a damaged page near the end of the file could make
   * it read up to 128 KiB past the page; inside the file that is garbage LMDB or the frame check
   * reports, past its end it would be a SIGBUS. Sparse, so it costs no disk space.
   */
  static final long TAIL = 160L << 10;

  /**
   * Store directories whose LMDB environment is open in this JVM. LMDB forbids opening one
   * environment twice in a process: its reader-table locks are per process (fcntl), so closing the
   * second environment would drop the first one's locks.
   */
  private static final Set<Path> OPEN_HERE = ConcurrentHashMap.newKeySet();

  static StoreDirectory.Layout layout(int format) {
    return new StoreDirectory.Layout(
        LmdbProvider.ID,
        format,
        n -> n.equals(DATA_FILE) || n.equals(LOCK_FILE),
        Set.of(DATA_FILE));
  }

  static LmdbStore open(StoreConfig config) {
    boolean explicit = config.options().containsKey(LmdbProvider.CHECKSUMS.name());
    boolean wanted = config.get(LmdbProvider.CHECKSUMS);
    StoreDirectory dir = StoreDirectory.open(config, layout(FORMAT_FRAMED));
    Env<byte[]> env = null;
    Path claimed = null;
    boolean ok = false;
    try {
      if (dir.isNew() && !wanted) {
        // A new store without checksums records format 1; the layout fixes the format written.
        dir.close();
        dir = null;
        dir = StoreDirectory.open(config, layout(FORMAT_RAW));
      }
      Path d = dir.path();
      String where = "engine '" + LmdbProvider.ID + "' at " + d;
      boolean framed = dir.format() >= FORMAT_FRAMED;
      boolean readOnly = config.readOnly();
      Path data = d.resolve(DATA_FILE);
      boolean exists = Files.exists(data);
      if (readOnly && !exists) {
        throw new StoreIOException(
            where + ": no LMDB data file " + data + " to open read-only", (Throwable) null);
      }
      int pageSize = 0;
      if (exists) {
        // Read-write opens hold the directory lock, so nothing writes the file during the walk.
        long walkLimit = readOnly ? -1 : config.get(LmdbProvider.OPEN_CHECK_LIMIT);
        pageSize = checkDataFile(data, where, walkLimit).pageSize();
      }
      if (!OPEN_HERE.add(d)) {
        throw new StoreLockedException(
            where
                + ": the store is already open in this JVM (LMDB allows one environment per file"
                + " and process; share the open Store instead of opening it again)",
            d);
      }
      claimed = d;
      List<EnvFlags> flags = new ArrayList<>();
      flags.add(EnvFlags.MDB_NOTLS);
      if (config.durability() == Durability.BUFFERED) {
        flags.add(EnvFlags.MDB_NOSYNC);
      }
      boolean noLock = false;
      if (readOnly) {
        flags.add(EnvFlags.MDB_RDONLY_ENV);
        // LMDB would create lock.mdb (a read-only open creates nothing) or fail to open it for
        // writing (read-only media, unwritable directory): then read without the reader table.
        noLock = !Files.isWritable(d.resolve(LOCK_FILE));
        if (noLock) {
          flags.add(EnvFlags.MDB_NOLOCK);
        }
      }
      try {
        env =
            Env.create(ArrayProxy.INSTANCE)
                .setMapSize(roundUp(config.get(LmdbProvider.MAP_SIZE)))
                .setMaxReaders(config.get(LmdbProvider.MAX_READERS))
                .setMaxDbs(1)
                .open(d.toFile(), 0644, flags.toArray(new EnvFlags[0]));
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
        if (!readOnly && !noLock) {
          env.readerCheck(); // frees slots left by dead processes
        }
        db =
            readOnly ? env.openDbi((byte[]) null) : env.openDbi((byte[]) null, DbiFlags.MDB_CREATE);
        if (dir.isNew()) {
          env.sync(true); // the meta pages LMDB wrote at creation, durable before the identity
        }
      } catch (RuntimeException e) {
        throw Errors.translate(where, data, e);
      }
      if (dir.isNew()) {
        dir.created();
      }
      if (pageSize == 0) {
        pageSize = env.stat().pageSize;
      }
      MapBounds bounds = new MapBounds(data);
      bounds.mapped(env.info().mapSize);
      if (!framed && looksFramed(env, db, bounds)) {
        // A framed store whose identity file was lost (then adopted as format 1): read it framed,
        // or every value would come back with its checksum in front.
        framed = true;
      }
      if (explicit && wanted != framed) {
        throw new IllegalArgumentException(
            where
                + ": option checksums="
                + wanted
                + " conflicts with the store, which has format "
                + (framed ? FORMAT_FRAMED : FORMAT_RAW)
                + (framed
                    ? " (every value carries a checksum)"
                    : " (values stored raw, without checksums)")
                + "; the store's format cannot change in place: omit the option, or copy the"
                + " store to a new one with: kv4j copy --from lmdb:"
                + d
                + " --to lmdb:<new directory>?checksums="
                + wanted);
      }
      Set<Feature> features = EnumSet.copyOf(LmdbProvider.FEATURES);
      if (!framed) {
        features.remove(Feature.CHECKSUMS);
      }
      StoreInfo info =
          new StoreInfo(
              LmdbProvider.ID,
              features,
              LmdbProvider.LIMITS,
              config.durability(),
              d.toString(),
              readOnly);
      if (!readOnly) {
        // An adopted store's identity, once LMDB has opened and kv4j checked its files.
        dir.created(framed ? FORMAT_FRAMED : FORMAT_RAW);
      }
      LmdbStore store = new LmdbStore(info, dir, env, db, config, framed, pageSize, noLock, bounds);
      env = null;
      claimed = null;
      ok = true;
      return store;
    } finally {
      if (!ok) {
        try {
          if (env != null) {
            env.close();
          }
        } catch (RuntimeException ignored) {
          // Closing is best effort after a failed open.
        } finally {
          if (claimed != null) {
            OPEN_HERE.remove(claimed);
          }
          if (dir != null) {
            dir.close();
          }
        }
      }
    }
  }

  /** Entries sampled by {@link #looksFramed}. */
  private static final int FRAME_SAMPLE = 8;

  /**
   * Whether the first entries of a store opened as format 1 (raw values) all carry valid frames:
   * the sign of a framed store whose identity file was lost. A raw value passes by chance with
   * probability 2^-32 (its first 4 bytes would have to equal the CRC32C of its key and the rest),
   * so up to {@value #FRAME_SAMPLE} passing entries and no failing one settle it.
   */
  private static boolean looksFramed(Env<byte[]> env, Dbi<byte[]> db, MapBounds bounds) {
    int passed = 0;
    try (Txn<byte[]> txn = env.txnRead();
        Cursor<byte[]> c = db.openCursor(txn)) {
      ArrayProxy.beginCursor(bounds, false);
      for (boolean found = c.first(); found && passed < FRAME_SAMPLE; found = c.next()) {
        byte[] v = c.val();
        if (v.length < ValueFrame.HEADER) {
          return false;
        }
        int recorded =
            (v[0] & 0xFF) | (v[1] & 0xFF) << 8 | (v[2] & 0xFF) << 16 | (v[3] & 0xFF) << 24;
        if (recorded != ValueFrame.checksum(c.key(), Arrays.copyOfRange(v, 4, v.length))) {
          return false;
        }
        passed++;
      }
    } finally {
      ArrayProxy.release();
    }
    return passed > 0;
  }

  /**
   * Checks an existing data file before LMDB maps it: both meta pages, and that the file holds
   * every page the current meta says is in use (LMDB maps the file and would crash the JVM with
   * SIGBUS on touching a page past its end). A file shorter than that is walked page by page: LMDB
   * leaves pages that a transaction allocated and freed again unwritten, so a healthy file may end
   * before its last, free, pages; a truncated one has pages in use past its end.
   */
  static MetaPages checkDataFile(Path data, String where, long walkLimit) {
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
      MetaPages m = MetaPages.read(ch, data, where);
      if (m.fileSize >= m.requiredSize() && m.requiredSize() <= walkLimit) {
        // LMDB follows damaged pages without checks, and some damage (a leaf node flagged as
        // holding duplicates, in a database without them) makes it dereference a null pointer.
        PageWalk.check(ch, data, where, m.current, m.fileSize);
      } else if (m.fileSize < m.requiredSize()) {
        try {
          PageWalk.check(ch, data, where, m.current, m.fileSize);
        } catch (StoreCorruptedException e) {
          throw new StoreCorruptedException(
              where
                  + ": "
                  + data
                  + " is "
                  + m.fileSize
                  + " bytes, but its meta page (transaction "
                  + m.current.txnId()
                  + ") records pages 0.."
                  + m.current.lastPage()
                  + " of "
                  + m.pageSize()
                  + " bytes, "
                  + m.requiredSize()
                  + " bytes: the file was truncated or damaged ("
                  + e.getMessage()
                  + ")",
              data,
              m.fileSize,
              e);
        }
      }
      return m;
    } catch (IOException e) {
      throw new StoreIOException(where + ": cannot read " + data + ": " + e, e);
    }
  }

  // ---- reads ----

  @Override
  protected byte[] doGet(byte[] key) {
    int token = gate.enter();
    Txn<byte[]> txn = null;
    try {
      txn = borrowReadTxn();
      return readIn(txn, key);
    } finally {
      try {
        if (txn != null) {
          returnReadTxn(txn);
        }
      } finally {
        gate.exit(token);
      }
    }
  }

  /**
   * Reads every key in one read transaction: one pooled transaction for the whole list instead of
   * one per key, and one point in time (no commit lands between two of the keys). LMDB has no batch
   * get; each key is a B-tree lookup in the map, checked as a get is.
   */
  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    int token = gate.enter();
    Txn<byte[]> txn = null;
    try {
      txn = borrowReadTxn();
      return readAllIn(txn, keys);
    } finally {
      try {
        if (txn != null) {
          returnReadTxn(txn);
        }
      } finally {
        gate.exit(token);
      }
    }
  }

  /**
   * Reads one key in an active read transaction (the caller holds it and a gate section or a
   * snapshot's share of the gate): bounds and frame checked, the value copied out.
   */
  byte[] readIn(Txn<byte[]> txn, byte[] key) {
    try {
      ArrayProxy.beginGet(bounds, framed, key);
      return db.get(txn, key);
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
    int token = gate.enter();
    Txn<byte[]> txn = null;
    boolean ok = false;
    try {
      txn = borrowReadTxn();
      LmdbSnapshot s = new LmdbSnapshot(this, txn, token, gate.cursorsOfCurrentThread());
      ok = true;
      return s;
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      if (!ok) {
        cursorReleased(txn, token);
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

  MapBounds bounds() {
    return bounds;
  }

  boolean framed() {
    return framed;
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
    byte[] stored = framed ? ValueFrame.encode(key, value) : value;
    submit(txn -> db.put(txn, key, stored), key.length + (long) stored.length);
  }

  @Override
  protected void doDelete(byte[] key) {
    submit(txn -> db.delete(txn, key), key.length);
  }

  /**
   * Compare-and-set as one more member of the group commit: the comparison runs inside the write
   * transaction that commits the write (LMDB has one writer at a time, so nothing can change the
   * key between the read and the commit), after the group members queued before it and before those
   * queued after it, and is acknowledged only once that transaction committed with the store's
   * durability. The current value is read with its frame checked, as a get does; a damaged value
   * fails the operation instead of comparing unequal.
   *
   * <p>The read passes no {@link MapBounds}: inside a write transaction the value may lie in a
   * dirty page LMDB copied to the heap, outside the map, which the bounds check would call damage.
   * Clean pages it reads are the pages this transaction's own put would walk; their records lie
   * within a page (plus at most 64 KiB), or on overflow pages LMDB checks against the last page in
   * use, all inside the file and its zero {@link #TAIL}.
   */
  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    byte[] stored = value == null ? null : framed ? ValueFrame.encode(key, value) : value;
    boolean[] swapped = new boolean[1];
    submit(
        txn -> {
          byte[] current;
          try {
            ArrayProxy.beginGet(null, framed, key);
            current = db.get(txn, key);
          } finally {
            ArrayProxy.release();
          }
          boolean match =
              expected == null
                  ? current == null
                  : current != null && Arrays.equals(current, expected);
          // Set on every run: a group that failed runs its members again, alone.
          swapped[0] = match;
          if (match) {
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
    submit(
        txn -> {
          for (int i = 0, n = batch.size(); i < n; i++) {
            try {
              if (batch.isDelete(i)) {
                db.delete(txn, batch.key(i));
              } else {
                byte[] key = batch.key(i);
                db.put(txn, key, framed ? ValueFrame.encode(key, batch.value(i)) : batch.value(i));
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
        commit(txn);
        outcome = DONE;
      } finally {
        txn.close(); // aborts unless committed
      }
    } catch (RuntimeException e) {
      // Nothing was committed; every member retries alone and reports its own error, except after
      // an error of the environment: then the store is failed and the retries say so.
      if (failsWrites(e)) {
        writeError(e);
      }
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
          if (writeFailure() != null) {
            throw failWrites("an earlier write", null); // a group member that retried alone
          }
          Txn<byte[]> txn = env.txnWrite();
          try {
            body.apply(txn);
            commit(txn);
            return;
          } finally {
            txn.close(); // aborts unless committed
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

  /** Commits a write transaction (caller holds the writer lock), then restores the file's tail. */
  private void commit(Txn<byte[]> txn) {
    Runnable hook = beforeCommit;
    if (hook != null) {
      hook.run();
    }
    txn.commit();
    try {
      keepTail(env.info().lastPageNumber);
    } catch (StoreIOException e) {
      // The commit is durable and acknowledged; the store is failed for the writes after it.
    }
  }

  /**
   * What a failed write transaction throws, under the one failure policy ({@link
   * #failWrites(String, Throwable)}): an error of the environment (an errno from LMDB's writes or
   * fsync: ENOSPC, EIO, EFBIG; MDB_PANIC after a failed meta page write) fails the store's writes
   * until it is reopened; so does damage met while writing, which a write could spread. Misuse and
   * limits the caller can act on (a value LMDB refuses, a transaction with too many dirty pages, no
   * reader slot) are thrown as they are and leave the store writable.
   */
  private RuntimeException writeError(RuntimeException e) {
    RuntimeException t = Errors.translate(info().describe(), dataFile, e);
    if (!failsWrites(e)) {
      return t;
    }
    if (t instanceof StoreCorruptedException) {
      failWrites("a write found " + dataFile + " damaged", t);
      return t;
    }
    return failWrites("commit to " + dataFile, e);
  }

  /** Whether a write transaction's exception is one the failure policy applies to. */
  private static boolean failsWrites(RuntimeException e) {
    return e instanceof LmdbNativeException
        && !(e instanceof Env.MapFullException
            || e instanceof Dbi.BadValueSizeException
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
                    failWrites(
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
          info().describe()
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

  /**
   * Copies the environment with {@code mdb_env_copy2(MDB_CP_COMPACT)}: LMDB walks the tree of one
   * read transaction and writes its pages renumbered, without free pages, into {@code
   * target/data.mdb}, while writers go on (a compacting copy does not take the writer mutex); it
   * works on read-only stores too. The copy's meta page records exactly the pages written, so it
   * passes the open check ({@link #checkDataFile}). Then the data file is synced, and the identity
   * file copied beside it, so the copy opens as the same engine and format. The copy runs inside a
   * gate section: the map is not remapped under it (a write needing growth waits for it up to
   * {@code map-growth-timeout}) and the store is not closed under it.
   */
  @Override
  protected void doBackup(Path target) throws IOException {
    int token = gate.enter();
    try {
      env.copy(target.toFile(), CopyFlags.MDB_CP_COMPACT);
    } catch (RuntimeException e) {
      throw Errors.translate(info().describe() + ": backup to " + target, dataFile, e);
    } finally {
      gate.exit(token);
    }
    try (FileChannel ch = FileChannel.open(target.resolve(DATA_FILE), StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Path identity = directory.resolve(StoreDirectory.IDENTITY_FILE);
    if (Files.exists(identity)) {
      // A read-only store made before identities has none: the copy is then adopted when opened,
      // as the store itself would be.
      Path copied = target.resolve(StoreDirectory.IDENTITY_FILE);
      Files.copy(identity, copied);
      try (FileChannel ch = FileChannel.open(copied, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
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
      if (e instanceof LmdbNativeException) {
        throw failWrites("fsync of " + dataFile, e);
      }
      throw Errors.translate(info().describe(), dataFile, e);
    } finally {
      gate.exit(token);
    }
  }

  /**
   * Checks what a scan does not: both meta pages, the file's length against the last page in use,
   * and the structure of every page of the snapshot (see {@link PageWalk}), read from the file
   * rather than the map; then walks every entry through LMDB over the same snapshot, checking key
   * order and, in a store with checksums, every value's frame.
   */
  @Override
  protected void doVerify() {
    String describe = info().describe();
    int token = gate.enter();
    Txn<byte[]> txn = null;
    try {
      long entries = -1;
      for (int attempt = 0; entries < 0; attempt++) {
        if (txn != null) {
          returnReadTxn(txn);
          txn = null;
        }
        if (attempt == 100) {
          throw new StoreException(
              describe + ": " + dataFile + " changed under every attempt to verify it");
        }
        // Pin a snapshot with a read transaction (its pages are not reused while it lives), then
        // find the meta page that describes it; commits in between move it, so try again then.
        boolean locked = !info().readOnly();
        if (locked) {
          writerLock.lock();
        }
        MetaPages m;
        try (FileChannel ch = FileChannel.open(dataFile, StandardOpenOption.READ)) {
          try {
            txn = borrowReadTxn();
            m = MetaPages.read(ch, dataFile, describe);
          } finally {
            if (locked) {
              writerLock.unlock();
            }
          }
          long id = txn.getId();
          MetaPages.Meta snap =
              m.current.txnId() == id ? m.current : m.other.txnId() == id ? m.other : null;
          if (snap != null) {
            entries = PageWalk.check(ch, dataFile, describe, snap, ch.size());
          }
        } catch (IOException e) {
          throw new StoreIOException(describe + ": cannot read " + dataFile + ": " + e, e);
        }
      }
      long seen = 0;
      try (Cursor<byte[]> c = db.openCursor(txn)) {
        ArrayProxy.beginCursor(bounds, framed);
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
      }
      if (seen != entries) {
        throw new StoreCorruptedException(
            describe
                + ": "
                + dataFile
                + ": a walk through LMDB met "
                + seen
                + " entries, the pages hold "
                + entries,
            dataFile,
            -1);
      }
    } catch (RuntimeException e) {
      throw Errors.translate(describe, dataFile, e);
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
      OPEN_HERE.remove(directory);
      closeTail();
      storeDir.close();
    }
  }

  private void closeTail() {
    if (tailFile != null) {
      try {
        tailFile.close();
      } catch (IOException ignored) {
        // Nothing was written through it that a close could lose.
      }
    }
  }

  /** For tests: runs {@code hook} inside every write transaction just before its commit. */
  void beforeCommit(Runnable hook) {
    this.beforeCommit = hook;
  }

  private static long roundUp(long bytes) {
    long unit = 1L << 16; // a multiple of every OS page size LMDB runs on
    return (bytes + unit - 1) / unit * unit;
  }
}
