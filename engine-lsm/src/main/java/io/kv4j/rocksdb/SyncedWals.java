package io.kv4j.rocksdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The synced-WAL record, {@value #FILE_NAME}: how many bytes of each WAL had been synced at the
 * last time the engine wrote it down, so that an open after a crash can tell a WAL cut short or
 * deleted from what a crash leaves.
 *
 * <p>Why: after a crash (no {@link CleanClose} record) RocksDB and {@link RecordLog} accept a WAL
 * that ends in the middle of a record or at a record boundary, since that is what a crash can
 * leave; a WAL cut to half therefore opened with half of its acknowledged writes, and a deleted WAL
 * with none, without an error. RocksDB's {@code track_and_verify_wals_in_manifest} does not help
 * there: it records the synced size of a WAL only once that WAL is no longer the one written to
 * (checked with 11.8.1: the live WAL cut to half or deleted opens silently with it on, in both
 * durabilities, also after {@code FlushWAL(true)}), and with synced writes it adds a MANIFEST write
 * to every write between a WAL switch and the flush that follows (README, "Recovery and damage").
 *
 * <p>What is recorded: every WAL file with a non-zero size and the number of its bytes known to be
 * on disk: sizes read <em>before</em> a {@code FlushWAL(true)} that then returned. {@link
 * WalRecorder} writes it in the background, never on a write's path. A crash cannot shorten a WAL
 * below a synced size (RocksDB never shortens a WAL: it only appends, and deletes whole WALs whose
 * writes a flush has put into table files), so after a crash:
 *
 * <ul>
 *   <li>a listed WAL shorter than its recorded size was cut short: {@link StoreCorruptedException};
 *   <li>a listed WAL that is missing while no WAL with a higher number exists was deleted: RocksDB
 *       deletes a WAL only after it switched to a newer one, whose file is created first;
 *   <li>a listed WAL that is missing while a newer one exists may have been deleted by RocksDB
 *       after a flush: the oldest WAL number the database still needs ({@code
 *       rocksdb.min-log-number-to-keep}, from the MANIFEST) decides. A read-only store reads it
 *       from the database it opens anyway; a read-write open reads it from a read-only open first
 *       (RocksDB's read-write recovery deletes files), so only then is the database opened twice.
 * </ul>
 *
 * <p>The record is replaced atomically ({@link StoreDirectory#writeAtomically}), removed by a
 * read-write open once RocksDB has opened the store (it describes the previous session) and by a
 * clean close (the {@link CleanClose} record checks more). Stores without it (made or last closed
 * by an earlier version, or crashed before the first record) are checked as before.
 *
 * <p><b>Format</b> (UTF-8 text, {@code \n} line ends): a comment line starting with {@code #}, one
 * line {@code wal=<number>.log synced=<bytes>} per WAL, then {@code crc32c=<8 hex digits>}, the
 * CRC32C of every byte before that line.
 */
final class SyncedWals {
  /** The record's file name in the store directory. */
  static final String FILE_NAME = "kv4j-synced-wals";

  private static final Pattern ENTRY = Pattern.compile("wal=(\\d{1,18}\\.log) synced=(\\d+)");

  private SyncedWals() {}

  /**
   * The sizes of the WAL files in {@code walDir} that are not empty, by name.
   *
   * @param walDir the directory that holds the WALs
   * @return name to size, in WAL number order
   */
  static Map<String, Long> sizes(Path walDir) {
    Map<String, Long> out = byNumber(Map.of());
    for (Path wal : RecordLog.walFiles(walDir)) {
      try {
        long size = Files.size(wal);
        if (size > 0) {
          out.put(wal.getFileName().toString(), size);
        }
      } catch (NoSuchFileException e) {
        // Deleted since it was listed: RocksDB no longer needs it.
      } catch (IOException e) {
        throw new StoreIOException(where(walDir) + ": cannot read the size of " + wal, e);
      }
    }
    return out;
  }

  /**
   * Replaces the record, durably.
   *
   * @param dir the store directory
   * @param synced WAL name to the number of its bytes known to be on disk
   * @throws IOException if it cannot be written
   */
  static void write(Path dir, Map<String, Long> synced) throws IOException {
    StringBuilder body = new StringBuilder();
    body.append("# kv4j rocksdb synced WALs: bytes of each WAL known to be on disk;")
        .append(" checked by an open after a crash\n");
    for (Map.Entry<String, Long> e : synced.entrySet()) {
      body.append("wal=").append(e.getKey()).append(" synced=").append(e.getValue()).append('\n');
    }
    CRC32C c = new CRC32C();
    c.update(body.toString().getBytes(StandardCharsets.UTF_8));
    byte[] all = (body + "crc32c=" + hex(c.getValue()) + "\n").getBytes(StandardCharsets.UTF_8);
    StoreDirectory.writeAtomically(dir.resolve(FILE_NAME), all);
  }

  /**
   * Removes the record, durably.
   *
   * @param dir the store directory
   * @throws IOException if it cannot be removed
   */
  static void remove(Path dir) throws IOException {
    boolean gone = Files.deleteIfExists(dir.resolve(FILE_NAME));
    gone |= Files.deleteIfExists(dir.resolve(FILE_NAME + ".tmp"));
    if (gone) {
      StoreDirectory.syncDirectory(dir);
    }
  }

  /**
   * Reads the record.
   *
   * @param dir the store directory
   * @return WAL name to synced size, in WAL number order; null if there is no record
   * @throws StoreCorruptedException if the record is damaged (it is only ever replaced whole)
   */
  static Map<String, Long> read(Path dir) {
    Path record = dir.resolve(FILE_NAME);
    String text;
    try {
      text = new String(Files.readAllBytes(record), StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new StoreIOException(where(dir) + ": cannot read " + record + ": " + e, e);
    }
    int crcAt = text.lastIndexOf("crc32c=");
    boolean ok = crcAt > 0 && text.charAt(crcAt - 1) == '\n' && text.endsWith("\n");
    if (ok) {
      CRC32C c = new CRC32C();
      c.update(text.substring(0, crcAt).getBytes(StandardCharsets.UTF_8));
      ok = text.substring(crcAt + 7, text.length() - 1).equals(hex(c.getValue()));
    }
    Map<String, Long> out = byNumber(Map.of());
    if (ok) {
      for (String line : text.substring(0, crcAt).split("\n")) {
        Matcher m = ENTRY.matcher(line);
        if (m.matches()) {
          out.put(m.group(1), Long.parseLong(m.group(2)));
        } else if (!line.startsWith("#")) {
          ok = false;
        }
      }
    }
    if (!ok) {
      throw new StoreCorruptedException(
          where(dir)
              + ": the synced-WAL record "
              + record
              + " is damaged (its checksum or layout is wrong); it lists how much of each WAL was"
              + " on disk, to tell a damaged WAL from a crash",
          record,
          -1);
    }
    return out;
  }

  /**
   * The check of an open after a crash (see the class comment): every WAL the record lists still
   * holds at least its synced bytes, and none is missing while no newer WAL exists.
   *
   * @param dir the store directory
   * @param walDir the directory that holds the WALs
   * @return the WALs the record lists that are missing while newer ones exist, with their synced
   *     sizes: damage only if the database still needs them ({@link #checkNeeded})
   * @throws StoreCorruptedException naming the first WAL that was cut short or deleted
   */
  static Map<String, Long> check(Path dir, Path walDir) {
    Map<String, Long> synced = read(dir);
    if (synced == null || synced.isEmpty()) {
      return Map.of();
    }
    Map<String, Long> missing = byNumber(Map.of());
    for (Map.Entry<String, Long> e : synced.entrySet()) {
      Path wal = walDir.resolve(e.getKey());
      long size;
      try {
        size = Files.size(wal);
      } catch (NoSuchFileException x) {
        missing.put(e.getKey(), e.getValue());
        continue;
      } catch (IOException x) {
        throw new StoreIOException(where(dir) + ": cannot read the size of " + wal + ": " + x, x);
      }
      if (size < e.getValue()) {
        throw new StoreCorruptedException(
            where(dir)
                + ": "
                + wal
                + " (write-ahead log) has "
                + size
                + " bytes, but "
                + e.getValue()
                + " bytes of it were on disk (synced) before the store was last closed without a"
                + " clean close, as "
                + FILE_NAME
                + " records: it was cut short and writes it held are missing",
            wal,
            size);
      }
    }
    if (missing.isEmpty()) {
      return Map.of();
    }
    long newest = -1;
    for (Path wal : RecordLog.walFiles(walDir)) {
      newest = Math.max(newest, number(wal.getFileName().toString()));
    }
    for (Map.Entry<String, Long> e : missing.entrySet()) {
      if (number(e.getKey()) > newest) {
        throw gone(
            dir,
            walDir,
            e,
            "no newer WAL exists (RocksDB deletes a WAL only after it"
                + " switched to a newer one)");
      }
    }
    return missing;
  }

  /**
   * The rest of the check: a WAL that {@link #check} found missing while newer ones exist is damage
   * if the database still needs it, that is if its number is at least the oldest WAL number the
   * database needs ({@code rocksdb.min-log-number-to-keep}, from the MANIFEST): RocksDB deletes a
   * WAL only once a flush recorded there put its writes into table files and raised that number
   * above it.
   *
   * @param dir the store directory
   * @param walDir the directory that holds the WALs
   * @param missing what {@link #check} returned
   * @param oldestNeeded the oldest WAL number the database needs
   * @throws StoreCorruptedException naming the first missing WAL the database needs
   */
  static void checkNeeded(Path dir, Path walDir, Map<String, Long> missing, long oldestNeeded) {
    for (Map.Entry<String, Long> e : missing.entrySet()) {
      if (number(e.getKey()) >= oldestNeeded) {
        throw gone(
            dir,
            walDir,
            e,
            "the database still needs it (the oldest WAL it needs is number " + oldestNeeded + ")");
      }
    }
  }

  private static StoreCorruptedException gone(
      Path dir, Path walDir, Map.Entry<String, Long> e, String why) {
    Path wal = walDir.resolve(e.getKey());
    return new StoreCorruptedException(
        where(dir)
            + ": "
            + wal
            + " (write-ahead log) is missing, but "
            + e.getValue()
            + " bytes of it were on disk (synced) before the store was last closed without a clean"
            + " close, as "
            + FILE_NAME
            + " records, and "
            + why
            + ": writes it held are missing",
        wal,
        -1);
  }

  /**
   * The oldest WAL number the database needs, from a read-only open of it (for a read-write open,
   * which must not let RocksDB recover, and delete files, before the check passed).
   *
   * @param dir the store directory
   * @param opts the options the store is opened with, already {@link NativeOptions#split() split}
   * @return its {@code rocksdb.min-log-number-to-keep}
   */
  static long oldestNeededWal(Path dir, NativeOptions opts) {
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    RocksDB db = null;
    try {
      List<ColumnFamilyDescriptor> families = Opening.families(opts, dir, false);
      db = RocksDB.openReadOnly(opts.dbOptions, dir.toString(), families, handles);
      return oldestNeededWal(db);
    } catch (RocksDBException e) {
      throw Opening.translateOpen(dir, true, e);
    } finally {
      for (ColumnFamilyHandle h : handles) {
        h.close();
      }
      if (db != null) {
        db.close();
      }
    }
  }

  /**
   * The oldest WAL number an open database needs.
   *
   * @param db the database
   * @return its {@code rocksdb.min-log-number-to-keep}
   * @throws RocksDBException if RocksDB cannot tell
   */
  static long oldestNeededWal(RocksDB db) throws RocksDBException {
    return db.getLongProperty("rocksdb.min-log-number-to-keep");
  }

  /**
   * A mutable copy of {@code wals} (WAL name to size) in WAL number order.
   *
   * @param wals the entries to copy
   * @return the copy
   */
  static Map<String, Long> byNumber(Map<String, Long> wals) {
    Map<String, Long> out = new TreeMap<>(SyncedWals::compareWals);
    out.putAll(wals);
    return out;
  }

  private static long number(String wal) {
    return Long.parseLong(wal.substring(0, wal.length() - ".log".length()));
  }

  private static int compareWals(String a, String b) {
    return Long.compare(number(a), number(b));
  }

  private static String hex(long crc) {
    return HexFormat.of().toHexDigits((int) crc);
  }

  private static String where(Path dir) {
    return "engine '" + RocksDbProvider.ID + "' at " + dir;
  }
}
