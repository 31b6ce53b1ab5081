package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.CallGate;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Status;
import org.rocksdb.WriteOptions;

/**
 * A RocksDB database in a directory the store owns.
 *
 * <p>Native safety: every call into RocksDB runs inside {@link #gate}; {@link #doClose()} closes
 * the gate, which waits for calls in flight, and no call starts on freed handles afterwards (the
 * gate refuses it and it throws {@link StoreClosedException}). The gate, unlike the read side of a
 * read-write lock, lets gets on different cores proceed without contending for one cache line.
 * Cursors are registered in {@link #liveCursors} while they hold native objects; close frees any
 * still registered (one created concurrently with close) before the database.
 *
 * <p>Close order: running manual compactions are cancelled (their options stay alive until their
 * own call returns), then iterators (with their read options and bound slices), the shared read and
 * write options, the database, then {@link NativeOptions} (options, then block cache and filter).
 */
final class RocksDbStore extends AbstractStore {
  private static final String CURRENT = "CURRENT";

  /** Files RocksDB writes while creating a database, before {@code CURRENT}; none holds data. */
  private static final Pattern CREATION_ARTIFACT =
      Pattern.compile(
          "LOCK|IDENTITY|LOG|LOG\\.old\\.\\d+|MANIFEST-\\d+|OPTIONS-\\d+(\\.dbtmp)?|\\d+\\.dbtmp");

  private final Path dir;
  private final DirectoryLock dirLock;
  private final NativeOptions nativeOptions;
  private final RocksDB db;
  private final ReadOptions readOptions;
  private final WriteOptions writeOptions;
  private final CallGate gate = new CallGate();
  private final Set<RocksDbCursor> liveCursors = ConcurrentHashMap.newKeySet();

  /** Options of the manual compactions running now; guarded by itself (close cancels them). */
  private final Set<CompactRangeOptions> compactions = new HashSet<>();

  private RocksDbStore(
      StoreInfo info,
      Path dir,
      DirectoryLock dirLock,
      NativeOptions nativeOptions,
      RocksDB db,
      ReadOptions readOptions,
      WriteOptions writeOptions) {
    super(info);
    this.dir = dir;
    this.dirLock = dirLock;
    this.nativeOptions = nativeOptions;
    this.db = db;
    this.readOptions = readOptions;
    this.writeOptions = writeOptions;
  }

  static RocksDbStore open(StoreConfig config) {
    Path path = config.path();
    if (path == null) {
      throw new IllegalArgumentException(
          "engine '" + RocksDbProvider.ID + "' needs a path: the directory the store lives in");
    }
    boolean readOnly = config.readOnly();
    // Options first: a bad option string fails before anything touches the disk.
    NativeOptions opts = NativeOptions.build(config);
    DirectoryLock lock;
    try {
      prepareDirectory(path, config.createIfMissing() && !readOnly, readOnly);
      lock = DirectoryLock.acquire(path, RocksDbProvider.ID);
    } catch (RuntimeException e) {
      opts.close();
      throw e;
    }
    Path dir = lock.directory();
    RocksDB db = null;
    ReadOptions ro = null;
    WriteOptions wo = null;
    boolean ok = false;
    try {
      boolean exists = checkContents(dir);
      if (!exists && (readOnly || !config.createIfMissing())) {
        throw new StoreIOException(
            "engine '"
                + RocksDbProvider.ID
                + "': directory "
                + dir
                + " holds no store"
                + (readOnly ? " to open read-only" : " and create-if-missing is false"),
            (Throwable) null);
      }
      opts.options.setCreateIfMissing(!exists);
      try {
        db =
            readOnly
                ? RocksDB.openReadOnly(opts.options, dir.toString())
                : RocksDB.open(opts.options, dir.toString());
      } catch (RocksDBException e) {
        throw translateOpen(dir, exists, e);
      }
      ro = new ReadOptions();
      wo = new WriteOptions().setSync(config.durability() == Durability.SYNC);
      StoreInfo info =
          new StoreInfo(
              RocksDbProvider.ID,
              RocksDbProvider.FEATURES,
              RocksDbProvider.LIMITS,
              config.durability(),
              dir.toString(),
              readOnly);
      RocksDbStore store = new RocksDbStore(info, dir, lock, opts, db, ro, wo);
      ok = true;
      return store;
    } finally {
      if (!ok) {
        if (ro != null) {
          ro.close();
        }
        if (wo != null) {
          wo.close();
        }
        if (db != null) {
          db.close();
        }
        if (opts != null) {
          opts.close();
        }
        lock.close();
      }
    }
  }

