package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.SalvageSink;
import io.kv4j.sqlite.TreeWalk.Loss;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@link SqliteProvider#salvage}: reads every intact row of a damaged store without SQLite, the way
 * SQLite's {@code .recover} does, but handing over a value only when its row checksum passes.
 *
 * <p>How: the database file and its WAL (or rollback journal) are copied, under the store's
 * directory lock, to a temporary directory outside the store; the copy is brought to its last
 * committed state ({@link DatabaseCopy}); the store's files are never opened for writing. Then:
 *
 * <ol>
 *   <li>the schema (page 1's b-tree) gives each table's and index's root page;
 *   <li>{@link PageOwners} walks every tree and the free list, so that a page is read only through
 *       the one reference that fits it, never from the free list;
 *   <li>each of the store's tables (its own and its keyspaces', named by {@link KeyspaceCatalog}'s
 *       catalog) is walked from its root: every cell of every page is checked before use ({@link
 *       BTreePage}), every row decoded ({@link Record}) and checked against its {@link
 *       RowChecksum}; a damaged page or a failing row is a loss;
 *   <li>for a table with losses, its key index (the UNIQUE index on {@code k}, a tree of its own)
 *       says exactly which keys were lost: those whose rowid lies in a damaged part of the table
 *       and whose row was not read;
 *   <li>rows the index says are lost are looked for on pages no intact reference names (the subtree
 *       under a damaged interior page, a page with a damaged type byte or cell count): a row found
 *       there is handed over only if its rowid and key are the ones the index lists for that table
 *       (and no other), and its checksum passes. Unreferenced pages are searched only while the
 *       free list is intact, so a free page's stale rows never come back.
 * </ol>
 *
 * <p>Each loss is one {@link DamagedRegion}: the store file and offset of the page (in the WAL when
 * the page came from there), the keyspace, how many entries were lost and the range of their keys
 * (from the key index; -1 and null when the index is damaged too). Damage that costs no row (an
 * index page, the header, the free list) is reported with 0 entries lost.
 */
final class Salvage {
  private static final Pattern KEYSPACE_TABLE =
      Pattern.compile("(?i)" + KeyspaceCatalog.TABLE_PREFIX + "([0-9]+)_(.*)", Pattern.DOTALL);

  private final DatabaseCopy db;
  private final String storeTable;
  private final SalvageSink sink;
  private final List<DamagedRegion> damage = new ArrayList<>();
  private final List<SchemaRow> schema = new ArrayList<>();
  private final List<Target> targets = new ArrayList<>();
  private PageOwners owners;
  private TreeWalk trees;

  /** One row of sqlite_schema: type, name, tbl_name, rootpage, sql. */
  private record SchemaRow(String type, String name, String tblName, long root, String sql) {}

  /** One table salvage reads: the store's own keys (keyspace null) or a keyspace's. */
  static final class Target {
    final String keyspace;
    final String table;
    final long root;
    final int tree;
    final TableShape shape;
    final boolean shapeRead;
    final long indexRoot;
    final int indexTree;
    final List<Loss> losses = new ArrayList<>();
    boolean indexComplete;

    Target(
        String keyspace,
        String table,
        long root,
        int tree,
        TableShape shape,
        boolean shapeRead,
        long indexRoot,
        int indexTree) {
      this.keyspace = keyspace;
      this.table = table;
      this.root = root;
      this.tree = tree;
      this.shape = shape;
      this.shapeRead = shapeRead;
      this.indexRoot = indexRoot;
      this.indexTree = indexTree;
    }

    String describe() {
      return keyspace == null
          ? "table '" + table + "'"
          : "keyspace '" + keyspace + "' (table '" + table + "')";
    }
  }

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
    readSchema();
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
    for (int i = 0; i < schema.size(); i++) {
      SchemaRow r = schema.get(i);
      if (r.root() > 0 && ("table".equals(r.type()) || "index".equals(r.type()))) {
        owners.walk(i + 1, r.root(), "table".equals(r.type()) && !withoutRowid(r));
      }
    }
    findTargets();
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

  // ---- the schema ----------------------------------------------------------------------------

  /** Reads sqlite_schema from page 1 (before the page owners are known: a walk of its own). */
  private void readSchema() throws IOException {
    List<Loss> losses = new ArrayList<>();
    new TreeWalk(db, null, damage)
        .walk(
            1,
            PageOwners.rootClaim(0),
            true,
            false,
            losses,
            (rowid, r, problems, where) -> {
              if (r.columns() < 5
                  || !r.isBytes(0)
                  || !r.isBytes(1)
                  || !r.isBytes(2)
                  || !(r.isInteger(3) || r.isNull(3))
                  || !(r.isBytes(4) || r.isNull(4))) {
                problems.add(where + ": not a schema row");
                return null;
              }
              String type = r.text(0, db.encoding);
              schema.add(
                  new SchemaRow(
                      type,
                      r.text(1, db.encoding),
                      r.text(2, db.encoding),
                      r.isNull(3) ? 0 : r.integer(3),
                      r.isNull(4) ? null : r.text(4, db.encoding)));
              return new byte[] {1};
            },
            null);
    for (Loss l : losses) {
      damage.add(
          new DamagedRegion(
              db.fileOf(l.page),
              db.offsetOf(l.page),
              db.pageSize,
              null,
              0,
              null,
              "schema (sqlite_schema) page "
                  + l.page
                  + " damaged: "
                  + String.join("; ", l.problems)
                  + "; no entry is lost here (a table whose schema row it held is reported on"
                  + " its own)"));
    }
  }

