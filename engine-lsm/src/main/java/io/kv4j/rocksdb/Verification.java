package io.kv4j.rocksdb;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

/**
 * {@code verify()}: every table block, the MANIFEST and every WAL record by record, reporting every
 * damaged region found, not only the first.
 */
final class Verification {
  private Verification() {}

  /** How many regions the exception's message lists by name before "and N more". */
  private static final int LISTED = 3;

  /**
   * Checks what reads do not: every block of every live table file ({@code VerifyChecksum}), the
   * MANIFEST and every WAL record by record ({@link RecordLog}), and, for a read-only store on a
   * cleanly closed directory, every file against the clean-close record. File deletions are paused
   * meanwhile on a read-write store, so no file vanishes half-checked.
   *
   * <p>A live store's newest WAL and its MANIFEST may end in a record being written right now; a
   * torn end is accepted there only if the WAL's whole records reach the last sequence number this
   * store had acknowledged when the check began, so a damaged acknowledged record is never taken
   * for a write in progress.
   *
   * <p>Once a check fails, the damaged files are read past their damage ({@link TableScan}, {@link
   * LogSurvey}) so that the {@link StoreCorruptedException} lists every damaged region: each bad
   * data block with the keys it cost (the range between the intact keys around it), each bad meta
   * block, each unreadable table file with its key range, each damaged span of a log. Its message
   * is the first failure's, as before, followed by the others.
   */
  static void verify(RocksDbStore s) {
    int l = s.enter();
    try {
      boolean readOnly = s.info().readOnly();
      if (readOnly && CleanClose.check(s.dir) == CleanClose.State.VERIFIED) {
        checkTables(s);
        return;
      }
      if (!readOnly) {
        s.db.disableFileDeletions();
      }
      try {
        long seen = s.db.getLatestSequenceNumber();
        List<StoreCorruptedException> found = new ArrayList<>();
        List<DamagedRegion> regions = new ArrayList<>();
        try {
          checkTables(s);
        } catch (StoreCorruptedException e) {
          found.add(e);
          regions.addAll(e.damage());
        }
        verifyLogs(s.dir, s.info().describe(), seen, readOnly, found, regions);
        if (!found.isEmpty()) {
          throw report(found.get(0), regions);
        }
      } finally {
        if (!readOnly) {
          s.db.enableFileDeletions();
        }
      }
    } catch (RocksDBException e) {
      throw Failures.translate(s.dir, "verify", e);
    } finally {
      s.gate.exit(l);
    }
  }

  /**
   * {@code VerifyChecksum} of the whole database; when it fails with a corruption, every live table
   * file is read past its damage for the full list.
   */
  private static void checkTables(RocksDbStore s) {
    try {
      s.db.verifyChecksum();
    } catch (RocksDBException e) {
      Status st = e.getStatus();
      RuntimeException first = Failures.translate(s.dir, "verify", e);
      if (st == null || st.getCode() != Status.Code.Corruption) {
        throw first;
      }
      List<DamagedRegion> regions = tableDamage(s);
      if (regions.isEmpty()) {
        throw first;
      }
      throw report((StoreCorruptedException) first, regions);
    }
  }

  /** Every damaged region of every live table file. */
  static List<DamagedRegion> tableDamage(RocksDbStore s) {
    List<DamagedRegion> out = new ArrayList<>();
    for (LiveFileMetaData m : s.db.getLiveFilesMetaData()) {
      String name = Salvage.fileName(m);
      Path file = s.dir.resolve(name);
      if (!Files.exists(file)) {
        continue; // a read-only view's file that the writer compacted away meanwhile
      }
      String keyspace = Column.keyspaceOf(m.columnFamilyName());
      if (keyspace != null && keyspace.isEmpty()) {
        keyspace = null; // a column family that is no keyspace
      }
      out.addAll(tableDamage(file, keyspace, m.smallestKey(), m.largestKey()));
    }
    return out;
  }

  /**
   * Every damaged region of one table file: its bad data blocks with the keys they cost, a bad meta
   * block no read of entries touches (filter), or, if the file cannot be opened, the whole file
   * with its key range.
   */
  static List<DamagedRegion> tableDamage(
      Path file, String keyspace, byte[] smallest, byte[] largest) {
    List<DamagedRegion> out = new ArrayList<>();
    TableScan scan;
    try {
      scan = TableScan.open(file);
    } catch (RocksDBException e) {
      String m = String.valueOf(e.getMessage());
      long[] at = TableScan.blockAt(m);
      out.add(
          new DamagedRegion(
              file,
              at[0],
              at[1],
              keyspace,
              -1,
              KeyRange.all().gte(smallest).lte(largest),
              "table file unreadable, every key in its range is lost: " + m));
      return out;
    }
    try (scan) {
      for (scan.seekToFirst(); scan.valid(); scan.next()) {
        // reading is checking
      }
      Set<Long> seen = new HashSet<>();
      for (TableScan.Loss l : scan.losses()) {
        KeyRange r = KeyRange.all();
        if (l.before() != null) {
          r = r.gt(l.before());
        }
        if (l.after() != null) {
          r = r.lt(l.after());
        }
        seen.add(l.offset());
        out.add(
            new DamagedRegion(
                file,
                l.offset(),
                l.length(),
                keyspace,
                -1,
                r,
                "data block fails its checksum, its keys are lost: " + l.problem()));
      }
      String meta = scan.verifyChecksum();
      if (meta != null) {
        long[] at = TableScan.blockAt(meta);
        if (!seen.contains(at[0])) {
          out.add(
              new DamagedRegion(
                  file,
                  at[0],
                  at[1],
                  keyspace,
                  0,
                  null,
                  "a block that holds no entry fails its checksum (reads do not need it): "
                      + meta));
        }
      }
    }
    return out;
  }

