package io.kv4j.lmdb;

import static io.kv4j.lmdb.SalvageReport.consequence;
import static io.kv4j.lmdb.SalvageReport.range;
import static io.kv4j.lmdb.SalvageReport.user;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreIOException;
import io.kv4j.lmdb.SalvagePage.Node;
import io.kv4j.lmdb.SalvageReport.Loss;
import io.kv4j.lmdb.SalvageTree.Kind;
import io.kv4j.spi.SalvageSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
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
 * file and is not free, the page is a branch or leaf page (see {@link SalvagePage} for what its
 * nodes make up for), a leaf lies at the depth of most of the tree's leaves (a branch above it),
 * and the page fits: some of its intact nodes have keys within the range the pointer's branch
 * entries give it (a damaged pointer that lands on a sibling finds none: sibling ranges are
 * disjoint) and the shape of the tree's nodes (the free-page list's 8-byte transaction ids and page
 * lists, the list of keyspaces' 48-byte records). Between two pointers to one page, the one under
 * which more of its nodes fit keeps it. A pointer that fails loses its subtree, reported with that
 * range as the lost keys.
 *
 * <p><b>In a leaf</b>, each entry stands alone: a node that lies outside the page, has flags kv4j
 * never writes, or whose value (inline or in overflow pages) fails its checksum frame loses that
 * one entry, reported with the range between the intact keys on either side. In a store without
 * frames a value cannot be checked; keys must then ascend within the leaf and its range. Entries
 * lost where the count is not known one by one are counted from the tree's record ({@code
 * md_entries}) when one region of the tree accounts for them; a record whose count disagrees with
 * pages that were all read whole is itself reported as damaged.
 *
 * <p>The parts: {@link SalvagePage} reads a page and checks its header against its nodes; {@link
 * FreePageList}, {@link KeyspaceList} and {@link EntryLeaves} read the leaves of the free-page
 * list, of the list of keyspaces and of the user's entries; {@link OverflowRuns} reads values held
 * in overflow pages; {@link SalvageReport} collects what is lost and settles the counts.
 */
final class SalvageWalk {
  /**
   * What a walk found. {@code rootLost}: the main database's root page could not be used, so
   * nothing was found (another snapshot may do better).
   */
  record Outcome(
      List<DamagedRegion> damage, boolean framed, boolean named, long entries, boolean rootLost) {}

  enum Pass {
    SURVEY,
    CLAIMS,
    RESCUE
  }

  /** A pointer to a page reached from more than one place. */
  record Claim(long tree, long parent, int index, double fit) {}