  /** The schema row of a table or index: the row whose name, tbl_name and SQL mostly agree. */
  private SchemaRow find(String type, String name) {
    SchemaRow best = null;
    int bestScore = 1;
    boolean tie = false;
    for (SchemaRow r : schema) {
      if (!type.equals(r.type())) {
        continue;
      }
      int score =
          (name.equalsIgnoreCase(r.name()) ? 1 : 0)
              + (name.equalsIgnoreCase(r.tblName()) ? 1 : 0)
              + (name.equalsIgnoreCase(sqlName(r.sql())) ? 1 : 0);
      if (score > bestScore) {
        best = r;
        bestScore = score;
        tie = false;
      } else if (score == bestScore && best != null) {
        tie = true;
      }
    }
    return tie ? null : best;
  }

  /** The name a {@code CREATE TABLE} statement gives, unquoted; "" if unreadable. */
  static String sqlName(String sql) {
    if (sql == null) {
      return "";
    }
    Matcher m =
        Pattern.compile(
                "(?is)\\s*CREATE\\s+(?:TEMP\\w*\\s+)?TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?"
                    + "(\"[^\"]*\"|`[^`]*`|\\[[^\\]]*\\]|'[^']*'|[^\\s(]+)")
            .matcher(sql);
    if (!m.lookingAt()) {
      return "";
    }
    String n = m.group(1);
    char c = n.charAt(0);
    return c == '"' || c == '`' || c == '[' || c == '\'' ? n.substring(1, n.length() - 1) : n;
  }

  /** The tree id of a schema row (its position + 1; 0 is the schema itself). */
  private int treeOf(SchemaRow r) {
    for (int i = 0; i < schema.size(); i++) {
      if (schema.get(i) == r) {
        return i + 1;
      }
    }
    return -1;
  }

  /** The key index of a table: its automatic UNIQUE index (or one on k made by hand). */
  private SchemaRow indexOf(String table) {
    String auto = ("sqlite_autoindex_" + table + "_").toLowerCase(Locale.ROOT);
    SchemaRow found = null;
    for (SchemaRow r : schema) {
      if (!"index".equals(r.type()) || r.root() <= 0) {
        continue;
      }
      boolean named = r.name().toLowerCase(Locale.ROOT).startsWith(auto);
      if (named && r.tblName().equalsIgnoreCase(table)) {
        return r;
      }
      if (named || (r.tblName().equalsIgnoreCase(table) && r.sql() == null)) {
        found = found == null ? r : found;
      }
    }
    return found;
  }

  private Target target(String keyspace, String table) {
    SchemaRow row = find("table", table);
    TableShape parsed = row == null ? null : TableShape.of(row.sql());
    TableShape shape = parsed == null ? TableShape.KV4J : parsed;
    SchemaRow index = indexOf(table);
    return new Target(
        keyspace,
        table,
        row == null ? 0 : row.root(),
        row == null ? -1 : treeOf(row),
        shape,
        parsed != null,
        index == null || shape.withoutRowid() ? 0 : index.root(),
        index == null ? -1 : treeOf(index));
  }

  /**
   * The name a schema row gives its table: the value at least two of name, tbl_name and the SQL
   * text agree on (one flipped bit changes one of them), else null.
   */
  private static String nameOf(SchemaRow r) {
    String sql = sqlName(r.sql());
    if (r.name().equalsIgnoreCase(r.tblName()) || r.name().equalsIgnoreCase(sql)) {
      return r.name();
    }
    return r.tblName().equalsIgnoreCase(sql) ? r.tblName() : null;
  }

