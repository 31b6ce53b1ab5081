package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.SalvageSink;
import io.kv4j.sqlite.SchemaRows.SchemaRow;
import io.kv4j.sqlite.StoreTables.Target;
import io.kv4j.sqlite.TreeWalk.Loss;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link SqliteProvider#salvage}: reads every intact row of a damaged store without SQLite, the way
 * SQLite's {@code .recover} does, but handing over a value only when its row checksum passes.
 *
 * <p>How: the database file and its WAL (or rollback journal) are copied, under the store's
 * directory lock, to a temporary directory outside the store; the copy is brought to its last
 * committed state ({@link DatabaseCopy}); the store's files are never opened for writing. Then:
 *
 * <ol>
 *   <li>the schema (page 1's b-tree, {@link SchemaRows}) gives each table's and index's root page;
 *   <li>{@link PageOwners} walks every tree and the free list, so that a page is read only through
 *       the one reference that fits it, never from the free list;
 *   <li>each of the store's tables (its own and its keyspaces', named by {@link KeyspaceCatalog}'s
 *       catalog: {@link StoreTables}) is walked from its root ({@link TreeWalk}): every cell of
 *       every page is checked before use ({@link BTreePage}), every row decoded ({@link Record})
 *       and checked against its {@link RowChecksum}; a damaged page or a failing row is a loss;
 *   <li>for a table with losses, its key index (the UNIQUE index on {@code k}, a tree of its own)
 *       says exactly which keys were lost: those whose rowid lies in a damaged part of the table
 *       and whose row was not read;
 *   <li>rows the index says are lost are looked for on pages no intact reference names (the subtree
 *       under a damaged interior page, a page with a damaged type byte or cell count): a row found
 *       there is handed over only if its rowid and key are the ones the index lists for that table
 *       (and no other), and its checksum passes. Unreferenced pages are searched only while the
 *       free list is intact, so a free page's stale rows never come back ({@link LostRows}).
 * </ol>
 *
 * <p>Each loss is one {@link DamagedRegion}: the store file and offset of the page (in the WAL when
 * the page came from there), the keyspace, how many entries were lost and the range of their keys
 * (from the key index; -1 and null when the index is damaged too). Damage that costs no row (an
 * index page, the header, the free list) is reported with 0 entries lost.
 */
final class Salvage {
  private final DatabaseCopy db;
  private final String storeTable;
  private final SalvageSink sink;
  private final List<DamagedRegion> damage = new ArrayList<>();
  private SchemaRows schema;
  private List<Target> targets;
  private PageOwners owners;
  private TreeWalk trees;

  private Salvage(DatabaseCopy db, String storeTable, SalvageSink sink) {
    this.db = db;
    this.storeTable = storeTable;
    this.sink = sink;
  }

