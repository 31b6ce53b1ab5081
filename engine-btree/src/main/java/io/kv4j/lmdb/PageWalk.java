package io.kv4j.lmdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.BitSet;

/**
 * A structural check of an LMDB data file done with plain file reads, never through the map, so
 * that damage is reported and never followed into a crash. It walks both B+trees of one snapshot
 * (the free-page database and the main database) from the roots in a meta page and checks every
 * page it reaches. Used by {@code verify()} and at open when the file is shorter than {@code
 * mm_last_pg} says (LMDB does not write pages that a transaction allocated and freed again, so a
 * healthy file can end before its last, free, pages; the walk tells that apart from truncation).
 *
 * <p>Page layout (LMDB 0.9.x, 64-bit, little-endian; offsets from the start of the page):
 *
 * <table>
 *   <caption>page header and nodes</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th><th>meaning</th></tr>
 *   <tr><td>0</td><td>8</td><td>mp_pgno</td><td>the page's own number</td></tr>
 *   <tr><td>10</td><td>2</td><td>mp_flags</td><td>0x01 branch, 0x02 leaf, 0x04 overflow</td></tr>
 *   <tr><td>12</td><td>2</td><td>mp_lower</td><td>end of the node offset array; keys = (lower -
 *       16) / 2</td></tr>
 *   <tr><td>14</td><td>2</td><td>mp_upper</td><td>start of the node area</td></tr>
 *   <tr><td>12</td><td>4</td><td>mp_pages</td><td>overflow pages only: pages in the run</td></tr>
 *   <tr><td>16</td><td>2 each</td><td>mp_ptrs[]</td><td>offset of each node in the page, in key
 *       order</td></tr>
 *   <tr><td>node+0</td><td>4</td><td>mn_lo, mn_hi</td><td>leaf: data size; branch: child page
 *       number bits 0..31</td></tr>
 *   <tr><td>node+4</td><td>2</td><td>mn_flags</td><td>leaf: 0x01 data in overflow pages (the data
 *       is then an 8-byte page number); branch: child page number bits 32..47</td></tr>
 *   <tr><td>node+6</td><td>2</td><td>mn_ksize</td><td>key size</td></tr>
 *   <tr><td>node+8</td><td>ksize</td><td>key</td><td>then, in a leaf, the data</td></tr>
 * </table>
 *
 * <p>Checks: every page number lies within {@code mm_last_pg} and within the file; each page says
 * it is the page it was reached as and has the expected type; node offsets and sizes stay inside
 * the page; keys ascend within pages and stay within the bounds of their branch entries (which
 * finds a damaged key that would send lookups to the wrong leaf); no page is reached twice or is
 * also on the free list; the tree's page and entry counts match its meta record; and the pages in
 * use plus the free pages plus the two meta pages are exactly pages 0..{@code mm_last_pg}.
 */
final class PageWalk {
  static final int P_BRANCH = 0x01;
  static final int P_LEAF = 0x02;
  static final int P_OVERFLOW = 0x04;
  static final int TYPE_MASK = 0x7F;
  static final int F_BIGDATA = 0x01;
  static final int F_SUBDATA = 0x02; // main database only: a named database's record
  static final int DB_RECORD = 48; // sizeof(MDB_db)
  static final int NODE_HEADER = 8;
  static final int MAX_DEPTH = 32; // LMDB's CURSOR_STACK

  private final FileChannel ch;
  private final Path file;
  private final String describe;
  private final MetaPages.Meta meta;
  private final long fileSize;
  private final int psize;
  private final BitSet used = new BitSet();
  private final BitSet free = new BitSet();
  private long branchPages;
  private long leafPages;
  private long overflowPages;
  private long entries;
  private boolean inMain; // walking the main database, whose leaves may name databases
  // Named databases found in the main database's leaves, walked after it: name -> record.
  private final java.util.Map<String, MetaPages.Db> named = new java.util.LinkedHashMap<>();
  private final java.util.Map<String, Long> namedEntries = new java.util.LinkedHashMap<>();

  private PageWalk(FileChannel ch, Path file, String describe, MetaPages.Meta meta, long fileSize) {
    this.ch = ch;
    this.file = file;
    this.describe = describe;
    this.meta = meta;
    this.fileSize = fileSize;
    this.psize = meta.pageSize();
  }

  /**
   * Walks both trees of a meta page's snapshot and checks them.
   *
   * @param ch the data file
   * @param file its path, for messages
   * @param describe the store, for messages
   * @param meta the snapshot to check
   * @param fileSize the file's length
   * @return the number of entries in the main database (in a store of named databases: their count)
   * @throws StoreCorruptedException at the first damage found
   */
  static long check(
      FileChannel ch, Path file, String describe, MetaPages.Meta meta, long fileSize) {
    return walk(ch, file, describe, meta, fileSize).mainEntries();
  }

