package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.sqlite.SchemaRows.SchemaRow;
import io.kv4j.sqlite.TreeWalk.Loss;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tables salvage reads for one store: the store's own table and its keyspaces' tables, named
 * through the keyspace catalog ({@link KeyspaceCatalog}), each with its root page, its columns
 * ({@link TableShape}) and its key index. The catalog's rows are read from its own tree; a keyspace
 * table with no intact catalog row is named after its table when the file holds this store only,
 * else reported with none of its rows salvaged. Damage met on the way (the catalog's pages, a table
 * whose keyspace or store is unknown) is added to the report.
 */
final class StoreTables {
  private static final Pattern KEYSPACE_TABLE =
      Pattern.compile("(?i)" + KeyspaceCatalog.TABLE_PREFIX + "([0-9]+)_(.*)", Pattern.DOTALL);

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

  private final DatabaseCopy db;
  private final SchemaRows schema;
  private final String storeTable;
  private final TreeWalk trees;
  private final List<DamagedRegion> damage;
  private final List<Target> targets = new ArrayList<>();

  private StoreTables(
      DatabaseCopy db,
      SchemaRows schema,
      String storeTable,
      TreeWalk trees,
      List<DamagedRegion> damage) {
    this.db = db;
    this.schema = schema;
    this.storeTable = storeTable;
    this.trees = trees;
    this.damage = damage;
  }

  /**
   * The store's table first, then its keyspaces' tables in catalog order, then those named after
   * their tables; the damage met is added to {@code damage}.
   */
  static List<Target> find(
      DatabaseCopy db,
      SchemaRows schema,
      String storeTable,
      TreeWalk trees,
      List<DamagedRegion> damage)
      throws IOException {
    StoreTables tables = new StoreTables(db, schema, storeTable, trees, damage);
    tables.findTargets();
    return tables.targets;
  }

  private Target target(String keyspace, String table) {
    SchemaRow row = schema.find("table", table);
    TableShape parsed = row == null ? null : TableShape.of(row.sql());
    TableShape shape = parsed == null ? TableShape.KV4J : parsed;
    SchemaRow index = schema.indexOf(table);
    return new Target(
        keyspace,
        table,
        row == null ? 0 : row.root(),
        row == null ? -1 : schema.treeOf(row),
        shape,
        parsed != null,
        index == null || shape.withoutRowid() ? 0 : index.root(),
        index == null ? -1 : schema.treeOf(index));
  }

  /** The store's table and its keyspaces' tables, named through the keyspace catalog. */
  private void findTargets() throws IOException {
    targets.add(target(null, storeTable));
    Set<String> storeTables = new HashSet<>();
    for (SchemaRow r : schema.rows()) {
      String n = "table".equals(r.type()) ? SchemaRows.nameOf(r) : null;
      String lower = n == null ? "" : n.toLowerCase(Locale.ROOT);
      if (!lower.isEmpty()
          && !lower.startsWith(KeyspaceCatalog.TABLE_PREFIX)
          && !lower.startsWith("sqlite_")
          && !lower.equals(KeyspaceCatalog.TABLE)) {
        storeTables.add(lower);
      }
    }
    SchemaRow catalogRow = schema.find("table", KeyspaceCatalog.TABLE);
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
      SchemaRow table = schema.find("table", tbl);
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
    for (SchemaRow r : schema.rows()) {
      if (!"table".equals(r.type()) || named.contains(r) || !looksLikeKeyspaceTable(r)) {
        continue;
      }
      String tbl = SchemaRows.nameOf(r);
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
        || SchemaRows.sqlName(r.sql()).toLowerCase(Locale.ROOT).startsWith(p);
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
        PageOwners.rootClaim(schema.treeOf(catalogRow)),
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
}
