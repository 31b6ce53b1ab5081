package io.kv4j.lmdb;

import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreIOException;
import io.kv4j.spi.SalvageSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads every intact entry of one snapshot of {@code data.mdb} with plain file reads, stepping over
 * damaged pages and entries instead of stopping at the first: the engine of {@code salvage} and of
 * {@code verify()}'s list of damaged regions. LMDB trusts its pages (a damaged one can crash the
 * JVM), so nothing here goes through LMDB. The page layout is {@link PageWalk}'s.
 *
 * <p>Only pages reachable from the snapshot's roots are read: the free-page database, the main
 * database and, in a store of named databases, each database the main one names. Free pages hold
 * older versions of entries and are never read for entries; a pointer to one is damage.
 *
 * <p>Three passes over the same pages, each from the roots:
 *
 * <ol>
 *   <li><b>survey</b>: collects the free pages (the free-page database's lists), notes every page a
 *       pointer reaches and which are reached twice (a damaged pointer that lands on a page in use
 *       makes two pointers share it), the depth of each tree's leaves, the records of the named
 *       databases and, when the format is not known, how many values carry a valid checksum frame.
 *   <li><b>claims</b> (only when some page was reached twice): every pointer to such a page; the
 *       one under which more of the page's nodes fit (see below) keeps it; with a tie none does.
 *   <li><b>rescue</b>: hands every intact entry to the sink and records a damaged region for
 *       everything it steps over.
 * </ol>
 *
 * <p><b>A pointer</b> is followed only if its page number lies within the snapshot's pages and the
 * file and is not free, the page is a branch or leaf page (see {@link Page} for what its nodes make
 * up for), a leaf lies at the depth of most of the tree's leaves (a branch above it), and the page
 * fits: some of its intact nodes have keys within the range the pointer's branch entries give it (a
 * damaged pointer that lands on a sibling finds none: sibling ranges are disjoint) and the shape of
 * the tree's nodes (the free-page list's 8-byte transaction ids and page lists, the list of
 * keyspaces' 48-byte records). Between two pointers to one page, the one under which more of its
 * nodes fit keeps it. A pointer that fails loses its subtree, reported with that range as the lost
 * keys.
 *
 * <p><b>In a leaf</b>, each entry stands alone: a node that lies outside the page, has flags kv4j
 * never writes, or whose value (inline or in overflow pages) fails its checksum frame loses that
 * one entry, reported with the range between the intact keys on either side. In a store without
 * frames a value cannot be checked; keys must then ascend within the leaf and its range. Entries
 * lost where the count is not known one by one are counted from the tree's record ({@code
 * md_entries}) when one region of the tree accounts for them; a record whose count disagrees with
 * pages that were all read whole is itself reported as damaged.
 */
final class SalvageWalk {
  private static final int MAX_KEY = LmdbProvider.MAX_KEY_SIZE;
  private static final long MAX_VALUE = (long) LmdbProvider.MAX_VALUE_SIZE + ValueFrame.HEADER;
  private static final byte[] OWN = Keyspaces.OWN.getBytes(StandardCharsets.US_ASCII);

  /**
   * What a walk found. {@code rootLost}: the main database's root page could not be used, so
   * nothing was found (another snapshot may do better).
   */
  record Outcome(
      List<DamagedRegion> damage, boolean framed, boolean named, long entries, boolean rootLost) {}

  private enum Pass {
    SURVEY,
    CLAIMS,
    RESCUE
  }

  private enum Kind {
    /** LMDB's free-page database: keys are transaction ids, values lists of free pages. */
    FREE,
    /** The main database before the format is known (survey and claims passes). */
    MAIN,
    /** The main database of a store of named databases: the names and their records. */
    NAMES,
    /** A database of the user's entries. */
    DATA
  }

  /** One tree of the snapshot, as one pass walks it. */
  private static final class Tree {
    final Kind kind;
    final long id; // the file offset of the record naming the tree: the same in every pass
    final String keyspace;
    final String label;
    final MetaPages.Db db;
    long seen; // entries met in the pages: handed over or lost one by one
    byte[] lastKey;
    final List<Loss> unknown = new ArrayList<>(); // regions of this tree whose loss is not counted

    Tree(Kind kind, long id, String keyspace, String label, MetaPages.Db db) {
      this.kind = kind;
      this.id = id;
      this.keyspace = keyspace;
      this.label = label;
      this.db = db;
    }
  }

  /** A damaged region being built; its lost count may be settled once its tree is walked. */
  private static final class Loss {
    final long offset;
    final long length;
    final String keyspace;
    long lost;
    final KeyRange keys;
    final String problem;

    Loss(long offset, long length, String keyspace, long lost, KeyRange keys, String problem) {
      this.offset = offset;
      this.length = length;
      this.keyspace = keyspace;
      this.lost = lost;
      this.keys = keys;
      this.problem = problem;
    }
  }

  /**
   * A named database's record found in the main database: its name (null for the store's own keys),
   * the record and where it lies, what is wrong with its name ({@code problem}, or null) and with
   * its node's header ({@code note}: the record was read all the same, or null).
   */
  private record Named(
      String name,
      byte[] rawName,
      MetaPages.Db db,
      long at,
      long nodeAt,
      int nodeLength,
      String problem,
      String note) {}

  /** A pointer to a page reached from more than one place. */
  private record Claim(long tree, long parent, int index, double fit) {}