  /** The store's table and its keyspaces' tables, named through the keyspace catalog. */
  private void findTargets() throws IOException {
    targets.add(target(null, storeTable));
    Set<String> storeTables = new HashSet<>();
    for (SchemaRow r : schema) {
      String n = "table".equals(r.type()) ? nameOf(r) : null;
      String lower = n == null ? "" : n.toLowerCase(Locale.ROOT);
      if (!lower.isEmpty()
          && !lower.startsWith(KeyspaceCatalog.TABLE_PREFIX)
          && !lower.startsWith("sqlite_")
          && !lower.equals(KeyspaceCatalog.TABLE)) {
        storeTables.add(lower);
      }
    }
    SchemaRow catalogRow = find("table", KeyspaceCatalog.TABLE);
    List<String[]> rows = catalogRow == null ? List.of() : readCatalog(catalogRow);
    // Keyspace tables accounted for: by this store's catalog rows, or another store's.
    Set<SchemaRow> named = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    Set<String> seenKeyspaces = new HashSet<>();
    for (String[] row : rows) {
      String store = row[0];
      String name = row[1];
      String tbl = row[2];
      if (!name.equals(keyspaceName(tbl))) {
        continue; // a damaged row: the table name and the keyspace name disagree
      }
      SchemaRow table = find("table", tbl);
      if (!store.equalsIgnoreCase(storeTable)) {
        if (table != null && storeTables.contains(store.toLowerCase(Locale.ROOT))) {
          named.add(table); // another store's keyspace
        }
        continue;
      }
      if (seenKeyspaces.add(name)) {
        if (table != null) {
          named.add(table);
        }
        targets.add(target(name, tbl));
      }
    }
    boolean onlyStore =
        storeTables.size() == 1 && storeTables.contains(storeTable.toLowerCase(Locale.ROOT));
    for (SchemaRow r : schema) {
      if (!"table".equals(r.type()) || named.contains(r) || !looksLikeKeyspaceTable(r)) {
        continue;
      }
      String tbl = nameOf(r);
      String name = keyspaceName(tbl);
      if (onlyStore && name != null && seenKeyspaces.add(name)) {
        targets.add(target(name, tbl));
        damage.add(
            new DamagedRegion(
                db.fileOf(1),
                db.offsetOf(1),
                db.pageSize,
                name,
                0,
                null,
                "keyspace catalog "
                    + KeyspaceCatalog.TABLE
                    + " has no intact row for table '"
                    + tbl
                    + "': its keyspace is named '"
                    + name
                    + "' after the table, the file's only store being '"
                    + storeTable
                    + "'"));
        continue;
      }
      String why =
          name == null
              ? "its name is damaged in the schema ('"
                  + r.name()
                  + "', '"
                  + r.tblName()
                  + "'), so its keyspace is unknown"
              : !onlyStore
                  ? "it has no intact row in the keyspace catalog "
                      + KeyspaceCatalog.TABLE
                      + " and the file holds several stores, so its store is unknown"
                  : "keyspace '" + name + "' has another table already";
      damage.add(
          new DamagedRegion(
              db.fileOf(1),
              db.offsetOf(1),
              db.pageSize,
              null,
              -1,
              null,
              "keyspace table '" + r.name() + "': " + why + "; none of its rows is salvaged"));
    }
  }

  /** Whether a schema row names a keyspace table (by any of its three names). */
  private static boolean looksLikeKeyspaceTable(SchemaRow r) {
    String p = KeyspaceCatalog.TABLE_PREFIX;
    return r.name().toLowerCase(Locale.ROOT).startsWith(p)
        || r.tblName().toLowerCase(Locale.ROOT).startsWith(p)
        || sqlName(r.sql()).toLowerCase(Locale.ROOT).startsWith(p);
  }

  /** The keyspace catalog's rows: store, name, tbl; its damaged pages are reported. */
  private List<String[]> readCatalog(SchemaRow catalogRow) throws IOException {
    List<String[]> rows = new ArrayList<>();
    TableShape cs = TableShape.of(catalogRow.sql());
    int store = cs == null || cs.position("store") < 0 ? 0 : cs.position("store");
    int name = cs == null || cs.position("name") < 0 ? 1 : cs.position("name");
    int tbl = cs == null || cs.position("tbl") < 0 ? 2 : cs.position("tbl");
    List<Loss> losses = new ArrayList<>();
    trees.walk(
        catalogRow.root(),
        PageOwners.rootClaim(treeOf(catalogRow)),
        true,
        true,
        losses,
        (rowid, r, problems, where) -> {
          if (!r.isBytes(store) || !r.isBytes(name) || !r.isBytes(tbl)) {
            problems.add(where + ": not a catalog row");
            return null;
          }
          rows.add(
              new String[] {
                r.text(store, db.encoding), r.text(name, db.encoding), r.text(tbl, db.encoding)
              });
          return new byte[] {1};
        },
        null);
    for (Loss l : losses) {
      damage.add(
          new DamagedRegion(
              db.fileOf(l.page),
              db.offsetOf(l.page),
              db.pageSize,
              null,
              0,
              null,
              "keyspace catalog "
                  + KeyspaceCatalog.TABLE
                  + ": "
                  + String.join("; ", l.problems)
                  + "; keyspaces whose catalog row it held are named from their tables"));
    }
    return rows;
  }

  /** The keyspace name a keyspace table's name carries ({@code kv4j_ks_<n>_<name>}), or null. */
  static String keyspaceName(String tbl) {
    Matcher m = KEYSPACE_TABLE.matcher(tbl == null ? "" : tbl);
    return m.matches() ? m.group(2) : null;
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
    SchemaRow catalog = find("table", KeyspaceCatalog.TABLE);
    if (catalog != null) {
      related.put(treeOf(catalog), "keyspace catalog " + KeyspaceCatalog.TABLE);
      for (SchemaRow r : schema) {
        if ("index".equals(r.type()) && r.tblName().equalsIgnoreCase(KeyspaceCatalog.TABLE)) {
          related.put(treeOf(r), "index '" + r.name() + "' of the keyspace catalog");
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
