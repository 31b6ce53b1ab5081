package io.kv4j.lmdb;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A tree page, its header checked against its nodes. LMDB keeps a page's nodes contiguous from
 * {@code mp_upper} to the end of the page (each {@code 8 + key + data} bytes rounded up to even,
 * the data of an overflow value being its 8-byte page number; a branch node has no data), and its
 * node table ({@code mp_ptrs}, from offset 16 to {@code mp_lower}) lists exactly those nodes. So
 * when one header field is damaged the nodes still tell the page apart, and it is read whole with
 * the field reported ({@link #notes}):
 *
 * <ul>
 *   <li>{@code mp_lower}: the count of table slots whose nodes fill the area from {@code mp_upper}
 *       exactly is the node count;
 *   <li>{@code mp_upper}: the header's count of nodes fills the area from elsewhere;
 *   <li>one slot of the node table: without it the other nodes fill the area but for one gap, which
 *       a node found there fills exactly (and no other slot qualifies);
 *   <li>the page number: everything else is as it should be;
 *   <li>the type flags: the page number is right and the nodes fill the area as a branch's or as a
 *       leaf's, not both.
 * </ul>
 *
 * <p>A page whose nodes fill no such layout is read node by node ({@link #unsettled}).
 */
final class SalvagePage {
  private static final int MAX_KEY = LmdbProvider.MAX_KEY_SIZE;

  final long pgno;
  final long offset;
  final ByteBuffer b;
  boolean branch; // settled by the constructor
  final boolean overflow; // an intact overflow page, where a tree page was expected
  final int lower;
  final int upper;
  private final int psize;

  /** The node count: the one the nodes bear out, else the header's. */
  final int n;

  /** No count of slots fills the node area exactly: the nodes are read one by one. */
  final boolean unsettled;

  /** Damaged header fields the nodes make up for: nothing is lost to them. */
  final List<String> notes = new ArrayList<>();

  final String problem;

  /** A slot of the node table found damaged, and where its node lies; -1 if none. */
  private int repairedSlot = -1;

  private int repairedAt;

  SalvagePage(long pgno, ByteBuffer b, int psize) {
    this.psize = psize;
    this.pgno = pgno;
    this.offset = pgno * psize;
    this.b = b;
    long self = b.getLong(0);
    int flags = b.getShort(10) & PageWalk.TYPE_MASK;
    this.lower = u16(b, 12);
    this.upper = u16(b, 14);
    this.branch = flags == PageWalk.P_BRANCH;
    this.overflow = self == pgno && flags == PageWalk.P_OVERFLOW;
    int counted =
        lower >= MetaPages.HEADER + 2 && (lower & 1) == 0 && lower <= psize
            ? (lower - MetaPages.HEADER) >> 1
            : -1;
    String typeNote = null;
    if (flags != PageWalk.P_BRANCH && flags != PageWalk.P_LEAF && self == pgno && counted > 0) {
      // Damaged type flags: the type whose nodes fill the node area as the header says.
      branch = true;
      boolean asBranch = filledFrom(counted) == upper;
      branch = false;
      boolean asLeaf = filledFrom(counted) == upper;
      if (asBranch != asLeaf) {
        branch = asBranch;
        flags = asBranch ? PageWalk.P_BRANCH : PageWalk.P_LEAF;
        typeNote =
            "the flags of page "
                + pgno
                + " (0x"
                + Integer.toHexString(b.getShort(10) & 0xFFFF)
                + ") are damaged, its nodes are those of a "
                + (asBranch ? "branch" : "leaf")
                + " page";
      }
    }
    if (flags != PageWalk.P_BRANCH && flags != PageWalk.P_LEAF) {
      problem =
          self != pgno
              ? "page " + pgno + " says it is page " + self
              : "page "
                  + pgno
                  + " is neither a branch nor a leaf page (flags 0x"
                  + Integer.toHexString(flags)
                  + ")";
      n = 0;
      unsettled = true;
      return;
    }
    int k = -1;
    int start = -1;
    if (counted > 0) {
      start = filledFrom(counted);
    }
    if (start == upper) {
      k = counted;
    } else {
      // A damaged mp_lower: the count whose slots fill the area from mp_upper.
      for (int c = 1; MetaPages.HEADER + 2 * c <= psize; c++) {
        if (!slotSane(c - 1, c)) {
          break;
        }
        if (c != counted && filledFrom(c) == upper) {
          k = c;
          start = upper;
          break;
        }
      }
      if (k < 0 && start >= 0) {
        k = counted; // the header's count fills the area from elsewhere: mp_upper is damaged
      }
    }
    if (typeNote != null) {
      notes.add(typeNote);
    }
    if (k > 0) {
      n = k;
      unsettled = false;
      if (k != counted) {
        notes.add(
            "the header of page "
                + pgno
                + " counts "
                + Math.max(counted, 0)
                + " nodes (lower "
                + lower
                + "), its node table and nodes hold "
                + k);
      }
      if (start != upper) {
        notes.add(
            "the header of page "
                + pgno
                + " says its nodes start at "
                + upper
                + ", they start at "
                + start);
      }
      if (self != pgno) {
        notes.add("page " + pgno + " says it is page " + self);
      }
      problem = null;
      return;
    }
    if (counted > 0 && upper <= psize && repair(counted)) {
      n = counted;
      unsettled = false;
      notes.add(
          "slot "
              + repairedSlot
              + " of the node table of page "
              + pgno
              + " points at "
              + u16(b, MetaPages.HEADER + 2 * repairedSlot)
              + ", its node lies at "
              + repairedAt);
      if (self != pgno) {
        notes.add("page " + pgno + " says it is page " + self);
      }
      problem = null;
      return;
    }
    n = Math.max(counted, 0);
    unsettled = true;
    if (self != pgno) {
      problem = "page " + pgno + " says it is page " + self;
    } else if (counted < 1 || upper > psize) {
      problem = "page " + pgno + " has a broken header (lower " + lower + ", upper " + upper + ")";
    } else {
      problem = null;
    }
  }

  /**
   * Looks for the one damaged slot of the node table: the slot without which the other nodes fill
   * the node area but for one gap, which a node found there fills exactly. Keeps it if exactly one
   * slot qualifies.
   */
  private boolean repair(int count) {
    int found = -1;
    int foundAt = 0;
    for (int j = 0; j < count; j++) {
      long[] spans = new long[count - 1];
      boolean ok = true;
      for (int i = 0, k = 0; i < count && ok; i++) {
        if (i != j) {
          Node nd = node(i, count);
          ok = nd.problem == null;
          spans[k++] = (long) nd.at << 32 | (nd.at + nd.extent);
        }
      }
      if (!ok) {
        continue;
      }
      Arrays.sort(spans);
      long end = upper;
      long gapFrom = -1;
      long gapTo = -1;
      for (long span : spans) {
        long from = span >>> 32;
        if (from < end || (from > end && gapFrom >= 0)) {
          ok = false;
          break;
        }
        if (from > end) {
          gapFrom = end;
          gapTo = from;
        }
        end = span & 0xFFFFFFFFL;
      }
      if (ok && end < psize && gapFrom < 0) {
        gapFrom = end;
        gapTo = psize;
      } else if (end != psize) {
        ok = false;
      }
      if (!ok || gapFrom < 0) {
        continue;
      }
      repairedSlot = j;
      repairedAt = (int) gapFrom;
      Node nd = node(j, count);
      repairedSlot = -1;
      if (nd.problem == null && nd.at + nd.extent == gapTo) {
        if (found >= 0) {
          return false; // two slots qualify: which one is damaged cannot be told
        }
        found = j;
        foundAt = (int) gapFrom;
      }
    }
    repairedSlot = found;
    repairedAt = foundAt;
    return found >= 0;
  }

  /** Slot {@code i} of the node table: the offset of node {@code i}. */
  private int slot(int i) {
    return i == repairedSlot ? repairedAt : u16(b, MetaPages.HEADER + 2 * i);
  }

  /** Whether table slot {@code i} of a page of {@code count} nodes points where a node can be. */
  private boolean slotSane(int i, int count) {
    int at = slot(i);
    return at >= MetaPages.HEADER + 2 * count && (at & 1) == 0 && at < psize;
  }

  /**
   * Where the nodes of slots 0..count-1 start if they fill the rest of the page exactly, each once;
   * -1 if they do not.
   */
  private int filledFrom(int count) {
    long[] spans = new long[count];
    for (int i = 0; i < count; i++) {
      Node nd = node(i, count);
      if (nd.problem != null) {
        return -1;
      }
      spans[i] = (long) nd.at << 32 | (nd.at + nd.extent);
    }
    Arrays.sort(spans);
    long end = -1;
    for (long span : spans) {
      if (end >= 0 && span >>> 32 != end) {
        return -1;
      }
      end = span & 0xFFFFFFFFL;
    }
    return end == psize ? (int) (spans[0] >>> 32) : -1;
  }

  Node node(int i) {
    return node(i, n);
  }

  /** Node {@code i} of a page taken to hold {@code count} nodes. */
  private Node node(int i, int count) {
    int at = slot(i);
    if (at < MetaPages.HEADER + 2 * count || (at & 1) != 0 || at + PageWalk.NODE_HEADER > psize) {
      return new Node(i, at, "node " + i + " of page " + pgno + " lies outside the page");
    }
    int ksize = u16(b, at + 6);
    int dataAt = at + PageWalk.NODE_HEADER + ksize;
    if (ksize > MAX_KEY || dataAt > psize) {
      return new Node(
          i, at, "the key of node " + i + " of page " + pgno + " (" + ksize + " bytes) is damaged");
    }
    byte[] key = new byte[ksize];
    b.get(at + PageWalk.NODE_HEADER, key);
    long lohi = u16(b, at) | (long) u16(b, at + 2) << 16;
    int flags = u16(b, at + 4);
    long extent;
    if (branch) {
      extent = even(PageWalk.NODE_HEADER + ksize);
    } else if ((flags & PageWalk.F_BIGDATA) != 0) {
      extent = even(PageWalk.NODE_HEADER + ksize + 8L);
      if (dataAt + 8 > psize) {
        return new Node(i, at, "node " + i + " of page " + pgno + " runs past the page");
      }
    } else {
      extent = even(PageWalk.NODE_HEADER + ksize + lohi);
      if (dataAt + lohi > psize) {
        return new Node(
            i,
            at,
            "the value of node " + i + " of page " + pgno + " (" + lohi + " bytes) runs past it",
            key,
            lohi,
            flags,
            dataAt,
            PageWalk.NODE_HEADER);
      }
    }
    return new Node(i, at, key, lohi, flags, dataAt, (int) extent);
  }

  Node[] nodes() {
    Node[] all = new Node[n];
    for (int i = 0; i < n; i++) {
      all[i] = node(i);
    }
    return all;
  }

  byte[] inline(Node nd) {
    byte[] v = new byte[(int) nd.lohi];
    b.get(nd.dataAt, v);
    return v;
  }

  /** One node of a page: a branch entry (child page) or a leaf entry (key and value). */
  static final class Node {
    final int index;
    final int at;
    final String problem;
    final byte[] key;
    final long lohi; // leaf: the data size; branch: the child page number's low 32 bits
    final int flags; // leaf: node flags; branch: the child page number's bits 32..47
    final int dataAt;
    final int extent;

    Node(int index, int at, String problem) {
      this(index, at, problem, null, 0, 0, 0, PageWalk.NODE_HEADER);
    }

    Node(int index, int at, byte[] key, long lohi, int flags, int dataAt, int extent) {
      this(index, at, null, key, lohi, flags, dataAt, extent);
    }

    /** A damaged node whose key could be read (its data size is what is damaged). */
    Node(
        int index,
        int at,
        String problem,
        byte[] key,
        long lohi,
        int flags,
        int dataAt,
        int extent) {
      this.index = index;
      this.at = at;
      this.problem = problem;
      this.key = key;
      this.lohi = lohi;
      this.flags = flags;
      this.dataAt = dataAt;
      this.extent = extent;
    }

    long child() {
      return lohi | (long) flags << 32;
    }
  }

  private static long even(long n) {
    return (n + 1) & ~1L;
  }

  private static int u16(ByteBuffer b, int at) {
    return b.getShort(at) & 0xFFFF;
  }
}
