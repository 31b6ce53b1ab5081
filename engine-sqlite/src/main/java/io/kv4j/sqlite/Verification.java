package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code verify()}: what a scan does not read, for the whole file (every keyspace's table). */
final class Verification {
  /** Most lines of an {@code integrity_check} report quoted in an exception. */
  private static final int REPORTED_PROBLEMS = 5;

  private Verification() {}

  /**
   * Checks what a scan does not read. First the database file's header against its length ({@link
   * DatabaseHeader}), when nothing can move either meanwhile: on a read-write store under the
   * writer lock (checkpoints run only there), on an immutable read-only one always. Then {@code
   * PRAGMA integrity_check}, on a read-only connection inside one read transaction: every page of
   * every B-tree, free lists, cell and free-space accounting, and that every index holds exactly
   * the rows of its table, so a key that a damaged key index lost (a get reads null) is reported
   * here. {@code quick_check} skips that last check, which is why it is not used; on 100,000 rows
   * of 1 KiB {@code integrity_check} takes about 2x as long (see README). A scan checks every row's
   * checksum; together they read every byte of the file's pages.
   */
  static void verify(SqliteStore store) {
    checkLength(store);
    Check check =
        store.read(
            "verify (PRAGMA integrity_check)",
            c -> {
              List<String> lines = new ArrayList<>();
              try (ResultSet rs = c.prepare("PRAGMA integrity_check").executeQuery()) {
                while (rs.next()) {
                  // SQLite may return several problems in one row, one per line, after a line
                  // naming the database.
                  for (String line : rs.getString(1).split("\n")) {
                    if (!line.isBlank() && !line.startsWith("*** in database")) {
                      lines.add(line);
                    }
                  }
                }
              }
              if (lines.size() == 1 && "ok".equals(lines.get(0))) {
                return new Check(lines, Map.of(), Map.of(), Map.of());
              }
              Map<Long, String> roots = new HashMap<>();
              Map<String, String> names = new HashMap<>();
              trees(c, roots, names);
              return new Check(lines, roots, names, keyspaceTables(c));
            });
    report(store, check);
  }

  /** What integrity_check said, and what is needed to name the trees it names. */
  private record Check(
      List<String> problems,
      Map<Long, String> trees,
      Map<String, String> names,
      Map<String, String> keyspaces) {}

  /**
   * Root page, and tree name (lower case), to table name (an index counts as its table's); best
   * effort on a damaged file.
   */
  private static void trees(SqlConn c, Map<Long, String> roots, Map<String, String> names) {
    try (ResultSet rs =
        c.prepare("SELECT rootpage, name, tbl_name FROM sqlite_schema WHERE rootpage > 0")
            .executeQuery()) {
      while (rs.next()) {
        roots.put(rs.getLong(1), rs.getString(3));
        names.put(rs.getString(2).toLowerCase(Locale.ROOT), rs.getString(3));
      }
    } catch (SQLException e) {
      // The schema itself is damaged: the regions go without keyspace names.
    }
  }

  /** Keyspace table name (lower case) to keyspace name, best effort on a damaged file. */
  private static Map<String, String> keyspaceTables(SqlConn c) {
    Map<String, String> out = new HashMap<>();
    try {
      if (!KeyspaceCatalog.exists(c)) {
        return out;
      }
      try (ResultSet rs =
          c.prepare("SELECT tbl, name FROM " + KeyspaceCatalog.TABLE).executeQuery()) {
        while (rs.next()) {
          out.put(rs.getString(1).toLowerCase(Locale.ROOT), rs.getString(2));
        }
      }
    } catch (SQLException e) {
      // The catalog is damaged: the regions go without keyspace names.
    }
    return out;
  }

  /** The header/length check, when nothing can move either meanwhile. */
  private static void checkLength(SqliteStore store) {
    Path file = store.file();
    boolean writable = !store.writes().readOnly();
    ReentrantLock writeLock = store.writes().lock();
    store.lifecycle().readLock().lock();
    try {
      store.ensureOpen();
      if (writable || store.readMode() == ReadMode.IMMUTABLE) {
        if (writable) {
          writeLock.lock();
        }
        try {
          boolean pagesElsewhere =
              SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-wal")) > 0
                  || SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-journal")) > 0;
          DatabaseHeader.check(file, pagesElsewhere, store.describe());
          checkWal(store, file);
        } catch (IOException e) {
          throw new StoreIOException(
              store.describe() + ": verify cannot read " + file + ": " + e, e);
        } finally {
          if (writable) {
            writeLock.unlock();
          }
        }
      }
    } finally {
      store.lifecycle().readLock().unlock();
    }
  }

  /**
   * The write-ahead log's frames, checked on disk the way SQLite's recovery would read them ({@link
   * WalLog}): integrity_check reads pages through SQLite's caches and the log's index, never a
   * frame's checksum, so a damaged frame would be found only by the recovery after a crash, which
   * would silently drop every commit after it. Called with writers and checkpoints kept out.
   */
  private static void checkWal(SqliteStore store, Path file) throws IOException {
    Path wal = SqliteFiles.sideFile(file, "-wal");
    if (SqliteFiles.sizeOf(wal) < WalLog.HEADER) {
      return;
    }
    WalLog log = WalLog.check(wal, store.pageSize());
    if (log.damage.isEmpty()) {
      return;
    }
    List<String> what = new ArrayList<>();
    for (DamagedRegion r : log.damage) {
      what.add(r.describe());
    }
    throw new StoreCorruptedException(
        store.describe()
            + ": the write-ahead log "
            + wal
            + " is damaged ("
            + log.damage.size()
            + (log.damage.size() == 1 ? " region" : " regions")
            + "): "
            + String.join("; ", what),
        log.damage);
  }

  /**
   * Turns integrity_check's lines into one {@link DamagedRegion} per damaged page (lines naming the
   * same page are one region; "Tree R page P" names the tree, and so the keyspace), and one per
   * line that names no page (an index missing a row names the index), and throws them all.
   */
  private static void report(SqliteStore store, Check check) {
    List<String> problems = check.problems();
    Path file = store.file();
    if (problems.size() == 1 && "ok".equals(problems.get(0))) {
      return;
    }
    List<DamagedRegion> regions = regions(store, check);
    List<String> shown =
        problems.size() > REPORTED_PROBLEMS ? problems.subList(0, REPORTED_PROBLEMS) : problems;
    int more = problems.size() - shown.size();
    throw new StoreCorruptedException(
        store.describe()
            + ": PRAGMA integrity_check found the database file "
            + file
            + " damaged ("
            + problems.size()
            + (problems.size() == 1 ? " problem" : " problems")
            + (problems.size() >= 100 ? " or more" : "")
            + " in "
            + regions.size()
            + (regions.size() == 1 ? " region" : " regions")
            + "): "
            + String.join("; ", shown)
            + (more > 0 ? "; and " + more + " more" : ""),
        regions);
  }

  private static final Pattern TREE_PAGE = Pattern.compile("Tree (\\d+) page (\\d+)");
  private static final Pattern PAGE = Pattern.compile("(?i)\\bpage (\\d+)");
  private static final Pattern INDEX = Pattern.compile("(?i)\\bindex (\\S+)");

  private static List<DamagedRegion> regions(SqliteStore store, Check check) {
    Path file = store.file();
    long pageSize = store.pageSize();
    Map<String, List<String>> byPlace = new LinkedHashMap<>();
    Map<String, String> keyspaceOf = new HashMap<>();
    Map<String, Long> pageOf = new HashMap<>();
    for (String raw : check.problems()) {
      String line = raw;
      Matcher tree = TREE_PAGE.matcher(line);
      Matcher page = PAGE.matcher(line);
      Matcher index = INDEX.matcher(line);
      String place;
      String table = null;
      if (tree.find()) {
        place = "page " + tree.group(2);
        pageOf.put(place, Long.parseLong(tree.group(2)));
        table = check.trees().get(Long.parseLong(tree.group(1)));
      } else if (page.find()) {
        place = "page " + page.group(1);
        pageOf.put(place, Long.parseLong(page.group(1)));
      } else if (index.find()) {
        place = "index " + index.group(1);
        table = check.names().get(index.group(1).toLowerCase(Locale.ROOT));
      } else {
        place = line;
      }
      byPlace.computeIfAbsent(place, x -> new ArrayList<>()).add(line);
      if (table != null) {
        String ks = check.keyspaces().get(table.toLowerCase(Locale.ROOT));
        if (ks != null) {
          keyspaceOf.putIfAbsent(place, ks);
        }
      }
    }
    List<DamagedRegion> out = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : byPlace.entrySet()) {
      Long page = pageOf.get(e.getKey());
      out.add(
          new DamagedRegion(
              file,
              page == null ? -1 : (page - 1) * pageSize,
              page == null ? -1 : pageSize,
              keyspaceOf.get(e.getKey()),
              -1,
              null,
              "integrity_check: " + String.join("; ", e.getValue())));
    }
    return out;
  }
}
