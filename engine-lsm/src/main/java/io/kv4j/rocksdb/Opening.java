package io.kv4j.rocksdb;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;
import org.rocksdb.WALRecoveryMode;
import org.rocksdb.WriteOptions;

/**
 * Opening a store: the directory through {@link StoreDirectory}, the checks that tell damage from
 * what a crash leaves ({@link CleanClose}, {@link RecordLog}), then RocksDB with every column
 * family of the database, each with the same column family options.
 */
final class Opening {
  private Opening() {}

  static final String CURRENT = "CURRENT";

  /** Files RocksDB writes while creating a database, before {@code CURRENT}; none holds data. */
  private static final Pattern CREATION_ARTIFACT =
      Pattern.compile(
          "LOCK|IDENTITY|LOG|LOG\\.old\\.\\d+|MANIFEST-\\d+|OPTIONS-\\d+(\\.dbtmp)?|\\d+\\.dbtmp");

  /** Every file RocksDB (and this engine) writes in a store directory. */
  private static final Pattern OWN_FILE =
      Pattern.compile(
          "CURRENT|IDENTITY|LOCK|LOG|LOG\\.old\\.\\d+|MANIFEST-\\d+|OPTIONS-\\d+(\\.dbtmp)?"
              + "|\\d+\\.(sst|log|blob|dbtmp)|archive|("
              + Pattern.quote(CleanClose.FILE_NAME)
              + "|"
              + Pattern.quote(SyncedWals.FILE_NAME)
              + ")(\\.tmp)?");

  /**
   * The directory layout: format 1 is RocksDB's own files as rocksdbjni 11 writes them, plus the
   * clean-close record and the synced-WAL record (a file earlier versions neither write nor read).
   * {@code CURRENT} must exist in every created store: without it RocksDB would take the directory
   * for an empty one.
   */
  static final StoreDirectory.Layout LAYOUT =
      new StoreDirectory.Layout(
          RocksDbProvider.ID, 1, n -> OWN_FILE.matcher(n).matches(), Set.of(CURRENT));

  /**
   * Opens a store: the directory through {@link StoreDirectory}, then checks that tell damage from
   * what a crash leaves (see {@link CleanClose} and {@link RecordLog}), then RocksDB. Nothing is
   * written, renamed or deleted before every check passed, and RocksDB is asked to create a
   * database only in a new directory. A read-only open goes through {@link ReadOnlyOpening}, which
   * a writer flushing meanwhile cannot make miss acknowledged writes.
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
      boolean crashed = !create && CleanClose.check(dir) != CleanClose.State.VERIFIED;
      Path walDir = walDir(opts, dir);
      Map<String, Long> mayBeGone = Map.of();
      if (crashed && refusesBadRecords(opts.options.walRecoveryMode())) {
        checkLogs(dir);
        mayBeGone = SyncedWals.check(dir, walDir);
      }
      opts.options.setCreateIfMissing(create);
      opts.split();
      if (!readOnly) {
        opts.listen();
      }
      if (!readOnly && !mayBeGone.isEmpty()) {
        SyncedWals.checkNeeded(dir, walDir, mayBeGone, SyncedWals.oldestNeededWal(dir, opts));
      }
      List<ColumnFamilyDescriptor> families = new ArrayList<>();
      db =
          readOnly
              ? ReadOnlyOpening.open(opts, dir, families, handles)
              : openReadWrite(opts, dir, create, families, handles);
      if (readOnly && !mayBeGone.isEmpty()) {
        // The view's MANIFEST was read after the WALs were found missing: its number is current.
        SyncedWals.checkNeeded(dir, walDir, mayBeGone, oldestNeededWal(dir, db));
      }
      if (!readOnly) {
        sd.created(); // a new store's, or an adopted one's once RocksDB has opened it
        removeRecords(dir); // from here on a crash is possible again
      }
      ro = new ReadOptions(); // verify_checksums is on by default: every block read is checked
      wo = new WriteOptions().setSync(config.durability() == Durability.SYNC);
      StoreInfo info = info(config, dir);
      Keyspaces keyspaces = new Keyspaces(families, handles, opts.cfOptions);
      RocksDbStore store = new RocksDbStore(info, sd, opts, db, ro, wo, keyspaces);
      if (opts.backgroundErrors != null) {
        opts.backgroundErrors.attach(store);
      }
      store.startRecorder();
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
   * Whether the WAL recovery mode refuses bad records, so that the checks after a crash apply: not
   * when the user chose to recover past them ({@code rocksdb-options}: point-in-time recovery or
   * skipping bad records), which accepts losing writes.
   */
  private static boolean refusesBadRecords(WALRecoveryMode mode) {
    return mode != WALRecoveryMode.PointInTimeRecovery
        && mode != WALRecoveryMode.SkipAnyCorruptedRecords;
  }

