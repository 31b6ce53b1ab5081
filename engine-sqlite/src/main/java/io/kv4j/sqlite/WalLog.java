package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The committed frames of an SQLite write-ahead log, found the way SQLite's own recovery finds them
 * (a copy of the log is read; the store's file is never opened for writing). Salvage applies them
 * to its copy of the database file, so a crash image (a {@code -wal} holding commits not yet copied
 * into the database) salvages every acknowledged commit.
 *
 * <p>WAL header (32 bytes, big-endian):
 *
 * <table>
 *   <caption>WAL header</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic: {@code 0x377f0682} (checksum words little-endian) or
 *       {@code 0x377f0683} (big-endian)</td></tr>
 *   <tr><td>4</td><td>4</td><td>format version, 3007000</td></tr>
 *   <tr><td>8</td><td>4</td><td>page size</td></tr>
 *   <tr><td>12</td><td>4</td><td>checkpoint sequence number</td></tr>
 *   <tr><td>16</td><td>8</td><td>salt-1, salt-2: every frame of this generation repeats them</td></tr>
 *   <tr><td>24</td><td>8</td><td>checksum of bytes 0–23</td></tr>
 * </table>
 *
 * <p>Each frame: a 24-byte header, then one page.
 *
 * <table>
 *   <caption>WAL frame header</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>page number</td></tr>
 *   <tr><td>4</td><td>4</td><td>for a commit frame the database size in pages after the commit,
 *       else 0</td></tr>
 *   <tr><td>8</td><td>8</td><td>salt-1, salt-2, equal to the header's</td></tr>
 *   <tr><td>16</td><td>8</td><td>cumulative checksum over the header and every frame so far (the
 *       first 8 bytes of each frame header and its page)</td></tr>
 * </table>
 *
 * <p>A frame is valid when its salts equal the header's and its checksum matches; the log ends at
 * the first frame that is not. The committed frames are those up to the last valid commit frame;
 * later valid frames belong to a transaction that never committed and are ignored, as SQLite
 * ignores them. A frame that fails its checksum with frames of the same generation after it that
 * include a commit is damage (SQLite would silently drop those commits), and is reported.
 */
final class WalLog {
  static final int HEADER = 32;
  static final int FRAME_HEADER = 24;
  private static final int MAGIC_LE = 0x377f0682;
  private static final int MAGIC_BE = 0x377f0683;

  /** The page size the frames were read with; 0 if the log holds nothing usable. */
  final int pageSize;

  /** Page number to the offset (in the log) of the page data of its newest committed frame. */
  final Map<Long, Long> frames;

  /** The database size in pages after the last committed transaction; 0 if none. */
  final long dbPages;

  /** Damage found in the log, naming the store's log file. */
  final List<DamagedRegion> damage;

  private WalLog(int pageSize, Map<Long, Long> frames, long dbPages, List<DamagedRegion> damage) {
    this.pageSize = pageSize;
    this.frames = frames;
    this.dbPages = dbPages;
    this.damage = damage;
  }

  static WalLog empty() {
    return new WalLog(0, Map.of(), 0, List.of());
  }

  /**
   * Reads a log.
   *
   * @param copy the copy of the log to read
   * @param source the store's log file, named in damage reports
   * @param dbPageSize the database header's page size, or 0 if it is unreadable
   */
  static WalLog read(Path copy, Path source, int dbPageSize) throws IOException {
    try (FileChannel ch = FileChannel.open(copy, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size < HEADER) {
        return empty(); // never written, truncated by a checkpoint, or torn before its first frame
      }
      byte[] h = read(ch, 0, HEADER);
      int magic = ByteBuffer.wrap(h).getInt(0);
      List<DamagedRegion> damage = new ArrayList<>();
      int headerPageSize = ByteBuffer.wrap(h).getInt(8);
      int salt1 = ByteBuffer.wrap(h).getInt(16);
      int salt2 = ByteBuffer.wrap(h).getInt(20);
      int[] seed = {ByteBuffer.wrap(h).getInt(24), ByteBuffer.wrap(h).getInt(28)};
      Boolean bigEndian = headerChecks(h, magic);
      int ps = validPageSize(headerPageSize) ? headerPageSize : dbPageSize;
      if (bigEndian == null) {
        // The header fails its checksum. Its salts and stored checksum may still be intact (a
        // flipped bit in the version or checkpoint number): frames that validate against them
        // prove it. Both word orders are tried, the magic being the field that says which.
        WalLog attempt = null;
        if (ps > 0) {
          for (boolean be : new boolean[] {magic != MAGIC_LE, magic == MAGIC_LE}) {
            attempt =
                frames(ch, size, ps, be, salt1, salt2, seed.clone(), source, new ArrayList<>());
            if (attempt.dbPages > 0) {
              break;
            }
          }
        }
        if (attempt != null && attempt.dbPages > 0) {
          attempt.damage.add(
              0,
              new DamagedRegion(
                  source,
                  0,
                  HEADER,
                  null,
                  0,
                  null,
                  "WAL header fails its checksum, but its frames validate against its salts and"
                      + " were applied; no commit lost"));
          return attempt;
        }
        long frameBytes = ps > 0 ? FRAME_HEADER + ps : -1;
        damage.add(
            new DamagedRegion(
                source,
                0,
                HEADER,
                null,
                -1,
                null,
                "WAL header fails its checksum: none of its "
                    + (frameBytes > 0 ? (size - HEADER) / frameBytes + " " : "")
                    + "frames can be validated, so the commits it holds (not yet copied into the"
                    + " database file) are lost"));
        return new WalLog(0, Map.of(), 0, damage);
      }
      if (!validPageSize(headerPageSize)) {
        damage.add(
            new DamagedRegion(
                source, 8, 4, null, -1, null, "WAL header page size " + headerPageSize));
        return new WalLog(0, Map.of(), 0, damage);
      }
      if (dbPageSize > 0 && headerPageSize != dbPageSize) {
        damage.add(
            new DamagedRegion(
                source,
                8,
                4,
                null,
                -1,
                null,
                "WAL page size "
                    + headerPageSize
                    + " differs from the database's "
                    + dbPageSize
                    + ": its frames are not applied, the commits it holds are lost"));
        return new WalLog(0, Map.of(), 0, damage);
      }
      return frames(ch, size, headerPageSize, bigEndian, salt1, salt2, seed, source, damage);
    }
  }

  /**
   * Whether the header's checksum holds, and in which word order: TRUE big-endian, FALSE
   * little-endian, null if it fails (a damaged magic is tolerated when the checksum holds in one
   * order).
   */
  private static Boolean headerChecks(byte[] h, int magic) {
    int stored0 = ByteBuffer.wrap(h).getInt(24);
    int stored1 = ByteBuffer.wrap(h).getInt(28);
    boolean[] orders =
        magic == MAGIC_LE
            ? new boolean[] {false}
            : magic == MAGIC_BE ? new boolean[] {true} : new boolean[] {false, true};
    for (boolean be : orders) {
      int[] s = {0, 0};
      checksum(h, 0, 24, be, s);
      if (s[0] == stored0 && s[1] == stored1) {
        return be;
      }
    }
    return null;
  }

  private static WalLog frames(
      FileChannel ch,
      long size,
      int ps,
      boolean bigEndian,
      int salt1,
      int salt2,
      int[] s,
      Path source,
      List<DamagedRegion> damage)
      throws IOException {
    long frameBytes = FRAME_HEADER + (long) ps;
    long count = (size - HEADER) / frameBytes;
    Map<Long, Long> pending = new HashMap<>();
    Map<Long, Long> committed = new HashMap<>();
    long dbPages = 0;
    long i = 0;
    for (; i < count; i++) {
      long off = HEADER + i * frameBytes;
      byte[] f = read(ch, off, (int) frameBytes);
      ByteBuffer b = ByteBuffer.wrap(f);
      long pgno = Integer.toUnsignedLong(b.getInt(0));
      long commit = Integer.toUnsignedLong(b.getInt(4));
      if (b.getInt(8) != salt1 || b.getInt(12) != salt2 || pgno == 0) {
        break;
      }
      int[] next = s.clone();
      checksum(f, 0, 8, bigEndian, next);
      checksum(f, FRAME_HEADER, ps, bigEndian, next);
      if (next[0] != b.getInt(16) || next[1] != b.getInt(20)) {
        break;
      }
      s[0] = next[0];
      s[1] = next[1];
      pending.put(pgno, off + FRAME_HEADER);
      if (commit != 0) {
        committed.putAll(pending);
        pending.clear();
        dbPages = commit;
      }
    }
    if (i < count) {
      // The valid part ends here. Later frames of the same generation that commit mean this frame
      // was damaged after it was written: the commits after it are lost.
      long later = 0;
      long laterCommits = 0;
      for (long j = i + 1; j < count; j++) {
        long off = HEADER + j * frameBytes;
        ByteBuffer b = ByteBuffer.wrap(read(ch, off, FRAME_HEADER));
        if (b.getInt(8) == salt1 && b.getInt(12) == salt2) {
          later++;
          if (b.getInt(4) != 0) {
            laterCommits++;
          }
        }
      }
      if (laterCommits > 0) {
        damage.add(
            new DamagedRegion(
                source,
                HEADER + i * frameBytes,
                frameBytes,
                null,
                -1,
                null,
                "WAL frame "
                    + i
                    + " fails its checksum; the "
                    + later
                    + " frames after it ("
                    + laterCommits
                    + (laterCommits == 1 ? " commit" : " commits")
                    + ") cannot be validated and are not applied: what they wrote is lost (or,"
                    + " after a power loss, was never acknowledged)"));
      }
    }
    return new WalLog(ps, committed, dbPages, damage);
  }

  static boolean validPageSize(int ps) {
    return ps >= 512 && ps <= 65536 && Integer.bitCount(ps) == 1;
  }

  /** SQLite's WAL checksum: pairs of 32-bit words, accumulated into {@code s}. */
  static void checksum(byte[] b, int off, int len, boolean bigEndian, int[] s) {
    int s0 = s[0];
    int s1 = s[1];
    for (int i = off; i + 8 <= off + len; i += 8) {
      s0 += word(b, i, bigEndian) + s1;
      s1 += word(b, i + 4, bigEndian) + s0;
    }
    s[0] = s0;
    s[1] = s1;
  }

  private static int word(byte[] b, int i, boolean bigEndian) {
    int x =
        (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | (b[i + 3] & 0xff);
    return bigEndian ? x : Integer.reverseBytes(x);
  }

  static byte[] read(FileChannel ch, long pos, int len) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(len);
    while (buf.hasRemaining()) {
      int n = ch.read(buf, pos + buf.position());
      if (n < 0) {
        break;
      }
    }
    return buf.array();
  }
}
