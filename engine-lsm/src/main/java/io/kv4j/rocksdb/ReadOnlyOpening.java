package io.kv4j.rocksdb;

import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

/**
 * A read-only open that misses no write acknowledged before it began, also while a writer has the
 * store open (in this process or another) and flushes meanwhile.
 *
 * <p>RocksDB's read-only open reads the MANIFEST (the table files, opening every one), then lists
 * and replays the WALs. A flush of the writer that is recorded in between moves a WAL's writes into
 * a table file the view does not list, and the WAL is deleted: the open succeeds without those
 * writes (seen: 488 of 500 keys of one memtable missing). Neither the table files nor the WAL hold
 * them for this view, and nothing reports it.
 *
 * <p>The check: a write acknowledged before the open began is in a WAL that exists when the open
 * begins, or in a table file that every MANIFEST recorded since lists (a WAL is deleted only after
 * the flush that emptied it is recorded). So if every WAL listed before the open that the view
 * still needs (numbered at or above its {@code rocksdb.min-log-number-to-keep}) exists after it,
 * the open listed and replayed each of them. If one is gone, the view may lack its writes: it is
 * closed and the open repeated, as after a file deleted under the open or a column family dropped
 * meanwhile (errors that count as damage only if the directory did not change during the attempt).
 * After {@value #ATTEMPTS} attempts it fails with {@link StoreIOException}. A store no writer has
 * open does not change, so it opens in one attempt, as before.
 *
 * <p><b>Beside a live writer</b> (a process holds the store's lock, {@link LiveWriters}) the view
 * is a RocksDB secondary instance instead ({@code OpenAsSecondary}, with a directory of its own for
 * its state outside the store, deleted at close), checked the same way; when a flush raced it, it
 * is not reopened but told to catch up ({@code TryCatchUpWithPrimary}: it reads the MANIFEST's new
 * records and the WALs from where it stopped), and checked again around each catch-up, up to
 * {@value #CATCH_UPS} times. A catch-up takes a fraction of an open (no table file is opened
 * again), so the writer's flushes seldom race it: measured beside a process putting keys with a 64
 * KiB write buffer and two CPU hogs, 4 of 60 plain opens gave up after {@value #ATTEMPTS} attempts,
 * none of 60 opens as a secondary. After the open the view stands still, as a plain read-only one
 * does. A secondary needs {@code max_open_files=-1} (the engine's default): with another value, or
 * where {@code /proc/locks} cannot tell (not Linux), the plain read-only open is used.
 */
final class ReadOnlyOpening {
  private ReadOnlyOpening() {}

  /** How often a read-only open is tried before it fails. */
  static final int ATTEMPTS = 5;

  /** How often a secondary instance is told to catch up before the open fails. */
  static final int CATCH_UPS = 20;

  private static final io.kv4j.spi.EngineLog LOG = new io.kv4j.spi.EngineLog("io.kv4j.rocksdb");

  private static final Pattern WAL = Pattern.compile("(\\d{1,18})\\.log");

