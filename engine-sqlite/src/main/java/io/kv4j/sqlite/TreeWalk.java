package io.kv4j.sqlite;

import io.kv4j.DamagedRegion;
import io.kv4j.sqlite.StoreTables.Target;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Salvage's walk of one b-tree of the {@link DatabaseCopy} from its root, never trusting a byte:
 * every page is parsed with each bound checked ({@link BTreePage}), every reference is checked
 * against the one {@link PageOwners} lets read the page (or, for the schema, read before the owners
 * are known, against the file's size, pages already seen and the page's type), every overflow chain
 * page by page. What a damaged page, a refused reference or a failed row cost is a {@link Loss},
 * with the bounds (rowids or keys) its parent page gave it.
 *
 * <p>A store table's damaged pages, and a page its reference was refused for whose type byte is
 * most likely damaged (the one reference to it, from a table), are remembered ({@link #lenient()}):
 * their cells may still hold rows the key index lists as lost.
 */
final class TreeWalk {
  private final DatabaseCopy db;

  /** Null for the walk of the schema, made before the page owners are known. */
  private final PageOwners owners;

  /** Where a page repaired without loss is reported. */
  private final List<DamagedRegion> damage;

  /** Damaged or unowned table pages of the store's tables: their cells are read leniently. */
  private final Set<Long> lenient = new LinkedHashSet<>();

  /** What a damaged page or an unread subtree cost one table. */
  static final class Loss {
    final long page;
    final boolean subtree;
    final Long lo; // rowids above (exclusive); null = no bound
    final Long hi; // rowids up to (inclusive); null = no bound
    final byte[] keyLo; // WITHOUT ROWID tables: keys above (exclusive)
    final byte[] keyHi; // ... and below (exclusive)
    final List<String> problems = new ArrayList<>();
    final Set<ByteBuffer> read = new HashSet<>();
    long failedRows; // rows on the page that could not be handed over (known from the page)
    final List<byte[]> lostKeys = new ArrayList<>();
    long recovered;

    Loss(long page, boolean subtree, Long lo, Long hi, byte[] keyLo, byte[] keyHi) {
      this.page = page;
      this.subtree = subtree;
      this.lo = lo;
      this.hi = hi;
      this.keyLo = keyLo;
      this.keyHi = keyHi;
    }

    boolean holds(long rowid) {
      return (lo == null || rowid > lo) && (hi == null || rowid <= hi);
    }
  }

  /** A page to read during a walk, with the bounds its parent gives it. */
  private record Frame(
      long page,
      long who,
      long parent,
      String slot,
      Long lo,
      Long hi,
      byte[] keyLo,
      byte[] keyHi) {}

  /** What a walk does with each row or index entry it reads. */
  @FunctionalInterface
  interface RowReader {
    /**
     * Reads one record; returns the row's key if it was taken, else null after adding a problem.
     */
    byte[] read(long rowid, Record r, List<String> problems, String where);
  }

  TreeWalk(DatabaseCopy db, PageOwners owners, List<DamagedRegion> damage) {
    this.db = db;
    this.owners = owners;
    this.damage = damage;
  }

  /** The store tables' pages whose cells may be read leniently, in the order the walks met them. */
  Set<Long> lenient() {
    return lenient;
  }

  /**
   * Walks a tree from its root. Table trees (rowid tables) hand each leaf row to {@code rows};
   * index trees (WITHOUT ROWID tables, indexes) hand every entry, interior ones included. Each
   * damaged page, refused reference or failed row becomes a {@link Loss} in {@code losses}.
   *
   * @param useOwners false only for the schema, read before the owners are known
   * @param target the table whose damaged pages may be re-read leniently for lost rows, or null
   */
  void walk(
      long root,
      long rootClaim,
      boolean table,
      boolean useOwners,
      List<Loss> losses,
      RowReader rows,
      Target target)
      throws IOException {
    Deque<Frame> stack = new ArrayDeque<>();
    BitSet visited = new BitSet();
    stack.push(new Frame(root, rootClaim, 0, "root", null, null, null, null));
    while (!stack.isEmpty()) {
      Frame f = stack.pop();
      String refused =
          useOwners ? owners.refusal(f.page(), f.who(), table) : visit(f, visited, table);
      if (refused != null) {
        Loss l = loss(losses, f, f.parent() == 0 ? 1 : f.parent(), true);
        l.problems.add(
            (f.parent() == 0 ? "its root" : "the " + f.slot() + " of page " + f.parent())
                + " names "
                + refused);
        if (useOwners
            && target != null
            && table
            && Boolean.TRUE.equals(owners.soleMisfitKind(f.page()))) {
          lenient.add(f.page());
        }
        continue;
      }
      BTreePage page = BTreePage.parse(f.page(), db.read(f.page()), db.usable, 0, false);
      if (page.broken && target == null && table && BTreePage.isType(page.type)) {
        // The schema's or the catalog's page, whose cell count is damaged: every pointer slot up
        // to the content area is tried, each cell checked as ever (never in free space).
        BTreePage lenientPage =
            BTreePage.parse(f.page(), db.read(f.page()), db.usable, page.type, true);
        if (!lenientPage.broken && !lenientPage.cells.isEmpty() && !lenientPage.interior()) {
          page = lenientPage;
        }
      }
      List<String> problems = new ArrayList<>(page.problems);
      if (useOwners && owners.damagedPages.containsKey(f.page())) {
        for (String p : owners.damagedPages.get(f.page()).problems) {
          if (!problems.contains(p)) {
            problems.add(p);
          }
        }
      }
      String what = BTreePage.typeName(page.type) + " page " + f.page();
      if (page.repair != null) {
        if (page.interior() && target != null) {
          damage.add(
              new DamagedRegion(
                  db.fileOf(f.page()),
                  db.offsetOf(f.page()),
                  db.pageSize,
                  target.keyspace,
                  0,
                  null,
                  target.describe() + ": " + what + ": " + page.repair + "; no entry lost"));
        } else if (!page.interior()) {
          problems.add(page.repair);
        }
      }
      if (target != null && table && (page.broken || !problems.isEmpty())) {
        lenient.add(f.page()); // its cells may still be read, as rows the key index lists
      }
      if (page.broken) {
        Loss l = loss(losses, f, f.page(), true);
        l.problems.add(what + ": " + String.join("; ", problems));
        continue;
      }
      boolean descend = page.interior() && problems.isEmpty();
      Loss subtreeLoss = null;
      if (page.interior() && !descend) {
        subtreeLoss = loss(losses, f, f.page(), true);
        subtreeLoss.problems.add(
            what + ": " + String.join("; ", problems) + "; its subtree is not read");
        if (table) {
          continue; // a table's interior page holds no rows
        }
      }
      List<byte[]> taken = new ArrayList<>();
      List<String> rowProblems = new ArrayList<>();
      long failed = Math.max(0, page.cellCount - page.cells.size());
      List<Frame> children = new ArrayList<>();
      Long lo = f.lo();
      byte[] keyLo = f.keyLo();
      for (BTreePage.Cell c : page.cells) {
        String where = "cell " + c.index() + (table ? " (rowid " + c.rowid() + ")" : "");
        byte[] key = null;
        if (!page.interior() || !table) {
          byte[] payload = payload(page, c, rowProblems, where);
          Record r = payload == null ? null : Record.decode(payload);
          if (payload != null && r == null) {
            rowProblems.add(where + ": malformed record");
          }
          key = r == null ? null : rows.read(c.rowid(), r, rowProblems, where);
          if (key == null) {
            failed++;
          } else {
            taken.add(key);
          }
        }
        if (descend) {
          children.add(
              new Frame(
                  c.child(),
                  PageOwners.childClaim(f.page(), c.index()),
                  f.page(),
                  "cell " + c.index(),
                  lo,
                  table ? Long.valueOf(c.rowid()) : f.hi(),
                  keyLo,
                  table ? f.keyHi() : key));
          lo = table ? Long.valueOf(c.rowid()) : lo;
          keyLo = table ? keyLo : key;
        }
      }
      if (descend) {
        children.add(
            new Frame(
                page.rightChild,
                PageOwners.childClaim(f.page(), -1),
                f.page(),
                "right child",
                lo,
                f.hi(),
                keyLo,
                f.keyHi()));
        for (int i = children.size() - 1; i >= 0; i--) {
          stack.push(children.get(i));
        }
      }
      if (subtreeLoss != null || !problems.isEmpty() || failed > 0) {
        Loss l = subtreeLoss != null ? subtreeLoss : loss(losses, f, f.page(), false);
        if (subtreeLoss == null && !(problems.isEmpty() && rowProblems.isEmpty())) {
          List<String> all = new ArrayList<>(problems);
          all.addAll(rowProblems);
          l.problems.add(what + ": " + String.join("; ", all));
        } else if (subtreeLoss != null && !rowProblems.isEmpty()) {
          l.problems.add(String.join("; ", rowProblems));
        }
        l.failedRows += failed;
        for (byte[] key : taken) {
          l.read.add(ByteBuffer.wrap(key));
        }
      }
    }
  }

  /**
   * The schema walk's own refusals (no owners yet): outside the file, seen, or not a table page.
   */
  private String visit(Frame f, BitSet visited, boolean table) throws IOException {
    long p = f.page();
    if (p < 1 || p > db.present) {
      return "page " + p + ", outside the file";
    }
    if (visited.get((int) p)) {
      return "page " + p + " a second time";
    }
    int t = BTreePage.parse(p, db.read(p), db.usable, 0, false).type;
    if (!BTreePage.isType(t) || BTreePage.isTableType(t) != table) {
      return "page " + p + ", which is no " + (table ? "table" : "index") + " b-tree page";
    }
    visited.set((int) p);
    return null;
  }

  /** A new loss reported at page {@code at}, with the bounds the frame's parent gave it. */
  private static Loss loss(List<Loss> losses, Frame f, long at, boolean subtree) {
    Loss l = new Loss(at, subtree, f.lo(), f.hi(), f.keyLo(), f.keyHi());
    losses.add(l);
    return l;
  }

  /**
   * A cell's whole payload: its local part and its overflow chain, each overflow page checked (in
   * the file, not on the free list, not a tree page, not repeated) before it is read. Null (and a
   * problem) if the chain breaks.
   */
  byte[] payload(BTreePage page, BTreePage.Cell c, List<String> problems, String where)
      throws IOException {
    if (c.overflow() == 0) {
      return Arrays.copyOfRange(page.data, c.payloadAt(), c.payloadAt() + c.local());
    }
    long rest = c.payloadSize() - c.local();
    int per = db.usable - 4;
    long needed = (rest + per - 1) / per;
    if (needed > db.present) {
      problems.add(where + ": payload of " + c.payloadSize() + " bytes cannot fit the file");
      return null;
    }
    long[] chain = new long[(int) needed];
    Set<Long> seen = new HashSet<>();
    long next = c.overflow();
    for (int i = 0; i < needed; i++) {
      boolean tree = owners != null && owners.owner(next) > 0;
      if (next < 2
          || next > db.present
          || !seen.add(next)
          || tree
          || (owners != null && owners.isFree(next))) {
        problems.add(where + ": overflow chain reaches page " + next + ", which is not its own");
        return null;
      }
      chain[i] = next;
      next = BTreePage.u32(db.read(next, 0, 4), 0);
    }
    byte[] out = new byte[(int) c.payloadSize()];
    System.arraycopy(page.data, c.payloadAt(), out, 0, c.local());
    int at = c.local();
    for (long p : chain) {
      int n = Math.min(per, out.length - at);
      System.arraycopy(db.read(p, 4, n), 0, out, at, n);
      at += n;
    }
    return out;
  }
}