  /**
   * A tree page, its header checked against its nodes. LMDB keeps a page's nodes contiguous from
   * {@code mp_upper} to the end of the page (each {@code 8 + key + data} bytes rounded up to even,
   * the data of an overflow value being its 8-byte page number; a branch node has no data), and its
   * node table ({@code mp_ptrs}, from offset 16 to {@code mp_lower}) lists exactly those nodes. So
   * when one header field is damaged the nodes still tell the page apart, and it is read whole with
   * the field reported ({@link #notes}):
   *
   * <ul>
   *   <li>{@code mp_lower}: the count of table slots whose nodes fill the area from {@code
   *       mp_upper} exactly is the node count;
   *   <li>{@code mp_upper}: the header's count of nodes fills the area from elsewhere;
   *   <li>one slot of the node table: without it the other nodes fill the area but for one gap,
   *       which a node found there fills exactly (and no other slot qualifies);
   *   <li>the page number: everything else is as it should be;
   *   <li>the type flags: the page number is right and the nodes fill the area as a branch's or as
   *       a leaf's, not both.
   * </ul>
   *
   * <p>A page whose nodes fill no such layout is read node by node ({@link #unsettled}).
   */
  private final class Page {
    final long pgno;
    final long offset;
    final ByteBuffer b;
    boolean branch; // settled by the constructor
    final boolean overflow; // an intact overflow page, where a tree page was expected
    final int lower;
    final int upper;

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

    Page(long pgno, ByteBuffer b) {
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
        problem =
            "page " + pgno + " has a broken header (lower " + lower + ", upper " + upper + ")";
      } else {
        problem = null;
      }
    }

    /**
     * Looks for the one damaged slot of the node table: the slot without which the other nodes fill
     * the node area but for one gap, which a node found there fills exactly. Keeps it if exactly
     * one slot qualifies.
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
     * Where the nodes of slots 0..count-1 start if they fill the rest of the page exactly, each
     * once; -1 if they do not.
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
            i,
            at,
            "the key of node " + i + " of page " + pgno + " (" + ksize + " bytes) is damaged");
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
  }

  /** One node of a page: a branch entry (child page) or a leaf entry (key and value). */
  private static final class Node {
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

  private final FileChannel ch;
  private final Path file;
  private final MetaPages.Meta meta;
  private final long fileSize;
  private final int psize;
  private final long lastPage;
  private final SalvageSink sink;
  private final Boolean framedGiven;
  private final Boolean namedGiven;
  private boolean framed;
  private boolean named;
  private long framesPassed;
  private long framesFailed;
  private Pass pass;
  private final BitSet free = new BitSet();
  private final BitSet reached = new BitSet();
  private final BitSet conflicted = new BitSet();
  private final BitSet walked = new BitSet();
  private final BitSet visited = new BitSet();
  private final Map<Long, List<Claim>> claims = new HashMap<>();
  private final Map<Long, long[]> leafDepths = new HashMap<>();
  private final List<Named> records = new ArrayList<>();
  private final List<Loss> losses = new ArrayList<>();
  private long handedOver;

  private SalvageWalk(
      FileChannel ch,
      Path file,
      MetaPages.Meta meta,
      long fileSize,
      Boolean framed,
      Boolean named,
      SalvageSink sink) {
    this.ch = ch;
    this.file = file;
    this.meta = meta;
    this.fileSize = fileSize;
    this.psize = meta.pageSize();
    this.lastPage = meta.lastPage();
    this.framedGiven = framed;
    this.namedGiven = named;
    this.sink = sink;
  }

  /**
   * Walks one snapshot.
   *
   * @param ch the data file, open for reading
   * @param file its path, named in the regions
   * @param meta the meta page of the snapshot
   * @param fileSize the file's length
   * @param framed whether values carry checksum frames; null to tell from the values
   * @param named whether the store keeps its keys in named databases; null to tell from the main
   *     database (it names a database {@value Keyspaces#OWN})
   * @param sink receives every intact entry (keyspace null for the store's own keys)
   * @return the damaged regions found, and the format the walk read
   * @throws StoreIOException if the file cannot be read, or has more than 2^31 pages
   */
  static Outcome run(
      FileChannel ch,
      Path file,
      MetaPages.Meta meta,
      long fileSize,
      Boolean framed,
      Boolean named,
      SalvageSink sink) {
    if (meta.lastPage() >= Integer.MAX_VALUE) {
      throw new StoreIOException(
          file + " has " + (meta.lastPage() + 1) + " pages; salvage reads at most 2^31",
          (Throwable) null);
    }
    SalvageWalk w = new SalvageWalk(ch, file, meta, fileSize, framed, named, sink);
    w.walkAll();
    List<DamagedRegion> damage = new ArrayList<>();
    for (Loss l : w.losses) {
      damage.add(
          new DamagedRegion(file, l.offset, l.length, l.keyspace, l.lost, l.keys, l.problem));
    }
    boolean rootLost = !w.meta.main().isEmpty() && !w.visited.get((int) w.meta.main().root());
    return new Outcome(List.copyOf(damage), w.framed, w.named, w.handedOver, rootLost);
  }

  private void walkAll() {
    long metaAt = (long) meta.slot() * psize;
    pass = Pass.SURVEY;
    Tree freeTree = freeTree(metaAt);
    walk(freeTree);
    walk(new Tree(Kind.MAIN, metaAt + MetaPages.MAIN_DB, null, "the main database", meta.main()));
    named = namedGiven != null ? namedGiven : holdsOwn();
    List<Tree> surveyed = new ArrayList<>();
    if (named) {
      for (Named r : records) {
        surveyed.add(
            new Tree(Kind.DATA, r.at, r.name, "database of " + r.name, r.db)); // walked if sane
      }
      for (Tree t : surveyed) {
        walk(t);
      }
    }
    framed = framedGiven != null ? framedGiven : framesPassed > framesFailed;
    if (!conflicted.isEmpty()) {
      pass = Pass.CLAIMS;
      records.clear();
      walk(freeTree(metaAt));
      walk(new Tree(Kind.MAIN, metaAt + MetaPages.MAIN_DB, null, "the main database", meta.main()));
      for (Tree t : surveyed) {
        walk(new Tree(Kind.DATA, t.id, t.keyspace, t.label, t.db));
      }
    }
    pass = Pass.RESCUE;
    records.clear();
    Tree rescuedFree = freeTree(metaAt);
    walk(rescuedFree);
    finish(rescuedFree);
    Tree main =
        named
            ? new Tree(
                Kind.NAMES, metaAt + MetaPages.MAIN_DB, null, "the list of keyspaces", meta.main())
            : new Tree(
                Kind.DATA, metaAt + MetaPages.MAIN_DB, null, "the store's keys", meta.main());
    int before = losses.size();
    walk(main);
    finish(main);
    boolean mainIntact = losses.subList(before, losses.size()).stream().allMatch(l -> l.lost == 0);
    if (named) {
      namedTrees(metaAt, mainIntact);
    }
  }

