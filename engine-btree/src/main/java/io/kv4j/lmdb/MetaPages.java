package io.kv4j.lmdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The two meta pages at the start of LMDB's {@code data.mdb}, read with plain file reads before the
 * file is mapped, so that a damaged or truncated file is reported instead of crashing the JVM when
 * LMDB touches a page beyond its end (SIGBUS through the mapping).
 *
 * <p>Layout (LMDB 0.9.x data format version 1, 64-bit build, little-endian; every field at a fixed
 * offset from the start of its page; meta page 0 at file offset 0, meta page 1 at the page size
 * recorded in meta page 0):
 *
 * <table>
 *   <caption>a meta page</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th><th>meaning</th></tr>
 *   <tr><td>0</td><td>8</td><td>mp_pgno</td><td>page number: 0 or 1</td></tr>
 *   <tr><td>8</td><td>2</td><td>mp_pad</td><td>unused</td></tr>
 *   <tr><td>10</td><td>2</td><td>mp_flags</td><td>page type; {@code P_META} = 0x08 is set</td></tr>
 *   <tr><td>12</td><td>4</td><td>mp_lower, mp_upper</td><td>unused in meta pages</td></tr>
 *   <tr><td>16</td><td>4</td><td>mm_magic</td><td>{@code 0xBEEFC0DE}</td></tr>
 *   <tr><td>20</td><td>4</td><td>mm_version</td><td>data format version, 1</td></tr>
 *   <tr><td>24</td><td>8</td><td>mm_address</td><td>fixed map address, 0 unless MDB_FIXEDMAP</td></tr>
 *   <tr><td>32</td><td>8</td><td>mm_mapsize</td><td>map size of the last writer</td></tr>
 *   <tr><td>40</td><td>48</td><td>mm_dbs[0]</td><td>the free-page database (see below); its
 *       md_pad field (offset 40, 4 bytes) holds the page size</td></tr>
 *   <tr><td>88</td><td>48</td><td>mm_dbs[1]</td><td>the main (unnamed) database</td></tr>
 *   <tr><td>136</td><td>8</td><td>mm_last_pg</td><td>last page number in use; the file must hold
 *       pages 0 .. mm_last_pg</td></tr>
 *   <tr><td>144</td><td>8</td><td>mm_txnid</td><td>id of the transaction that wrote this meta;
 *       transaction {@code t} writes meta page {@code t & 1}, so the two hold {@code t} and {@code
 *       t-1} (both 0 in a file no transaction has committed to)</td></tr>
 * </table>
 *
 * <table>
 *   <caption>a database record (MDB_db, 48 bytes)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>md_pad (page size, in the free database's record)</td></tr>
 *   <tr><td>4</td><td>2</td><td>md_flags</td></tr>
 *   <tr><td>6</td><td>2</td><td>md_depth: tree height, 0 when empty</td></tr>
 *   <tr><td>8</td><td>8</td><td>md_branch_pages</td></tr>
 *   <tr><td>16</td><td>8</td><td>md_leaf_pages</td></tr>
 *   <tr><td>24</td><td>8</td><td>md_overflow_pages</td></tr>
 *   <tr><td>32</td><td>8</td><td>md_entries</td></tr>
 *   <tr><td>40</td><td>8</td><td>md_root: root page number, or all ones when empty</td></tr>
 * </table>
 *
 * <p>LMDB itself refuses a file when either meta page lacks the flag, the magic or the version, and
 * uses the meta with the higher transaction id. This class checks the same, plus what LMDB takes on
 * trust: both pages agree on the page size, the transaction ids fit the alternation above (a
 * flipped bit in a transaction id would otherwise make LMDB silently use the older snapshot), the
 * roots lie within {@code mm_last_pg}, and the file is long enough for {@code mm_last_pg}.
 *
 * <p><b>A live writer.</b> Read-only stores read files that another process may be writing. A
 * commit writes its pages, then its meta page with one {@code pwrite} from {@code mm_mapsize} on
 * (the page flag, magic and version before it are never rewritten; the page size it rewrites keeps
 * its value). So a reader can see both pages a few commits apart (transactions 10 and 13: page 0
 * read before commit 12 rewrote it, page 1 after commit 13), one page half written (new roots, old
 * {@code mm_last_pg}), or a newer meta than the file length it read before. None of these is
 * damage. Hence one look ({@link Look}) reads both meta pages in one read and the length after
 * them, which narrows the window, and a look that fails the checks is taken for damage only when
 * {@value #SETTLE_LOOKS} looks in a row, {@value #SETTLE_PAUSE_MILLIS} ms apart, read the same
 * bytes and length: the transaction ids of both pages only grow, so a pair that mixed two moments
 * never reads the same again, and a half-written page lasts as long as one {@code pwrite}. A file
 * that changes under every look without ever reading consistent is reported as such, not as damage.
 * A damaged file that nothing writes fails the checks in every look and is reported after the
 * third.
 */
final class MetaPages {
  static final int MAGIC = 0xBEEFC0DE;
  static final int VERSION = 1;
  static final int P_META = 0x08;
  static final int HEADER = 16;
  static final int META_BYTES = HEADER + 136; // page header + MDB_meta up to mm_txnid
  static final int MIN_PAGE_SIZE = 512;
  static final int MAX_PAGE_SIZE = 0x10000;
  static final long NO_ROOT = -1L; // P_INVALID
  static final int FREE_DB = 40;
  static final int MAIN_DB = 88;
  static final int LAST_PG = 136; // mm_last_pg
  static final int TXNID = 144; // mm_txnid

  /** Looks in a row that must read the same failing bytes before they count as damage. */
  static final int SETTLE_LOOKS = 3;

  /** The pause between two looks at a file whose meta pages failed the checks. */
  static final int SETTLE_PAUSE_MILLIS = 1;

  /** Looks after which a file that changed under each of them and never read consistent fails. */
  static final int MAX_LOOKS = 1000;

  /** One database record (MDB_db) of a meta page. */
  record Db(int flags, int depth, long entries, long root) {
    boolean isEmpty() {
      return root == NO_ROOT;
    }
  }

  /** One meta page, parsed. */
  record Meta(int slot, int pageSize, long lastPage, long txnId, Db free, Db main) {}

  /** The meta LMDB will use (the higher transaction id) and the file's length. */
  final Meta current;

  final Meta other;
  final long fileSize;

  /** The look these pages were read in. */
  private final Look look;

  private MetaPages(Meta current, Meta other, long fileSize, Look look) {
    this.current = current;
    this.other = other;
    this.fileSize = fileSize;
    this.look = look;
  }

  /**
   * One look at the file: the bytes of both meta pages, read in one read from offset 0 (as many as
   * the file holds, up to the end of meta page 1 at the page size meta page 0 records), then the
   * file's length. Two looks are equal when they read the same bytes and length.
   */
  record Look(byte[] bytes, long size) {
    static Look take(FileChannel ch, Path file, String describe) {
      ByteBuffer first = readAt(ch, file, describe, 0, META_BYTES);
      int pageSize = first.limit() == META_BYTES ? first.getInt(FREE_DB) : 0;
      ByteBuffer both = first;
      if (pageSize >= MIN_PAGE_SIZE && pageSize <= MAX_PAGE_SIZE) {
        both = readAt(ch, file, describe, 0, pageSize + META_BYTES);
      }
      byte[] bytes = new byte[both.limit()];
      both.get(0, bytes);
      long size;
      try {
        size = ch.size();
      } catch (IOException e) {
        throw new StoreIOException(describe + ": cannot read " + file + ": " + e, e);
      }
      return new Look(bytes, size);
    }

    ByteBuffer page(long at) {
      int from = (int) Math.min(at, bytes.length);
      int to = (int) Math.min(at + META_BYTES, bytes.length);
      return ByteBuffer.wrap(Arrays.copyOfRange(bytes, from, to)).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Look l && l.size == size && Arrays.equals(l.bytes, bytes);
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(bytes) + Long.hashCode(size);
    }

    @Override
    public String toString() {
      return "Look[" + bytes.length + " bytes, file size " + size + "]";
    }
  }

  /**
   * Whether the file still reads exactly as when these pages were read: no commit since (both meta
   * pages and the length unchanged).
   *
   * @param ch the data file
   * @param file its path, for messages
   * @param describe the store, for messages
   * @return true if a new look equals this one
   */
  boolean unchanged(FileChannel ch, Path file, String describe) {
    return look.equals(Look.take(ch, file, describe));
  }

  int pageSize() {
    return current.pageSize;
  }

  /** The bytes the file must hold: every page up to the last one in use. */
  long requiredSize() {
    return (current.lastPage + 1) * current.pageSize;
  }

  /**
   * Reads and checks both meta pages, tolerating a writer that commits meanwhile (see the class
   * comment): returns the first look that passes the checks; throws a look's damage once {@value
   * #SETTLE_LOOKS} looks in a row read it unchanged. Does not check the file length against {@code
   * mm_last_pg}: see {@link #requiredSize()}.
   *
   * @param ch the data file, open for reading
   * @param file its path, for messages
   * @param describe the store, for messages
   * @return the parsed pages
   * @throws StoreCorruptedException if the file is too short for the meta pages or they are damaged
   * @throws StoreException if the file changed under each of {@value #MAX_LOOKS} looks and never
   *     read consistent
   * @throws StoreIOException if the file cannot be read
   */
  static MetaPages read(FileChannel ch, Path file, String describe) {
    Look same = null;
    int times = 0;
    for (int looks = 1; ; looks++) {
      Look look = Look.take(ch, file, describe);
      try {
        return check(look, file, describe);
      } catch (StoreCorruptedException damage) {
        if (look.equals(same)) {
          times++;
        } else {
          same = look;
          times = 1;
        }
        if (times == SETTLE_LOOKS) {
          throw damage;
        }
        if (looks >= MAX_LOOKS) {
          throw new StoreException(
              describe
                  + ": "
                  + file
                  + " changed under each of "
                  + looks
                  + " reads of its meta pages and never read as a consistent pair (a writer"
                  + " committing all the time, or damage a writer keeps touching); the last read: "
                  + damage.getMessage(),
              damage);
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(SETTLE_PAUSE_MILLIS));
      }
    }
  }

  /** Checks one look at the file. */
  static MetaPages check(Look look, Path file, String describe) {
    long size = look.size();
    if (look.bytes().length < META_BYTES || size < META_BYTES) {
      throw corrupted(
          describe,
          file,
          0,
          "the LMDB data file is "
              + Math.min(size, look.bytes().length)
              + " bytes, too short to hold its meta pages (at least "
              + (MIN_PAGE_SIZE + META_BYTES)
              + " bytes)");
    }
    Meta m0 = parse(look, file, describe, 0, 0);
    if ((long) m0.pageSize + META_BYTES > Math.min(size, look.bytes().length)) {
      throw corrupted(
          describe,
          file,
          m0.pageSize,
          "the LMDB data file is "
              + size
              + " bytes, too short to hold its second meta page at offset "
              + m0.pageSize);
    }
    Meta m1 = parse(look, file, describe, 1, m0.pageSize);
    checkPair(m0, m1, file, describe);
    Meta cur = m1.txnId > m0.txnId ? m1 : m0;
    Meta old = cur == m1 ? m0 : m1;
    if (cur.lastPage < old.lastPage) {
      throw corrupted(
          describe,
          file,
          (long) cur.slot * cur.pageSize + LAST_PG,
          "the newer LMDB meta page records last page "
              + cur.lastPage
              + ", below the older one's "
              + old.lastPage
              + " (the file never shrinks)");
    }
    return new MetaPages(cur, old, size, look);
  }

  /**
   * Checks what the two meta pages must agree on: the page size, and transaction ids that fit
   * LMDB's alternation (each on its own page's parity, consecutive unless both are 0).
   */
  private static void checkPair(Meta m0, Meta m1, Path file, String describe) {
    if (m1.pageSize != m0.pageSize) {
      throw corrupted(
          describe,
          file,
          m0.pageSize + FREE_DB,
          "the two LMDB meta pages disagree on the page size ("
              + m0.pageSize
              + " and "
              + m1.pageSize
              + ")");
    }
    for (Meta m : new Meta[] {m0, m1}) {
      if (m.txnId != 0 && (m.txnId & 1) != m.slot) {
        throw corrupted(
            describe,
            file,
            (long) m.slot * m0.pageSize + TXNID,
            "LMDB meta page "
                + m.slot
                + " records transaction "
                + m.txnId
                + ", which LMDB never writes to that page");
      }
    }
    boolean fresh = m0.txnId == 0 && m1.txnId == 0;
    if (!fresh && Math.abs(m0.txnId - m1.txnId) != 1) {
      throw corrupted(
          describe,
          file,
          TXNID,
          "the LMDB meta pages record transactions "
              + m0.txnId
              + " and "
              + m1.txnId
              + ", which are not consecutive");
    }
  }

  private static Meta parse(Look look, Path file, String describe, int slot, long at) {
    ByteBuffer b = look.page(at);
    String what = "LMDB meta page " + slot + " at offset " + at;
    checkHeader(b, file, describe, slot, at, what);
    int pageSize = b.getInt(FREE_DB);
    if (pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE || Integer.bitCount(pageSize) != 1) {
      throw corrupted(describe, file, at + FREE_DB, what + " records page size " + pageSize);
    }
    long lastPage = b.getLong(LAST_PG);
    long txnId = b.getLong(TXNID);
    if (lastPage < 1 || lastPage > Long.MAX_VALUE / MAX_PAGE_SIZE) {
      throw corrupted(describe, file, at + LAST_PG, what + " records last page " + lastPage);
    }
    Db free = db(b, FREE_DB);
    Db main = db(b, MAIN_DB);
    for (Db d : new Db[] {free, main}) {
      if (!d.isEmpty() && (d.root < 2 || d.root > lastPage)) {
        throw corrupted(
            describe,
            file,
            at + (d == free ? FREE_DB : MAIN_DB) + 40,
            what + " records a root page " + d.root + " outside pages 2.." + lastPage);
      }
    }
    return new Meta(slot, pageSize, lastPage, txnId, free, main);
  }

  /**
   * Up to {@code length} bytes from offset {@code at}, in one read where the file system allows
   * (fewer where the file ends).
   */
  private static ByteBuffer readAt(
      FileChannel ch, Path file, String describe, long at, int length) {
    ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    try {
      while (b.hasRemaining()) {
        if (ch.read(b, at + b.position()) < 0) {
          break;
        }
      }
    } catch (IOException e) {
      throw new StoreIOException(describe + ": cannot read " + file + ": " + e, e);
    }
    return b.flip();
  }

  /**
   * Checks the fields LMDB itself checks: the meta flag, the magic, the version, the page number.
   */
  private static void checkHeader(
      ByteBuffer b, Path file, String describe, int slot, long at, String what) {
    int flags = b.getShort(10) & 0xFFFF;
    int magic = b.getInt(16);
    if ((flags & P_META) == 0 || magic != MAGIC) {
      throw corrupted(
          describe,
          file,
          at,
          what
              + " is damaged or the file is not an LMDB data file (flags 0x"
              + Integer.toHexString(flags)
              + ", magic 0x"
              + Integer.toHexString(magic)
              + ", expected 0x"
              + Integer.toHexString(MAGIC)
              + ")");
    }
    int version = b.getInt(20);
    if (version != VERSION) {
      throw corrupted(
          describe,
          file,
          at + 20,
          what + " has data format version " + version + "; this LMDB reads version " + VERSION);
    }
    long pgno = b.getLong(0);
    if (pgno != slot) {
      throw corrupted(describe, file, at, what + " says it is page " + pgno);
    }
  }

  static Db db(ByteBuffer b, int at) {
    return new Db(
        b.getShort(at + 4) & 0xFFFF,
        b.getShort(at + 6) & 0xFFFF,
        b.getLong(at + 32),
        b.getLong(at + 40));
  }

  static StoreCorruptedException corrupted(String describe, Path file, long offset, String why) {
    return new StoreCorruptedException(describe + ": " + file + ": " + why, file, offset);
  }
}