  // The walk's state; the package-private part is read and written by its parts (see the class
  // comment) too, pass by pass.
  private final FileChannel ch;
  private final Path file;
  private final MetaPages.Meta meta;
  final long fileSize;
  final int psize;
  final long lastPage;
  final SalvageSink sink;
  final Boolean framedGiven;
  private final Boolean namedGiven;
  boolean framed;
  private boolean named;
  long framesPassed;
  long framesFailed;
  Pass pass;
  final BitSet free = new BitSet();
  final BitSet reached = new BitSet();
  final BitSet conflicted = new BitSet();
  private final BitSet walked = new BitSet();
  final BitSet visited = new BitSet();
  final Map<Long, List<Claim>> claims = new HashMap<>();
  private final Map<Long, long[]> leafDepths = new HashMap<>();
  final SalvageReport report;
  final KeyspaceList keyspaces = new KeyspaceList(this);
  final EntryLeaves entries = new EntryLeaves(this);
  final FreePageList freePages = new FreePageList(this);
  final OverflowRuns overflows = new OverflowRuns(this);

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
    this.report = new SalvageReport(psize);
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
    for (Loss l : w.report.losses) {
      damage.add(
          new DamagedRegion(file, l.offset, l.length, l.keyspace, l.lost, l.keys, l.problem));
    }
    boolean rootLost = !w.meta.main().isEmpty() && !w.visited.get((int) w.meta.main().root());
    return new Outcome(List.copyOf(damage), w.framed, w.named, w.report.handedOver, rootLost);
  }

  private void walkAll() {
    long metaAt = (long) meta.slot() * psize;
    pass = Pass.SURVEY;
    SalvageTree freeTree = freeTree(metaAt);
    walk(freeTree);
    walk(
        new SalvageTree(
            Kind.MAIN, metaAt + MetaPages.MAIN_DB, null, "the main database", meta.main()));
    named = namedGiven != null ? namedGiven : keyspaces.holdsOwn();
    List<SalvageTree> surveyed = new ArrayList<>();
    if (named) {
      for (KeyspaceList.Named r : keyspaces.records) {
        surveyed.add(
            new SalvageTree(
                Kind.DATA, r.at(), r.name(), "database of " + r.name(), r.db())); // walked if sane
      }
      for (SalvageTree t : surveyed) {
        walk(t);
      }
    }
    framed = framedGiven != null ? framedGiven : framesPassed > framesFailed;
    if (!conflicted.isEmpty()) {
      pass = Pass.CLAIMS;
      keyspaces.records.clear();
      walk(freeTree(metaAt));
      walk(
          new SalvageTree(
              Kind.MAIN, metaAt + MetaPages.MAIN_DB, null, "the main database", meta.main()));
      for (SalvageTree t : surveyed) {
        walk(new SalvageTree(Kind.DATA, t.id, t.keyspace, t.label, t.db));
      }
    }
    pass = Pass.RESCUE;
    keyspaces.records.clear();
    SalvageTree rescuedFree = freeTree(metaAt);
    walk(rescuedFree);
    finish(rescuedFree);
    SalvageTree main =
        named
            ? new SalvageTree(
                Kind.NAMES, metaAt + MetaPages.MAIN_DB, null, "the list of keyspaces", meta.main())
            : new SalvageTree(
                Kind.DATA, metaAt + MetaPages.MAIN_DB, null, "the store's keys", meta.main());
    int before = report.losses.size();
    walk(main);
    finish(main);
    boolean mainIntact =
        report.losses.subList(before, report.losses.size()).stream().allMatch(l -> l.lost == 0);
    if (named) {
      keyspaces.namedTrees(metaAt, mainIntact);
    }
  }

  private SalvageTree freeTree(long metaAt) {
    return new SalvageTree(
        Kind.FREE, metaAt + MetaPages.FREE_DB, null, "LMDB's free-page list", meta.free());
  }

  void walk(SalvageTree t) {
    if (t.db.isEmpty()) {
      return;
    }
    visit(t, t.db.root(), -1, 0, t.id + 40, 8, null, null, 0);
  }

  /** Settles a walked tree's count (see {@link SalvageReport#finish}). */
  void finish(SalvageTree t) {
    report.finish(t, leafDepth(t));
  }

  // ---- pointers and pages ----

  /**
   * Follows one pointer to a tree page: checks it and the page (see the class comment), then walks
   * the page. {@code ptrAt}/{@code ptrLen}: where the pointer is in the file, for the region;
   * {@code lo}/{@code hi}: the keys the pointer covers, [lo, hi), null where unbounded.
   */
  private void visit(
      SalvageTree t,
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
    SalvagePage p = new SalvagePage(pgno, read(pgno * psize, psize), psize);
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
        report.add(t, l);
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
  String pointerProblem(long pgno) {
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
  private int leafDepth(SalvageTree t) {
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
  private double fit(SalvageTree t, SalvagePage p, byte[] lo, byte[] hi) {
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

  boolean wins(long pgno, long tree, long parent, int index) {
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
  private void lostBelow(SalvageTree t, long ptrAt, int ptrLen, byte[] lo, byte[] hi, String why) {
    if (pass != Pass.RESCUE) {
      return;
    }
    report.add(
        t,
        new Loss(
            ptrAt,
            ptrLen,
            user(t),
            t.kind == Kind.FREE ? 0 : -1,
            range(t, lo, true, hi),
            why + consequence(t)));
  }

  // ---- branch pages ----

  private void branch(SalvageTree t, SalvagePage p, byte[] lo, byte[] hi, int depth) {
    Node[] nodes = p.nodes();
    boolean broken = false;
    for (Node nd : nodes) {
      broken |= nd.problem != null;
    }
    if (pass == Pass.RESCUE) {
      report.layout(t, p, broken, lo, hi);
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

  // ---- leaf pages ----

  private void leaf(SalvageTree t, SalvagePage p, byte[] lo, byte[] hi) {
    Node[] nodes = p.nodes();
    switch (t.kind) {
      case FREE:
        freePages.freeLeaf(t, p, nodes, lo, hi);
        break;
      case NAMES:
        keyspaces.namesLeaf(t, p, nodes, lo, hi);
        break;
      case MAIN:
        keyspaces.mainSurvey(t, p, nodes);
        break;
      default:
        if (pass == Pass.RESCUE) {
          entries.dataLeaf(t, p, nodes, lo, hi);
        } else {
          entries.dataSurvey(t, p, nodes);
        }
    }
  }

  static boolean within(byte[] key, byte[] lo, byte[] hi) {
    return (lo == null || Arrays.compareUnsigned(key, lo) >= 0)
        && (hi == null || Arrays.compareUnsigned(key, hi) < 0);
  }

  /** {@code length} bytes from {@code at}; the caller checked they lie within the file. */
  ByteBuffer read(long at, int length) {
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