  /** Creates the directory if allowed; fails clearly when it is missing or not a directory. */
  private static void prepareDirectory(Path path, boolean create, boolean readOnly) {
    if (Files.isDirectory(path)) {
      return;
    }
    if (Files.exists(path, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(path)) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': " + path + " is not a directory", (Throwable) null);
    }
    if (!create) {
      throw new StoreIOException(
          "engine '"
              + RocksDbProvider.ID
              + "': store directory "
              + path
              + " does not exist"
              + (readOnly
                  ? " (read-only stores are never created)"
                  : " and create-if-missing is false"),
          (Throwable) null);
    }
    try {
      Files.createDirectories(path);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': cannot create store directory " + path, e);
    }
  }

  /**
   * Whether the directory holds a RocksDB database. An empty directory (apart from the lock file)
   * holds none. So does one left by a creation that was interrupted before RocksDB wrote {@code
   * CURRENT}: only files written before it (info log, {@code LOCK}, {@code IDENTITY}, manifest,
   * options, temporaries), none of which can hold user data, since no write was acknowledged yet.
   * Any other file without {@code CURRENT} is foreign or damaged data and is refused rather than
   * treated as empty.
   */
  private static boolean checkContents(Path dir) {
    if (Files.isRegularFile(dir.resolve(CURRENT))) {
      return true;
    }
    List<String> foreign = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.map(p -> p.getFileName().toString())
          .filter(
              n -> !n.equals(DirectoryLock.FILE_NAME) && !CREATION_ARTIFACT.matcher(n).matches())
          .sorted()
          .limit(5)
          .forEach(foreign::add);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': cannot list store directory " + dir, e);
    }
    if (!foreign.isEmpty()) {
      throw new StoreCorruptedException(
          "engine '"
              + RocksDbProvider.ID
              + "': directory "
              + dir
              + " is not empty but has no RocksDB CURRENT file (found "
              + String.join(", ", foreign)
              + (foreign.size() == 5 ? ", ..." : "")
              + "): foreign or damaged data, refusing to open it as a new store",
          dir,
          -1);
    }
    return false;
  }

  // ---------------------------------------------------------------- guarded native calls

  /**
   * Enters a native call: counts it in the gate, or throws if the store is closed.
   *
   * @return the token for {@code gate.exit}
   */
  private int enter() {
    int token = gate.enter();
    if (token < 0) {
      throw new StoreClosedException(info().describe() + " is closed");
    }
    return token;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    int l = enter();
    try {
      // The allocating overload copies the pinned value once, straight into an exact-size array;
      // the buffer overloads would need a second copy to hand out a fresh array.
      return db.get(readOptions, key);
    } catch (RocksDBException e) {
      throw translate(dir, "get", e);
    } finally {
      gate.exit(l);
    }
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    int l = enter();
    try {
      db.put(writeOptions, key, value);
    } catch (RocksDBException e) {
      throw translate(dir, "put", e);
    } finally {
      gate.exit(l);
    }
  }

  @Override
  protected void doDelete(byte[] key) {
    int l = enter();
    try {
      db.delete(writeOptions, key);
    } catch (RocksDBException e) {
      throw translate(dir, "delete", e);
    } finally {
      gate.exit(l);
    }
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    // The native batch is independent of the database: build it before entering the gate.
    try (org.rocksdb.WriteBatch wb = new org.rocksdb.WriteBatch()) {
      try {
        for (int i = 0, n = batch.size(); i < n; i++) {
          if (batch.isDelete(i)) {
            wb.delete(batch.key(i));
          } else {
            wb.put(batch.key(i), batch.value(i));
          }
        }
      } catch (RocksDBException e) {
        throw translate(dir, "write batch", e);
      }
      int l = enter();
      try {
        db.write(writeOptions, wb);
      } catch (RocksDBException e) {
        throw translate(dir, "write batch", e);
      } finally {
        gate.exit(l);
      }
    }
  }

  @Override
  protected void doSync() {
    if (info().readOnly()) {
      return;
    }
    int l = enter();
    try {
      db.flushWal(true);
    } catch (RocksDBException e) {
      throw translate(dir, "sync", e);
    } finally {
      gate.exit(l);
    }
  }

  /**
   * One manual compaction of the whole key space of the default column family, bottommost level
   * included ({@code kForceOptimized}), so overwritten values and deletion markers are dropped
   * everywhere. Runs inside the gate like every native call; {@link #doClose()} cancels it through
   * its {@link CompactRangeOptions} before taking the write side, so close does not wait for a long
   * compaction to finish.
   */
  @Override
  protected void doCompact() {
    // setCanceled(false) now, not only at close: RocksJava wires the flag into the options on the
    // first call, and RocksDB reads the pointer when the compaction starts.
    CompactRangeOptions options =
        new CompactRangeOptions()
            .setBottommostLevelCompaction(
                CompactRangeOptions.BottommostLevelCompaction.kForceOptimized)
            .setCanceled(false);
    synchronized (compactions) {
      compactions.add(options);
    }
    try {
      // close() marks the store closed before it cancels: registered after its cancel loop means
      // closed is visible here, so no compaction starts unseen by close.
      checkOpen();
      int l = enter();
      try {
        db.compactRange(null, null, null, options); // null: the default column family, all keys
      } catch (RocksDBException e) {
        if (isClosed()) { // cancelled by close()
          throw new StoreClosedException(
              info().describe() + " was closed while compact() ran; the compaction was cancelled");
        }
        throw translate(dir, "compact", e);
      } finally {
        gate.exit(l);
      }
    } finally {
      synchronized (compactions) {
        compactions.remove(options);
      }
      options.close();
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    if (range.isEmpty()) {
      return new RocksDbCursor(this, range, null, null, null, null);
    }
    int l = enter();
    ReadOptions ro = null;
    Slice lower = null;
    Slice upper = null;
    RocksIterator it = null;
    boolean ok = false;
    try {
      // An iterator is a point-in-time view by itself; no explicit snapshot is needed.
      ro = new ReadOptions();
      byte[] lo = range.lower();
      if (lo != null) {
        // RocksDB's lower bound is inclusive; the smallest key above k is k followed by 0x00.
        lower = new Slice(range.lowerInclusive() ? lo : successor(lo));
        ro.setIterateLowerBound(lower);
      }
      byte[] hi = range.upper();
      if (hi != null) {
        // RocksDB's upper bound is exclusive; to include k, bound at k followed by 0x00.
        upper = new Slice(range.upperInclusive() ? successor(hi) : hi);
        ro.setIterateUpperBound(upper);
      }
      it = db.newIterator(ro);
      RocksDbCursor c = new RocksDbCursor(this, range, ro, lower, upper, it);
      liveCursors.add(c);
      ok = true;
      return c;
    } finally {
      if (!ok) {
        RocksDbCursor.free(it, ro, lower, upper);
      }
      gate.exit(l);
    }
  }

  private static byte[] successor(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** One step of a cursor, inside the gate. */
  Entry step(RocksDbCursor c, RocksIterator it, boolean first, boolean reverse) {
    int l = enter();
    try {
      if (c.isFreed()) {
        throw new StoreClosedException("cursor's store is closed (" + info().describe() + ")");
      }
      if (first) {
        if (reverse) {
          it.seekToLast();
        } else {
          it.seekToFirst();
        }
      } else if (reverse) {
        it.prev();
      } else {
        it.next();
      }
      if (!it.isValid()) {
        it.status();
        return null;
      }
      return new Entry(it.key(), it.value());
    } catch (RocksDBException e) {
      throw translate(dir, "scan", e);
    } finally {
      gate.exit(l);
    }
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
    Map<String, Number> figures = new LinkedHashMap<>();
    long keys;
    int l = enter();
    try {
      keys = db.getLongProperty("rocksdb.estimate-num-keys");
      figures.put("sst-bytes", db.getLongProperty("rocksdb.live-sst-files-size"));
      figures.put("sst-bytes-all-versions", db.getLongProperty("rocksdb.total-sst-files-size"));
      figures.put("memtable-bytes", db.getLongProperty("rocksdb.cur-size-all-mem-tables"));
      figures.put("level0-files", (long) number(db.getProperty("rocksdb.num-files-at-level0")));
      figures.put("compaction-pending", db.getLongProperty("rocksdb.compaction-pending"));
      figures.put(
          "pending-compaction-bytes",
          db.getLongProperty("rocksdb.estimate-pending-compaction-bytes"));
      figures.put("running-compactions", db.getLongProperty("rocksdb.num-running-compactions"));
      figures.put("running-flushes", db.getLongProperty("rocksdb.num-running-flushes"));
      addCompactionTotals(figures);
      figures.put("block-cache-usage-bytes", blockCacheUsage());
      figures.put("table-readers-bytes", db.getLongProperty("rocksdb.estimate-table-readers-mem"));
      figures.put("live-snapshots", db.getLongProperty("rocksdb.num-snapshots"));
      figures.put("open-cursors", liveCursors.size());
    } catch (RocksDBException e) {
      throw translate(dir, "stats", e);
    } finally {
      gate.exit(l);
    }
    long[] disk = diskUsage();
    figures.put("wal-bytes", disk[1]);
    return new StoreStats(keys, false, disk[0], figures);
  }

  /**
   * Cumulative compaction figures since open, from the {@code rocksdb.cfstats} map property. As in
   * RocksDB's own report, level 0 counts memtable flushes: {@code compaction-write-bytes} and
   * {@code compaction-count} include them.
   */
  private void addCompactionTotals(Map<String, Number> figures) throws RocksDBException {
    Map<String, String> cf = db.getMapProperty("rocksdb.cfstats");
    double readGb = number(cf.get("compaction.Sum.ReadGB"));
    double writeGb = number(cf.get("compaction.Sum.WriteGB"));
    figures.put("compaction-read-bytes", (long) (readGb * (1L << 30)));
    figures.put("compaction-write-bytes", (long) (writeGb * (1L << 30)));
    figures.put("compaction-count", (long) number(cf.get("compaction.Sum.CompCount")));
    figures.put("write-amplification", number(cf.get("compaction.Sum.WriteAmp")));
    figures.put(
        "write-stall-count",
        (long) (number(cf.get("total-stops")) + number(cf.get("total-delays"))));
  }

  private static double number(String s) {
    if (s == null) {
      return 0;
    }
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private long blockCacheUsage() {
    try {
      return db.getLongProperty("rocksdb.block-cache-usage");
    } catch (RocksDBException e) {
      return 0; // no block cache configured
    }
  }

  /** Total bytes of the directory and bytes of write-ahead logs ({@code *.log}). */
  private long[] diskUsage() {
    long[] r = new long[2];
    try (Stream<Path> s = Files.walk(dir)) {
      s.forEach(
          p -> {
            try {
              if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                long size = Files.size(p);
                r[0] += size;
                if (p.getFileName().toString().endsWith(".log")) {
                  r[1] += size;
                }
              }
            } catch (IOException e) {
              // A file deleted by compaction while we walk: it no longer counts.
            }
          });
    } catch (IOException | UncheckedIOException e) {
      // A directory entry vanished mid-walk; report what was counted.
    }
    return r;
  }

  @Override
  protected void doClose() {
    synchronized (compactions) {
      for (CompactRangeOptions c : compactions) {
        c.setCanceled(true); // a running compactRange returns soon after; one not started at once
      }
    }
    RocksDBException failure = null;
    try {
      if (gate.isClosed()) {
        return;
      }
      gate.close(); // waits for the calls in flight; later ones throw StoreClosedException
      for (RocksDbCursor c : liveCursors) {
        c.freeNative();
      }
      liveCursors.clear();
      readOptions.close();
      writeOptions.close();
      try {
        db.closeE();
      } catch (RocksDBException e) {
        failure = e;
      }
      nativeOptions.close();
    } finally {
      dirLock.close();
    }
    if (failure != null) {
      throw translate(dir, "close", failure);
    }
  }

  /** The native objects this store owns, in the order close frees them, for lifecycle tests. */
  List<AutoCloseable> ownedNativeObjects() {
    List<AutoCloseable> out = new ArrayList<>(List.of(readOptions, writeOptions, db));
    out.addAll(nativeOptions.owned());
    return out;
  }

  /**
   * Open errors: a file that {@code CURRENT} or the manifest names but that is missing means the
   * store is damaged, not that the disk failed.
   */
  private static RuntimeException translateOpen(Path dir, boolean exists, RocksDBException e) {
    Status s = e.getStatus();
    String m = String.valueOf(e.getMessage());
    if (exists
        && s != null
        && s.getCode() == Status.Code.IOError
        && m.contains("No such file or directory")) {
      return new StoreCorruptedException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": open failed, a file the store refers to is missing: "
              + m,
          dir,
          -1,
          e);
    }
    return translate(dir, "open", e);
  }

  static RuntimeException translate(Path dir, String op, RocksDBException e) {
    Status s = e.getStatus();
    Status.Code code = s == null ? null : s.getCode();
    String msg =
        "engine '" + RocksDbProvider.ID + "' at " + dir + ": " + op + " failed: " + e.getMessage();
    if (code == Status.Code.Corruption) {
      return new StoreCorruptedException(msg, dir, -1, e);
    }
    if (code == Status.Code.ShutdownInProgress) {
      return new StoreClosedException(msg);
    }
    return new StoreIOException(msg, e);
  }
}
