package io.kv4j.sqlite;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One b-tree page of an SQLite database file, parsed with every offset checked against the page
 * before it is used: a damaged page yields the cells that pass and a list of problems, never an
 * exception or a read outside the page. Salvage reads the file through these instead of SQLite, so
 * that damage SQLite refuses ({@code SQLITE_CORRUPT}) costs only what it touches.
 *
 * <p>Page header (big-endian; at offset 100 on page 1, after the database header, else at 0):
 *
 * <table>
 *   <caption>b-tree page header</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>1</td><td>type: 2 index interior, 5 table interior, 10 index leaf, 13 table
 *       leaf</td></tr>
 *   <tr><td>1</td><td>2</td><td>first freeblock (0 = none); each freeblock: next 2, size 2</td></tr>
 *   <tr><td>3</td><td>2</td><td>number of cells</td></tr>
 *   <tr><td>5</td><td>2</td><td>start of the cell content area (0 = 65536)</td></tr>
 *   <tr><td>7</td><td>1</td><td>fragmented free bytes in the content area</td></tr>
 *   <tr><td>8</td><td>4</td><td>interior pages only: the right-most child page</td></tr>
 * </table>
 *
 * <p>The cell pointer array follows the header (2 bytes per cell, offsets from the page start).
 * Cells (varints are SQLite's: 1–9 bytes, big-endian, 7 bits per byte, all 8 in the ninth):
 *
 * <table>
 *   <caption>cell formats</caption>
 *   <tr><th>page type</th><th>cell</th></tr>
 *   <tr><td>table leaf</td><td>payload size (varint), rowid (varint), local payload, first
 *       overflow page (4, only if the payload spills)</td></tr>
 *   <tr><td>table interior</td><td>left child page (4), rowid (varint): the largest rowid in
 *       the left child</td></tr>
 *   <tr><td>index leaf</td><td>payload size (varint), local payload, overflow page (4, if
 *       any)</td></tr>
 *   <tr><td>index interior</td><td>left child page (4), then as an index leaf cell</td></tr>
 * </table>
 *
 * <p>With usable size U: a table leaf keeps up to U−35 payload bytes on the page, an index page up
 * to ((U−12)·64/255)−23; beyond that it keeps M = ((U−12)·32/255)−23 plus (P−M) mod (U−4) bytes if
 * that fits, else M, and the rest goes to a chain of overflow pages (next page 4, then U−4 bytes).
 *
 * <p>What makes a page damaged: an unknown type, a cell count whose pointer array does not fit, a
 * content area start outside the page, a freeblock chain that leaves the page or goes backwards, a
 * cell pointer outside the content area or repeated, a cell that runs past the page or into a
 * freeblock (space SQLite freed: a deleted row's bytes may still be there and must not come back),
 * keys of an interior table page out of order, and space that does not add up (cells, freeblocks
 * and the fragment count must cover the content area exactly, as SQLite's integrity check demands):
 * the last catches a cell count that shrank, hiding cells.
 */
final class BTreePage {
  static final int INDEX_INTERIOR = 2;
  static final int TABLE_INTERIOR = 5;
  static final int INDEX_LEAF = 10;
  static final int TABLE_LEAF = 13;

  /**
   * One cell that passed its checks.
   *
   * @param index its position in the pointer array
   * @param offset where it starts in the page
   * @param size its size as SQLite counts it (at least 4)
   * @param child the left child page (interior pages), else 0
   * @param rowid the rowid (table pages), else 0
   * @param payloadSize the whole payload's size (table interior: 0)
   * @param payloadAt where the local payload starts in the page
   * @param local how many payload bytes are on the page
   * @param overflow the first overflow page, 0 if none
   * @param extra whether it was found past the cell count (a lenient read of a damaged page)
   */
  record Cell(
      int index,
      int offset,
      int size,
      long child,
      long rowid,
      long payloadSize,
      int payloadAt,
      int local,
      long overflow,
      boolean extra) {}

  final long number;
  final byte[] data;
  final int usable;
  final int type;
  final int cellCount;
  final long rightChild;
  final List<Cell> cells;
  final List<String> problems;
  final boolean broken;

  /**
   * A note on a page whose damage the page itself proved harmless (a type byte or content area
   * start that the rest of the page contradicts): its cells are read; the note is reported. Null if
   * none.
   */
  String repair;

  private BTreePage(
      long number,
      byte[] data,
      int usable,
      int type,
      int cellCount,
      long rightChild,
      List<Cell> cells,
      List<String> problems,
      boolean broken) {
    this.number = number;
    this.data = data;
    this.usable = usable;
    this.type = type;
    this.cellCount = cellCount;
    this.rightChild = rightChild;
    this.cells = cells;
    this.problems = problems;
    this.broken = broken;
  }

  /** Whether anything failed a check. */
  boolean damaged() {
    return broken || !problems.isEmpty();
  }

  boolean interior() {
    return type == INDEX_INTERIOR || type == TABLE_INTERIOR;
  }

  boolean table() {
    return type == TABLE_INTERIOR || type == TABLE_LEAF;
  }

  static boolean isType(int t) {
    return t == INDEX_INTERIOR || t == TABLE_INTERIOR || t == INDEX_LEAF || t == TABLE_LEAF;
  }

  /** Whether a type byte is of a table b-tree (true) or an index b-tree (false). */
  static boolean isTableType(int t) {
    return t == TABLE_INTERIOR || t == TABLE_LEAF;
  }

  static String typeName(int t) {
    return switch (t) {
      case INDEX_INTERIOR -> "index interior";
      case TABLE_INTERIOR -> "table interior";
      case INDEX_LEAF -> "index leaf";
      case TABLE_LEAF -> "table leaf";
      default -> "type " + t;
    };
  }

  /** The offset of the page header: 100 on page 1 (after the database header), else 0. */
  static int headerOffset(long number) {
    return number == 1 ? DatabaseHeader.LENGTH : 0;
  }

  /**
   * Parses a page.
   *
   * @param number the page number
   * @param d the page's bytes
   * @param usable the usable size (page size minus reserved bytes)
   * @param forcedType 0 to read the type from the page, else the type to read it as (a damaged type
   *     byte)
   * @param lenient whether to read a damaged page as far as it goes: a cell count too large for the
   *     page is cut to what fits, and pointer slots past the cell count up to the content area are
   *     tried too (cells a shrunken count hid); such cells are marked {@link Cell#extra}
   */
  static BTreePage parse(long number, byte[] d, int usable, int forcedType, boolean lenient) {
    int h = headerOffset(number);
    if (d == null || d.length < usable || h + 12 > usable) {
      return broken(number, d, usable, 0, "page shorter than its usable size");
    }
    int stored = d[h] & 0xff;
    if (forcedType == 0 && !isType(stored)) {
      // A damaged type byte: the page is read as the one type under which it parses with every
      // check passing and its space adding up exactly, if there is exactly one.
      BTreePage only = null;
      for (int t : new int[] {TABLE_LEAF, TABLE_INTERIOR, INDEX_LEAF, INDEX_INTERIOR}) {
        BTreePage p = read(number, d, usable, t, false, false);
        if (!p.damaged()) {
          if (only != null) {
            only = null;
            break;
          }
          only = p;
        }
      }
      if (only != null) {
        return only.repaired(
            "type byte "
                + stored
                + " is no b-tree page type; the page parses only as a "
                + typeName(only.type)
                + " page, and is read as one");
      }
    }
    return read(number, d, usable, forcedType, lenient, true);
  }

  private BTreePage repaired(String note) {
    repair = repair == null ? note : note + "; " + repair;
    return this;
  }

  private static BTreePage read(
      long number, byte[] d, int usable, int forcedType, boolean lenient, boolean noteType) {
    int h = headerOffset(number);
    List<String> problems = new ArrayList<>();
    int stored = d[h] & 0xff;
    int type = forcedType != 0 ? forcedType : stored;
    if (!isType(type)) {
      return broken(number, d, usable, stored, "type byte " + stored + " is no b-tree page type");
    }
    if (type != stored && noteType) {
      problems.add("type byte " + stored + " (read as " + typeName(type) + ")");
    }
    boolean interior = type == INDEX_INTERIOR || type == TABLE_INTERIOR;
    int ptrStart = h + (interior ? 12 : 8);
    int n = u16(d, h + 3);
    int rawStart = u16(d, h + 5);
    int cellStart = rawStart == 0 ? 65536 : rawStart;
    long right = interior ? u32(d, h + 8) : 0;
    int ptrEnd = ptrStart + 2 * n;
    boolean overrun = ptrEnd > cellStart && cellStart >= ptrStart && cellStart <= usable;
    if (ptrEnd > usable || (lenient && overrun)) {
      if (!lenient) {
        return broken(number, d, usable, type, "cell count " + n + " does not fit the page");
      }
      // No cell is trusted; every slot up to the content area is tried (see parse).
      problems.add("cell count " + n + " does not fit the page or overruns its content area");
      n = 0;
      ptrEnd = ptrStart;
    }
    boolean startOk = cellStart >= ptrEnd && cellStart <= usable;
    Cells strict = cells(d, h, type, usable, ptrStart, n, startOk ? cellStart : ptrEnd, lenient);
    Cells chosen = strict;
    String startNote = null;
    if (!startOk || strict.belowLower > 0) {
      // The content area start may be the damaged field: if the cells and freeblocks the page
      // points to tile the page exactly from the lowest of them, the start is what is wrong.
      Cells loose = cells(d, h, type, usable, ptrStart, n, ptrEnd, lenient);
      if (loose.problems.isEmpty() && loose.tiles(d[h + 7] & 0xff, usable)) {
        chosen = loose;
        startNote =
            "content area start "
                + cellStart
                + " disagrees with the cells, which start at "
                + loose.lowest()
                + " and fill the page exactly; read as "
                + loose.lowest();
      } else if (!startOk) {
        problems.add(
            "cell content area start " + cellStart + " is outside " + ptrEnd + ".." + usable);
      }
    }
    problems.addAll(chosen.problems);
    if (type == TABLE_INTERIOR) {
      long prev = Long.MIN_VALUE;
      for (Cell c : chosen.cells) {
        if (!c.extra() && c.rowid() <= prev) {
          problems.add("cell " + c.index() + ": key " + c.rowid() + " out of order");
        }
        prev = c.rowid();
      }
    }
    if (problems.isEmpty() && chosen.free != null && startNote == null) {
      long covered = cellStart + chosen.cellBytes + chosen.freeBytes() + (d[h + 7] & 0xff);
      if (covered != usable) {
        problems.add(
            "space does not add up: content area from "
                + cellStart
                + ", cells "
                + chosen.cellBytes
                + ", free "
                + chosen.freeBytes()
                + ", fragments "
                + (d[h + 7] & 0xff)
                + " bytes cover "
                + covered
                + " of "
                + usable);
      }
    }
    BTreePage page =
        new BTreePage(number, d, usable, type, n, right, chosen.cells, problems, false);
    return startNote == null ? page : page.repaired(startNote);
  }

  /** The cells a pointer array yields above a lower bound, and the freeblocks. */
  private static final class Cells {
    final List<Cell> cells = new ArrayList<>();
    final List<String> problems = new ArrayList<>();
    List<int[]> free;
    long cellBytes;
    int belowLower;

    long freeBytes() {
      long n = 0;
      for (int[] f : free) {
        n += f[1] - f[0];
      }
      return n;
    }

    int lowest() {
      int m = Integer.MAX_VALUE;
      for (Cell c : cells) {
        m = Math.min(m, c.offset());
      }
      for (int[] f : free) {
        m = Math.min(m, f[0]);
      }
      return m;
    }

    /** Whether cells and freeblocks, without overlaps, cover the page from the lowest of them. */
    boolean tiles(int fragments, int usable) {
      if (free == null || cells.isEmpty()) {
        return false;
      }
      List<int[]> all = new ArrayList<>(free);
      for (Cell c : cells) {
        if (c.extra()) {
          return false;
        }
        all.add(new int[] {c.offset(), c.offset() + c.size()});
      }
      all.sort((a, b) -> Integer.compare(a[0], b[0]));
      for (int i = 1; i < all.size(); i++) {
        if (all.get(i)[0] < all.get(i - 1)[1]) {
          return false;
        }
      }
      return lowest() + cellBytes + freeBytes() + fragments == usable;
    }
  }

  private static Cells cells(
      byte[] d, int h, int type, int usable, int ptrStart, int n, int lower, boolean lenient) {
    Cells out = new Cells();
    out.free = freeblocks(d, h, lower, usable, out.problems);
    int slots = lenient ? Math.max(n, (lower - ptrStart) / 2) : n;
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < slots; i++) {
      boolean extra = i >= n;
      int ptr = u16(d, ptrStart + 2 * i);
      String where = "cell " + i + " (pointer " + ptr + ")";
      if (ptr < lower || ptr >= usable) {
        if (!extra) {
          if (ptr < lower && ptr >= ptrStart + 2 * n) {
            out.belowLower++;
          }
          out.problems.add(where + ": outside the cell content area " + lower + ".." + usable);
        }
        continue;
      }
      if (!seen.add(ptr)) {
        if (!extra) {
          out.problems.add(where + ": a second pointer to the same cell");
        }
        continue;
      }
      Cell c = cell(d, type, usable, i, ptr, extra);
      if (c == null) {
        if (!extra) {
          out.problems.add(where + ": runs past the end of the page");
        }
        continue;
      }
      if (out.free != null && overlaps(out.free, ptr, ptr + c.size())) {
        if (!extra) {
          out.problems.add(where + ": lies in free space");
        }
        continue;
      }
      if (extra && overlapsCells(out.cells, ptr, ptr + c.size())) {
        continue;
      }
      out.cells.add(c);
      if (!extra) {
        out.cellBytes += c.size();
      }
    }
    if (lenient && out.free != null) {
      boundaries(d, type, usable, lower, out);
    }
    return out;
  }

  /**
   * Lenient reads only: cells whose pointer was damaged. SQLite packs the content area: each cell
   * starts where the cell or freeblock below it ends, or at the content area start, after at most 3
   * bytes of fragments. A cell is tried at each such place that no pointer names; it must not lie
   * in a freeblock (freed space, where a deleted row's bytes may remain).
   */
  private static void boundaries(byte[] d, int type, int usable, int lower, Cells out) {
    Set<Integer> starts = new HashSet<>();
    List<Integer> ends = new ArrayList<>();
    ends.add(lower);
    for (Cell c : out.cells) {
      starts.add(c.offset());
      ends.add(c.offset() + c.size());
    }
    for (int[] f : out.free) {
      ends.add(f[1]);
    }
    for (int end : ends) {
      for (int start = end; start < end + 4 && start + 4 <= usable; start++) {
        if (!starts.add(start)) {
          continue;
        }
        Cell c = cell(d, type, usable, -1, start, true);
        if (c != null && !overlaps(out.free, start, start + c.size())) {
          out.cells.add(c);
          break;
        }
      }
    }
  }

  private static BTreePage broken(long number, byte[] d, int usable, int type, String problem) {
    List<String> p = new ArrayList<>();
    p.add(problem);
    return new BTreePage(number, d, usable, type, 0, 0, List.of(), p, true);
  }

  /** The freeblocks as [start, end) pairs; null (and a problem) if the chain is damaged. */
  private static List<int[]> freeblocks(
      byte[] d, int h, int lower, int usable, List<String> problems) {
    List<int[]> out = new ArrayList<>();
    int at = u16(d, h + 1);
    int prevEnd = lower;
    while (at != 0) {
      if (at < prevEnd || at + 4 > usable || out.size() > usable / 4) {
        problems.add("freeblock chain reaches " + at + ", outside the free part of the page");
        return null;
      }
      int size = u16(d, at + 2);
      if (size < 4 || at + size > usable) {
        problems.add("freeblock at " + at + " has size " + size);
        return null;
      }
      out.add(new int[] {at, at + size});
      prevEnd = at + size;
      at = u16(d, at);
    }
    return out;
  }

  private static boolean overlaps(List<int[]> ranges, int from, int to) {
    for (int[] r : ranges) {
      if (from < r[1] && r[0] < to) {
        return true;
      }
    }
    return false;
  }

  private static boolean overlapsCells(List<Cell> cells, int from, int to) {
    for (Cell c : cells) {
      if (from < c.offset() + c.size() && c.offset() < to) {
        return true;
      }
    }
    return false;
  }

  /** Parses the cell at {@code ptr}; null if any part of it lies past the usable size. */
  private static Cell cell(byte[] d, int type, int usable, int index, int ptr, boolean extra) {
    int at = ptr;
    long child = 0;
    if (type == TABLE_INTERIOR || type == INDEX_INTERIOR) {
      if (at + 4 > usable) {
        return null;
      }
      child = u32(d, at);
      at += 4;
    }
    if (type == TABLE_INTERIOR) {
      long[] v = varint(d, at, usable);
      if (v == null) {
        return null;
      }
      int size = (int) (at + v[1] - ptr);
      return new Cell(index, ptr, Math.max(size, 4), child, v[0], 0, 0, 0, 0, extra);
    }
    long[] p = varint(d, at, usable);
    if (p == null || p[0] < 0 || p[0] > Integer.MAX_VALUE) {
      return null;
    }
    at += (int) p[1];
    long rowid = 0;
    if (type == TABLE_LEAF) {
      long[] r = varint(d, at, usable);
      if (r == null) {
        return null;
      }
      rowid = r[0];
      at += (int) r[1];
    }
    long payload = p[0];
    int local = localSize(type, usable, payload);
    boolean spills = local < payload;
    long end = (long) at + local + (spills ? 4 : 0);
    if (end > usable) {
      return null;
    }
    long overflow = spills ? u32(d, at + local) : 0;
    if (spills && overflow == 0) {
      return null;
    }
    int size = (int) Math.max(end - ptr, 4);
    return new Cell(index, ptr, size, child, rowid, payload, at, local, overflow, extra);
  }

  /**
   * How many bytes of a payload of {@code p} bytes a cell keeps on the page (see class comment).
   */
  static int localSize(int type, int usable, long p) {
    int max = type == TABLE_LEAF ? usable - 35 : (usable - 12) * 64 / 255 - 23;
    if (p <= max) {
      return (int) p;
    }
    int min = (usable - 12) * 32 / 255 - 23;
    long k = min + (p - min) % (usable - 4);
    return k <= max ? (int) k : min;
  }

  /** A varint at {@code at}: {value, length}; null if it runs past {@code limit}. */
  static long[] varint(byte[] d, int at, int limit) {
    long v = 0;
    for (int i = 0; i < 9; i++) {
      if (at + i >= limit) {
        return null;
      }
      int b = d[at + i] & 0xff;
      if (i == 8) {
        return new long[] {(v << 8) | b, 9};
      }
      v = (v << 7) | (b & 0x7f);
      if ((b & 0x80) == 0) {
        return new long[] {v, i + 1};
      }
    }
    return null;
  }

  static int u16(byte[] b, int i) {
    return (b[i] & 0xff) << 8 | (b[i + 1] & 0xff);
  }

  static long u32(byte[] b, int i) {
    return Integer.toUnsignedLong(
        (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | (b[i + 3] & 0xff));
  }
}
