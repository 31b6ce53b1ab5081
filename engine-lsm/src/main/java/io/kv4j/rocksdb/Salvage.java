package io.kv4j.rocksdb;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.spi.SalvageSink;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.RocksDBException;

/**
 * {@link RocksDbProvider#salvage}: every intact entry of a damaged store, and every damaged region.
 *
 * <p><b>Never on the store's files.</b> The store's files are copied (bytes, not links) to a fresh
 * directory outside the store, and everything below happens to the copy, which is deleted at the
 * end. A store that a process holds open for writing is refused ({@link LiveWriters}).
 *
 * <p><b>Steps.</b>
 *
 * <ol>
 *   <li>Every WAL is read past damage ({@link LogSurvey}); a damaged one is rewritten in the copy
 *       as its intact records, so RocksDB replays every intact write (its own reader drops the rest
 *       of a 32 KiB block after a bad record). A WAL cut below the size the synced-WAL record lists
 *       is reported too. {@code CURRENT} that names no usable MANIFEST is replaced in the copy by
 *       the newest MANIFEST there. A damaged MANIFEST cannot be trusted to say which table files
 *       hold what: see {@link TablesOnly}.
 *   <li>The copy is opened read-only with every column family, with RocksDB's checks of the table
 *       files at open off (a damaged table must not stop the open) and no block cache. Table files
 *       RocksDB cannot open are replaced in the copy by a {@link StandIn} and the copy reopened.
 *   <li>Per column family: the keys of every source — the memtable replayed from the WALs, each
 *       level-0 table, each deeper level's tables in key order — are merged in key order, each
 *       table read past its damaged blocks ({@link TableScan}). Each distinct key is then looked up
 *       through the database (checksums verified), which applies RocksDB's own rules: the newest
 *       version wins, a deletion hides older values. A lookup that reaches a damaged block fails,
 *       and the key counts as lost: the block may have held its newest version. A key in the range
 *       of a dead table file is looked up only if a source newer than that file (every entry of it
 *       newer: a higher smallest sequence number than the file's largest, or the memtable) holds
 *       it; otherwise it is lost, since the file may have held a newer version or a deletion.
 * </ol>
 *
 * <p>So a value is handed over only if it is the key's newest version and every block it passed
 * through was checked; a deletion whose tombstone is intact is respected. What cannot be known:
 * keys that only a damaged block held are not even known to exist (their range is reported); the
 * unit of loss in a table is a data block.
 *
 * <p><b>Parts</b>, one job each: this class copies the files and drives the steps; {@link
 * LogDamage} reads the logs (step 1); {@link CopiedDatabase} is the copy opened, {@link DeadTable}
 * a table file it cannot open (step 2); {@link FamilyScan} salvages one column family (step 3);
 * {@link TablesOnly} reads the table files without a MANIFEST; every damaged spot goes into {@link
 * Regions}.
 */
final class Salvage {
  /** Files a salvage copies: what RocksDB reads to open the database and its data. */
  private static final Pattern NEEDED =
      Pattern.compile("CURRENT|IDENTITY|MANIFEST-\\d+|\\d+\\.(sst|log|blob)");

  private final Path dir;
  private final Path walDir;

  // Read by the parts of a salvage in other files (FamilyScan).
  final Path copy;
  final SalvageSink sink;
  final Regions regions;
  final LogDamage logs;

  /** Copy file name to the store's file it came from. */
  private final Map<String, Path> origin = new HashMap<>();

  private Salvage(Path dir, Path walDir, Path copy, SalvageSink sink) {
    this.dir = dir;
    this.walDir = walDir;
    this.copy = copy;
    this.sink = sink;
    this.regions = new Regions(copy, dir);
    this.logs = new LogDamage(dir, copy, regions, this::source);
  }