  /**
   * Walks (rescue) the databases the list of keyspaces records, and reports the records it cannot
   * walk. Without a database named {@value Keyspaces#OWN}, in an otherwise intact list, the one
   * database whose name is one bit off it is taken for the store's own keys: a flipped bit in a
   * name is the likeliest damage, and kv4j writes no such keyspace name beside {@value
   * Keyspaces#OWN}.
   */
  private void namedTrees(long metaAt, boolean listIntact) {
    boolean own = false;
    Named standIn = null;
    int offByOne = 0;
    for (Named r : records) {
      own |= r.problem() == null && Arrays.equals(r.rawName(), OWN);
      if (oneBitOff(r.rawName(), OWN)) {
        standIn = r;
        offByOne++;
      }
    }
    if (own || !listIntact || offByOne != 1) {
      standIn = null;
    }
    for (Named r : records) {
      if (r.note() != null) {
        losses.add(new Loss(r.nodeAt(), r.nodeLength(), null, 0, null, r.note()));
      }
      String keyspace = r.name();
      if (r == standIn) {
        keyspace = null;
        losses.add(
            new Loss(
                r.nodeAt(),
                r.nodeLength(),
                null,
                0,
                null,
                "the list of keyspaces names no database '"
                    + Keyspaces.OWN
                    + "' but one named '"
                    + new String(r.rawName(), StandardCharsets.ISO_8859_1)
                    + "', one bit off: its entries were read as the store's own keys"));
      } else if (r.problem() != null) {
        losses.add(
            new Loss(
                r.nodeAt(),
                r.nodeLength(),
                null,
                Math.max(r.db().entries(), -1),
                null,
                "the name of a keyspace (bytes "
                    + java.util.HexFormat.of().formatHex(r.rawName())
                    + ") "
                    + r.problem()
                    + ": it is damaged, and the keyspace's entries are lost"));
        continue;
      }
      String label = keyspace == null ? "the store's own keys" : "keyspace '" + keyspace + "'";
      Tree t = new Tree(Kind.DATA, r.at(), keyspace, label, r.db());
      walk(t);
      finish(t);
    }
    if (!own && standIn == null && listIntact) {
      losses.add(
          new Loss(
              metaAt + MetaPages.MAIN_DB,
              PageWalk.DB_RECORD,
              null,
              -1,
              null,
              "the list of keyspaces names no database '"
                  + Keyspaces.OWN
                  + "', which holds the store's own keys: they are lost"));
    }
  }

  private static boolean oneBitOff(byte[] a, byte[] b) {
    if (a.length != b.length) {
      return false;
    }
    int bits = 0;
    for (int i = 0; i < a.length; i++) {
      bits += Integer.bitCount((a[i] ^ b[i]) & 0xFF);
    }
    return bits == 1;
  }

  private Tree freeTree(long metaAt) {
    return new Tree(
        Kind.FREE, metaAt + MetaPages.FREE_DB, null, "LMDB's free-page list", meta.free());
  }

  private boolean holdsOwn() {
    for (Named r : records) {
      if (Arrays.equals(r.rawName, OWN)) {
        return true;
      }
    }
    return false;
  }

  private void walk(Tree t) {
    if (t.db.isEmpty()) {
      return;
    }
    visit(t, t.db.root(), -1, 0, t.id + 40, 8, null, null, 0);
  }

  /** Settles a walked tree's count: its record says how many entries its pages should hold. */
  private void finish(Tree t) {
    long remaining = t.db.entries() - t.seen;
    int leaves = leafDepth(t);
    if (t.kind == Kind.DATA
        && t.unknown.isEmpty()
        && remaining > 0
        && leaves >= 0
        && leaves + 1 < t.db.depth()) {
      // Fewer levels and fewer entries than the record says (one flipped bit cannot damage both
      // its counts): the root pointer leads to a page below the root, the rest is out of reach.
      losses.add(
          new Loss(
              t.id + 40,
              8,
              t.keyspace,
              remaining,
              null,
              "the record of "
                  + t.label
                  + " says its tree is "
                  + t.db.depth()
                  + " levels deep, but its root pointer leads to a tree of "
                  + (leaves + 1)
                  + ": the pointer is damaged and the entries out of its reach are lost"));
      return;
    }
    if (t.kind == Kind.DATA && t.unknown.size() == 1 && remaining >= 0) {
      t.unknown.get(0).lost = remaining;
    } else if (t.unknown.isEmpty() && remaining != 0) {
      // Every page of the tree was read without a gap: its record's count is what is damaged.
      losses.add(
          new Loss(
              t.id + 32,
              8,
              t.keyspace,
              0,
              null,
              "the record of "
                  + t.label
                  + " says it holds "
                  + t.db.entries()
                  + " entries, its pages hold "
                  + t.seen
                  + " and were all read: the record is damaged"));
    }
  }

  // ---- pointers and pages ----

