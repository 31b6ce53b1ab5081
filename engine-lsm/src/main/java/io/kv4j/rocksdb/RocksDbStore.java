package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.CallGate;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;
import org.rocksdb.Status;
import org.rocksdb.WALRecoveryMode;
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
 * own call returns), then iterators (with their read options and bound slices), snapshots still
 * registered in {@link #liveSnapshots} (one whose release raced with close), the shared read and
 * write options, the database, then {@link NativeOptions} (options, then block cache and filter).
 * {@link AbstractStore#close()} closes the user's snapshots and cursors before {@link #doClose()},
 * so those normally free themselves through the open gate first.
 *
 * <p>Writes: every write takes the stripe lock of its key(s) in {@link KeyLocks}, which orders it
 * with conditional writes of the same key.
 */
final class RocksDbStore extends AbstractStore {
  private static final String CURRENT = "CURRENT";

  /** Files RocksDB writes while creating a database, before {@code CURRENT}; none holds data. */
  private static final Pattern CREATION_ARTIFACT =
      Pattern.compile(
          "LOCK|IDENTITY|LOG|LOG\\.old\\.\\d+|MANIFEST-\\d+|OPTIONS-\\d+(\\.dbtmp)?|\\d+\\.dbtmp");

  /** Every file RocksDB (and this engine) writes in a store directory. */
  private static final Pattern OWN_FILE =
      Pattern.compile(
          "CURRENT|IDENTITY|LOCK|LOG|LOG\\.old\\.\\d+|MANIFEST-\\d+|OPTIONS-\\d+(\\.dbtmp)?"
              + "|\\d+\\.(sst|log|blob|dbtmp)|archive|"
              + Pattern.quote(CleanClose.FILE_NAME)
              + "(\\.tmp)?");

  /**
   * The directory layout: format 1 is RocksDB's own files as rocksdbjni 11 writes them, plus the
   * clean-close record. {@code CURRENT} must exist in every created store: without it RocksDB would
   * take the directory for an empty one.
   */
  static final StoreDirectory.Layout LAYOUT =
      new StoreDirectory.Layout(
          RocksDbProvider.ID, 1, n -> OWN_FILE.matcher(n).matches(), Set.of(CURRENT));

  private final Path dir;
  private final StoreDirectory storeDir;
  private final NativeOptions nativeOptions;
  private final RocksDB db;
  private final ReadOptions readOptions;
  private final WriteOptions writeOptions;
  private final CallGate gate;
  private final Set<RocksDbCursor> liveCursors;
  private final Set<RocksDbSnapshot> liveSnapshots;
  private final KeyLocks keyLocks;
  private final Keyspaces keyspaces;

  /** The column family this object serves: the store's own keys, or its keyspace's. */
  private final Column column;

  /** The store: this, or the store a keyspace handle was opened on. */
  private final RocksDbStore store;

  /** Options of the manual compactions running now; guarded by itself (close cancels them). */
  private final Set<CompactRangeOptions> compactions;

  /** Whether close flushes the memtable first; false only through {@link #closeWithoutFlush()}. */
  private volatile boolean flushOnClose = true;

  private RocksDbStore(
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
    this.compactions = new HashSet<>();
    this.keyspaces = keyspaces;
    this.column = keyspaces.own();
    this.store = this;
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
  }

  /**
   * Opens a store: the directory through {@link StoreDirectory}, then checks that tell damage from
   * what a crash leaves (see {@link CleanClose} and {@link RecordLog}), then RocksDB. Nothing is
   * written, renamed or deleted before every check passed, and RocksDB is asked to create a
   * database only in a new directory.
   */
  static RocksDbStore open(StoreConfig config) {
    boolean readOnly = config.readOnly();
    // Options first: a bad option string fails before anything touches the disk.
    NativeOptions opts = NativeOptions.build(config);
    StoreDirectory sd = null;
    RocksDB db = null;
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    ReadOptions ro = null;
    WriteOptions wo = null;
    boolean ok = false;
    try {
      sd = StoreDirectory.open(config, LAYOUT);
      Path dir = sd.path();
      boolean create = sd.isNew() || interruptedCreation(dir, config);
      if (!create) {
        CleanClose.State clean = CleanClose.check(dir);
        if (clean != CleanClose.State.VERIFIED) {
          checkLogs(dir, opts.options.walRecoveryMode(), readOnly);
        }
      }
      opts.options.setCreateIfMissing(create);
      opts.split();
      List<ColumnFamilyDescriptor> families = families(opts, dir, create);
      db = openDb(opts, dir, readOnly, create, families, handles);
      if (!readOnly) {
        sd.created(); // a new store's, or an adopted one's once RocksDB has opened it
        try {
          CleanClose.remove(dir); // from here on a crash is possible again
        } catch (IOException e) {
          throw new StoreIOException(
              "engine '"
                  + RocksDbProvider.ID
                  + "' at "
                  + dir
                  + ": cannot remove "
                  + CleanClose.FILE_NAME
                  + ": "
                  + e,
              e);
        }
      }
      ro = new ReadOptions(); // verify_checksums is on by default: every block read is checked
      wo = new WriteOptions().setSync(config.durability() == Durability.SYNC);
      Set<Feature> features = EnumSet.copyOf(RocksDbProvider.FEATURES);
      if (!NativeOptions.checksums(config)) {
        features.remove(Feature.CHECKSUMS);
      }
      StoreInfo info =
          new StoreInfo(
              RocksDbProvider.ID,
              features,
              RocksDbProvider.LIMITS,
              config.durability(),
              dir.toString(),
              readOnly);
      Keyspaces keyspaces = new Keyspaces(families, handles, opts.cfOptions);
      RocksDbStore store = new RocksDbStore(info, sd, opts, db, ro, wo, keyspaces);
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
        for (ColumnFamilyHandle h : handles) {
          h.close();
        }
        if (db != null) {
          db.close();
        }
        opts.close();
        if (sd != null) {
          sd.close();
        }
      }
    }
  }

  /**
   * Whether an adopted directory (no identity file) without {@code CURRENT} is what an interrupted
   * creation leaves: only files RocksDB writes before {@code CURRENT} (info log, {@code LOCK},
   * {@code IDENTITY}, manifest, options, temporaries), none holding data since no write could have
   * been acknowledged; it is created anew. Anything else without {@code CURRENT} is refused.
   */
  private static boolean interruptedCreation(Path dir, StoreConfig config) {
    if (Files.isRegularFile(dir.resolve(CURRENT))) {
      return false;
    }
    List<String> data = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.map(p -> p.getFileName().toString())
          .filter(
              n ->
                  !n.equals(DirectoryLock.FILE_NAME)
                      && !n.equals(StoreDirectory.IDENTITY_FILE)
                      && !CREATION_ARTIFACT.matcher(n).matches())
          .sorted()
          .limit(5)
          .forEach(data::add);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': cannot list store directory " + dir, e);
    }
    if (!data.isEmpty()) {
      throw new StoreCorruptedException(
          "engine '"
              + RocksDbProvider.ID
              + "': directory "
              + dir
              + " holds RocksDB files but no CURRENT file (found "
              + String.join(", ", data)
              + (data.size() == 5 ? ", ..." : "")
              + "): damaged data, refusing to open it as a new store",
          dir.resolve(CURRENT),
          -1);
    }
    if (config.readOnly() || !config.createIfMissing()) {
      throw new StoreIOException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": no store there (only what an interrupted creation leaves"
              + (config.readOnly() ? "; read-only stores are never created)" : ")"),
          (Throwable) null);
    }
    return true;
  }

  /**
   * The checks for a store that was not closed cleanly (or is open elsewhere): {@code CURRENT}
   * names a manifest, and the MANIFEST and every WAL hold only valid records up to what a crash may
   * have torn at their ends ({@link RecordLog}). RocksDB checks record checksums itself, but skips
   * the rest of a 32 KiB block after an all-zero header without a report.
   */
  private static void checkLogs(Path dir, WALRecoveryMode mode, boolean readOnly) {
    String manifest = CleanClose.currentManifest(dir);
    if (manifest == null) {
      throw new StoreCorruptedException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": CURRENT is damaged: it does not name a MANIFEST file",
          dir.resolve(CURRENT),
          -1);
    }
    try {
      RecordLog.check(dir.resolve(manifest), false);
    } catch (NoSuchFileException e) {
      throw new StoreCorruptedException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": CURRENT names "
              + manifest
              + ", which is missing",
          dir.resolve(manifest),
          -1);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "' at " + dir + ": cannot read " + manifest, e);
    }
    if (mode == WALRecoveryMode.PointInTimeRecovery
        || mode == WALRecoveryMode.SkipAnyCorruptedRecords) {
      return; // the user chose to recover past bad records (rocksdb-options)
    }
    for (Path wal : walFiles(dir)) {
      try {
        RecordLog.check(wal, true);
      } catch (NoSuchFileException e) {
        // Deleted by a writer that has the store open: it was obsolete.
      } catch (IOException e) {
        throw new StoreIOException(
            "engine '" + RocksDbProvider.ID + "' at " + dir + ": cannot read " + wal, e);
      }
    }
  }

  /** The WAL files ({@code <number>.log}), oldest first. */
  private static List<Path> walFiles(Path dir) {
    List<Path> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.filter(p -> WAL.matcher(p.getFileName().toString()).matches()).forEach(out::add);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': cannot list store directory " + dir, e);
    }
    out.sort(
        (a, b) ->
            Long.compare(
                Long.parseLong(a.getFileName().toString().replace(".log", "")),
                Long.parseLong(b.getFileName().toString().replace(".log", ""))));
    return out;
  }

  private static final Pattern WAL = Pattern.compile("\\d{1,18}\\.log");

  /**
   * The column families to open, {@code default} first, each with the same column family options: a
   * new store has only {@code default}; an existing one every family its MANIFEST lists (RocksDB
   * opens a database only with all of them).
   */
  private static List<ColumnFamilyDescriptor> families(
      NativeOptions opts, Path dir, boolean create) {
    List<ColumnFamilyDescriptor> out = new ArrayList<>();
    out.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, opts.cfOptions));
    if (create) {
      return out;
    }
    List<byte[]> names;
    try {
      names = RocksDB.listColumnFamilies(opts.options, dir.toString());
    } catch (RocksDBException e) {
      throw translateOpen(dir, true, e);
    }
    for (byte[] n : names) {
      if (!Arrays.equals(n, RocksDB.DEFAULT_COLUMN_FAMILY)) {
        out.add(new ColumnFamilyDescriptor(n, opts.cfOptions));
      }
    }
    return out;
  }

  /**
   * Opens the database with its column families, their handles added to {@code handles} in the
   * order of {@code families}. A read-only open of a store that a writer has open may meet a file
   * the writer just made obsolete and deleted; it is retried twice before the error counts.
   */
  private static RocksDB openDb(
      NativeOptions opts,
      Path dir,
      boolean readOnly,
      boolean create,
      List<ColumnFamilyDescriptor> families,
      List<ColumnFamilyHandle> handles) {
    for (int attempt = 1; ; attempt++) {
      try {
        handles.clear();
        return readOnly
            ? RocksDB.openReadOnly(opts.dbOptions, dir.toString(), families, handles)
            : RocksDB.open(opts.dbOptions, dir.toString(), families, handles);
      } catch (RocksDBException e) {
        if (readOnly && attempt < 3 && isMissingFile(e)) {
          continue;
        }
        throw translateOpen(dir, !create, e);
      }
    }
  }

  private static boolean isMissingFile(RocksDBException e) {
    Status s = e.getStatus();
    return s != null
        && s.getCode() == Status.Code.IOError
        && String.valueOf(e.getMessage()).contains("No such file");
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
      throw translate(dir, "get", e);
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
      throw translate(dir, "get all", e);
    } finally {
      gate.exit(l);
    }
  }

  /*
   * Writes take the stripe lock of their key (KeyLocks), so that a conditional write's read and
   * write are never split by another write of the same key: one uncontended lock on the plain
   * write path. The lock is taken outside the gate, so close never waits for a thread that is only
   * queued for a lock.
   */

  @Override
  protected void doPut(byte[] key, byte[] value) {
    ReentrantLock lock = keyLocks.of(column.salt, key);
    lock.lock();
    try {
      int l = enter();
      try {
        db.put(column.handle, writeOptions, key, value);
      } catch (RocksDBException e) {
        throw writeError("put", e);
      } finally {
        gate.exit(l);
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  protected void doDelete(byte[] key) {
    ReentrantLock lock = keyLocks.of(column.salt, key);
    lock.lock();
    try {
      int l = enter();
      try {
        db.delete(column.handle, writeOptions, key);
      } catch (RocksDBException e) {
        throw writeError("delete", e);
      } finally {
        gate.exit(l);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * One native batch, also across keyspaces: each operation goes to its keyspace's column family
   * (created first if the batch names an absent keyspace), and RocksDB applies the batch as one WAL
   * record, atomically across column families and crashes. If a drop retired one of its keyspaces
   * meanwhile, the batch is built again against the keyspace as it is now.
   */
  @Override
  protected void doWrite(WriteBatch batch) {
    while (true) {
      Column[] columns = batch.namesKeyspaces() ? columns(batch) : null;
      // The native batch is independent of the database: build it before taking any lock.
      try (org.rocksdb.WriteBatch wb = nativeBatch(batch, column, columns, dir)) {
        long[] stripes = keyLocks.lock(batch, column.salt, columns);
        try {
          int l = enter();
          try {
            if (columns != null && anyDropped(columns)) {
              continue;
            }
            db.write(writeOptions, wb);
            return;
          } catch (RocksDBException e) {
            throw writeError("write batch", e);
          } finally {
            gate.exit(l);
          }
        } finally {
          keyLocks.unlock(stripes);
        }
      }
    }
  }

  /** The column of every operation of a batch that names keyspaces, creating absent keyspaces. */
  private Column[] columns(WriteBatch batch) {
    Column[] out = new Column[batch.size()];
    Map<String, Column> seen = new HashMap<>();
    for (int i = 0; i < out.length; i++) {
      String name = keyspaceOf(batch, i);
      out[i] =
          name == null
              ? keyspaces.own()
              : name.equals(column.keyspace)
                  ? column
                  : seen.computeIfAbsent(name, this::liveColumn);
    }
    return out;
  }

  private static boolean anyDropped(Column[] columns) {
    for (Column c : columns) {
      if (c.dropped) {
        return true;
      }
    }
    return false;
  }

  /** A keyspace's column as it is now, created if absent, waiting out a drop of the same name. */
  private Column liveColumn(String name) {
    for (int round = 0; ; round++) {
      Column c = keyspaces.get(name);
      if (c != null && !c.dropped) {
        return c;
      }
      int l = gate.enter();
      if (l < 0) {
        throw new StoreClosedException(info().describe() + " is closed");
      }
      try {
        c = keyspaces.create(db, name);
      } catch (RocksDBException e) {
        throw writeError("create keyspace '" + name + "'", e);
      } finally {
        gate.exit(l);
      }
      if (c != null) {
        return c;
      }
      LockSupport.parkNanos(Math.min(1_000_000L, 10_000L << Math.min(round, 6)));
    }
  }

  /**
   * Compare and write under the key's stripe lock, which every write of the key takes ({@link
   * KeyLocks}): the current value is read with the store's read options (block checksums verified,
   * as by {@code get}), compared by content, and the write goes through the store's write options
   * (the same durability as {@code put}). This process is the store's only writer (the directory
   * lock), so nothing outside these locks can write the key in between.
   */
  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    ReentrantLock lock = keyLocks.of(column.salt, key);
    lock.lock();
    try {
      int l = enter();
      try {
        byte[] current;
        try {
          current = db.get(column.handle, readOptions, key);
        } catch (RocksDBException e) {
          throw translate(dir, "conditional write (read)", e);
        }
        if (expected == null ? current != null : !Arrays.equals(current, expected)) {
          return false;
        }
        try {
          if (value == null) {
            db.delete(column.handle, writeOptions, key);
          } else {
            db.put(column.handle, writeOptions, key, value);
          }
        } catch (RocksDBException e) {
          throw writeError("conditional write", e);
        }
        return true;
      } finally {
        gate.exit(l);
      }
    } finally {
      lock.unlock();
    }
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
      snap = db.getSnapshot();
      ro = new ReadOptions().setSnapshot(snap); // verify_checksums stays on, as for get
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

  /**
   * A checkpoint ({@code Checkpoint::CreateCheckpoint}): RocksDB flushes the memtable, pauses file
   * deletions, hard-links the live table files (copies them across file systems) and copies the
   * MANIFEST, {@code CURRENT}, the options file and the live WALs up to their size at that moment,
   * so the copy holds a prefix of the acknowledged writes and opens like a store after a crash (its
   * WAL tail is replayed). RocksDB wants a directory that does not exist yet, so it writes into a
   * child of {@code target} and the files are moved up. The identity file is copied too; the
   * clean-close record is not: it describes this directory's MANIFEST and WALs, not the
   * checkpoint's, and without it the copy's first open checks its logs as after a crash.
   *
   * <p>A read-only database cannot flush, and its checkpoint copies the table files and MANIFEST of
   * its view but not the WAL records it replayed into its memtable (checked with rocksdbjni 11.8.1:
   * a write only in the WAL was missing from the copy, without an error). So a read-only store
   * backs up only while its memtables are empty — its view is then exactly the table files the
   * checkpoint links — and otherwise throws {@link StoreIOException} before writing anything.
   */
  @Override
  protected void doBackup(Path target) throws IOException {
    Path staging = target.resolve("checkpoint");
    int l = enter();
    try (Checkpoint checkpoint = Checkpoint.create(db)) {
      if (info().readOnly()) {
        long inMemory = 0;
        for (Column c : keyspaces.all()) {
          inMemory +=
              db.getLongProperty(c.handle, "rocksdb.num-entries-active-mem-table")
                  + db.getLongProperty(c.handle, "rocksdb.num-entries-imm-mem-tables");
        }
        if (inMemory > 0) {
          throw new StoreIOException(
              info().describe()
                  + ": cannot back up a read-only store whose view holds "
                  + inMemory
                  + " writes replayed from the WAL (a writer has the store open or did not close"
                  + " it cleanly): RocksDB's checkpoint of a read-only database leaves them out."
                  + " Back up through the writer, or open the store read-write once and close it",
              (Throwable) null);
        }
      }
      checkpoint.createCheckpoint(staging.toString());
    } catch (RocksDBException e) {
      throw translate(dir, "backup (checkpoint into " + staging + ")", e);
    } finally {
      gate.exit(l);
    }
    List<Path> files;
    try (Stream<Path> s = Files.list(staging)) {
      files = s.toList();
    }
    for (Path f : files) {
      Files.move(f, target.resolve(f.getFileName().toString()), StandardCopyOption.ATOMIC_MOVE);
    }
    Files.delete(staging);
    Path identity = dir.resolve(StoreDirectory.IDENTITY_FILE);
    if (Files.exists(identity)) {
      // A read-only open of a store made before identity files has none; its copy is adopted.
      StoreDirectory.writeAtomically(
          target.resolve(StoreDirectory.IDENTITY_FILE), Files.readAllBytes(identity));
    }
  }

  /**
   * The native batch for a kv4j batch, its buffer reserved at the exact size it ends at ({@link
   * #nativeBatchBytes}). Without the reservation RocksDB grows the buffer by doubling as records
   * are appended: about 17 reallocations for 1,000 values of 1 KiB, each copying all records so
   * far, so every byte would be copied once more than it must (and freshly allocated pages touched
   * again). Per operation there is one JNI call, which copies key and value out of the Java arrays
   * once, and one append to the reserved buffer; no Java object is allocated.
   *
   * @param batch the kv4j batch
   * @param dir the store directory, for error messages
   * @return the native batch; the caller closes it
   */
  static org.rocksdb.WriteBatch nativeBatch(WriteBatch batch, Path dir) {
    return nativeBatch(batch, null, null, dir);
  }

  /**
   * The native batch for a kv4j batch written to the column {@code own} (null: the store's own
   * keys), each operation {@code i} going to {@code columns[i]} if {@code columns} is not null.
   */
  static org.rocksdb.WriteBatch nativeBatch(
      WriteBatch batch, Column own, Column[] columns, Path dir) {
    long bytes = nativeBatchBytes(batch, own, columns);
    org.rocksdb.WriteBatch wb =
        new org.rocksdb.WriteBatch(bytes > Integer.MAX_VALUE ? 0 : (int) bytes);
    boolean ok = false;
    try {
      for (int i = 0, n = batch.size(); i < n; i++) {
        Column c = columns == null ? own : columns[i];
        if (c == null || c.id == 0) { // the default column family: records without an id
          if (batch.isDelete(i)) {
            wb.delete(batch.key(i));
          } else {
            wb.put(batch.key(i), batch.value(i));
          }
        } else if (batch.isDelete(i)) {
          wb.delete(c.handle, batch.key(i));
        } else {
          wb.put(c.handle, batch.key(i), batch.value(i));
        }
      }
      ok = true;
      return wb;
    } catch (RocksDBException e) {
      throw translate(dir, "write batch", e);
    } finally {
      if (!ok) {
        wb.close();
      }
    }
  }

  /**
   * The size of RocksDB's serialized form of a batch (its {@code WriteBatch} rep, as it also goes
   * into the WAL record), without per-key protection bytes. A record for another column family than
   * the default one has another type byte (0x05 put, 0x04 delete) followed by the family's id
   * (varint32):
   *
   * <pre>
   * offset  width        field
   * 0       8            sequence number (fixed64, filled in at write)
   * 8       4            count of records (fixed32)
   * 12      ...          records, each:
   *         1            type: 0x01 put (kTypeValue), 0x00 delete (kTypeDeletion)
   *         1..5         key length (varint32)
   *         n            key
   *         1..5         value length (varint32), puts only
   *         m            value, puts only
   * </pre>
   */
  static long nativeBatchBytes(WriteBatch batch) {
    return nativeBatchBytes(batch, null, null);
  }

  /** {@link #nativeBatchBytes(WriteBatch)} for a batch whose records go to the given columns. */
  static long nativeBatchBytes(WriteBatch batch, Column own, Column[] columns) {
    long bytes = 12;
    for (int i = 0, n = batch.size(); i < n; i++) {
      Column c = columns == null ? own : columns[i];
      int k = batch.key(i).length;
      bytes += 1 + varintLength(k) + k;
      if (c != null && c.id != 0) {
        bytes += varintLength(c.id);
      }
      if (!batch.isDelete(i)) {
        int v = batch.value(i).length;
        bytes += varintLength(v) + v;
      }
    }
    return bytes;
  }

  private static int varintLength(int n) {
    // 7 bits per byte; n is never negative (an array length).
    return n < (1 << 7) ? 1 : n < (1 << 14) ? 2 : n < (1 << 21) ? 3 : n < (1 << 28) ? 4 : 5;
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
      throw writeError("sync", e);
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
        db.compactRange(column.handle, null, null, options); // all keys of this column family
      } catch (RocksDBException e) {
        if (isClosed()) { // cancelled by close()
          throw new StoreClosedException(
              info().describe() + " was closed while compact() ran; the compaction was cancelled");
        }
        throw writeError("compact", e);
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
    return scan(range, null);
  }

  /**
   * A cursor over a range, as of a snapshot or, with {@code snapshot} null, as of now (an iterator
   * is a point-in-time view by itself).
   */
  AbstractCursor scan(KeyRange range, Snapshot snapshot) {
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
      ro = new ReadOptions();
      if (snapshot != null) {
        ro.setSnapshot(snapshot);
      }
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
      it = db.newIterator(column.handle, ro);
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
      keys = db.getLongProperty(column.handle, "rocksdb.estimate-num-keys");
      figures.put("sst-bytes", db.getLongProperty(column.handle, "rocksdb.live-sst-files-size"));
      figures.put(
          "sst-bytes-all-versions",
          db.getLongProperty(column.handle, "rocksdb.total-sst-files-size"));
      figures.put(
          "memtable-bytes", db.getLongProperty(column.handle, "rocksdb.cur-size-all-mem-tables"));
      figures.put(
          "level0-files",
          (long) number(db.getProperty(column.handle, "rocksdb.num-files-at-level0")));
      figures.put(
          "compaction-pending", db.getLongProperty(column.handle, "rocksdb.compaction-pending"));
      figures.put(
          "pending-compaction-bytes",
          db.getLongProperty(column.handle, "rocksdb.estimate-pending-compaction-bytes"));
      figures.put(
          "running-compactions",
          db.getLongProperty(column.handle, "rocksdb.num-running-compactions"));
      figures.put(
          "running-flushes", db.getLongProperty(column.handle, "rocksdb.num-running-flushes"));
      figures.put(
          "flush-pending", db.getLongProperty(column.handle, "rocksdb.mem-table-flush-pending"));
      addCompactionTotals(figures);
      figures.put("block-cache-usage-bytes", blockCacheUsage());
      figures.put(
          "table-readers-bytes",
          db.getLongProperty(column.handle, "rocksdb.estimate-table-readers-mem"));
      figures.put("live-snapshots", db.getLongProperty(column.handle, "rocksdb.num-snapshots"));
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
    Map<String, String> cf = db.getMapProperty(column.handle, "rocksdb.cfstats");
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
      return db.getLongProperty(column.handle, "rocksdb.block-cache-usage");
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

  /**
   * Closes the store. A read-write store that has not failed flushes its memtable first (RocksDB
   * does not on close while the WAL is on), so a clean close leaves every write in table files and
   * an empty WAL, then records the files in {@link CleanClose} once the database is closed.
   */
  @Override
  protected void doClose() {
    if (store != this) {
      return; // a keyspace handle holds nothing native of its own
    }
    synchronized (compactions) {
      for (CompactRangeOptions c : compactions) {
        c.setCanceled(true); // a running compactRange returns soon after; one not started at once
      }
    }
    RuntimeException failure = null;
    try {
      if (gate.isClosed()) {
        return;
      }
      gate.close(); // waits for the calls in flight; later ones throw StoreClosedException
      for (RocksDbCursor c : liveCursors) {
        c.freeNative();
      }
      liveCursors.clear();
      for (RocksDbSnapshot s : liveSnapshots) {
        s.freeNative(db); // after the cursors, which may read through it
      }
      liveSnapshots.clear();
      readOptions.close();
      writeOptions.close();
      List<Column> columns = keyspaces.all();
      boolean clean = !info().readOnly() && writeFailure() == null;
      if (clean && flushOnClose) {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
          List<ColumnFamilyHandle> all = new ArrayList<>();
          for (Column c : columns) {
            all.add(c.handle);
          }
          db.flush(fo, all); // every column family, so the WAL holds nothing
        } catch (RocksDBException e) {
          clean = false;
          failure = translate(dir, "flush on close", e);
        }
      }
      for (Column c : columns) {
        c.free(); // column family handles before the database
      }
      try {
        db.closeE();
      } catch (RocksDBException e) {
        clean = false;
        failure = translate(dir, "close", e);
      }
      nativeOptions.close();
      if (clean) {
        try {
          CleanClose.write(dir);
        } catch (IOException e) {
          failure =
              new StoreIOException(
                  "engine '"
                      + RocksDbProvider.ID
                      + "' at "
                      + dir
                      + ": cannot write "
                      + CleanClose.FILE_NAME
                      + " (the next open checks less): "
                      + e,
                  e);
        }
      }
    } finally {
      storeDir.close();
    }
    if (failure != null) {
      throw failure;
    }
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

  /**
   * Checks what reads do not: every block of every live table file ({@code VerifyChecksum}), the
   * MANIFEST and every WAL record by record ({@link RecordLog}), and, for a read-only store on a
   * cleanly closed directory, every file against the clean-close record. File deletions are paused
   * meanwhile on a read-write store, so no file vanishes half-checked.
   *
   * <p>A live store's newest WAL and its MANIFEST may end in a record being written right now; a
   * torn end is accepted there only if the WAL's whole records reach the last sequence number this
   * store had acknowledged when the check began, so a damaged acknowledged record is never taken
   * for a write in progress.
   */
  @Override
  protected void doVerify() {
    int l = enter();
    try {
      boolean readOnly = info().readOnly();
      if (readOnly && CleanClose.check(dir) == CleanClose.State.VERIFIED) {
        db.verifyChecksum();
        return;
      }
      if (!readOnly) {
        db.disableFileDeletions();
      }
      try {
        long seen = db.getLatestSequenceNumber();
        db.verifyChecksum();
        verifyLogs(seen, readOnly);
      } finally {
        if (!readOnly) {
          db.enableFileDeletions();
        }
      }
    } catch (RocksDBException e) {
      throw translate(dir, "verify", e);
    } finally {
      gate.exit(l);
    }
  }

  private void verifyLogs(long seen, boolean readOnly) {
    String manifest = CleanClose.currentManifest(dir);
    if (manifest == null) {
      throw new StoreCorruptedException(
          info().describe() + ": CURRENT is damaged: it does not name a MANIFEST file",
          dir.resolve(CURRENT),
          -1);
    }
    try {
      RecordLog.check(dir.resolve(manifest), false);
    } catch (NoSuchFileException e) {
      if (!readOnly) {
        throw new StoreCorruptedException(
            info().describe() + ": the MANIFEST " + manifest + " is missing",
            dir.resolve(manifest),
            -1);
      }
    } catch (IOException e) {
      throw new StoreIOException(info().describe() + ": cannot read " + manifest + ": " + e, e);
    }
    List<Path> wals = walFiles(dir);
    for (int i = 0; i < wals.size(); i++) {
      Path wal = wals.get(i);
      RecordLog.Scan scan;
      try {
        scan = RecordLog.check(wal, true);
      } catch (NoSuchFileException e) {
        continue; // made obsolete and deleted by the writer (read-only) meanwhile
      } catch (IOException e) {
        throw new StoreIOException(info().describe() + ": cannot read " + wal + ": " + e, e);
      }
      boolean newest = i == wals.size() - 1;
      boolean inFlight = newest && (scan.lastSequence() < 0 || scan.lastSequence() >= seen);
      // Read-only: older WALs are a crashed writer's, not yet recovered; their ends may be torn.
      if (scan.torn() && !inFlight && !(readOnly && !newest)) {
        throw RecordLog.corrupted(
            wal,
            scan.tornAt(),
            scan.tornWhy()
                + " (acknowledged writes up to sequence number "
                + seen
                + ", whole records up to "
                + scan.lastSequence()
                + ")");
      }
    }
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

  /** A keyspace's column (null: the store's own keys), for tests. */
  Column column(String keyspace) {
    return keyspaces.get(keyspace);
  }

  /** The stripe lock every write of {@code key} takes, for tests of write ordering. */
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

  /**
   * An error on a write path: an I/O error (disk full, EIO, failed sync) puts the store into the
   * failed state of {@link #failWrites}; RocksDB itself refuses writes after such a background
   * error until it is reopened. Corruption and closing keep their own exceptions.
   */
  private RuntimeException writeError(String op, RocksDBException e) {
    Status s = e.getStatus();
    if (s != null && s.getCode() == Status.Code.IOError) {
      return failWrites(op + " at " + dir, e);
    }
    return translate(dir, op, e);
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
          fileIn(dir, m),
          -1,
          e);
    }
    return translate(dir, "open", e);
  }

  /** A file of the store that a RocksDB message names, such as {@code 000012.sst}. */
  private static final Pattern FILE_IN_MESSAGE =
      Pattern.compile("(\\d{6,}\\.(?:sst|log|blob)|MANIFEST-\\d+|OPTIONS-\\d+|CURRENT)\\b");

  private static final Pattern OFFSET_IN_MESSAGE = Pattern.compile("offset (\\d+)");

  private static Path fileIn(Path dir, String message) {
    Matcher m = FILE_IN_MESSAGE.matcher(message);
    return m.find() ? dir.resolve(m.group(1)) : dir;
  }

  /**
   * Maps a RocksDB status: {@code Corruption} to {@link StoreCorruptedException} naming the file
   * (and offset) when the message does, {@code ShutdownInProgress} to {@link StoreClosedException},
   * everything else to {@link StoreIOException}; the native exception is the cause.
   */
  static RuntimeException translate(Path dir, String op, RocksDBException e) {
    Status s = e.getStatus();
    Status.Code code = s == null ? null : s.getCode();
    String m = String.valueOf(e.getMessage());
    String msg = "engine '" + RocksDbProvider.ID + "' at " + dir + ": " + op + " failed: " + m;
    if (code == Status.Code.Corruption) {
      Path file = fileIn(dir, m);
      Matcher off = OFFSET_IN_MESSAGE.matcher(m);
      long offset = !file.equals(dir) && off.find() ? Long.parseLong(off.group(1)) : -1;
      return new StoreCorruptedException(msg, file, offset, e);
    }
    if (code == Status.Code.ShutdownInProgress) {
      return new StoreClosedException(msg);
    }
    return new StoreIOException(msg, e);
  }
}