  /**
   * Salvages a store (see {@link io.kv4j.spi.StoreProvider#salvage}).
   *
   * @throws io.kv4j.StoreLockedException if a read-write store has the directory open
   * @throws StoreIOException if the directory or its database file cannot be read
   */
  static List<DamagedRegion> run(StoreConfig config, SalvageSink sink) {
    SqliteSettings s = SqliteSettings.from(config);
    Path given = config.path();
    if (!Files.isDirectory(given)) {
      throw new StoreIOException(
          "engine 'sqlite' at " + given + ": no store there to salvage (not a directory)",
          (Throwable) null);
    }
    Path tmp = null;
    try {
      Path dir = given.toRealPath();
      Path file = dir.resolve(SqliteStore.DB_FILE_NAME);
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw new StoreIOException(
            "engine 'sqlite' at "
                + dir
                + ": nothing to salvage: the database file "
                + file
                + " is missing or unreadable",
            (Throwable) null);
      }
      tmp = Files.createTempDirectory("kv4j-sqlite-salvage-");
      if (tmp.toRealPath().startsWith(dir)) {
        throw new StoreIOException(
            "engine 'sqlite': the temporary directory "
                + tmp
                + " lies inside the store "
                + dir
                + ", which salvage must not write to; set java.io.tmpdir elsewhere",
            (Throwable) null);
      }
      Path copy = tmp.resolve(SqliteStore.DB_FILE_NAME);
      Path walCopy = null;
      Path journalCopy = null;
      DirectoryLock lock = lockIfKv4j(dir);
      try {
        Files.copy(file, copy);
        Path wal = SqliteFiles.sideFile(file, "-wal");
        if (SqliteFiles.sizeOf(wal) > 0) {
          walCopy = tmp.resolve(wal.getFileName());
          Files.copy(wal, walCopy);
        }
        Path journal = SqliteFiles.sideFile(file, "-journal");
        if (SqliteFiles.sizeOf(journal) > 0) {
          journalCopy = tmp.resolve(journal.getFileName());
          Files.copy(journal, journalCopy);
        }
      } finally {
        if (lock != null) {
          lock.close();
        }
      }
      if (Files.size(copy) == 0) {
        return List.of(
            new DamagedRegion(
                file, 0, 0, null, -1, null, "the database file is empty: nothing to salvage"));
      }
      try (DatabaseCopy db = DatabaseCopy.open(copy, walCopy, journalCopy, file)) {
        return new Salvage(db, s.table(), sink).salvage();
      }
    } catch (IOException e) {
      throw new StoreIOException(
          "engine 'sqlite' at " + given + ": salvage cannot read the store: " + e, e);
    } finally {
      DatabaseCopy.deleteQuietly(tmp);
    }
  }

  /**
   * Takes the store's directory lock while the files are copied, when a kv4j lock file exists (a
   * read-write store holds it): so no kv4j writer is open meanwhile, in this process or another.
   * Opening the existing lock file changes nothing in it; without one (a store never opened
   * read-write, or a read-only directory) nothing is created and the copy is taken as it is.
   */
  private static DirectoryLock lockIfKv4j(Path dir) {
    Path lockFile = dir.resolve(DirectoryLock.FILE_NAME);
    if (!Files.isRegularFile(lockFile) || !Files.isWritable(lockFile)) {
      return null;
    }
    return DirectoryLock.acquire(dir, SqliteProvider.ID);
  }

  private List<DamagedRegion> salvage() throws IOException {
    damage.addAll(db.damage);
    if (db.present < 1) {
      damage.add(
          new DamagedRegion(
              db.source, 0, -1, null, -1, null, "the database file holds no whole page"));
      return damage;
    }
    schema = SchemaRows.read(db, damage);
    owners = new PageOwners(db);
    trees = new TreeWalk(db, owners, damage);
    owners.readFreeList();
    if (!owners.freeListTrusted()) {
      damage.add(
          new DamagedRegion(
              db.fileOf(1),
              db.offsetOf(1) + 32,
              8,
              null,
              0,
              null,
              "free list damaged ("
                  + owners.freeListProblem()
                  + "): pages that no table references are not searched for lost rows"));
    }
    owners.walk(0, 1, true);
    for (int i = 0; i < schema.rows().size(); i++) {
      SchemaRow r = schema.rows().get(i);
      if (r.root() > 0 && ("table".equals(r.type()) || "index".equals(r.type()))) {
        owners.walk(i + 1, r.root(), "table".equals(r.type()) && !withoutRowid(r));
      }
    }
    targets = StoreTables.find(db, schema, storeTable, trees, damage);
    for (Target t : targets) {
      readTable(t);
    }
    LostRows lost = new LostRows(db, owners, trees, sink);
    for (Target t : targets) {
      if (!t.losses.isEmpty() && !t.shape.withoutRowid()) {
        lost.readIndex(t);
      }
    }
    lost.recover();
    reportStructure();
    for (Target t : targets) {
      for (Loss l : t.losses) {
        damage.add(region(t, l));
      }
    }
    return damage;
  }

  private static boolean withoutRowid(SchemaRow r) {
    TableShape s = TableShape.of(r.sql());
    return s != null && s.withoutRowid();
  }

  // ---- walking a table -----------------------------------------------------------------------

  /** Reads a table of the store, handing every intact row to the sink. */
  private void readTable(Target t) throws IOException {
    if (t.root <= 0) {
      Loss l = new Loss(1, true, null, null, null, null);
      l.problems.add(
          "its schema row is missing or damaged, so its root page is unknown"
              + (t.indexRoot > 0 ? "" : " (and so is its key index)"));
      t.losses.add(l);
      return;
    }
    int k = t.shape.position("k");
    int v = t.shape.position("v");
    int crc = t.shape.position(RowChecksum.COLUMN);
    boolean required = t.shapeRead && crc >= 0;
    trees.walk(
        t.root,
        PageOwners.rootClaim(t.tree),
        !t.shape.withoutRowid(),
        true,
        t.losses,
        (rowid, r, problems, where) -> {
          byte[] key = checkedKey(r, k, v, crc, required, problems, where);
          if (key != null) {
            sink.entry(t.keyspace, key, r.bytes(v));
          }
          return key;
        },
        t);
  }

  /**
   * A kv row's key if the row is intact: key and value are bytes, and its checksum (when the table
   * has the column, or when the record carries one) matches. Else null and a problem.
   */
  static byte[] checkedKey(
      Record r, int k, int v, int crc, boolean required, List<String> problems, String where) {
    if (!r.isBytes(k) || !r.isBytes(v)) {
      problems.add(where + ": no key or value column");
      return null;
    }
    byte[] key = r.bytes(k);
    boolean has = crc >= 0 && r.columns() > crc;
    if (required || (has && !r.isNull(crc))) {
      if (!has || !r.isInteger(crc) || r.integer(crc) != RowChecksum.of(key, r.bytes(v))) {
        problems.add(where + ": fails its row checksum");
        return null;
      }
    }
    return key;
  }

  /**
   * Damage on pages of the schema, the catalog and the store tables' indexes: it costs no row (rows
   * are read from the tables), but it is damage salvage stepped over.
   */
  private void reportStructure() {
    Map<Integer, String> related = new HashMap<>();
    related.put(0, "schema (sqlite_schema)");
    SchemaRow catalog = schema.find("table", KeyspaceCatalog.TABLE);
    if (catalog != null) {
      related.put(schema.treeOf(catalog), "keyspace catalog " + KeyspaceCatalog.TABLE);
      for (SchemaRow r : schema.rows()) {
        if ("index".equals(r.type()) && r.tblName().equalsIgnoreCase(KeyspaceCatalog.TABLE)) {
          related.put(schema.treeOf(r), "index '" + r.name() + "' of the keyspace catalog");
        }
      }
    }
    Set<Integer> tables = new HashSet<>();
    for (Target t : targets) {
      tables.add(t.tree);
      if (t.indexTree >= 0) {
        related.put(t.indexTree, "key index of " + t.describe());
      }
    }
    Set<Long> reported = new HashSet<>();
    for (Target t : targets) {
      for (Loss l : t.losses) {
        reported.add(l.page);
      }
    }
    for (Map.Entry<Long, BTreePage> e : owners.damagedPages.entrySet()) {
      int tree = owners.damagedTree.get(e.getKey());
      String what = related.get(tree);
      if (what == null || tables.contains(tree) || reported.contains(e.getKey()) || tree == 0) {
        continue; // another store's tree, a store table (reported with its losses), or the schema
      }
      BTreePage page = e.getValue();
      damage.add(
          new DamagedRegion(
              db.fileOf(page.number),
              db.offsetOf(page.number),
              db.pageSize,
              null,
              0,
              null,
              what
                  + ": "
                  + BTreePage.typeName(page.type)
                  + " page "
                  + page.number
                  + " damaged ("
                  + String.join("; ", page.problems)
                  + "); no entry lost: rows are read from their tables"));
    }
  }

  private DamagedRegion region(Target t, Loss l) {
    boolean counted = t.indexComplete && t.indexRoot > 0;
    long lost;
    if (counted) {
      lost = l.lostKeys.size();
    } else if (!l.subtree && l.recovered == 0) {
      lost = l.failedRows;
    } else {
      lost = -1;
    }
    KeyRange keys = null;
    if (!l.lostKeys.isEmpty()) {
      byte[] min = l.lostKeys.get(0);
      byte[] max = min;
      for (byte[] k : l.lostKeys) {
        min = Arrays.compareUnsigned(k, min) < 0 ? k : min;
        max = Arrays.compareUnsigned(k, max) > 0 ? k : max;
      }
      keys = KeyRange.all().gte(min).lte(max);
    } else if (t.shape.withoutRowid() && lost != 0 && (l.keyLo != null || l.keyHi != null)) {
      keys = KeyRange.all();
      keys = l.keyLo == null ? keys : keys.gt(l.keyLo);
      keys = l.keyHi == null ? keys : keys.lt(l.keyHi);
    }
    StringBuilder problem = new StringBuilder(t.describe()).append(": ");
    problem.append(String.join("; ", l.problems));
    if (l.recovered > 0) {
      problem
          .append("; ")
          .append(l.recovered)
          .append(l.recovered == 1 ? " row" : " rows")
          .append(" of it found on pages no intact reference reads, and salvaged");
    }
    if (!counted && t.indexRoot > 0 && !t.shape.withoutRowid()) {
      problem.append("; the key index is damaged too, so what was lost is not known exactly");
    }
    return new DamagedRegion(
        db.fileOf(l.page),
        db.offsetOf(l.page),
        db.pageSize,
        t.keyspace,
        lost,
        keys,
        problem.toString());
  }
}