  /**
   * Follows one pointer to a tree page: checks it and the page (see the class comment), then walks
   * the page. {@code ptrAt}/{@code ptrLen}: where the pointer is in the file, for the region;
   * {@code lo}/{@code hi}: the keys the pointer covers, [lo, hi), null where unbounded.
   */
  private void visit(
      Tree t,
      long pgno,
      long parent,
      int index,
      long ptrAt,
      int ptrLen,
      byte[] lo,
      byte[] hi,
      int depth) {
    String from = parent < 0 ? "the record of " + t.label : "node " + index + " of page " + parent;
    String bad = pointerProblem(pgno);
    if (bad == null && depth >= PageWalk.MAX_DEPTH) {
      bad = "lies deeper than " + PageWalk.MAX_DEPTH + " levels (a loop of pages?)";
    }
    if (bad != null) {
      lostBelow(t, ptrAt, ptrLen, lo, hi, from + " refers to page " + pgno + ", " + bad);
      return;
    }
    Page p = new Page(pgno, read(pgno * psize, psize));
    if (p.overflow) {
      lostBelow(t, ptrAt, ptrLen, lo, hi, from + " refers to page " + pgno + ", an overflow page");
      return;
    }
    if (p.problem != null) {
      if (pass == Pass.RESCUE) {
        Loss l =
            new Loss(
                p.offset,
                psize,
                user(t),
                t.kind == Kind.FREE ? 0 : -1,
                range(t, lo, true, hi),
                p.problem + consequence(t));
        add(t, l);
      }
      return;
    }
    int leafDepth = pass == Pass.SURVEY ? -1 : leafDepth(t);
    if (leafDepth >= 0 && (p.branch ? depth >= leafDepth : depth != leafDepth)) {
      lostBelow(
          t,
          ptrAt,
          ptrLen,
          lo,
          hi,
          from
              + " refers to page "
              + pgno
              + ", a "
              + (p.branch ? "branch" : "leaf")
              + " page, at depth "
              + depth
              + " where the tree's leaves are at depth "
              + leafDepth);
      return;
    }
    double fit = fit(t, p, lo, hi);
    if (fit == 0) {
      // None of its keys belongs there (a sibling's range is disjoint): the pointer is damaged.
      lostBelow(
          t,
          ptrAt,
          ptrLen,
          lo,
          hi,
          from + " refers to page " + pgno + ", none of whose keys lie in the range it covers");
      return;
    }
    int q = (int) pgno;
    switch (pass) {
      case SURVEY:
        if (reached.get(q)) {
          conflicted.set(q);
          return;
        }
        reached.set(q);
        break;
      case CLAIMS:
        if (conflicted.get(q)) {
          claims
              .computeIfAbsent(pgno, k -> new ArrayList<>())
              .add(new Claim(t.id, parent, index, fit));
        }
        if (walked.get(q)) {
          return;
        }
        walked.set(q);
        break;
      default:
        if (conflicted.get(q) && !wins(pgno, t.id, parent, index)) {
          lostBelow(
              t,
              ptrAt,
              ptrLen,
              lo,
              hi,
              from
                  + " refers to page "
                  + pgno
                  + ", which another pointer refers to as well: one of them is damaged");
          return;
        }
        if (visited.get(q)) {
          lostBelow(t, ptrAt, ptrLen, lo, hi, from + " refers to page " + pgno + " a second time");
          return;
        }
        visited.set(q);
    }
    if (p.branch) {
      branch(t, p, lo, hi, depth);
    } else {
      if (pass == Pass.SURVEY) {
        leafDepths.computeIfAbsent(t.id, k -> new long[PageWalk.MAX_DEPTH + 1])[depth]++;
      }
      leaf(t, p, lo, hi);
    }
  }

  /** Why a page number cannot be followed, or null. */
  private String pointerProblem(long pgno) {
    if (pgno < 2 || pgno > lastPage) {
      return "outside pages 2.." + lastPage;
    }
    if ((pgno + 1) * psize > fileSize) {
      return "past the end of the file (" + fileSize + " bytes)";
    }
    if (free.get((int) pgno)) {
      return "a page the free-page list holds";
    }
    return null;
  }

  /**
   * The depth of the tree's leaves: where most of them lay in the survey (the record's {@code
   * md_depth} breaks a tie); -1 when unknown.
   */
  private int leafDepth(Tree t) {
    long[] h = leafDepths.get(t.id);
    if (h == null) {
      return -1;
    }
    long best = 0;
    int at = -1;
    boolean tie = false;
    for (int d = 0; d < h.length; d++) {
      if (h[d] > best) {
        best = h[d];
        at = d;
        tie = false;
      } else if (h[d] == best && best > 0) {
        tie = true;
      }
    }
    if (tie) {
      int recorded = t.db.depth() - 1;
      return recorded >= 0 && recorded < h.length && h[recorded] == best ? recorded : -1;
    }
    return at;
  }

  /**
   * The share of the page's nodes that belong where the pointer leads: whose keys lie within [lo,
   * hi) (null: unbounded), and that have the shape of the tree's nodes where it has one: in the
   * free-page list 8-byte keys (transaction ids) and, in leaves, lists of 8-byte page numbers; in
   * the list of keyspaces, leaves of 48-byte database records.
   */
  private double fit(Tree t, Page p, byte[] lo, byte[] hi) {
    boolean names = t.kind == Kind.NAMES || (t.kind == Kind.MAIN && namedGiven == Boolean.TRUE);
    int in = 0;
    int all = 0;
    for (int i = p.branch ? 1 : 0; i < p.n; i++) {
      Node nd = p.node(i);
      if (nd.problem != null || nd.key.length == 0) {
        continue; // kv4j never writes an empty key: a zeroed node
      }
      all++;
      boolean shaped;
      if (t.kind == Kind.FREE) {
        shaped =
            nd.key.length == 8
                && (p.branch
                    || (nd.flags & PageWalk.F_BIGDATA) != 0
                    || (nd.lohi >= 8 && nd.lohi % 8 == 0));
      } else if (names && !p.branch) {
        shaped = nd.flags == PageWalk.F_SUBDATA && nd.lohi == PageWalk.DB_RECORD;
      } else {
        shaped = true;
      }
      if (shaped && (t.kind == Kind.FREE || within(nd.key, lo, hi))) {
        in++;
      }
    }
    return all == 0 ? 1 : (double) in / all;
  }

  private boolean wins(long pgno, long tree, long parent, int index) {
    List<Claim> cs = claims.get(pgno);
    if (cs == null) {
      return false;
    }
    Claim best = null;
    boolean tie = false;
    for (Claim c : cs) {
      if (best == null || c.fit() > best.fit()) {
        best = c;
        tie = false;
      } else if (c.fit() == best.fit()) {
        tie = true;
      }
    }
    return !tie && best.tree() == tree && best.parent() == parent && best.index() == index;
  }