  /**
   * Opens the database read-only with every column family its MANIFEST lists, adding them to {@code
   * families} and their handles to {@code handles} in the same order.
   *
   * @throws StoreIOException if a writer changed the store under each of {@value #ATTEMPTS}
   *     attempts, or on an I/O error
   * @throws io.kv4j.StoreCorruptedException if a file the store refers to is missing while nothing
   *     changes in the directory
   */
  static RocksDB open(
      NativeOptions opts,
      Path dir,
      List<ColumnFamilyDescriptor> families,
      List<ColumnFamilyHandle> handles) {
    String w = opts.options.walDir();
    Path walDir = w == null || w.isEmpty() ? dir : Path.of(w);
    if (opts.options.maxOpenFiles() == -1 && LiveWriters.writer(dir) != 0) {
      Path secondary = secondaryDirectory(dir);
      if (secondary != null) {
        opts.secondary = secondary; // deleted with the options, whatever happens from here
        return secondary(opts, dir, walDir, secondary, families, handles);
      }
    }
    String race = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      Map<Path, Long> before = files(dir, walDir);
      families.clear();
      handles.clear();
      RocksDB db;
      try {
        families.addAll(Opening.families(opts, dir, false));
        db = RocksDB.openReadOnly(opts.dbOptions, dir.toString(), families, handles);
      } catch (RocksDBException e) {
        boolean raceable = Opening.isMissingFile(e) || isDroppedFamily(e);
        if (!raceable || files(dir, walDir).equals(before)) {
          throw Opening.translateOpen(dir, true, e); // the store's own state, not a race
        }
        race = String.valueOf(e.getMessage());
        retrying(dir, attempt, race);
        continue;
      }
      List<String> missed = missedWals(db, walDir, before, files(dir, walDir));
      if (missed.isEmpty()) {
        return db;
      }
      for (ColumnFamilyHandle h : handles) {
        h.close();
      }
      handles.clear();
      db.close();
      race = "the writer deleted " + String.join(", ", missed) + " while the view was read";
      retrying(dir, attempt, race);
    }
    throw gaveUp(dir, ATTEMPTS + " attempts", race);
  }

  private static StoreIOException gaveUp(Path dir, String tries, String race) {
    return new StoreIOException(
        "engine '"
            + RocksDbProvider.ID
            + "' at "
            + dir
            + ": read-only open gave up after "
            + tries
            + ", each raced by the writer that has the store open (last: "
            + race
            + "), so the view could lack acknowledged writes; open again, or read through the"
            + " writer",
        (Throwable) null);
  }

  /**
   * A secondary instance of the store beside its live writer: opened (again only when the open
   * itself failed on a file or column family the writer removed), then, if a WAL the view needed
   * vanished during the open, caught up with the writer until a catch-up runs without losing one. A
   * write acknowledged before the open began is in a WAL that existed when a catch-up began, or in
   * a table file the MANIFEST lists by then, which the catch-up reads to its end; so a catch-up
   * during which no needed WAL vanished leaves a complete view, as a plain open does.
   */
  private static RocksDB secondary(
      NativeOptions opts,
      Path dir,
      Path walDir,
      Path secondary,
      List<ColumnFamilyDescriptor> families,
      List<ColumnFamilyHandle> handles) {
    String race = null;
    RocksDB db = null;
    Map<Path, Long> before = null;
    for (int attempt = 1; attempt <= ATTEMPTS && db == null; attempt++) {
      before = files(dir, walDir);
      families.clear();
      handles.clear();
      try {
        families.addAll(Opening.families(opts, dir, false));
        db =
            RocksDB.openAsSecondary(
                opts.dbOptions, dir.toString(), secondary.toString(), families, handles);
      } catch (RocksDBException e) {
        boolean raceable = Opening.isMissingFile(e) || isDroppedFamily(e);
        if (!raceable || files(dir, walDir).equals(before)) {
          throw Opening.translateOpen(dir, true, e);
        }
        race = String.valueOf(e.getMessage());
        retrying(dir, attempt, race);
      }
    }
    if (db == null) {
      throw gaveUp(dir, ATTEMPTS + " attempts", race);
    }
    boolean ok = false;
    try {
      List<String> missed = missedWals(db, walDir, before, files(dir, walDir));
      for (int round = 1; !missed.isEmpty(); round++) {
        if (round > CATCH_UPS) {
          throw gaveUp(dir, "opening and " + CATCH_UPS + " catch-ups", race);
        }
        race = "the writer deleted " + String.join(", ", missed) + " while the view was read";
        LOG.log(
            System.Logger.Level.DEBUG,
            "read-only open of {0} (secondary), catch-up {1} of {2}: {3}",
            dir,
            round,
            CATCH_UPS,
            race);
        before = files(dir, walDir);
        try {
          db.tryCatchUpWithPrimary();
        } catch (RocksDBException e) {
          if (!Opening.isMissingFile(e) || files(dir, walDir).equals(before)) {
            throw Opening.translateOpen(dir, true, e);
          }
          race = String.valueOf(e.getMessage());
          continue; // a table file compacted away under the catch-up: catch up again
        }
        missed = missedWals(db, walDir, before, files(dir, walDir));
      }
      ok = true;
      return db;
    } finally {
      if (!ok) {
        for (ColumnFamilyHandle h : handles) {
          h.close();
        }
        handles.clear();
        db.close();
      }
    }
  }

  /**
   * A new directory for a secondary instance's own files, outside the store (in {@code
   * java.io.tmpdir}), or null if none can be made (the plain read-only open is used then).
   */
  private static Path secondaryDirectory(Path dir) {
    try {
      Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
      Path base = Files.exists(tmp) ? tmp.toRealPath() : tmp;
      if (base.startsWith(dir.toRealPath())) {
        return null; // never inside the store
      }
      return Files.createTempDirectory(base, "kv4j-rocksdb-secondary-");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * The WALs listed before the open that the view needed and that are gone after it: numbered at or
   * above the view's oldest WAL with unflushed data. Below that the view's table files hold the
   * WAL's writes.
   */
  private static List<String> missedWals(
      RocksDB db, Path walDir, Map<Path, Long> before, Map<Path, Long> after) {
    long needed;
    try {
      needed = db.getLongProperty("rocksdb.min-log-number-to-keep");
    } catch (RocksDBException e) {
      needed = 0; // unknown: every vanished WAL counts
    }
    List<String> out = new ArrayList<>();
    for (Path p : before.keySet()) {
      long n = walNumber(walDir, p);
      if (n >= needed && !after.containsKey(p)) {
        out.add(p.getFileName().toString());
      }
    }
    out.sort(null);
    return out;
  }

  /** The number of a WAL file in {@code walDir}, or -1 for any other file. */
  private static long walNumber(Path walDir, Path p) {
    if (!walDir.equals(p.getParent())) {
      return -1;
    }
    var m = WAL.matcher(p.getFileName().toString());
    return m.matches() ? Long.parseLong(m.group(1)) : -1;
  }

  /**
   * Every file of the store directory and of the WAL directory with its size (-1 if it vanished
   * between listing and measuring): any difference between two calls means a writer is at work.
   */
  private static Map<Path, Long> files(Path dir, Path walDir) {
    Map<Path, Long> out = new HashMap<>();
    for (Path d : dir.equals(walDir) ? List.of(dir) : List.of(dir, walDir)) {
      try (Stream<Path> s = Files.list(d)) {
        for (Path p : (Iterable<Path>) s::iterator) {
          long size;
          try {
            size = Files.size(p);
          } catch (IOException e) {
            size = -1;
          }
          out.put(p, size);
        }
      } catch (IOException e) {
        throw new StoreIOException(
            "engine '" + RocksDbProvider.ID + "': cannot list store directory " + d, e);
      }
    }
    return out;
  }

  /** A column family the MANIFEST listed but the writer dropped before the open read it. */
  private static boolean isDroppedFamily(RocksDBException e) {
    Status s = e.getStatus();
    return s != null
        && s.getCode() == Status.Code.InvalidArgument
        && String.valueOf(e.getMessage()).contains("Column family not found");
  }

  private static void retrying(Path dir, int attempt, String race) {
    if (attempt == ATTEMPTS) {
      return; // the exception tells
    }
    LOG.log(
        System.Logger.Level.DEBUG,
        "read-only open of {0}, attempt {1} of {2}: {3}; opening again",
        dir,
        attempt,
        ATTEMPTS,
        race);
  }
}