  /**
   * The exception for every region found: the first failure's message and file, then the regions
   * (the first {@value #LISTED} described, "and N more").
   */
  static StoreCorruptedException report(
      StoreCorruptedException first, List<DamagedRegion> regions) {
    if (regions.size() <= 1) {
      return first;
    }
    StringBuilder m =
        new StringBuilder(first.getMessage())
            .append("; ")
            .append(regions.size())
            .append(" damaged regions: ");
    for (int i = 0; i < Math.min(LISTED, regions.size()); i++) {
      m.append(i == 0 ? "" : "; ").append(regions.get(i).describe());
    }
    if (regions.size() > LISTED) {
      m.append("; and ").append(regions.size() - LISTED).append(" more");
    }
    return new StoreCorruptedException(m.toString(), regions);
  }

  private static void verifyLogs(
      Path dir,
      String describe,
      long seen,
      boolean readOnly,
      List<StoreCorruptedException> found,
      List<DamagedRegion> regions) {
    String manifest = CleanClose.currentManifest(dir);
    if (manifest == null) {
      StoreCorruptedException e =
          new StoreCorruptedException(
              describe + ": CURRENT is damaged: it does not name a MANIFEST file",
              dir.resolve(Opening.CURRENT),
              -1);
      found.add(e);
      regions.addAll(e.damage());
    } else {
      try {
        checkLog(dir.resolve(manifest), false, found, regions);
      } catch (NoSuchFileException e) {
        if (!readOnly) {
          StoreCorruptedException x =
              new StoreCorruptedException(
                  describe + ": the MANIFEST " + manifest + " is missing",
                  dir.resolve(manifest),
                  -1);
          found.add(x);
          regions.addAll(x.damage());
        }
      } catch (IOException e) {
        throw new StoreIOException(describe + ": cannot read " + manifest + ": " + e, e);
      }
    }
    List<Path> wals = RecordLog.walFiles(dir);
    for (int i = 0; i < wals.size(); i++) {
      Path wal = wals.get(i);
      RecordLog.Scan scan;
      try {
        scan = checkLog(wal, true, found, regions);
      } catch (NoSuchFileException e) {
        continue; // made obsolete and deleted by the writer (read-only) meanwhile
      } catch (IOException e) {
        throw new StoreIOException(describe + ": cannot read " + wal + ": " + e, e);
      }
      if (scan == null) {
        continue; // damaged: reported
      }
      boolean newest = i == wals.size() - 1;
      boolean inFlight = newest && (scan.lastSequence() < 0 || scan.lastSequence() >= seen);
      // Read-only: older WALs are a crashed writer's, not yet recovered; their ends may be torn.
      if (scan.torn() && !inFlight && !(readOnly && !newest)) {
        StoreCorruptedException e =
            RecordLog.corrupted(
                wal,
                scan.tornAt(),
                scan.tornWhy()
                    + " (acknowledged writes up to sequence number "
                    + seen
                    + ", whole records up to "
                    + scan.lastSequence()
                    + ")");
        found.add(e);
        regions.addAll(e.damage());
      }
    }
  }

  /**
   * Checks one log; on damage adds every damaged span ({@link LogSurvey}) and returns null.
   *
   * @return what the file ends with, if it is not damaged
   */
  private static RecordLog.Scan checkLog(
      Path file, boolean wal, List<StoreCorruptedException> found, List<DamagedRegion> regions)
      throws IOException {
    try {
      return RecordLog.check(file, wal);
    } catch (StoreCorruptedException e) {
      found.add(e);
      List<LogSurvey.Span> spans = LogSurvey.read(file, wal, null).damage();
      if (spans.isEmpty()) {
        regions.addAll(e.damage());
      }
      for (LogSurvey.Span d : spans) {
        regions.add(
            new DamagedRegion(
                file,
                d.offset(),
                d.length(),
                null,
                d.lostOperations(),
                null,
                d.problem()
                    + (wal ? " (write-ahead log)" : " (MANIFEST, the list of table files)")));
      }
      return null;
    }
  }
}