  /**
   * Salvages the store {@code config} names into {@code sink}.
   *
   * @return every damaged region found
   * @throws io.kv4j.StoreLockedException if a process has the store open for writing
   * @throws StoreIOException if there is no RocksDB store to read, or no copy can be made
   */
  static List<DamagedRegion> run(StoreConfig config, SalvageSink sink) {
    Path given = config.path();
    if (given == null) {
      throw new IllegalArgumentException(
          "engine '" + RocksDbProvider.ID + "' needs a path: the directory that holds the store");
    }
    if (!Files.isDirectory(given)) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "' at " + given + ": no store there (not a directory)",
          (Throwable) null);
    }
    Path dir;
    try {
      dir = given.toRealPath();
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': cannot resolve store directory " + given, e);
    }
    String customWal =
        NativeOptions.split(config.get(RocksDbProvider.ROCKSDB_OPTIONS)).get("wal_dir");
    Path walDir = customWal == null || customWal.isEmpty() ? dir : Path.of(customWal);
    LiveWriters.refuse(dir);
    Path copy = workDirectory(dir);
    try {
      return new Salvage(dir, walDir, copy, sink).salvage();
    } finally {
      deleteTree(copy);
    }
  }

  /** A new directory outside the store for the copy (in {@code java.io.tmpdir} normally). */
  private static Path workDirectory(Path dir) {
    try {
      Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
      Path base = Files.exists(tmp) ? tmp.toRealPath() : tmp;
      if (base.startsWith(dir)) {
        base = dir.getParent(); // never inside the store
      }
      return Files.createTempDirectory(base, "kv4j-rocksdb-salvage-");
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": cannot create a directory for the copy salvage works on: "
              + e,
          e);
    }
  }

  private List<DamagedRegion> salvage() {
    copyFiles();
    logs.surveyWals();
    String manifest = logs.usableManifest();
    if (manifest == null || logs.manifestDamaged(manifest)) {
      logs.reportWals(0);
      new TablesOnly(copy, origin, regions, sink, logs.suspects).run();
      return regions.list();
    }
    fromDatabase();
    return regions.list();
  }

  // ------------------------------------------------------------------ the copy

  private void copyFiles() {
    int found = 0;
    List<Path> dirs = walDir.equals(dir) ? List.of(dir) : List.of(dir, walDir);
    for (Path d : dirs) {
      List<Path> files = new ArrayList<>();
      try (Stream<Path> s = Files.list(d)) {
        s.filter(p -> NEEDED.matcher(p.getFileName().toString()).matches()).forEach(files::add);
      } catch (NoSuchFileException e) {
        continue; // a wal_dir that does not exist holds no WAL
      } catch (IOException e) {
        throw new StoreIOException(
            "engine '" + RocksDbProvider.ID + "' at " + dir + ": cannot list " + d + ": " + e, e);
      }
      for (Path f : files) {
        String name = f.getFileName().toString();
        if (!d.equals(dir) && !name.endsWith(".log")) {
          continue;
        }
        try {
          Files.copy(f, copy.resolve(name), StandardCopyOption.COPY_ATTRIBUTES);
          origin.put(name, f);
          found++;
        } catch (NoSuchFileException e) {
          // gone since the listing: nothing to copy
        } catch (IOException e) {
          origin.put(name, f);
          regions.add(
              new Region(
                  f, 0, size(f), null, -1, null, "cannot be read (" + e + "): not salvaged"));
        }
      }
    }
    if (found == 0) {
      throw new StoreIOException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": no store there (no CURRENT, MANIFEST, table file or WAL to salvage)",
          (Throwable) null);
    }
  }

  Path source(String name) {
    Path p = origin.get(name);
    return p != null ? p : (name.endsWith(".log") ? walDir : dir).resolve(name);
  }

  // ------------------------------------------------------------------ the database

  /** Opens the copy (with stand-ins for dead table files) and salvages every column family. */
  private void fromDatabase() {
    CopiedDatabase db = CopiedDatabase.open(copy);
    if (db != null) {
      long oldest;
      try {
        oldest = SyncedWals.oldestNeededWal(db.db);
      } catch (RocksDBException e) {
        oldest = 0;
      }
      logs.reportWals(oldest);
    } else {
      logs.reportWals(0);
    }
    if (db == null) {
      regions.add(
          new Region(
              source(Opening.CURRENT),
              -1,
              -1,
              null,
              -1,
              null,
              "RocksDB cannot open the store even with its checks off; read from the table"
                  + " files alone"));
      new TablesOnly(copy, origin, regions, sink, logs.suspects).run();
      return;
    }
    try {
      List<DeadTable> dead = deadTables(db);
      if (!dead.isEmpty()) {
        db.close();
        for (DeadTable d : dead) {
          d.replaced = StandIn.write(copy.resolve(d.name), d.meta.size(), d.meta.smallestKey());
        }
        CopiedDatabase reopened = CopiedDatabase.open(copy);
        if (reopened == null) {
          // The finally below closes the first database again, which RocksJava makes harmless.
          regions.add(
              new Region(
                  source(Opening.CURRENT),
                  -1,
                  -1,
                  null,
                  -1,
                  null,
                  "RocksDB did not open the store again once its unreadable table files were"
                      + " replaced by stand-ins; nothing salvaged (without the database the"
                      + " unreadable tables could hold a newer version of any key)"));
          return;
        }
        db = reopened;
      }
      for (int i = 0; i < db.families.size(); i++) {
        String keyspace = Column.keyspaceOf(db.families.get(i).getName());
        if (keyspace != null && keyspace.isEmpty()) {
          continue; // a column family that is no keyspace: never listed or written by the store
        }
        String cf = new String(db.families.get(i).getName(), StandardCharsets.UTF_8);
        List<LiveFileMetaData> tables = new ArrayList<>();
        for (LiveFileMetaData m : db.live) {
          if (new String(m.columnFamilyName(), StandardCharsets.UTF_8).equals(cf)) {
            tables.add(m);
          }
        }
        List<DeadTable> deadHere = new ArrayList<>();
        for (DeadTable d : dead) {
          if (d.family.equals(cf)) {
            deadHere.add(d);
            regions.add(d.region(source(d.name), keyspace));
          }
        }
        new FamilyScan(this, db, db.handles.get(i), keyspace, tables, deadHere).run();
      }
    } finally {
      db.close();
    }
  }

  /** The live table files RocksDB cannot open, by SstFileReader: missing, cut short, bad meta. */
  private List<DeadTable> deadTables(CopiedDatabase db) {
    List<DeadTable> out = new ArrayList<>();
    for (LiveFileMetaData m : db.live) {
      String name = fileName(m);
      try {
        TableScan.open(copy.resolve(name)).close();
      } catch (RocksDBException e) {
        out.add(new DeadTable(name, m, String.valueOf(e.getMessage())));
      }
    }
    return out;
  }

  static String fileName(LiveFileMetaData m) {
    String n = m.fileName();
    return n.startsWith("/") ? n.substring(1) : n;
  }

  // ------------------------------------------------------------------ files

  static long size(Path f) {
    try {
      return Files.size(f);
    } catch (IOException e) {
      return -1;
    }
  }

  static void deleteQuietly(Path f) {
    try {
      Files.deleteIfExists(f);
    } catch (IOException e) {
      // in the copy, deleted with it
    }
  }

  /** Deletes the copy; what cannot be deleted is left in the temporary directory. */
  static void deleteTree(Path root) {
    try (Stream<Path> s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).forEach(Salvage::deleteQuietly);
    } catch (IOException e) {
      // nothing more to do: the copy is outside the store
    }
  }
}