  /**
   * What a walk found: the main database's entry count, and the entry count of each named database
   * (by name, in key order; empty in a store without named databases).
   */
  record Walked(long mainEntries, java.util.Map<String, Long> named) {}

  /** {@link #check}, also walking and counting the named databases the main database records. */
  static Walked walk(
      FileChannel ch, Path file, String describe, MetaPages.Meta meta, long fileSize) {
    if (meta.lastPage() >= Integer.MAX_VALUE) {
      throw new StoreIOException(
          describe
              + ": "
              + file
              + " has "
              + (meta.lastPage() + 1)
              + " pages; the structural check handles at most 2^31",
          (Throwable) null);
    }
    PageWalk w = new PageWalk(ch, file, describe, meta, fileSize);
    w.used.set(0, 2);
    w.tree(meta.free(), true, "free-page database");
    w.inMain = true;
    w.tree(meta.main(), false, "main database");
    w.inMain = false;
    long mainEntries = w.entries;
    for (java.util.Map.Entry<String, MetaPages.Db> e : w.named.entrySet()) {
      w.tree(e.getValue(), false, "database '" + e.getKey() + "'");
      w.namedEntries.put(e.getKey(), w.entries);
    }
    long total = meta.lastPage() + 1;
    long accounted = (long) w.used.cardinality() + w.free.cardinality();
    if (accounted != total) {
      int missing = w.used.nextClearBit(0);
      while (missing < total && w.free.get(missing)) {
        missing = w.used.nextClearBit(missing + 1);
      }
      throw w.bad(
          Math.min(missing, total - 1),
          "pages in use ("
              + w.used.cardinality()
              + ", metas included) plus free pages ("
              + w.free.cardinality()
              + ") are "
              + accounted
              + ", not the "
              + total
              + " pages 0.."
              + meta.lastPage()
              + "; page "
              + missing
              + " is neither in a tree nor free");
    }
    return new Walked(mainEntries, java.util.Collections.unmodifiableMap(w.namedEntries));
  }

  private void tree(MetaPages.Db db, boolean isFree, String name) {
    branchPages = 0;
    leafPages = 0;
    overflowPages = 0;
    entries = 0;
    if (!db.isEmpty()) {
      page(db.root(), -1, 0, null, null, isFree);
    }
    if (entries != db.entries()
        || (!isFree && (branchPages + leafPages + overflowPages == 0) != db.isEmpty())) {
      throw bad(
          db.isEmpty() ? -1 : db.root(),
          "the "
              + name
              + " holds "
              + entries
              + " entries in its pages, but its meta record says "
              + db.entries());
    }
  }

  /**
   * Checks one tree page and the pages below it. Keys of the page must lie in [lo, hi) (null: no
   * bound).
   */
  private void page(long pgno, long parent, int depth, byte[] lo, byte[] hi, boolean isFree) {
    if (depth >= MAX_DEPTH) {
      throw bad(pgno, "the tree is deeper than " + MAX_DEPTH + " levels (a loop of pages?)");
    }
    ByteBuffer p = read(pgno, parent, 1);
    claim(pgno, 1, parent);
    int n = nodeCount(p, pgno);
    boolean branch = (p.getShort(10) & TYPE_MASK) == P_BRANCH;
    int upper = p.getShort(14) & 0xFFFF;
    if (branch) {
      branchPages++;
    } else {
      leafPages++;
    }
    byte[] prev = null;
    long[] children = branch ? new long[n] : null;
    byte[][] keys = branch ? new byte[n + 1][] : null;
    for (int i = 0; i < n; i++) {
      int at = p.getShort(MetaPages.HEADER + 2 * i) & 0xFFFF;
      if (at < upper || at + NODE_HEADER > psize) {
        throw bad(
            pgno, "node " + i + " of page " + pgno + " lies outside the page (offset " + at + ")");
      }
      int ksize = p.getShort(at + 6) & 0xFFFF;
      if (at + NODE_HEADER + ksize > psize) {
        throw bad(pgno, "the key of node " + i + " of page " + pgno + " runs past the page");
      }
      byte[] key = new byte[ksize];
      p.get(at + NODE_HEADER, key);
      long lohi = (p.getShort(at) & 0xFFFFL) | (p.getShort(at + 2) & 0xFFFFL) << 16;
      int nflags = p.getShort(at + 4) & 0xFFFF;
      if (branch) {
        children[i] = lohi | (long) nflags << 32;
        if (i == 0) {
          continue; // the first key of a branch page is not used
        }
        keys[i] = key;
      } else {
        leaf(p, pgno, i, at + NODE_HEADER + ksize, lohi, nflags, key, isFree);
      }
      if (!isFree) {
        if (prev != null && Arrays.compareUnsigned(prev, key) >= 0) {
          throw bad(pgno, "the keys of page " + pgno + " are out of order at node " + i);
        }
        if ((lo != null && Arrays.compareUnsigned(key, lo) < 0)
            || (hi != null && Arrays.compareUnsigned(key, hi) >= 0)) {
          throw bad(
              pgno,
              "key "
                  + i
                  + " of page "
                  + pgno
                  + " lies outside the range its parent branch entry sends there");
        }
        prev = key;
      }
    }
    if (branch) {
      keys[0] = lo;
      keys[n] = hi;
      for (int i = 0; i < n; i++) {
        page(children[i], pgno, depth + 1, keys[i], keys[i + 1], isFree);
      }
    }
  }