  /** Records (rescue pass) that everything below a pointer is lost. */
  private void lostBelow(Tree t, long ptrAt, int ptrLen, byte[] lo, byte[] hi, String why) {
    if (pass != Pass.RESCUE) {
      return;
    }
    add(
        t,
        new Loss(
            ptrAt,
            ptrLen,
            user(t),
            t.kind == Kind.FREE ? 0 : -1,
            range(t, lo, true, hi),
            why + consequence(t)));
  }

  private void add(Tree t, Loss l) {
    losses.add(l);
    if (l.lost < 0) {
      t.unknown.add(l);
    }
  }

  private static String user(Tree t) {
    return t.kind == Kind.DATA ? t.keyspace : null;
  }

  private static String consequence(Tree t) {
    switch (t.kind) {
      case FREE:
        return "; in LMDB's free-page list, which holds no entries";
      case NAMES:
        return "; the keyspaces recorded there are lost";
      default:
        return "";
    }
  }

  // ---- branch pages ----

  private void branch(Tree t, Page p, byte[] lo, byte[] hi, int depth) {
    Node[] nodes = p.nodes();
    boolean broken = false;
    for (Node nd : nodes) {
      broken |= nd.problem != null;
    }
    if (pass == Pass.RESCUE) {
      layout(t, p, broken, lo, hi);
    }
    for (int i = 0; i < nodes.length; i++) {
      Node nd = nodes[i];
      byte[] from = lo;
      for (int j = i; j >= 1; j--) {
        if (nodes[j].problem == null) {
          from = nodes[j].key;
          break;
        }
      }
      byte[] to = hi;
      for (int j = i + 1; j < nodes.length; j++) {
        if (nodes[j].problem == null) {
          to = nodes[j].key;
          break;
        }
      }
      long nodeAt = p.offset + nd.at;
      if (nd.problem != null) {
        lostBelow(t, p.offset + MetaPages.HEADER + 2L * i, 2, from, to, nd.problem);
        continue;
      }
      visit(t, nd.child(), p.pgno, i, nodeAt, nd.extent, from, to, depth + 1);
    }
  }

  /**
   * Reports (rescue pass) what the page's header says wrongly (see {@link Page}): fields its nodes
   * make up for lose nothing; a page whose nodes fill no node area, with no damaged node to explain
   * it, may hide entries (its count is settled with the tree's).
   */
  private void layout(Tree t, Page p, boolean explained, byte[] lo, byte[] hi) {
    for (String note : p.notes) {
      losses.add(
          new Loss(
              p.offset,
              MetaPages.HEADER,
              user(t),
              0,
              null,
              note + ": the header is damaged, every node was read"));
    }
    if (p.unsettled && !explained) {
      add(
          t,
          new Loss(
              p.offset,
              psize,
              user(t),
              t.kind == Kind.FREE ? 0 : -1,
              range(t, lo, true, hi),
              "the header of page "
                  + p.pgno
                  + " (lower "
                  + p.lower
                  + ", upper "
                  + p.upper
                  + ") disagrees with its nodes: it may hide entries"
                  + consequence(t)));
    }
  }

  // ---- leaf pages ----

  private void leaf(Tree t, Page p, byte[] lo, byte[] hi) {
    Node[] nodes = p.nodes();
    switch (t.kind) {
      case FREE:
        freeLeaf(t, p, nodes, lo, hi);
        break;
      case NAMES:
        namesLeaf(t, p, nodes, lo, hi);
        break;
      case MAIN:
        mainSurvey(t, p, nodes);
        break;
      default:
        if (pass == Pass.RESCUE) {
          dataLeaf(t, p, nodes, lo, hi);
        } else {
          dataSurvey(t, p, nodes);
        }
    }
  }

  /** Survey and claims passes over a leaf of the main database, before the format is known. */
  private void mainSurvey(Tree t, Page p, Node[] nodes) {
    for (Node nd : nodes) {
      if (nd.key == null) {
        continue;
      }
      if (recordNode(p, nd)) {
        MetaPages.Db db = MetaPages.db(p.b, nd.dataAt);
        if (db.isEmpty() || (db.root() >= 2 && db.root() <= lastPage)) {
          String name =
              Arrays.equals(nd.key, OWN) ? null : new String(nd.key, StandardCharsets.UTF_8);
          records.add(
              new Named(
                  name, nd.key, db, p.offset + nd.dataAt, p.offset + nd.at, nd.extent, null, null));
        }
      } else if (nd.problem == null) {
        dataNode(t, p, nd);
      }
    }
  }

  /**
   * Whether a node of the main database holds a database record: flagged as one (LMDB's {@code
   * F_SUBDATA}) with room for its 48 bytes. Its size field may be damaged; the record's own checks
   * follow.
   */
  private boolean recordNode(Page p, Node nd) {
    return (nd.flags & PageWalk.F_SUBDATA) != 0
        && (nd.flags & PageWalk.F_BIGDATA) == 0
        && nd.dataAt + PageWalk.DB_RECORD <= psize;
  }

  private void dataSurvey(Tree t, Page p, Node[] nodes) {
    for (Node nd : nodes) {
      if (nd.problem == null) {
        dataNode(t, p, nd);
      }
    }
  }

  /** Survey and claims: an entry's overflow pages are reached; its frame is counted. */
  private void dataNode(Tree t, Page p, Node nd) {
    if ((nd.flags & PageWalk.F_BIGDATA) != 0) {
      overflowSurvey(t, p, nd);
    } else if (pass == Pass.SURVEY && framedGiven == null) {
      byte[] v = p.inline(nd);
      if (unframe(nd.key, v) != null) {
        framesPassed++;
      } else {
        framesFailed++;
      }
    }
  }

