package io.kv4j.hashlog;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.EngineLog;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The hash-log store, a facade over parts with one job each:
 *
 * <ul>
 *   <li>{@link Segments}: which segments make up the store (the table by id, the active one, the
 *       manifest), their byte accounting, and the writer lock;
 *   <li>{@link SegmentLog}: the one append path of puts, deletes and batches, rolls and seals, and
 *       the durability decision ({@link GroupCommit}, {@link Sealer});
 *   <li>{@link Index}: the {@link KeyDir} from key hash to newest record behind its sequence lock,
 *       and the {@link KeyOrder} for scans;
 *   <li>{@link RecordReader}: records decoded at their locations (keys compared in place, values
 *       copied out and their CRC32C checked), with {@link RecordCodec} owning every byte offset;
 *   <li>{@link ReaderGuard}: keeps mappings mapped while a reader or cursor may use them;
 *   <li>{@link Opening} (recovery at open), {@link Compactor}, {@link Verifier}, and {@link
 *       StoreState}, the lifecycle the parts see instead of this store.
 * </ul>
 *
 * <p>A get takes no lock and makes no system call: a guard token, an optimistic probe of the index,
 * the value copied from the segment's mapping and its CRC checked. A write computes its checksum
 * first, then appends under the writer lock and updates the index under the sequence lock, so a
 * reader sees the old or the new record, never an index entry whose bytes are not yet in the file.
 */
final class HashLogStore extends AbstractStore {
  static final EngineLog LOG = new EngineLog("io.kv4j.hashlog");

  /** Options of the engine beyond the common settings. */
  record Options(
      boolean verifyOnRead,
      int segmentSize,
      int initialKeys,
      KeyDir.Hasher hasher,
      Compactor.Settings compaction,
      boolean preload,
      boolean backupHardLinks,
      int maxOpenFiles,
      Storage storage,
      HintReplay.Sizes replaySizes) {}

  final Path dir;
  private final boolean readOnly;
  private final StoreDirectory directory;
  final StoreState state;
  final Segments segments;
  private final RecordReader records;
  final ReaderGuard guard;
  private final Index index;
  final SegmentLog log;
  final Compactor compactor;
  private final Opening opening;
  private final Verifier verifier;
  private final Preloader preloader;
  private final StoreFigures figures;
  private final boolean backupHardLinks;
  // The store's keyspaces (null in a keyspace's own sub-store, whose parent is the store).
  private Keyspaces keyspaces;
  private HashLogStore parent;
  private String keyspace;
  // The background threads of a writable store, which its keyspaces share (null otherwise).
  private Workers sealing;
  private Workers compacting;
  // The bound on the keyspaces' open files of a writable store, which its keyspaces share.
  private OpenFiles openFiles;

  private HashLogStore(StoreInfo info, StoreDirectory directory, Options options) {
    super(info);
    this.dir = directory.path();
    this.readOnly = info.readOnly();
    this.directory = directory;
    this.state = new StoreState(this);
    this.segments = new Segments(dir, options.storage());
    this.records = new RecordReader(segments, options.verifyOnRead(), options.hasher());
    this.guard = new ReaderGuard(state, segments);
    this.index = new Index(options.initialKeys(), options.hasher(), records, segments.writeLock);
    this.log = new SegmentLog(segments, index, state, info.durability(), options.segmentSize());
    this.compactor = new Compactor(segments, index, log, guard, state, options.compaction());
    log.compactWith(compactor);
    this.opening = new Opening(directory, segments, index, log, readOnly, options.replaySizes());
    this.verifier = new Verifier(directory, segments, records, guard, state, readOnly);
    this.preloader = new Preloader(segments, guard, state);
    this.figures = new StoreFigures(dir, segments, index, log, opening, preloader, compactor);
    this.backupHardLinks = options.backupHardLinks();
  }

  /** Opens or creates a store in the config's directory (see {@link StoreDirectory}). */
  static HashLogStore open(
      StoreConfig config, Set<Feature> features, Limits limits, Options options) {
    Set<Feature> own = EnumSet.copyOf(features);
    own.remove(Feature.KEYSPACES); // a keyspace's sub-store has none of its own
    HashLogStore s = open(config, features, limits, options, null, null);
    s.keyspaces =
        new Keyspaces(
            s.dir,
            config.readOnly(),
            options.storage(),
            (name, sub) -> {
              StoreConfig c =
                  config.readOnly()
                      ? config.withPath(sub)
                      : config.withPath(sub).toBuilder().createIfMissing(true).build();
              return open(c, own, limits, options, s, name);
            });
    boolean ok = false;
    try {
      s.keyspaces.check();
      ok = true;
    } catch (IOException e) {
      throw new StoreIOException(
          "engine 'hashlog': cannot open the keyspaces of " + s.dir + ": " + e, e);
    } finally {
      if (!ok) {
        s.releaseAll();
      }
    }
    return s;
  }

