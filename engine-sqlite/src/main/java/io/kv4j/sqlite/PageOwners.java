package io.kv4j.sqlite;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Who may read each page of a damaged file. Every b-tree of the schema is walked from its root and
 * every reference to a page is recorded as a claim, and the free list is read; a page is read as
 * part of a tree only through its one claim that fits it (a table reference to a table page, an
 * index reference to an index page). This is what keeps a damaged child pointer from returning
 * another keyspace's rows (a page two references claim is read by neither) or stale rows (a page on
 * the free list is never read as a tree page).
 *
 * <p>An interior page whose cells fail a check, or name a page outside the file, twice the same
 * page, or itself, makes no claims: its children become unreferenced, and salvage may read their
 * rows back only as rows its key index says are missing ({@link #orphansReadable()}).
 */
final class PageOwners {
  /** No claim names the page. */
  static final long NONE = 0;

  /** Two or more fitting claims name the page. */
  static final long CONTESTED = -1;

  /** Only claims that do not fit the page's type name it. */
  static final long MISFIT = -2;

  private final DatabaseCopy db;
  private final long[] owner;
  private final byte[] type;
  private final BitSet typeRead = new BitSet();
  private final BitSet entered = new BitSet();
  private final BitSet free = new BitSet();
  private final Map<Long, Boolean> misfitKinds = new HashMap<>();
  private final Map<Long, Integer> misfitClaims = new HashMap<>();

  /** Pages of the walked trees whose structure failed a check, with what failed. */
  final Map<Long, BTreePage> damagedPages = new LinkedHashMap<>();

  /** Which tree each damaged page was reached in (its tree id). */
  final Map<Long, Integer> damagedTree = new HashMap<>();

  private boolean freeListTrusted;
  private String freeListProblem;
  private final BitSet conflicts = new BitSet();

  PageOwners(DatabaseCopy db) {
    this.db = db;
    int n = (int) Math.min(db.present, Integer.MAX_VALUE - 8);
    this.owner = new long[n + 1];
    this.type = new byte[n + 1];
  }

  /** A claim by the schema row of tree {@code id} (the root reference). */
  static long rootClaim(int id) {
    return id + 1L;
  }

  /** A claim by cell {@code slot} of interior page {@code parent}; slot -1 is the right child. */
  static long childClaim(long parent, int slot) {
    return (parent << 20) + slot + 2;
  }

  /** Reads the free list: trunk pages (next trunk 4, leaf count 4, leaf page numbers 4 each). */
  void readFreeList() throws IOException {
    long expected = db.freelistCount();
    long trunk = db.freelistTrunk();
    long seen = 0;
    String problem = null;
    while (trunk != 0 && problem == null) {
      if (!inFile(trunk) || free.get((int) trunk)) {
        problem = "trunk page " + trunk + (inFile(trunk) ? " repeats" : " is outside the file");
        break;
      }
      free.set((int) trunk);
      seen++;
      byte[] p = db.read(trunk);
      long next = BTreePage.u32(p, 0);
      long leaves = BTreePage.u32(p, 4);
      if (leaves > db.usable / 4 - 2) {
        problem = "trunk page " + trunk + " lists " + leaves + " leaves";
        break;
      }
      for (int i = 0; i < leaves; i++) {
        long leaf = BTreePage.u32(p, 8 + 4 * i);
        if (!inFile(leaf) || free.get((int) leaf)) {
          problem =
              "trunk page "
                  + trunk
                  + " names page "
                  + leaf
                  + (inFile(leaf) ? ", listed twice" : ", outside the file");
          break;
        }
        free.set((int) leaf);
        seen++;
      }
      if (seen > expected) {
        problem = "the chain holds more than the " + expected + " pages the header counts";
      }
      trunk = next;
    }
    if (problem == null && seen != expected) {
      problem = "the header counts " + expected + " free pages, the chain holds " + seen;
    }
    freeListTrusted = problem == null;
    freeListProblem = problem;
    if (!freeListTrusted) {
      // Pages it names may be live ones (a damaged trunk pointer): keep none of it. Unreferenced
      // pages may then be free ones, holding stale rows, so none is read (see orphansReadable).
      free.clear();
    }
  }

  /**
   * Walks a tree from its root, recording claims; a page is entered (its children claimed) once,
   * through the first claim that fits it.
   *
   * @param id the tree's id (for root claims and damage reports)
   * @param root its root page
   * @param table whether it is a table b-tree (else an index b-tree)
   */
  void walk(int id, long root, boolean table) throws IOException {
    Deque<Long> stack = new ArrayDeque<>();
    if (claim(root, table, rootClaim(id))) {
      stack.push(root);
    }
    while (!stack.isEmpty()) {
      long p = stack.pop();
      BTreePage page = BTreePage.parse(p, db.read(p), db.usable, 0, false);
      String bad = page.damaged() ? null : badChild(page);
      if (page.damaged() || bad != null) {
        if (bad != null) {
          page.problems.add(bad);
        }
        damagedPages.put(p, page);
        damagedTree.put(p, id);
        continue;
      }
      if (!page.interior()) {
        continue;
      }
      for (BTreePage.Cell c : page.cells) {
        if (claim(c.child(), table, childClaim(p, c.index()))) {
          stack.push(c.child());
        }
      }
      if (claim(page.rightChild, table, childClaim(p, -1))) {
        stack.push(page.rightChild);
      }
    }
  }

  /** What is wrong with an interior page's children, or null if nothing. */
  private String badChild(BTreePage page) {
    if (!page.interior()) {
      return null;
    }
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (int i = 0; i <= page.cells.size(); i++) {
      long c = i < page.cells.size() ? page.cells.get(i).child() : page.rightChild;
      String slot = i < page.cells.size() ? "cell " + page.cells.get(i).index() : "right child";
      if (c < 2 || c > db.pages) {
        return slot + " names page " + c + ", outside the database (1.." + db.pages + ")";
      }
      if (c > db.present) {
        return slot + " names page " + c + ", past the end of the file (cut short)";
      }
      if (c == page.number || !seen.add(c)) {
        return slot + " names page " + c + " a second time";
      }
    }
    return null;
  }

  /** Records a claim; returns whether the page should be entered now. */
  private boolean claim(long page, boolean table, long who) throws IOException {
    if (!inFile(page)) {
      return false;
    }
    int i = (int) page;
    int t = type(page);
    boolean fits = BTreePage.isType(t) && BTreePage.isTableType(t) == table;
    if (!fits) {
      misfitClaims.merge(page, 1, Integer::sum);
      misfitKinds.put(page, table);
      if (owner[i] == NONE) {
        owner[i] = MISFIT;
      }
      return false;
    }
    if (free.get(i)) {
      conflicts.set(i);
    }
    owner[i] = owner[i] == NONE || owner[i] == MISFIT ? who : CONTESTED;
    if (entered.get(i)) {
      return false;
    }
    entered.set(i);
    return true;
  }

  /** The page's type byte (read once). */
  int type(long page) throws IOException {
    int i = (int) page;
    if (!typeRead.get(i)) {
      byte[] b = db.read(page, BTreePage.headerOffset(page), 1);
      int t = b[0] & 0xff;
      if (!BTreePage.isType(t)) {
        t = BTreePage.parse(page, db.read(page), db.usable, 0, false).type; // a repaired type byte
      }
      type[i] = (byte) t;
      typeRead.set(i);
    }
    return type[i] & 0xff;
  }

  boolean inFile(long page) {
    return page >= 1 && page <= db.present && page < owner.length && !db.lost(page);
  }

  /** The one fitting claim of a page, or {@link #NONE}, {@link #CONTESTED}, {@link #MISFIT}. */
  long owner(long page) {
    return inFile(page) ? owner[(int) page] : NONE;
  }

  boolean isFree(long page) {
    return inFile(page) && free.get((int) page);
  }

  /**
   * Why a reference does not get to read a page, or null if it does: the page is outside the file,
   * on the free list, claimed by another reference too, or not a page of the reference's kind.
   */
  String refusal(long page, long who, boolean table) throws IOException {
    if (page < 1 || page > db.pages) {
      return "page " + page + " is outside the database (1.." + db.pages + ")";
    }
    if (db.lost(page)) {
      return "page " + page + ", whose newest version is in a damaged WAL frame";
    }
    if (page > db.present || !inFile(page)) {
      return "page " + page + " lies past the end of the file (cut short)";
    }
    long o = owner(page);
    if (o == who && !isFree(page)) {
      return null;
    }
    if (isFree(page)) {
      return "page " + page + " is on the free list (it may hold stale rows)";
    }
    if (o == CONTESTED) {
      return "page " + page + " is named by another reference too (one of them is damaged)";
    }
    int t = type(page);
    if (!BTreePage.isType(t) || BTreePage.isTableType(t) != table) {
      return "page "
          + page
          + " is no "
          + (table ? "table" : "index")
          + " b-tree page ("
          + BTreePage.typeName(t)
          + ")";
    }
    return "page " + page + " belongs elsewhere";
  }

  /**
   * Whether exactly one reference names a page whose type byte is no b-tree type: most likely the
   * page's own type byte was damaged, and its cells may be read leniently; returns the reference's
   * kind (true = table), or null.
   */
  Boolean soleMisfitKind(long page) throws IOException {
    if (owner(page) != MISFIT || misfitClaims.getOrDefault(page, 0) != 1) {
      return null;
    }
    return BTreePage.isType(type(page)) ? null : misfitKinds.get(page);
  }

  /**
   * Whether pages no reference reads may be searched for rows the key index says are lost: only
   * when the free list is intact. Otherwise an unreferenced page may be a free page whose stale
   * rows (an old value of a key, a deleted key) must not come back. A page that both the free list
   * and a tree name is searched too (one of the two references is damaged, and the page the other
   * should have named is unreferenced): one of the two holds the live rows, the other may hold
   * stale copies of them, and salvage takes a lost key only where every copy it finds agrees.
   */
  boolean orphansReadable() {
    return freeListTrusted;
  }

  boolean freeListTrusted() {
    return freeListTrusted;
  }

  String freeListProblem() {
    return freeListProblem;
  }

  /**
   * Pages that no intact reference reads: named by no fitting claim, or by a contested page's line
   * (a page two references name, or one below it: the walks read neither), and free-list pages a
   * tree names (see {@link #orphansReadable}). Not other free-list pages, not the lock-byte page.
   */
  List<Long> unread() {
    List<Long> out = new java.util.ArrayList<>();
    long lockByte = db.lockBytePage();
    for (long p = 2; p < owner.length; p++) {
      long o = owner[(int) p];
      if (!inFile(p)) {
        continue; // its newest version is lost in the WAL
      }
      if (conflicts.get((int) p)) {
        out.add(p);
        continue;
      }
      if (free.get((int) p) || p == lockByte) {
        continue;
      }
      if (o == NONE || o == MISFIT || underContested(p)) {
        out.add(p);
      }
    }
    return out;
  }

  /** Whether the page, or a page above it on its owners' line, is contested. */
  private boolean underContested(long p) {
    long at = p;
    for (int depth = 0; depth < 64 && inFile(at); depth++) {
      long o = owner[(int) at];
      if (o == CONTESTED) {
        return true;
      }
      if (o == NONE || o == MISFIT || o < (1L << 20)) {
        return false; // unclaimed, or a root named by the schema
      }
      at = o >> 20;
    }
    return false;
  }
}