  private void overflowSurvey(Tree t, Page p, Node nd) {
    long ov = p.b.getLong(nd.dataAt);
    long pages = overflowPages(t, ov, nd.lohi);
    if (pages < 0) {
      return;
    }
    for (long q = ov; q < ov + pages; q++) {
      int i = (int) q;
      if (pass == Pass.SURVEY) {
        if (reached.get(i)) {
          conflicted.set(i);
        }
        reached.set(i);
      } else if (conflicted.get(i)) {
        claims.computeIfAbsent(q, k -> new ArrayList<>()).add(new Claim(t.id, p.pgno, nd.index, 1));
      }
    }
  }

  /**
   * The pages of the overflow run at {@code ov} holding {@code size} bytes, or -1 if it is not a
   * sane run (see {@link #overflowRun}).
   */
  private long overflowPages(Tree t, long ov, long size) {
    return overflowRun(
        ov, size, t.kind != Kind.FREE && framedGiven != Boolean.FALSE, new String[2]);
  }

  private long overflowRun(long ov, long size, boolean lenient, String[] why) {
    String bad = pointerProblem(ov);
    if (bad != null) {
      why[0] = "its value's first page " + ov + " is " + bad;
      return -1;
    }
    if (size > MAX_VALUE) {
      why[0] = "its value's size (" + size + " bytes) is damaged";
      return -1;
    }
    ByteBuffer head = read(ov * psize, MetaPages.HEADER);
    long pages = head.getInt(12) & 0xFFFFFFFFL;
    long needed = (MetaPages.HEADER - 1 + size) / psize + 1;
    boolean overflowPage =
        head.getLong(0) == ov && (head.getShort(10) & PageWalk.TYPE_MASK) == PageWalk.P_OVERFLOW;
    if (!overflowPage
        || pages < needed
        || ov + pages - 1 > lastPage
        || (ov + pages) * psize > fileSize) {
      String header =
          overflowPage
              ? "the overflow run at page "
                  + ov
                  + " records "
                  + pages
                  + " pages for "
                  + size
                  + " bytes, beyond the file or too few"
              : "its value's first page " + ov + " is not an overflow page";
      if (!lenient || ov + needed - 1 > lastPage || (ov + needed) * psize > fileSize) {
        why[0] = header;
        return -1;
      }
      // A checksum frame vouches for the value: read the pages its size needs.
      why[1] = header + " (its header is damaged)";
      pages = needed;
    }
    int f = free.nextSetBit((int) ov);
    if (f >= 0 && f < ov + pages && lenient && f >= ov + needed && why[1] == null) {
      why[1] =
          "the overflow run at page " + ov + " records " + pages + " pages (its header is damaged)";
      pages = needed;
    }
    if (f >= 0 && f < ov + pages) {
      why[0] = "its value's page " + f + " is a page the free-page list holds";
      return -1;
    }
    return pages;
  }

  /**
   * Rescue: the value of an entry held in overflow pages, or null with {@code why[0]} set; {@code
   * why[1]}: damage of the run's header that the value's checksum frame must make up for.
   */
  private byte[] overflowValue(Tree t, Page p, Node nd, String[] why) {
    long ov = p.b.getLong(nd.dataAt);
    long pages = overflowRun(ov, nd.lohi, t.kind == Kind.DATA && framed, why);
    if (pages < 0) {
      return null;
    }
    for (long q = ov; q < ov + pages; q++) {
      int i = (int) q;
      if (conflicted.get(i) && !wins(q, t.id, p.pgno, nd.index)) {
        why[0] = "its value's page " + q + " is referred to from elsewhere as well";
        return null;
      }
      if (visited.get(i)) {
        why[0] = "its value's page " + q + " was reached before";
        return null;
      }
    }
    visited.set((int) ov, (int) (ov + pages));
    ByteBuffer v = read(ov * psize + MetaPages.HEADER, (int) nd.lohi);
    return v.array();
  }

  /** The rescue of a leaf of user entries: each entry handed over or lost on its own. */
  private void dataLeaf(Tree t, Page p, Node[] nodes, byte[] lo, byte[] hi) {
    int n = nodes.length;
    String[] why = new String[n];
    byte[][] values = new byte[n][];
    String[] runNote = new String[n];
    boolean structural = false;
    for (int i = 0; i < n; i++) {
      Node nd = nodes[i];
      if (nd.problem != null) {
        why[i] = nd.problem;
        structural = true;
        continue;
      }
      byte[] stored;
      if (nd.key.length == 0) {
        why[i] = "node " + i + " of page " + p.pgno + " has an empty key, which kv4j never writes";
        continue;
      }
      if ((nd.flags & ~PageWalk.F_BIGDATA) != 0) {
        why[i] =
            "node "
                + i
                + " of page "
                + p.pgno
                + " has flags 0x"
                + Integer.toHexString(nd.flags)
                + " that this store never writes";
        continue;
      }
      if ((nd.flags & PageWalk.F_BIGDATA) != 0) {
        String[] w = new String[2];
        stored = overflowValue(t, p, nd, w);
        if (stored == null) {
          why[i] = "node " + i + " of page " + p.pgno + ": " + w[0];
          continue;
        }
        runNote[i] = w[1];
      } else {
        stored = p.inline(nd);
      }
      if (framed) {
        values[i] = unframe(nd.key, stored);
        if (values[i] == null) {
          why[i] =
              "the entry of node "
                  + i
                  + " of page "
                  + p.pgno
                  + ((nd.flags & PageWalk.F_BIGDATA) != 0 ? " (value in overflow pages)" : "")
                  + " fails its CRC32C check";
        }
      } else {
        values[i] = stored;
      }
    }
    sameNode(p, nodes, why);
    layout(t, p, structural || anyOf(why), lo, hi);
    // Keys ascend through the tree; a store without frames has nothing else to check them by.
    byte[] last = t.lastKey;
    for (int i = 0; i < n; i++) {
      if (why[i] != null) {
        continue;
      }
      byte[] k = nodes[i].key;
      boolean order = last == null || Arrays.compareUnsigned(k, last) > 0;
      boolean inRange = framed || within(k, lo, hi);
      if (!order || !inRange) {
        why[i] = "the key of node " + i + " of page " + p.pgno + " is out of order";
        continue;
      }
      last = k;
    }
    byte[] before = lo;
    boolean beforeInclusive = true;
    int run = -1; // the first of a run of lost entries, reported as one region
    for (int i = 0; i <= n; i++) {
      if (i < n && why[i] != null) {
        t.seen++;
        run = run < 0 ? i : run;
        continue;
      }
      if (run >= 0) {
        lostRun(
            t, p, nodes, why, run, i, range(before, beforeInclusive, i < n ? nodes[i].key : hi));
        run = -1;
      }
      if (i == n) {
        break;
      }
      t.seen++;
      sink.entry(t.keyspace, nodes[i].key, values[i]);
      handedOver++;
      if (runNote[i] != null) {
        losses.add(
            new Loss(
                p.b.getLong(nodes[i].dataAt) * psize,
                MetaPages.HEADER,
                t.keyspace,
                0,
                null,
                "node "
                    + i
                    + " of page "
                    + p.pgno
                    + ": "
                    + runNote[i]
                    + "; the value's checksum holds, so it was read"));
      }
      t.lastKey = nodes[i].key;
      before = nodes[i].key;
      beforeInclusive = false;
    }
  }

