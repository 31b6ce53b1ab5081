package io.kv4j.sqlite;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where a table's columns sit in its records, read from its {@code CREATE TABLE} text: a rowid
 * table's records hold the columns in declared order; a {@code WITHOUT ROWID} table's hold the
 * primary key columns first, then the others in declared order.
 *
 * @param columns the record positions by name (lower case): index = position
 * @param withoutRowid whether the table is {@code WITHOUT ROWID} (an index b-tree)
 * @param parsed whether the text could be read (else kv4j's layout is assumed)
 */
record TableShape(List<String> columns, boolean withoutRowid, boolean parsed) {

  /** kv4j's own layout: {@code k}, {@code v}, {@code crc32c}, a rowid table. */
  static final TableShape KV4J =
      new TableShape(List.of("k", "v", RowChecksum.COLUMN), false, false);

  /** The record position of a column, or -1. */
  int position(String column) {
    return columns.indexOf(column);
  }

  /** Whether the table's rows carry kv4j's checksum. */
  boolean checksummed() {
    return position(RowChecksum.COLUMN) >= 0;
  }

  /**
   * Reads a {@code CREATE TABLE} statement; null if it cannot be read.
   *
   * @param sql the statement, as sqlite_schema keeps it
   */
  static TableShape of(String sql) {
    if (sql == null) {
      return null;
    }
    int open = sql.indexOf('(');
    if (open < 0) {
      return null;
    }
    List<String> defs = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    int depth = 0;
    char quote = 0;
    int close = -1;
    for (int i = open + 1; i < sql.length() && close < 0; i++) {
      char c = sql.charAt(i);
      if (quote != 0) {
        cur.append(c);
        if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'' || c == '`') {
        quote = c;
        cur.append(c);
      } else if (c == '[') {
        quote = ']';
        cur.append(c);
      } else if (c == '(') {
        depth++;
        cur.append(c);
      } else if (c == ')') {
        if (depth == 0) {
          defs.add(cur.toString());
          close = i;
        } else {
          depth--;
          cur.append(c);
        }
      } else if (c == ',' && depth == 0) {
        defs.add(cur.toString());
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    if (close < 0) {
      return null;
    }
    String tail = sql.substring(close + 1).toUpperCase(Locale.ROOT).replaceAll("\\s+", " ");
    boolean withoutRowid = tail.contains("WITHOUT ROWID");
    List<String> columns = new ArrayList<>();
    List<String> key = new ArrayList<>();
    for (String def : defs) {
      String d = def.strip();
      String name = firstToken(d);
      if (name.isEmpty()) {
        return null;
      }
      String upper = d.toUpperCase(Locale.ROOT);
      String word = name.toUpperCase(Locale.ROOT);
      boolean quoted = "\"'`[".indexOf(d.charAt(0)) >= 0;
      if (!quoted
          && (word.equals("CONSTRAINT")
              || word.equals("PRIMARY")
              || word.equals("UNIQUE")
              || word.equals("CHECK")
              || word.equals("FOREIGN"))) {
        int pk = upper.indexOf("PRIMARY KEY");
        if (pk >= 0) {
          int from = d.indexOf('(', pk);
          int to = from < 0 ? -1 : d.indexOf(')', from);
          if (from >= 0 && to > from) {
            for (String k : d.substring(from + 1, to).split(",")) {
              key.add(firstToken(k.strip()).toLowerCase(Locale.ROOT));
            }
          }
        }
        continue;
      }
      String column = name.toLowerCase(Locale.ROOT);
      columns.add(column);
      if (upper.contains("PRIMARY KEY")) {
        key.add(column);
      }
    }
    if (withoutRowid) {
      List<String> ordered = new ArrayList<>(key);
      for (String c : columns) {
        if (!key.contains(c)) {
          ordered.add(c);
        }
      }
      columns = ordered;
    }
    if (!columns.contains("k") || !columns.contains("v")) {
      return null;
    }
    return new TableShape(List.copyOf(columns), withoutRowid, true);
  }

  /** The first identifier of a definition, unquoted. */
  private static String firstToken(String d) {
    if (d.isEmpty()) {
      return "";
    }
    char q = d.charAt(0);
    char end = q == '[' ? ']' : q;
    if (q == '"' || q == '\'' || q == '`' || q == '[') {
      int to = d.indexOf(end, 1);
      return to < 0 ? "" : d.substring(1, to);
    }
    int i = 0;
    while (i < d.length() && !Character.isWhitespace(d.charAt(i)) && d.charAt(i) != '(') {
      i++;
    }
    return d.substring(0, i);
  }
}
