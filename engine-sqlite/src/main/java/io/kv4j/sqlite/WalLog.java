package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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

  /**
   * Pages whose newest committed version is in a frame that is damaged beyond repair: no older
   * version may stand in for them.
   */
  final Set<Long> lost;

  private WalLog(
      int pageSize,
      Map<Long, Long> frames,
      long dbPages,
      List<DamagedRegion> damage,
      Set<Long> lost) {
    this.pageSize = pageSize;
    this.frames = frames;
    this.dbPages = dbPages;
    this.damage = damage;
    this.lost = lost;
  }

  static WalLog empty() {
    return new WalLog(0, Map.of(), 0, List.of(), Set.of());
  }

  /**
   * Reads a log.
   *
   * @param copy the copy of the log to read
   * @param source the store's log file, named in damage reports
   * @param dbPageSize the database header's page size, or 0 if it is unreadable
   */
  static WalLog read(Path copy, Path source, int dbPageSize) throws IOException {
    return read(copy, source, dbPageSize, true);
  }

  /**
   * Checks the store's own log in place, for {@code verify()}: read only, a frame's flipped bit is
   * reported but not repaired. The caller keeps writers and checkpoints out meanwhile.
   *
   * @param wal the store's log file
   * @param dbPageSize the database header's page size, or 0 if it is unreadable
   */
  static WalLog check(Path wal, int dbPageSize) throws IOException {
    return read(wal, wal, dbPageSize, false);
  }

  private static WalLog read(Path copy, Path source, int dbPageSize, boolean repairCopy)
      throws IOException {
    try (FileChannel ch =
        repairCopy
            ? FileChannel.open(copy, StandardOpenOption.READ, StandardOpenOption.WRITE)
            : FileChannel.open(copy, StandardOpenOption.READ)) {
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
                frames(
                    ch,
                    size,
                    ps,
                    be,
                    salt1,
                    salt2,
                    seed.clone(),
                    source,
                    new ArrayList<>(),
                    repairCopy);
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
        return new WalLog(0, Map.of(), 0, damage, Set.of());
      }
      if (!validPageSize(headerPageSize)) {
        damage.add(
            new DamagedRegion(
                source, 8, 4, null, -1, null, "WAL header page size " + headerPageSize));
        return new WalLog(0, Map.of(), 0, damage, Set.of());
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
        return new WalLog(0, Map.of(), 0, damage, Set.of());
      }
      return frames(
          ch, size, headerPageSize, bigEndian, salt1, salt2, seed, source, damage, repairCopy);
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
      List<DamagedRegion> damage,
      boolean repairCopy)
      throws IOException {
    long frameBytes = FRAME_HEADER + (long) ps;
    long count = (size - HEADER) / frameBytes;
    Map<Long, Long> pending = new HashMap<>();
    Map<Long, Long> committed = new HashMap<>();
    Set<Long> lost = new HashSet<>();
    Set<Long> pendingLost = new HashSet<>();
    long dbPages = 0;
    boolean resynced = false;
    for (long i = 0; i < count; i++) {
      long off = HEADER + i * frameBytes;
      byte[] f = read(ch, off, (int) frameBytes);
      String repaired = validate(f, ps, bigEndian, salt1, salt2, s);
      if (repaired == null) {
        // Not a frame of this log as written: its end, or damage. Damage if frames of this
        // generation follow, with a commit among them: SQLite would silently drop those commits.
        long[] later = later(ch, i + 1, count, frameBytes, salt1, salt2);
        if (later[1] == 0) {
          break;
        }
        ByteBuffer b = ByteBuffer.wrap(f);
        int[] resume = {b.getInt(16), b.getInt(20)};
        boolean sameGeneration = b.getInt(8) == salt1 && b.getInt(12) == salt2;
        if (!resynced
            && sameGeneration
            && i + 1 < count
            && validates(ch, i + 1, frameBytes, ps, bigEndian, salt1, salt2, resume)) {
          // The frames after it validate against its stored checksum: only this frame's bytes
          // are damaged. The page it wrote is unknown (an older version must not stand in for
          // it), the rest of the log is applied.
          long pgno = Integer.toUnsignedLong(b.getInt(0));
          damage.add(
              new DamagedRegion(
                  source,
                  off,
                  frameBytes,
                  null,
                  -1,
                  null,
                  "WAL frame "
                      + i
                      + " fails its checksum and no single flipped bit explains it; the frames"
                      + " after it validate and are applied, but page "
                      + pgno
                      + " as this frame wrote it is lost (its rows are reported with that page)"));
          pending.remove(pgno);
          pendingLost.add(pgno);
          s[0] = resume[0];
          s[1] = resume[1];
          resynced = true;
          continue;
        }
        damage.add(
            new DamagedRegion(
                source,
                off,
                frameBytes,
                null,
                -1,
                null,
                "WAL frame "
                    + i
                    + " fails its checksum; the "
                    + later[0]
                    + " frames after it ("
                    + later[1]
                    + (later[1] == 1 ? " commit" : " commits")
                    + ") cannot be validated and are not applied: what they wrote is lost (or,"
                    + " after a power loss, was never acknowledged)"));
        break;
      }
      if (!repaired.isEmpty()) {
        if (repairCopy) {
          write(ch, off, f); // the copy, corrected
        }
        damage.add(
            new DamagedRegion(
                source,
                off,
                frameBytes,
                null,
                0,
                null,
                "WAL frame " + i + ": " + repaired + "; no commit lost"));
      }
      ByteBuffer b = ByteBuffer.wrap(f);
      long pgno = Integer.toUnsignedLong(b.getInt(0));
      long commit = Integer.toUnsignedLong(b.getInt(4));
      pending.put(pgno, off + FRAME_HEADER);
      pendingLost.remove(pgno);
      if (commit != 0) {
        for (long p : pending.keySet()) {
          lost.remove(p);
        }
        committed.putAll(pending);
        for (long p : pendingLost) {
          committed.remove(p);
          lost.add(p);
        }
        pending.clear();
        pendingLost.clear();
        dbPages = commit;
      }
    }
    return new WalLog(ps, committed, dbPages, damage, lost);
  }

  /**
   * Checks a frame against the log's salts and the running checksum {@code s}, which it advances.
   * Returns "" if the frame is valid, a description of the one flipped bit that was repaired in
   * {@code f} (a salt, the stored checksum, or a checksummed byte), or null if the frame is not
   * valid.
   */
  private static String validate(byte[] f, int ps, boolean be, int salt1, int salt2, int[] s) {
    ByteBuffer b = ByteBuffer.wrap(f);
    String note = "";
    long saltDiff = ((long) (b.getInt(8) ^ salt1) << 32) | ((b.getInt(12) ^ salt2) & 0xffffffffL);
    if (Long.bitCount(saltDiff) == 1) {
      b.putInt(8, salt1);
      b.putInt(12, salt2);
      note = "one flipped bit in its salt repaired";
    } else if (saltDiff != 0) {
      return null;
    }
    int[] next = s.clone();
    checksum(f, 0, 8, be, next);
    checksum(f, FRAME_HEADER, ps, be, next);
    int stored0 = b.getInt(16);
    int stored1 = b.getInt(20);
    long diff = ((long) (next[0] ^ stored0) << 32) | ((next[1] ^ stored1) & 0xffffffffL);
    if (diff != 0 && note.isEmpty()) {
      if (Long.bitCount(diff) == 1) {
        note = "one flipped bit in its stored checksum repaired";
      } else {
        int bit = flippedBit(f, ps, be, s, stored0, stored1);
        if (bit < 0) {
          return null;
        }
        f[bit >>> 3] ^= (byte) (1 << (7 - (bit & 7)));
        note = "one flipped bit (frame byte " + (bit >>> 3) + ") repaired by its checksum";
        next = s.clone();
        checksum(f, 0, 8, be, next);
        checksum(f, FRAME_HEADER, ps, be, next);
      }
    } else if (diff != 0) {
      return null;
    }
    if (Integer.toUnsignedLong(b.getInt(0)) == 0) {
      return null;
    }
    s[0] = next[0];
    s[1] = next[1];
    return note;
  }

  /**
   * The one bit of a frame's checksummed bytes (its first 8, and its page) whose flip makes the
   * frame's checksum match, as a bit index into {@code f} (bit 0 = the high bit of byte 0), or -1.
   * The running sums before each 8-byte step are kept, so each candidate is checked from its own
   * step on.
   */
  private static int flippedBit(
      byte[] f, int ps, boolean be, int[] seed, int stored0, int stored1) {
    int steps = 1 + ps / 8;
    int[] s0 = new int[steps + 1];
    int[] s1 = new int[steps + 1];
    s0[0] = seed[0];
    s1[0] = seed[1];
    for (int k = 0; k < steps; k++) {
      int at = k == 0 ? 0 : FRAME_HEADER + (k - 1) * 8;
      int a = s0[k] + word(f, at, be) + s1[k];
      s0[k + 1] = a;
      s1[k + 1] = s1[k] + word(f, at + 4, be) + a;
    }
    for (int k = 0; k < steps; k++) {
      int at = k == 0 ? 0 : FRAME_HEADER + (k - 1) * 8;
      for (int bit = 0; bit < 64; bit++) {
        int byteIndex = at + bit / 8;
        int mask = 1 << (7 - (bit & 7));
        f[byteIndex] ^= (byte) mask;
        int x0 = s0[k];
        int x1 = s1[k];
        for (int j = k; j < steps; j++) {
          int pos = j == 0 ? 0 : FRAME_HEADER + (j - 1) * 8;
          x0 += word(f, pos, be) + x1;
          x1 += word(f, pos + 4, be) + x0;
        }
        f[byteIndex] ^= (byte) mask;
        if (x0 == stored0 && x1 == stored1) {
          return byteIndex * 8 + (bit & 7);
        }
      }
    }
    return -1;
  }

  /** Frames of this generation after frame {@code from - 1}: {count, commits}. */
  private static long[] later(
      FileChannel ch, long from, long count, long frameBytes, int salt1, int salt2)
      throws IOException {
    long frames = 0;
    long commits = 0;
    for (long j = from; j < count; j++) {
      ByteBuffer b = ByteBuffer.wrap(read(ch, HEADER + j * frameBytes, FRAME_HEADER));
      if (b.getInt(8) == salt1 && b.getInt(12) == salt2) {
        frames++;
        if (b.getInt(4) != 0) {
          commits++;
        }
      }
    }
    return new long[] {frames, commits};
  }

  /** Whether frame {@code i} validates (unrepaired) against a running checksum {@code s}. */
  private static boolean validates(
      FileChannel ch, long i, long frameBytes, int ps, boolean be, int salt1, int salt2, int[] s)
      throws IOException {
    byte[] f = read(ch, HEADER + i * frameBytes, (int) frameBytes);
    ByteBuffer b = ByteBuffer.wrap(f);
    if (b.getInt(8) != salt1 || b.getInt(12) != salt2) {
      return false;
    }
    int[] next = s.clone();
    checksum(f, 0, 8, be, next);
    checksum(f, FRAME_HEADER, ps, be, next);
    return next[0] == b.getInt(16) && next[1] == b.getInt(20);
  }

  private static void write(FileChannel ch, long pos, byte[] b) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(b);
    while (buf.hasRemaining()) {
      ch.write(buf, pos + buf.position());
    }
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
