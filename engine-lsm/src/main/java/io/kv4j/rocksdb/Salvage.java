package io.kv4j.rocksdb;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.spi.SalvageSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.ReadTier;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

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
 */
final class Salvage {
  /** Files a salvage copies: what RocksDB reads to open the database and its data. */
  private static final Pattern NEEDED =
      Pattern.compile("CURRENT|IDENTITY|MANIFEST-\\d+|\\d+\\.(sst|log|blob)");

  private final Path dir;
  private final Path walDir;
  private final Path copy;
  private final SalvageSink sink;
  private final Regions regions;
  private final LogDamage logs;

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

  private Path source(String name) {
    Path p = origin.get(name);
    return p != null ? p : (name.endsWith(".log") ? walDir : dir).resolve(name);
  }

  // ------------------------------------------------------------------ the database

  /** Opens the copy (with stand-ins for dead table files) and salvages every column family. */
  private void fromDatabase() {
    Copy db = Copy.open(copy);
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
      List<Dead> dead = deadTables(db);
      if (!dead.isEmpty()) {
        db.close();
        for (Dead d : dead) {
          d.replaced = StandIn.write(copy.resolve(d.name), d.meta.size(), d.meta.smallestKey());
        }
        Copy reopened = Copy.open(copy);
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
        List<Dead> deadHere = new ArrayList<>();
        for (Dead d : dead) {
          if (d.family.equals(cf)) {
            deadHere.add(d);
            regions.add(d.region(source(d.name), keyspace));
          }
        }
        new Family(db, db.handles.get(i), keyspace, tables, deadHere).run();
      }
    } finally {
      db.close();
    }
  }

  /** The live table files RocksDB cannot open, by SstFileReader: missing, cut short, bad meta. */
  private List<Dead> deadTables(Copy db) {
    List<Dead> out = new ArrayList<>();
    for (LiveFileMetaData m : db.live) {
      String name = fileName(m);
      try {
        TableScan.open(copy.resolve(name)).close();
      } catch (RocksDBException e) {
        out.add(new Dead(name, m, String.valueOf(e.getMessage())));
      }
    }
    return out;
  }

  static String fileName(LiveFileMetaData m) {
    String n = m.fileName();
    return n.startsWith("/") ? n.substring(1) : n;
  }

  /** A table file RocksDB cannot open. */
  private static final class Dead {
    final String name;
    final LiveFileMetaData meta;
    final String family;
    final String problem;
    boolean replaced;

    Dead(String name, LiveFileMetaData meta, String problem) {
      this.name = name;
      this.meta = meta;
      this.family = new String(meta.columnFamilyName(), StandardCharsets.UTF_8);
      this.problem = problem;
    }

    boolean covers(byte[] key) {
      return Arrays.compareUnsigned(key, meta.smallestKey()) >= 0
          && Arrays.compareUnsigned(key, meta.largestKey()) <= 0;
    }

    Region region(Path file, String keyspace) {
      long[] at = TableScan.blockAt(problem);
      return new Region(
          file,
          at[0],
          at[0] >= 0 ? at[1] : meta.size(),
          keyspace,
          -1,
          KeyRange.all().gte(meta.smallestKey()).lte(meta.largestKey()),
          "table file unreadable ("
              + problem
              + "): every key in its range is lost unless a newer file or the WAL holds it"
              + (replaced
                  ? ""
                  : "; no stand-in of its size could be made, so lookups of other keys of its"
                      + " column family may fail and count as lost too"));
    }
  }

  /** One column family: merge the sources' keys, look each up through the database. */
  private final class Family {
    private final Copy db;
    private final ColumnFamilyHandle handle;
    private final String keyspace;
    private final List<LiveFileMetaData> tables;
    private final List<Dead> dead;

    Family(
        Copy db,
        ColumnFamilyHandle handle,
        String keyspace,
        List<LiveFileMetaData> tables,
        List<Dead> dead) {
      this.db = db;
      this.handle = handle;
      this.keyspace = keyspace;
      this.tables = tables;
      this.dead = dead;
    }

    void run() {
      List<Source> sources = new ArrayList<>();
      TreeMap<Integer, List<LiveFileMetaData>> levels = new TreeMap<>();
      for (LiveFileMetaData m : tables) {
        if (dead.stream().anyMatch(d -> d.meta == m || d.name.equals(fileName(m)))) {
          continue;
        }
        if (m.level() == 0) {
          sources.add(new TableSource(List.of(m)));
        } else {
          levels.computeIfAbsent(m.level(), l -> new ArrayList<>()).add(m);
        }
      }
      for (List<LiveFileMetaData> level : levels.values()) {
        level.sort((a, b) -> Arrays.compareUnsigned(a.smallestKey(), b.smallestKey()));
        sources.add(new TableSource(level));
      }
      try (ReadOptions memOnly = new ReadOptions().setReadTier(ReadTier.MEMTABLE_TIER);
          RocksIterator mem = db.db.newIterator(handle, memOnly);
          ReadOptions checked = new ReadOptions().setVerifyChecksums(true).setFillCache(false)) {
        sources.add(new MemSource(mem));
        PriorityQueue<Source> queue =
            new PriorityQueue<>((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
        try {
          for (Source s : sources) {
            if (s.start()) {
              queue.add(s);
            }
          }
          while (!queue.isEmpty()) {
            Source s = queue.poll();
            byte[] key = s.key();
            long newest = s.sequence();
            if (s.advance()) {
              queue.add(s);
            }
            while (!queue.isEmpty() && Arrays.equals(queue.peek().key(), key)) {
              Source t = queue.poll();
              newest = Math.max(newest, t.sequence());
              if (t.advance()) {
                queue.add(t);
              }
            }
            resolve(checked, key, newest);
          }
        } finally {
          for (Source s : sources) {
            s.close();
          }
        }
      }
    }

    /**
     * Looks a key up through the database, unless a dead file may hold its newest version or a
     * damaged WAL span probably did.
     */
    private void resolve(ReadOptions checked, byte[] key, long newest) {
      Map<ByteBuffer, long[]> lostInWal = logs.suspects.get(handle.getID());
      if (lostInWal != null && lostInWal.containsKey(ByteBuffer.wrap(key))) {
        return; // lost: counted by the WAL's region
      }
      for (Dead d : dead) {
        if (d.covers(key) && newest <= d.meta.largestSeqno()) {
          return; // lost: within the dead file's reported range
        }
      }
      byte[] value;
      try {
        value = db.db.get(handle, checked, key);
      } catch (RocksDBException e) {
        regions.lostAt(copy, e, key, keyspace, Salvage.this::source);
        return;
      }
      if (value != null) {
        sink.entry(keyspace, key, value);
      }
    }

    /** The tables of one level (in key order), or one level-0 table, read past damage. */
    private final class TableSource implements Source {
      private final List<LiveFileMetaData> files;
      private int next;
      private TableScan scan;
      private LiveFileMetaData current;

      /** How many of the current scan's losses are registered: each as soon as it is found. */
      private int registered;

      TableSource(List<LiveFileMetaData> files) {
        this.files = files;
      }

      @Override
      public boolean start() {
        return openNext();
      }

      private boolean openNext() {
        while (next < files.size()) {
          current = files.get(next++);
          String name = fileName(current);
          try {
            scan = TableScan.open(copy.resolve(name));
          } catch (RocksDBException e) {
            // Opened a moment ago; failing now is as dead as failing then, but without a
            // stand-in: its lookups fail and count as lost.
            regions.add(
                new Dead(name, current, String.valueOf(e.getMessage()))
                    .region(source(name), keyspace));
            continue;
          }
          registered = 0;
          scan.seekToFirst();
          register();
          if (scan.valid()) {
            return true;
          }
          finish();
        }
        return false;
      }

      /** Registers the losses the scan found since the last call, before any lookup lands there. */
      private void register() {
        List<TableScan.Loss> losses = scan.losses();
        for (; registered < losses.size(); registered++) {
          TableScan.Loss l = losses.get(registered);
          KeyRange r = KeyRange.all();
          if (l.before() != null) {
            r = r.gt(l.before());
          }
          if (l.after() != null) {
            r = r.lt(l.after());
          }
          regions.add(
              new Region(
                  source(fileName(current)),
                  l.offset(),
                  l.length(),
                  keyspace,
                  -1,
                  r,
                  l.problem()
                      + " (a data block of a table file: its keys, in the range between the intact"
                      + " keys on either side, are lost)"));
        }
      }

      private void finish() {
        register();
        String meta = scan.verifyChecksum();
        if (meta != null) {
          long[] at = TableScan.blockAt(meta);
          if (scan.losses().stream().noneMatch(l -> l.offset() == at[0])) {
            regions.add(
                new Region(
                    source(fileName(current)),
                    at[0],
                    at[1],
                    keyspace,
                    0,
                    null,
                    meta + " (a block of a table file that holds no entry: nothing lost)"));
          }
        }
        scan.close();
        scan = null;
      }

      @Override
      public byte[] key() {
        return scan.key();
      }

      @Override
      public long sequence() {
        return current.smallestSeqno();
      }

      @Override
      public boolean advance() {
        scan.next();
        register();
        if (scan.valid()) {
          return true;
        }
        finish();
        return openNext();
      }

      @Override
      public void close() {
        if (scan != null) {
          finish();
        }
      }
    }
  }

  /** Keys in ascending order from one place of a column family. */
  private interface Source extends AutoCloseable {
    /** Positions at the first key; false if there is none. */
    boolean start();

    byte[] key();

    /** A sequence number below every entry of the current key's place (the memtable: max). */
    long sequence();

    /** Moves to the next key; false at the end. */
    boolean advance();

    @Override
    void close();
  }

  /** The memtable, replayed from the WALs: newer than every table file. */
  private static final class MemSource implements Source {
    private final RocksIterator it;

    MemSource(RocksIterator it) {
      this.it = it;
    }

    @Override
    public boolean start() {
      it.seekToFirst();
      return it.isValid();
    }

    @Override
    public byte[] key() {
      return it.key();
    }

    @Override
    public long sequence() {
      return Long.MAX_VALUE;
    }

    @Override
    public boolean advance() {
      it.next();
      return it.isValid();
    }

    @Override
    public void close() {
      // the iterator belongs to the caller
    }
  }

  /**
   * The copy opened read-only with every column family: RocksDB's checks of table files at open are
   * off (paranoid checks, sizes, unique ids), so one damaged table does not stop the open; WAL
   * records that fail their checksum are skipped (the WALs were rewritten without them already); no
   * block cache and no filter, so every lookup reads its blocks and checks them.
   */
  static final class Copy implements AutoCloseable {
    final RocksDB db;
    final List<ColumnFamilyDescriptor> families;
    final List<ColumnFamilyHandle> handles;
    final List<LiveFileMetaData> live;
    private final DBOptions dbOptions;
    private final ColumnFamilyOptions cfOptions;

    private Copy(
        RocksDB db,
        List<ColumnFamilyDescriptor> families,
        List<ColumnFamilyHandle> handles,
        DBOptions dbOptions,
        ColumnFamilyOptions cfOptions) {
      this.db = db;
      this.families = families;
      this.handles = handles;
      this.dbOptions = dbOptions;
      this.cfOptions = cfOptions;
      this.live = db.getLiveFilesMetaData();
    }

    /** Opens the copy, or returns null if RocksDB cannot. */
    static Copy open(Path copy) {
      Properties p = new Properties();
      p.setProperty("paranoid_checks", "false");
      p.setProperty("wal_recovery_mode", "kSkipAnyCorruptedRecords");
      p.setProperty("skip_checking_sst_file_sizes_on_db_open", "true");
      p.setProperty("skip_stats_update_on_db_open", "true");
      p.setProperty("verify_sst_unique_id_in_manifest", "false");
      p.setProperty("best_efforts_recovery", "false");
      p.setProperty("max_open_files", "-1");
      p.setProperty("info_log_level", "ERROR_LEVEL");
      DBOptions dbo = DBOptions.getDBOptionsFromProps(p);
      if (dbo == null) {
        throw new IllegalStateException("RocksDB rejected the salvage options " + p);
      }
      ColumnFamilyOptions cfo =
          new ColumnFamilyOptions()
              .setTableFormatConfig(new BlockBasedTableConfig().setNoBlockCache(true));
      List<ColumnFamilyDescriptor> families = new ArrayList<>();
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      try (Options o = new Options()) {
        families.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfo));
        for (byte[] n : RocksDB.listColumnFamilies(o, copy.toString())) {
          if (!Arrays.equals(n, RocksDB.DEFAULT_COLUMN_FAMILY)) {
            families.add(new ColumnFamilyDescriptor(n, cfo));
          }
        }
        RocksDB db = RocksDB.openReadOnly(dbo, copy.toString(), families, handles);
        return new Copy(db, families, handles, dbo, cfo);
      } catch (RocksDBException | RuntimeException e) {
        for (ColumnFamilyHandle h : handles) {
          h.close();
        }
        cfo.close();
        dbo.close();
        return null;
      }
    }

    @Override
    public void close() {
      for (ColumnFamilyHandle h : handles) {
        h.close();
      }
      db.close();
      cfOptions.close();
      dbOptions.close();
    }
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