  private static HashLogStore open(
      StoreConfig config,
      Set<Feature> features,
      Limits limits,
      Options options,
      HashLogStore parent,
      String keyspace) {
    Opening.checkIndexCapacity(options.initialKeys(), Runtime.getRuntime().maxMemory());
    if (parent == null) {
      Keyspaces.refuseKeyspaceDirectory(config.path());
    }
    StoreDirectory directory = StoreDirectory.open(config, Opening.LAYOUT);
    HashLogStore s = null;
    boolean ok = false;
    try {
      Path real = directory.path();
      if (config.readOnly()) {
        // A keyspace is written only by a writer of its store, which holds the store's lock.
        Opening.refuseLiveWriter(parent == null ? real : parent.dir);
      }
      Set<Feature> f = EnumSet.copyOf(features);
      if (!options.verifyOnRead()) {
        f.remove(Feature.CHECKSUMS); // reads do not verify: the store promises no detection
      }
      StoreInfo info =
          new StoreInfo(
              "hashlog", f, limits, config.durability(), real.toString(), config.readOnly());
      s = new HashLogStore(info, directory, options);
      s.parent = parent;
      s.keyspace = keyspace;
      if (!config.readOnly()) {
        if (parent == null) {
          s.openFiles = new OpenFiles(options.maxOpenFiles());
        } else {
          s.log.files = parent.openFiles; // before recovery opens its active segment
        }
      }
      s.opening.recover();
      if (parent != null) {
        // The store's lock covers its keyspaces: a keyspace's sub-store holds the lock of its own
        // directory only while it opens (its identity checked, recorded once its files are), so
        // that an open keyspace costs no descriptor for it. Its directory is no store of its own
        // (Keyspaces.refuseKeyspaceDirectory), and the only way to it is through the store.
        directory.close();
      }
      if (!config.readOnly()) {
        if (parent == null) {
          // One sealer thread and one compaction pool serve the store and all its keyspaces.
          String name = real.getFileName().toString();
          s.sealing = new Workers(s.state, "kv4j-hashlog-sealer", name, 1, false, 0);
          int n = options.compaction().threads();
          if (n > 0) {
            s.compacting =
                new Workers(s.state, "kv4j-hashlog-compactor", real.toString(), n, true, 1000);
          }
        }
        HashLogStore root = parent == null ? s : parent;
        s.log.sealer.start(root.sealing);
        s.compactor.start(root.compacting);
      }
      if (options.preload()) {
        s.preloader.start();
      }
      ok = true;
      return s;
    } catch (IOException e) {
      // A read-write open writes (the manifest, a new active segment): on a full disk the way to
      // the data is a read-only open, which writes nothing. Java names no ENOSPC type: the text.
      boolean full = String.valueOf(e.getMessage()).contains("No space left on device");
      throw new StoreIOException(
          "engine 'hashlog': cannot open store at "
              + directory.path()
              + ": "
              + e
              + (full && !config.readOnly() ? " (a read-only open needs no free space)" : ""),
          e);
    } finally {
      // Also for an Error (OutOfMemoryError, a test hook's): the directory lock must not leak.
      if (!ok) {
        if (s != null) {
          s.releaseAll();
        } else {
          directory.close();
        }
      }
    }
  }

  // ---------------------------------------------------------------- reads