  /**
   * Checks a tree page's header: its number, its type (branch or leaf) and the bounds of its node
   * table.
   *
   * @return how many nodes the page holds, at least one
   */
  private int nodeCount(ByteBuffer p, long pgno) {
    int flags = p.getShort(10) & TYPE_MASK;
    if (p.getLong(0) != pgno) {
      throw bad(pgno, "page " + pgno + " says it is page " + p.getLong(0));
    }
    if (flags != P_BRANCH && flags != P_LEAF) {
      throw bad(
          pgno,
          "page "
              + pgno
              + " is neither a branch nor a leaf page (flags 0x"
              + Integer.toHexString(flags)
              + ")");
    }
    int lower = p.getShort(12) & 0xFFFF;
    int upper = p.getShort(14) & 0xFFFF;
    if (lower < MetaPages.HEADER || (lower & 1) != 0 || lower > upper || upper > psize) {
      throw bad(
          pgno, "page " + pgno + " has a broken header (lower " + lower + ", upper " + upper + ")");
    }
    int n = (lower - MetaPages.HEADER) >> 1;
    if (n == 0) {
      throw bad(pgno, "page " + pgno + " holds " + n + " nodes");
    }
    return n;
  }

  /** Checks one leaf node: its flags, and its value inside the page or in overflow pages. */
  private void leaf(
      ByteBuffer p, long pgno, int i, int data, long lohi, int nflags, byte[] key, boolean isFree) {
    entries++;
    if (inMain && nflags == F_SUBDATA) {
      namedDb(p, pgno, i, data, lohi, key);
    } else if ((nflags & ~F_BIGDATA) != 0) {
      throw bad(
          pgno,
          "node "
              + i
              + " of page "
              + pgno
              + " has flags 0x"
              + Integer.toHexString(nflags)
              + " that this store never writes");
    }
    if ((nflags & F_BIGDATA) != 0) {
      if (data + 8 > psize) {
        throw bad(
            pgno,
            "the overflow page number of node " + i + " of page " + pgno + " runs past the page");
      }
      long ov = p.getLong(data);
      overflow(ov, pgno, lohi, isFree);
    } else {
      if (data + lohi > psize) {
        throw bad(
            pgno,
            "the value of node "
                + i
                + " of page "
                + pgno
                + " ("
                + lohi
                + " bytes) runs past the page");
      }
      if (isFree) {
        freeList(ByteBuffer.wrap(copy(p, data, (int) lohi)).order(ByteOrder.LITTLE_ENDIAN), pgno);
      }
    }
  }

  /** Records a named database's record (a leaf node of the main database flagged F_SUBDATA). */
  private void namedDb(ByteBuffer p, long pgno, int i, int data, long size, byte[] key) {
    if (size != DB_RECORD || data + DB_RECORD > psize) {
      throw bad(
          pgno,
          "node "
              + i
              + " of page "
              + pgno
              + " names a database but holds "
              + size
              + " bytes, not a "
              + DB_RECORD
              + "-byte database record");
    }
    MetaPages.Db db = MetaPages.db(p, data);
    if (db.flags() != 0) {
      throw bad(
          pgno,
          "node "
              + i
              + " of page "
              + pgno
              + " records a database with flags 0x"
              + Integer.toHexString(db.flags())
              + " that this store never sets");
    }
    if (!db.isEmpty() && (db.root() < 2 || db.root() > meta.lastPage())) {
      throw bad(
          pgno,
          "node " + i + " of page " + pgno + " records a database root outside the pages in use");
    }
    named.put(new String(key, java.nio.charset.StandardCharsets.UTF_8), db);
  }