  /**
   * One region for the lost entries of nodes {@code from..to-1} of a leaf, which lie between the
   * same intact keys: the bytes of their nodes, their count, the first one's problem.
   */
  private void lostRun(
      Tree t, Page p, Node[] nodes, String[] why, int from, int to, KeyRange keys) {
    long start = Long.MAX_VALUE;
    long end = -1;
    for (int i = from; i < to; i++) {
      Node nd = nodes[i];
      boolean inPage = nd.at >= MetaPages.HEADER && nd.at + nd.extent <= psize;
      long at = inPage ? p.offset + nd.at : p.offset + MetaPages.HEADER + 2L * i;
      start = Math.min(start, at);
      end = Math.max(end, at + (inPage ? nd.extent : 2));
    }
    String problem =
        to - from == 1
            ? why[from]
            : "nodes "
                + from
                + " to "
                + (to - 1)
                + " of page "
                + p.pgno
                + " are damaged; the first: "
                + why[from];
    losses.add(new Loss(start, end - start, t.keyspace, to - from, keys, problem));
  }

  /**
   * Two slots of a page's node table that point at the same node: one of them is damaged, the one
   * whose key does not fit between its neighbours'; its own entry is lost.
   */
  private static void sameNode(Page p, Node[] nodes, String[] why) {
    Map<Integer, Integer> seen = new HashMap<>();
    for (int i = 0; i < nodes.length; i++) {
      if (nodes[i].problem != null) {
        continue;
      }
      Integer j = seen.putIfAbsent(nodes[i].at, i);
      if (j == null) {
        continue;
      }
      int bad = fitsBetween(nodes, j) ? i : j;
      why[bad] =
          "node "
              + bad
              + " of page "
              + p.pgno
              + " points at the same bytes as node "
              + (bad == i ? j : i)
              + ": its own entry is lost";
    }
  }

  private static boolean fitsBetween(Node[] nodes, int i) {
    byte[] k = nodes[i].key;
    for (int j = i - 1; j >= 0; j--) {
      if (nodes[j].problem == null && nodes[j].at != nodes[i].at) {
        if (Arrays.compareUnsigned(nodes[j].key, k) >= 0) {
          return false;
        }
        break;
      }
    }
    for (int j = i + 1; j < nodes.length; j++) {
      if (nodes[j].problem == null && nodes[j].at != nodes[i].at) {
        return Arrays.compareUnsigned(k, nodes[j].key) < 0;
      }
    }
    return true;
  }

