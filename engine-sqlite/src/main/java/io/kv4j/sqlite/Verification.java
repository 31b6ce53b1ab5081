package io.kv4j.sqlite;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

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
    List<String> problems =
        store.read(
            "verify (PRAGMA integrity_check)",
            c -> {
              List<String> lines = new ArrayList<>();
              try (ResultSet rs = c.prepare("PRAGMA integrity_check").executeQuery()) {
                while (rs.next()) {
                  lines.add(rs.getString(1));
                }
              }
              return lines;
            });
    report(store, problems);
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

  private static void report(SqliteStore store, List<String> problems) {
    Path file = store.file();
    if (!(problems.size() == 1 && "ok".equals(problems.get(0)))) {
      List<String> shown =
          problems.size() > REPORTED_PROBLEMS ? problems.subList(0, REPORTED_PROBLEMS) : problems;
      throw new StoreCorruptedException(
          store.describe()
              + ": PRAGMA integrity_check found the database file "
              + file
              + " damaged ("
              + problems.size()
              + (problems.size() == 1 ? " problem" : " problems")
              + (problems.size() >= 100 ? " or more" : "")
              + "): "
              + String.join("; ", shown)
              + (problems.size() > shown.size() ? "; ..." : ""),
          file,
          -1);
    }
  }
}
