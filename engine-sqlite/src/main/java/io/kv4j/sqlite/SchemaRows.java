package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.sqlite.TreeWalk.Loss;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rows of sqlite_schema as salvage reads them from page 1, without SQLite: each table's and
 * index's type, names, root page and SQL text, and the lookups salvage makes in them. A row's
 * position gives its tree id for {@link PageOwners} (0 is the schema itself). Names are not trusted
 * one by one: a table is found by the row whose name, tbl_name and SQL text mostly agree (one
 * flipped bit changes only one of them).
 */
final class SchemaRows {
  /** One row of sqlite_schema: type, name, tbl_name, rootpage, sql. */
  record SchemaRow(String type, String name, String tblName, long root, String sql) {}

  private final List<SchemaRow> rows = new ArrayList<>();

  private SchemaRows() {}

  /** Reads sqlite_schema from page 1 (before the page owners are known: a walk of its own). */
  static SchemaRows read(DatabaseCopy db, List<DamagedRegion> damage) throws IOException {
    SchemaRows schema = new SchemaRows();
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
              schema.rows.add(
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
    return schema;
  }

  /** The rows in the order the schema's walk read them (a row's tree id is its index + 1). */
  List<SchemaRow> rows() {
    return rows;
  }

  /** The schema row of a table or index: the row whose name, tbl_name and SQL mostly agree. */
  SchemaRow find(String type, String name) {
    SchemaRow best = null;
    int bestScore = 1;
    boolean tie = false;
    for (SchemaRow r : rows) {
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
  int treeOf(SchemaRow r) {
    for (int i = 0; i < rows.size(); i++) {
      if (rows.get(i) == r) {
        return i + 1;
      }
    }
    return -1;
  }

  /** The key index of a table: its automatic UNIQUE index (or one on k made by hand). */
  SchemaRow indexOf(String table) {
    String auto = ("sqlite_autoindex_" + table + "_").toLowerCase(Locale.ROOT);
    SchemaRow found = null;
    for (SchemaRow r : rows) {
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

  /**
   * The name a schema row gives its table: the value at least two of name, tbl_name and the SQL
   * text agree on (one flipped bit changes one of them), else null.
   */
  static String nameOf(SchemaRow r) {
    String sql = sqlName(r.sql());
    if (r.name().equalsIgnoreCase(r.tblName()) || r.name().equalsIgnoreCase(sql)) {
      return r.name();
    }
    return r.tblName().equalsIgnoreCase(sql) ? r.tblName() : null;
  }
}