  private static long oldestNeededWal(Path dir, RocksDB db) {
    try {
      return SyncedWals.oldestNeededWal(db);
    } catch (RocksDBException e) {
      throw Failures.translate(dir, "open", e);
    }
  }

  /** The directory of the WAL files: the store directory unless {@code wal_dir} names another. */
  static Path walDir(NativeOptions opts, Path dir) {
    String w = opts.options.walDir();
    return w == null || w.isEmpty() ? dir : Path.of(w);
  }

  /**
   * The checks for a store that was not closed cleanly (or is open elsewhere): {@code CURRENT}
   * names a manifest, and the MANIFEST and every WAL hold only valid records up to what a crash may
   * have torn at their ends ({@link RecordLog}). RocksDB checks record checksums itself, but skips
   * the rest of a 32 KiB block after an all-zero header without a report. What a crash cannot
   * leave, a WAL shorter than what was synced of it or deleted, is {@link SyncedWals}' check.
   */
  private static void checkLogs(Path dir) {
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
    for (Path wal : RecordLog.walFiles(dir)) {
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

  /**
   * The column families to open, {@code default} first, each with the same column family options: a
   * new store has only {@code default}; an existing one every family its MANIFEST lists (RocksDB
   * opens a database only with all of them).
   */
  static List<ColumnFamilyDescriptor> families(NativeOptions opts, Path dir, boolean create)
      throws RocksDBException {
    List<ColumnFamilyDescriptor> out = new ArrayList<>();
    out.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, opts.cfOptions));
    if (create) {
      return out;
    }
    for (byte[] n : RocksDB.listColumnFamilies(opts.options, dir.toString())) {
      if (!Arrays.equals(n, RocksDB.DEFAULT_COLUMN_FAMILY)) {
        out.add(new ColumnFamilyDescriptor(n, opts.cfOptions));
      }
    }
    return out;
  }

  /**
   * Opens the database read-write with every column family its MANIFEST lists (or only {@code
   * default} when it is created), adding them to {@code families} and their handles to {@code
   * handles} in the same order.
   */
  private static RocksDB openReadWrite(
      NativeOptions opts,
      Path dir,
      boolean create,
      List<ColumnFamilyDescriptor> families,
      List<ColumnFamilyHandle> handles) {
    try {
      families.addAll(families(opts, dir, create));
      return RocksDB.open(opts.dbOptions, dir.toString(), families, handles);
    } catch (RocksDBException e) {
      throw translateOpen(dir, !create, e);
    }
  }

  static boolean isMissingFile(RocksDBException e) {
    Status s = e.getStatus();
    return s != null
        && s.getCode() == Status.Code.IOError
        && String.valueOf(e.getMessage()).contains("No such file");
  }

  /**
   * Open errors: a file that {@code CURRENT} or the manifest names but that is missing means the
   * store is damaged, not that the disk failed.
   */
  static RuntimeException translateOpen(Path dir, boolean exists, RocksDBException e) {
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
          Failures.fileIn(dir, m),
          -1,
          e);
    }
    return Failures.translate(dir, "open", e);
  }

  /** Removes the clean-close and synced-WAL records, which describe the previous session. */
  private static void removeRecords(Path dir) {
    try {
      CleanClose.remove(dir);
      SyncedWals.remove(dir);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": cannot remove "
              + CleanClose.FILE_NAME
              + " or "
              + SyncedWals.FILE_NAME
              + ": "
              + e,
          e);
    }
  }

  private static StoreInfo info(StoreConfig config, Path dir) {
    Set<Feature> features = EnumSet.copyOf(RocksDbProvider.FEATURES);
    if (!NativeOptions.checksums(config)) {
      features.remove(Feature.CHECKSUMS);
    }
    return new StoreInfo(
        RocksDbProvider.ID,
        features,
        RocksDbProvider.LIMITS,
        config.durability(),
        dir.toString(),
        config.readOnly());
  }
}