  private void overflow(long ov, long parent, long dataSize, boolean isFree) {
    ByteBuffer head = read(ov, parent, 1);
    int flags = head.getShort(10) & TYPE_MASK;
    long pages = head.getInt(12) & 0xFFFFFFFFL;
    if (head.getLong(0) != ov || flags != P_OVERFLOW) {
      throw bad(
          ov,
          "page "
              + ov
              + ", referenced by page "
              + parent
              + " as the start of a value, is not an overflow page");
    }
    if (pages < 1 || MetaPages.HEADER + dataSize > pages * psize) {
      throw bad(
          ov,
          "overflow run at page "
              + ov
              + " has "
              + pages
              + " pages, too few for its "
              + dataSize
              + " bytes");
    }
    read(ov + pages - 1, parent, 1); // within the file
    claim(ov, pages, parent);
    overflowPages += pages;
    if (isFree) {
      if (dataSize > Integer.MAX_VALUE - 64) {
        throw bad(ov, "a free-page list of " + dataSize + " bytes");
      }
      ByteBuffer all = ByteBuffer.allocate((int) dataSize).order(ByteOrder.LITTLE_ENDIAN);
      fill(all, ov * psize + MetaPages.HEADER);
      freeList(all.flip(), ov);
    }
  }

  /** A free-page list (MDB_IDL): a count, then that many page numbers. */
  private void freeList(ByteBuffer b, long pgno) {
    if (b.remaining() < 8) {
      throw bad(pgno, "a free-page list on page " + pgno + " is cut short");
    }
    long count = b.getLong(0);
    if (count < 0 || 8 + count * 8 > b.remaining()) {
      throw bad(
          pgno,
          "a free-page list on page "
              + pgno
              + " counts "
              + count
              + " pages in "
              + b.remaining()
              + " bytes");
    }
    for (int i = 1; i <= count; i++) {
      long f = b.getLong(8 * i);
      if (f < 2 || f > meta.lastPage()) {
        throw bad(pgno, "the free list names page " + f + ", outside pages 2.." + meta.lastPage());
      }
      if (used.get((int) f) || free.get((int) f)) {
        throw bad(pgno, "page " + f + " is on the free list twice or is also in use");
      }
      free.set((int) f);
    }
  }

  private void claim(long pgno, long pages, long parent) {
    for (long q = pgno; q < pgno + pages; q++) {
      if (used.get((int) q) || free.get((int) q)) {
        throw bad(
            q,
            "page "
                + q
                + " (reached from page "
                + parent
                + ") is reached twice or is also on the free list");
      }
      used.set((int) q);
    }
  }

  /** Reads pages [pgno, pgno+count) after checking they exist. */
  private ByteBuffer read(long pgno, long parent, int count) {
    if (pgno < 2 || pgno > meta.lastPage()) {
      throw bad(
          parent,
          "page " + parent + " refers to page " + pgno + ", outside pages 2.." + meta.lastPage());
    }
    long end = (pgno + count) * psize;
    if (end > fileSize) {
      throw new StoreCorruptedException(
          describe
              + ": "
              + file
              + ": page "
              + pgno
              + " (referenced by page "
              + parent
              + ") is beyond the end of the file: the file is "
              + fileSize
              + " bytes, page "
              + pgno
              + " needs "
              + end
              + " (the file was truncated; LMDB's meta page expects "
              + (meta.lastPage() + 1) * psize
              + " bytes)",
          file,
          fileSize);
    }
    ByteBuffer b = ByteBuffer.allocate(psize * count).order(ByteOrder.LITTLE_ENDIAN);
    fill(b, pgno * psize);
    return b.flip();
  }

  private void fill(ByteBuffer b, long at) {
    try {
      int start = b.position();
      while (b.hasRemaining()) {
        if (ch.read(b, at + b.position() - start) < 0) {
          throw new StoreCorruptedException(
              describe + ": " + file + ": the file ends at " + fileSize + " bytes inside a page",
              file,
              at);
        }
      }
    } catch (IOException e) {
      throw new StoreIOException(describe + ": cannot read " + file + ": " + e, e);
    }
  }

  private static byte[] copy(ByteBuffer p, int at, int len) {
    byte[] out = new byte[len];
    p.get(at, out);
    return out;
  }

  private StoreCorruptedException bad(long pgno, String why) {
    return new StoreCorruptedException(
        describe + ": " + file + ": " + why, file, pgno < 0 ? -1 : pgno * psize);
  }
}