  @Override
  protected byte[] doGet(byte[] key) {
    int token = guard.enter();
    try {
      return read(key);
    } finally {
      guard.exit(token);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: the gets of {@link #doGet}, inside one reader-guard entry instead of one per key.
   */
  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    List<byte[]> values = new ArrayList<>(keys.size());
    int token = guard.enter();
    try {
      for (byte[] key : keys) {
        values.add(read(key));
      }
    } finally {
      guard.exit(token);
    }
    return values;
  }

  /** A key's value, or null; the caller is inside the reader guard. */
  private byte[] read(byte[] key) {
    long h = index.hash(key);
    long loc = index.find(h, key, true);
    if (loc > 0) {
      return records.readValue(loc, key);
    }
    if (loc < 0) {
      records.checkSuspect(loc & ~KeyDir.SUSPECT, h); // throws unless another key's hash
    }
    return null;
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return scan(this, range);
  }

  /** A cursor over this store's keys, registered by {@code owner} (this, or a keyspace handle). */
  AbstractCursor scan(AbstractStore owner, KeyRange range) {
    int token = guard.enter();
    try {
      KeyOrder.View view = range.isEmpty() ? KeyOrder.View.EMPTY_VIEW : index.order.snapshot();
      // Registered before exit(): a compaction that retires segments this view points into waits
      // for this reader to leave, and by then sees the cursor pinned.
      HashLogCursor c = new HashLogCursor(owner, records, guard, compactor, range, view);
      guard.pin(c);
      return c;
    } finally {
      guard.exit(token);
    }
  }

  // ---------------------------------------------------------------- writes

  @Override
  protected void doPut(byte[] key, byte[] value) {
    long h = index.hash(key);
    LogWrite w = LogWrite.record(h, key, value);
    warm(h, key);
    log.append(w);
  }

  @Override
  protected void doDelete(byte[] key) {
    log.append(LogWrite.record(index.hash(key), key, null));
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    log.append(LogWrite.batch(new PreparedBatch(batch, index, state)));
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: the record (a put, or a delete's tombstone) and its checksum are made before the
   * writer lock, as for a put; under the lock the key's current value is read from the index's
   * location with its CRC32C checked (also with {@code verify-checksums-on-read=false}), compared,
   * and only if equal the record goes through the one append path. Not under the reader guard: the
   * writer lock already keeps the current record's segment mapped (compaction moves it and the
   * close unmaps it only under that lock), and a writer waiting in the compaction throttle must not
   * hold up a compaction run waiting for the readers to leave.
   */
  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    long h = index.hash(key);
    LogWrite w = LogWrite.record(h, key, value);
    return log.appendIf(w, () -> records.holds(index.findLocked(h, key), h, key, expected));
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: the batch is prepared (hashes, records, checksums) and each condition's key hashed
   * before the writer lock, as for {@link #doWrite}; under the lock every condition is checked
   * against the index as {@link #doCompareAndSet} checks its one (values read with their CRC32C
   * checked, also with {@code verify-checksums-on-read=false}), and only if all hold is the batch
   * appended through the one append path, before the lock is released. A false answer writes
   * nothing. Conditions can only name this store's (or this keyspace's) own keys: hashlog has no
   * {@code KEYSPACE_BATCH}, so {@code AbstractStore} refuses any other keyspace first.
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    PreparedBatch prepared = new PreparedBatch(batch, index, state);
    int n = batch.conditionCount();
    long[] hashes = new long[n];
    for (int i = 0; i < n; i++) {
      hashes[i] = index.hash(batch.conditionKey(i));
    }
    return log.appendIf(
        LogWrite.batch(prepared),
        () -> {
          for (int i = 0; i < n; i++) {
            byte[] key = batch.conditionKey(i);
            long loc = index.findLocked(hashes[i], key);
            if (!records.holds(loc, hashes[i], key, batch.conditionValue(i))) {
              return false;
            }
          }
          return true;
        });
  }

  /**
   * Looks the key up before the write lock is taken: the index slot and the old record's header,
   * which the index update under the lock compares and the byte accounting reads, are then in the
   * CPU cache, and the cache misses (often TLB misses into a large mapping) fall outside both
   * locks.
   */
  private void warm(long h, byte[] key) {
    int token = guard.enter();
    try {
      index.find(h, key, false);
    } finally {
      guard.exit(token);
    }
  }

  // ---------------------------------------------------------------- snapshots and backups

  @Override
  protected AbstractSnapshot doSnapshot() {
    return snapshot(this);
  }

  /** A snapshot of this store's keys, tracked by {@code owner} (this, or a keyspace handle). */
  AbstractSnapshot snapshot(AbstractStore owner) {
    int token = guard.enter();
    try {
      // As for a scan: pinned before exit(), so a compaction that retires segments the view
      // points into waits for this reader to leave and then sees the snapshot pinned.
      HashLogSnapshot s =
          new HashLogSnapshot(owner, records, guard, compactor, index.order.snapshot());
      guard.pin(s);
      return s;
    } finally {
      guard.exit(token);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: see {@link Backup}.
   */
  @Override
  protected void doBackup(Path target) throws IOException {
    new Backup(dir, segments, guard, compactor, backupHardLinks).writeTo(target);
    if (keyspaces != null) {
      keyspaces.backupTo(target);
    }
  }

  // ---------------------------------------------------------------- keyspaces

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: the keyspace is a sub-store of its own in {@code keyspaces/<name>/} (see {@link
   * Keyspaces}), opened on first use and kept open until the store closes or drops it.
   */
  @Override
  protected AbstractStore doKeyspace(String name) {
    return new KeyspaceHandle(this, name, keyspaces.get(name));
  }

  @Override
  protected List<String> doKeyspaces() {
    return keyspaces.names();
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: closes the sub-store (calls in flight end with {@code StoreClosedException}),
   * renames its directory out of the way (durably: that is the drop), then deletes it.
   */
  @Override
  protected boolean doDropKeyspace(String name) {
    return keyspaces.drop(name);
  }

  // ---------------------------------------------------------------- sync, compaction, verify

  @Override
  protected void doSync() {
    if (!readOnly) {
      log.sync();
      if (keyspaces != null) {
        keyspaces.syncOpen();
      }
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: seals the active segment and rewrites every segment holding garbage (superseded
   * records, tombstones no older segment needs), then deletes the old files.
   */
  @Override
  protected void doCompact() {
    reclaim();
    if (keyspaces != null) {
      for (HashLogStore k : keyspaces.all()) {
        k.reclaim();
      }
    }
  }

  /** Compacts everything reclaimable now (see {@link Compactor#compactAll}); bytes reclaimed. */
  long reclaim() {
    // Open and writable: checked by AbstractStore.compact(), the only caller besides tests.
    log.sealer.drain(); // segments still being sealed are not victims yet
    return compactor.compactAll();
  }

  /**
   * {@inheritDoc}
   *
   * <p>hashlog: the files against the manifest, then every record and hint (see {@link Verifier}),
   * of the store and of each keyspace; one exception lists every damaged region found.
   */
  @Override
  protected void doVerify() {
    List<StoreCorruptedException> found = new ArrayList<>(verifier.check());
    if (keyspaces != null) {
      for (String name : keyspaces.names()) {
        try {
          for (StoreCorruptedException e : keyspaces.get(name).verifier.check()) {
            found.add(Verifier.inKeyspace(e, name));
          }
        } catch (StoreCorruptedException e) { // the keyspace does not open
          found.add(Verifier.inKeyspace(e, name));
        }
      }
    }
    if (!found.isEmpty()) {
      throw Verifier.merged(found);
    }
  }

  // ---------------------------------------------------------------- stats

  @Override
  protected StoreStats doStats() {
    return figures.stats(writeFailure() != null, keyspaces);
  }

  /** Live bytes of one segment, -1 if none is installed with that id (tests). */
  long liveBytes(int segmentId) {
    segments.writeLock.lock();
    try {
      Segment s = segments.get(segmentId);
      return s == null ? -1 : s.liveBytes;
    } finally {
      segments.writeLock.unlock();
    }
  }

  /** The installed segments, ascending id (tests). Do not modify. */
  Segment[] segments() {
    return segments.all();
  }

  Segment activeSegment() {
    return segments.active;
  }

  /** The bound on the keyspaces' open files (tests); null unless a writable store's. */
  OpenFiles openFiles() {
    return openFiles;
  }

  /**
   * Segments whose hint was written while {@code verify()} checked them as the active segment
   * (tests).
   */
  long hintsWrittenDuringVerify() {
    return verifier.hintsWrittenDuringCheck();
  }

  // ---------------------------------------------------------------- close

  @Override
  protected void doClose() {
    if (keyspaces != null) {
      keyspaces.close(); // their directories are inside this one, under its lock
    }
    compactor.stop();
    log.sealer.stop();
    if (!readOnly && log.finishForClose()) {
      try {
        // The clean-close marker: the next open treats any bad record as damage, not a torn tail.
        segments.writeManifest(true);
      } catch (IOException e) {
        // The manifest still says "not clean": the next open merely tolerates a torn tail.
        LOG.log(Level.WARNING, "hashlog: could not record the clean close of " + dir, e);
      }
    }
    releaseAll();
  }

  private void releaseAll() {
    // The store is marked closed, so no reader enters any more; wait for those inside (they may
    // need the write lock, e.g. a scan building its view), then for the writer, then unmap.
    preloader.stop();
    guard.close();
    compactor.stop();
    log.sealer.stop();
    // Last: the keyspaces (closed first, see doClose) and this store have left the threads.
    if (compacting != null) {
      compacting.close();
    }
    if (sealing != null) {
      sealing.close();
    }
    try {
      segments.closeAll();
    } finally {
      if (log.files != null) {
        log.files.closed(log);
      }
      directory.close();
    }
  }

  // ---------------------------------------------------------------- state, for StoreState

  boolean closed() {
    return isClosed();
  }

  /** This store's failure, or for a keyspace's sub-store its own or the store's. */
  StoreIOException failure() {
    StoreIOException f = writeFailure();
    return f != null || parent == null ? f : parent.failure();
  }

  /** Fails this store; a keyspace's sub-store fails the whole store with it (one failed state). */
  Thread startEngineThread(String name, Runnable body) {
    return startBackground(name, body);
  }

  void backgroundDied(String thread, Throwable cause) {
    StoreIOException f = failWrites("its background thread '" + thread + "' died", cause);
    LOG.log(Level.ERROR, f.getMessage(), cause);
  }

  void taskFailing(String task, Throwable cause) {
    backgroundFailing(task, cause);
  }

  void taskRecovered(String task) {
    backgroundRecovered(task);
  }

  StoreIOException failWritesBecause(String what, Throwable cause) {
    if (parent != null) {
      parent.failWritesBecause("keyspace '" + keyspace + "': " + what, cause);
    }
    return failWrites(what, cause);
  }
}
