package io.kv4j.rocksdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.rocksdb.RocksDBException;

/** {@code verify()}: every table block, the MANIFEST and every WAL record by record. */
final class Verification {
  private Verification() {}

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
   */
  static void verify(RocksDbStore s) {
    int l = s.enter();
    try {
      boolean readOnly = s.info().readOnly();
      if (readOnly && CleanClose.check(s.dir) == CleanClose.State.VERIFIED) {
        s.db.verifyChecksum();
        return;
      }
      if (!readOnly) {
        s.db.disableFileDeletions();
      }
      try {
        long seen = s.db.getLatestSequenceNumber();
        s.db.verifyChecksum();
        verifyLogs(s.dir, s.info().describe(), seen, readOnly);
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

  private static void verifyLogs(Path dir, String describe, long seen, boolean readOnly) {
    String manifest = CleanClose.currentManifest(dir);
    if (manifest == null) {
      throw new StoreCorruptedException(
          describe + ": CURRENT is damaged: it does not name a MANIFEST file",
          dir.resolve(Opening.CURRENT),
          -1);
    }
    try {
      RecordLog.check(dir.resolve(manifest), false);
    } catch (NoSuchFileException e) {
      if (!readOnly) {
        throw new StoreCorruptedException(
            describe + ": the MANIFEST " + manifest + " is missing", dir.resolve(manifest), -1);
      }
    } catch (IOException e) {
      throw new StoreIOException(describe + ": cannot read " + manifest + ": " + e, e);
    }
    List<Path> wals = RecordLog.walFiles(dir);
    for (int i = 0; i < wals.size(); i++) {
      Path wal = wals.get(i);
      RecordLog.Scan scan;
      try {
        scan = RecordLog.check(wal, true);
      } catch (NoSuchFileException e) {
        continue; // made obsolete and deleted by the writer (read-only) meanwhile
      } catch (IOException e) {
        throw new StoreIOException(describe + ": cannot read " + wal + ": " + e, e);
      }
      boolean newest = i == wals.size() - 1;
      boolean inFlight = newest && (scan.lastSequence() < 0 || scan.lastSequence() >= seen);
      // Read-only: older WALs are a crashed writer's, not yet recovered; their ends may be torn.
      if (scan.torn() && !inFlight && !(readOnly && !newest)) {
        throw RecordLog.corrupted(
            wal,
            scan.tornAt(),
            scan.tornWhy()
                + " (acknowledged writes up to sequence number "
                + seen
                + ", whole records up to "
                + scan.lastSequence()
                + ")");
      }
    }
  }
}
