package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Salvage's private copy of a store's database file, brought to its last committed state: every
 * committed frame of the copied WAL applied ({@link WalLog}), or, for a file in rollback mode, a
 * hot rollback journal played back. Pages are read from the copy; damage is reported against the
 * store's own files (the database, its WAL or journal, wherever the page that is read came from).
 *
 * <p>Header fields read (SQLite file format, big-endian; see also {@link DatabaseHeader}):
 *
 * <table>
 *   <caption>database header fields salvage reads or checks</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>16</td><td>magic {@code "SQLite format 3\0"} (checked, not needed)</td></tr>
 *   <tr><td>16</td><td>2</td><td>page size (1 = 65536); if invalid, the WAL's, else guessed from
 *       the pages</td></tr>
 *   <tr><td>18</td><td>2</td><td>write/read versions, 1 (rollback) or 2 (WAL)</td></tr>
 *   <tr><td>20</td><td>1</td><td>reserved bytes at the end of each page</td></tr>
 *   <tr><td>21</td><td>3</td><td>payload fractions, always 64, 32, 32</td></tr>
 *   <tr><td>24</td><td>4</td><td>change counter</td></tr>
 *   <tr><td>28</td><td>4</td><td>database size in pages (trusted when 24 and 92 agree)</td></tr>
 *   <tr><td>32</td><td>4</td><td>first free-list trunk page</td></tr>
 *   <tr><td>36</td><td>4</td><td>free-list page count</td></tr>
 *   <tr><td>44</td><td>4</td><td>schema format, 1–4</td></tr>
 *   <tr><td>56</td><td>4</td><td>text encoding: 1 UTF-8, 2 UTF-16le, 3 UTF-16be</td></tr>
 *   <tr><td>68</td><td>4</td><td>application id (0 or kv4j's)</td></tr>
 *   <tr><td>72</td><td>20</td><td>reserved, zero</td></tr>
 *   <tr><td>92</td><td>4</td><td>version-valid-for</td></tr>
 * </table>
 *
 * <p>Hot rollback journal (a file in rollback mode, made by another tool, left mid-transaction):
 * header at 0 (magic {@code d9d505f920a163d7} 8, record count 4, checksum nonce 4, database size
 * before the transaction in pages 4, sector size 4, page size 4), records from the next sector
 * boundary (page number 4, original page, checksum 4 = nonce plus every 200th byte of the page from
 * its end). Each original page is put back and the copy cut to the old size, as SQLite's rollback
 * does.
 */
final class DatabaseCopy implements AutoCloseable {
  private static final byte[] MAGIC =
      "SQLite format 3\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  private static final long JOURNAL_MAGIC = 0xd9d505f920a163d7L;

  /** The store's database file. */
  final Path source;

  private final FileChannel ch;
  final int pageSize;
  final int usable;

  /** The database's size in pages (some may be missing, see {@link #present}). */
  final long pages;

  /** Pages 1..present can be read. */
  final long present;

  /** The header as salvaged (page 1's first 100 bytes). */
  final byte[] header;

  /** Text encoding: 1 UTF-8, 2 UTF-16le, 3 UTF-16be. */
  final int encoding;

  /** Damage found in the header and the WAL. */
  final List<DamagedRegion> damage;

  private final Map<Long, Location> moved;

  /** Pages whose newest version is in a WAL frame damaged beyond repair (see {@link WalLog}). */
  private final java.util.Set<Long> lost;

  private record Location(Path file, long offset) {}

  private DatabaseCopy(
      Path source,
      FileChannel ch,
      int pageSize,
      int usable,
      long pages,
      long present,
      byte[] header,
      int encoding,
      List<DamagedRegion> damage,
      Map<Long, Location> moved,
      java.util.Set<Long> lost) {
    this.source = source;
    this.ch = ch;
    this.pageSize = pageSize;
    this.usable = usable;
    this.pages = pages;
    this.present = present;
    this.header = header;
    this.encoding = encoding;
    this.damage = damage;
    this.moved = moved;
    this.lost = lost;
  }

  /**
   * Brings a copy to its last committed state and opens it for reading.
   *
   * @param copy the copy of the database file (written: WAL frames are applied to it)
   * @param walCopy the copy of its WAL, or null
   * @param journalCopy the copy of its rollback journal, or null
   * @param source the store's database file, for reports
   */
  static DatabaseCopy open(Path copy, Path walCopy, Path journalCopy, Path source)
      throws IOException {
    FileChannel ch = FileChannel.open(copy, StandardOpenOption.READ, StandardOpenOption.WRITE);
    boolean ok = false;
    try {
      DatabaseCopy c = build(ch, walCopy, journalCopy, source);
      ok = true;
      return c;
    } finally {
      if (!ok) {
        ch.close();
      }
    }
  }

  private static DatabaseCopy build(FileChannel ch, Path walCopy, Path journalCopy, Path source)
      throws IOException {
    List<DamagedRegion> damage = new ArrayList<>();
    Map<Long, Location> moved = new HashMap<>();
    byte[] h = WalLog.read(ch, 0, DatabaseHeader.LENGTH);
    int raw = u16(h, 16);
    int dbPs = raw == 1 ? 65536 : raw;
    boolean psValid = WalLog.validPageSize(dbPs);
    Path walSource = SqliteFiles.sideFile(source, "-wal");
    WalLog wal =
        walCopy == null ? WalLog.empty() : WalLog.read(walCopy, walSource, psValid ? dbPs : 0);
    damage.addAll(wal.damage);
    int ps;
    List<String> header = new ArrayList<>();
    if (psValid) {
      ps = dbPs;
    } else if (wal.pageSize > 0) {
      ps = wal.pageSize;
      header.add("page size " + raw + " (offset 16) is invalid; read as the WAL's " + ps);
    } else {
      ps = guessPageSize(ch);
      header.add("page size " + raw + " (offset 16) is invalid; read as " + ps + " (guessed)");
    }
    long limitPages = -1;
    if (!wal.frames.isEmpty()) {
      try (FileChannel w = FileChannel.open(walCopy, StandardOpenOption.READ)) {
        for (Map.Entry<Long, Long> f : wal.frames.entrySet()) {
          write(ch, (f.getKey() - 1) * ps, WalLog.read(w, f.getValue(), ps));
          moved.put(f.getKey(), new Location(walSource, f.getValue()));
        }
      }
      limitPages = wal.dbPages;
    } else if (journalCopy != null && h[18] != 2) {
      limitPages = rollBack(ch, journalCopy, ps, SqliteFiles.sideFile(source, "-journal"), moved);
    }
    h = WalLog.read(ch, 0, DatabaseHeader.LENGTH);
    long filePages = ch.size() / ps;
    long pages;
    if (limitPages > 0) {
      pages = limitPages;
    } else {
      long inHeader = Integer.toUnsignedLong(ByteBuffer.wrap(h).getInt(28));
      boolean trusted =
          inHeader > 0 && ByteBuffer.wrap(h).getInt(24) == ByteBuffer.wrap(h).getInt(92);
      pages = trusted ? Math.max(inHeader, filePages) : filePages;
    }
    long present = Math.min(pages, filePages);
    checkHeader(h, header);
    int encoding = ByteBuffer.wrap(h).getInt(56);
    if (encoding < 1 || encoding > 3) {
      header.add("text encoding " + encoding + " (offset 56) is invalid; read as UTF-8");
      encoding = 1;
    }
    int reserved = h[20] & 0xff;
    int usable = ps - reserved;
    if (usable < 480) {
      header.add("reserved bytes per page " + reserved + " (offset 20) leave too few; read as 0");
      usable = ps;
    }
    DatabaseCopy c =
        new DatabaseCopy(
            source, ch, ps, usable, pages, present, h, encoding, damage, moved, wal.lost);
    if (reserved != 0 && usable != ps && c.fitsOnlyWithoutReserve()) {
      header.add(
          "reserved bytes per page "
              + reserved
              + " (offset 20) disagree with page 1, whose cells reach the end of the page; read"
              + " as 0");
      c =
          new DatabaseCopy(
              source, ch, ps, ps, pages, present, h, encoding, damage, moved, wal.lost);
    }
    if (!header.isEmpty()) {
      damage.add(
          0,
          new DamagedRegion(
              c.fileOf(1),
              c.offsetOf(1),
              DatabaseHeader.LENGTH,
              null,
              0,
              null,
              "database header damaged: " + String.join("; ", header)));
    }
    return c;
  }

  /** Fields whose values are fixed or bounded by the format; a flipped bit shows there. */
  private static void checkHeader(byte[] h, List<String> problems) {
    if (!java.util.Arrays.equals(h, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
      problems.add("magic (offset 0) is not 'SQLite format 3'");
    }
    if ((h[18] != 1 && h[18] != 2) || (h[19] != 1 && h[19] != 2)) {
      problems.add("file format versions " + h[18] + "/" + h[19] + " (offset 18)");
    }
    if (h[21] != 64 || h[22] != 32 || h[23] != 32) {
      problems.add("payload fractions " + h[21] + "/" + h[22] + "/" + h[23] + " (offset 21)");
    }
    int schemaFormat = ByteBuffer.wrap(h).getInt(44);
    if (schemaFormat < 1 || schemaFormat > 4) {
      problems.add("schema format " + schemaFormat + " (offset 44)");
    }
    int appId = ByteBuffer.wrap(h).getInt(68);
    if (appId != 0 && appId != SqliteStore.APPLICATION_ID) {
      problems.add("application id " + Integer.toHexString(appId) + " (offset 68)");
    }
    for (int i = 72; i < 92; i++) {
      if (h[i] != 0) {
        problems.add("reserved byte " + i + " is " + (h[i] & 0xff) + ", not 0");
        break;
      }
    }
  }

  /**
   * Whether page 1's cells reach past the usable size the header's reserved byte gives, but fit the
   * whole page: the reserved byte was damaged (kv4j's files reserve nothing).
   */
  private boolean fitsOnlyWithoutReserve() throws IOException {
    byte[] p = read(1);
    if (p == null) {
      return false;
    }
    BTreePage reserved = BTreePage.parse(1, p, usable, 0, false);
    BTreePage whole = BTreePage.parse(1, p, pageSize, 0, false);
    return !whole.damaged() && (reserved.damaged() || reserved.cells.size() < whole.cells.size());
  }

  /**
   * The page size that makes the most pages look like b-tree pages whose cells fill them to the
   * end, for a header whose page size field is damaged and no WAL that says it.
   */
  private static int guessPageSize(FileChannel ch) throws IOException {
    int best = 4096;
    int bestScore = -1;
    for (int c = 512; c <= 65536; c <<= 1) {
      long n = Math.min(ch.size() / c, 256);
      int score = 0;
      for (long p = 2; p <= n; p++) {
        byte[] page = WalLog.read(ch, (p - 1) * c, c);
        BTreePage b = BTreePage.parse(p, page, c, 0, false);
        if (!b.damaged() && !b.cells.isEmpty()) {
          int max = 0;
          for (BTreePage.Cell cell : b.cells) {
            max = Math.max(max, cell.offset());
          }
          if (max >= c / 2) {
            score++;
          }
        }
      }
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    return best;
  }

  /**
   * Plays a hot rollback journal back into the copy; returns the database size before the
   * transaction, in pages, or -1 if the journal is not hot (empty, zeroed header, or unreadable).
   */
  private static long rollBack(
      FileChannel db, Path journal, int ps, Path source, Map<Long, Location> moved)
      throws IOException {
    try (FileChannel j = FileChannel.open(journal, StandardOpenOption.READ)) {
      long size = j.size();
      long at = 0;
      long initial = -1;
      java.util.Set<Long> restored = new java.util.HashSet<>();
      while (at + 28 <= size) {
        ByteBuffer h = ByteBuffer.wrap(WalLog.read(j, at, 28));
        if (h.getLong(0) != JOURNAL_MAGIC) {
          break;
        }
        long records = Integer.toUnsignedLong(h.getInt(8));
        int nonce = h.getInt(12);
        long before = Integer.toUnsignedLong(h.getInt(16));
        int sector = h.getInt(20);
        int journalPs = h.getInt(24);
        if (sector < 32 || sector > 65536 || Integer.bitCount(sector) != 1 || journalPs != ps) {
          break;
        }
        if (initial < 0) {
          initial = before;
        }
        long rec = at + sector;
        long recBytes = 8L + ps;
        long count = records == 0 || records == 0xffffffffL ? (size - rec) / recBytes : records;
        boolean torn = false;
        for (long k = 0; k < count && rec + recBytes <= size; k++, rec += recBytes) {
          byte[] r = WalLog.read(j, rec, (int) recBytes);
          long pgno = Integer.toUnsignedLong(ByteBuffer.wrap(r).getInt(0));
          int sum = nonce;
          for (int i = ps - 200; i > 0; i -= 200) {
            sum += r[4 + i] & 0xff;
          }
          if (pgno == 0 || sum != ByteBuffer.wrap(r).getInt(4 + ps)) {
            torn = true; // the rest was never synced: SQLite stops here too
            break;
          }
          if (pgno <= initial && restored.add(pgno)) {
            byte[] page = java.util.Arrays.copyOfRange(r, 4, 4 + ps);
            write(db, (pgno - 1) * ps, page);
            moved.put(pgno, new Location(source, rec + 4));
          }
        }
        if (torn) {
          break;
        }
        at = (rec + sector - 1) / sector * sector;
      }
      return initial > 0 ? initial : -1;
    }
  }

  /** A page's bytes (page size), or null if the page is not in the file or {@link #lost}. */
  byte[] read(long page) throws IOException {
    if (page < 1 || page > present || lost.contains(page)) {
      return null;
    }
    return WalLog.read(ch, (page - 1) * pageSize, pageSize);
  }

  /** Whether a page's newest version was in a WAL frame damaged beyond repair. */
  boolean lost(long page) {
    return lost.contains(page);
  }

  /** Reads {@code len} bytes of a page's content from {@code from}. */
  byte[] read(long page, int from, int len) throws IOException {
    return WalLog.read(ch, (page - 1) * pageSize + from, len);
  }

  /** The store's file holding the page that {@link #read} returns. */
  Path fileOf(long page) {
    Location l = moved.get(page);
    return l == null ? source : l.file();
  }

  /** Where in {@link #fileOf} that page starts. */
  long offsetOf(long page) {
    Location l = moved.get(page);
    return l == null ? (page - 1) * pageSize : l.offset();
  }

  /** The first free-list trunk page (header offset 32). */
  long freelistTrunk() {
    return Integer.toUnsignedLong(ByteBuffer.wrap(header).getInt(32));
  }

  /** The number of free-list pages (header offset 36). */
  long freelistCount() {
    return Integer.toUnsignedLong(ByteBuffer.wrap(header).getInt(36));
  }

  /** The page holding byte 2^30, which SQLite never uses (the lock-byte page). */
  long lockBytePage() {
    return (1L << 30) / pageSize + 1;
  }

  private static void write(FileChannel ch, long pos, byte[] b) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(b);
    while (buf.hasRemaining()) {
      ch.write(buf, pos + buf.position());
    }
  }

  static int u16(byte[] b, int i) {
    return (b[i] & 0xff) << 8 | (b[i + 1] & 0xff);
  }

  @Override
  public void close() throws IOException {
    ch.close();
  }

  /** Deletes a directory of copies and everything in it; quietly, for a finally block. */
  static void deleteQuietly(Path dir) {
    if (dir == null) {
      return;
    }
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // A copy left in the temporary directory holds no lock and harms nothing.
    }
  }
}