  private static boolean anyOf(String[] why) {
    for (String w : why) {
      if (w != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * A leaf of the main database in a store of named databases: one record per database, collected
   * in {@link #records} for {@link #walkAll} to walk (or report).
   */
  private void namesLeaf(Tree t, Page p, Node[] nodes, byte[] lo, byte[] hi) {
    boolean explained = false;
    for (Node nd : nodes) {
      explained |=
          nd.problem != null || nd.flags != PageWalk.F_SUBDATA || nd.lohi != PageWalk.DB_RECORD;
    }
    layout(t, p, explained, lo, hi);
    for (int i = 0; i < nodes.length; i++) {
      t.seen++;
      Node nd = nodes[i];
      boolean record = nd.key != null && recordNode(p, nd);
      String why = record ? null : nd.problem;
      if (why == null && !record) {
        why = "node " + i + " of page " + p.pgno + " is not a database record";
      }
      MetaPages.Db db = why == null ? MetaPages.db(p.b, nd.dataAt) : null;
      if (why == null) {
        why = recordProblem(db);
      }
      if (why != null) {
        losses.add(
            new Loss(
                p.offset + nd.at,
                nd.extent,
                null,
                -1,
                null,
                why + "; the keyspace it records is lost, its name unknown"));
        continue;
      }
      String note =
          nd.flags != PageWalk.F_SUBDATA || nd.lohi != PageWalk.DB_RECORD
              ? "the header of node "
                  + i
                  + " of page "
                  + p.pgno
                  + " is damaged (flags 0x"
                  + Integer.toHexString(nd.flags)
                  + ", size "
                  + nd.lohi
                  + "); its 48-byte database record was read all the same"
              : null;
      String recordNote = recordNote(db);
      if (recordNote != null) {
        note =
            (note == null ? "" : note + "; ")
                + "the database record in node "
                + i
                + " of page "
                + p.pgno
                + " holds "
                + recordNote
                + "; its tree was read all the same";
      }
      String name =
          Arrays.equals(nd.key, OWN) ? null : new String(nd.key, StandardCharsets.ISO_8859_1);
      String problem = null;
      if (name != null) {
        try {
          Store.checkKeyspaceName(name);
        } catch (IllegalArgumentException e) {
          problem = "is not a keyspace name";
        }
      }
      if (problem == null && t.lastKey != null && Arrays.compareUnsigned(nd.key, t.lastKey) <= 0) {
        problem = "is out of order";
      }
      if (problem == null) {
        t.lastKey = nd.key;
      }
      records.add(
          new Named(
              problem == null ? name : null,
              nd.key,
              db,
              p.offset + nd.dataAt,
              p.offset + nd.at,
              nd.extent,
              problem,
              note));
    }
  }

  /** What makes a database record unusable: a root that is not a page in use. */
  private String recordProblem(MetaPages.Db db) {
    if (!db.isEmpty() && (db.root() < 2 || db.root() > lastPage)) {
      return "a database record's root page " + db.root() + " lies outside pages 2.." + lastPage;
    }
    return null;
  }

  /** What is damaged in a database record besides its root: reported, the tree is read anyway. */
  private static String recordNote(MetaPages.Db db) {
    if (db.flags() != 0) {
      return "flags 0x" + Integer.toHexString(db.flags()) + " that this store never sets";
    }
    if (db.entries() < 0) {
      return "a count of " + db.entries() + " entries";
    }
    return null;
  }

  /**
   * A leaf of the free-page database: each value lists free pages (a count, then that many page
   * numbers, 8 bytes each, descending). The survey collects them; a damaged list adds every page
   * number it holds that lies in range (more pages taken for free only loses entries, never returns
   * an old version).
   */
  private void freeLeaf(Tree t, Page p, Node[] nodes, byte[] lo, byte[] hi) {
    if (pass == Pass.RESCUE) {
      boolean broken = false;
      for (Node nd : nodes) {
        broken |= nd.problem != null;
      }
      layout(t, p, broken, lo, hi);
    }
    for (int i = 0; i < nodes.length; i++) {
      Node nd = nodes[i];
      t.seen++;
      String why = nd.problem;
      byte[] list = null;
      if (why == null) {
        if ((nd.flags & PageWalk.F_BIGDATA) != 0) {
          if (pass == Pass.RESCUE) {
            String[] w = new String[2];
            list = overflowValue(t, p, nd, w);
            why = list == null ? w[0] : null;
          } else {
            overflowSurvey(t, p, nd);
            long ov = p.b.getLong(nd.dataAt);
            if (overflowPages(t, ov, nd.lohi) > 0 && pass == Pass.SURVEY) {
              list = read(ov * psize + MetaPages.HEADER, (int) nd.lohi).array();
            }
          }
        } else {
          list = p.inline(nd);
        }
      }
      if (list != null) {
        String listProblem = freeList(list);
        why = why == null ? listProblem : why;
      }
      if (why != null && pass == Pass.RESCUE) {
        losses.add(
            new Loss(
                p.offset + nd.at,
                nd.extent,
                null,
                0,
                null,
                "node " + i + " of page " + p.pgno + ": " + why + consequence(t)));
      }
    }
  }

  /** Adds (survey) the pages of a free-page list; returns what is wrong with it, or null. */
  private String freeList(byte[] list) {
    ByteBuffer b = ByteBuffer.wrap(list).order(ByteOrder.LITTLE_ENDIAN);
    int slots = list.length / 8;
    if (slots < 1) {
      return "a free-page list is cut short";
    }
    long count = b.getLong(0);
    String problem = null;
    if (count < 0 || count > slots - 1) {
      problem = "a free-page list counts " + count + " pages in " + list.length + " bytes";
      count = slots - 1;
    }
    long prev = Long.MAX_VALUE;
    for (int i = 1; i <= count; i++) {
      long f = b.getLong(8 * i);
      if (f < 2 || f > lastPage || f >= prev) {
        problem = problem != null ? problem : "a free-page list names page " + f + " out of order";
      }
      if (f >= 2 && f <= lastPage) {
        if (pass == Pass.SURVEY) {
          free.set((int) f);
        }
        prev = f;
      }
    }
    return problem;
  }

  // ---- helpers ----

  /** The value of a framed entry if its checksum holds, else null. */
  private static byte[] unframe(byte[] key, byte[] stored) {
    if (stored.length < ValueFrame.HEADER) {
      return null;
    }
    int recorded =
        (stored[0] & 0xFF)
            | (stored[1] & 0xFF) << 8
            | (stored[2] & 0xFF) << 16
            | (stored[3] & 0xFF) << 24;
    byte[] value = Arrays.copyOfRange(stored, ValueFrame.HEADER, stored.length);
    return ValueFrame.checksum(key, value) == recorded ? value : null;
  }

  private static boolean within(byte[] key, byte[] lo, byte[] hi) {
    return (lo == null || Arrays.compareUnsigned(key, lo) >= 0)
        && (hi == null || Arrays.compareUnsigned(key, hi) < 0);
  }

  private static KeyRange range(Tree t, byte[] lo, boolean loInclusive, byte[] hi) {
    return t.kind == Kind.DATA ? range(lo, loInclusive, hi) : null;
  }

  private static KeyRange range(byte[] lo, boolean loInclusive, byte[] hi) {
    KeyRange r = KeyRange.all();
    if (lo != null) {
      r = loInclusive ? r.gte(lo) : r.gt(lo);
    }
    return hi == null ? r : r.lt(hi);
  }

  private static long even(long n) {
    return (n + 1) & ~1L;
  }

  private static int u16(ByteBuffer b, int at) {
    return b.getShort(at) & 0xFFFF;
  }

  /** {@code length} bytes from {@code at}; the caller checked they lie within the file. */
  private ByteBuffer read(long at, int length) {
    ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    try {
      while (b.hasRemaining()) {
        if (ch.read(b, at + b.position()) < 0) {
          throw new StoreIOException(
              file + " ended at byte " + (at + b.position()) + " while it was read",
              (Throwable) null);
        }
      }
    } catch (IOException e) {
      throw new StoreIOException("cannot read " + file + ": " + e, e);
    }
    return b.flip();
  }
}
