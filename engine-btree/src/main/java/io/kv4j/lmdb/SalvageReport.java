package io.kv4j.lmdb;

import io.kv4j.KeyRange;
import io.kv4j.lmdb.SalvageTree.Kind;
import java.util.ArrayList;
import java.util.List;

/**
 * What a salvage walk ({@link SalvageWalk}) lost and handed over: the damaged regions it builds
 * ({@link Loss}), the count of entries handed to the sink, and how each region is worded. A region
 * whose lost count is not known when it is found is settled once its tree is walked ({@link
 * #finish}).
 */
final class SalvageReport {
  /** A damaged region being built; its lost count may be settled once its tree is walked. */
  static final class Loss {
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

  final List<Loss> losses = new ArrayList<>();
  long handedOver;
  private final int psize;

  SalvageReport(int psize) {
    this.psize = psize;
  }

  /**
   * Settles a walked tree's count: its record says how many entries its pages should hold. {@code
   * leaves}: the depth of the tree's leaves, -1 when unknown.
   */
  void finish(SalvageTree t, int leaves) {
    long remaining = t.db.entries() - t.seen;
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

  void add(SalvageTree t, Loss l) {
    losses.add(l);
    if (l.lost < 0) {
      t.unknown.add(l);
    }
  }

  static String user(SalvageTree t) {
    return t.kind == Kind.DATA ? t.keyspace : null;
  }

  static String consequence(SalvageTree t) {
    switch (t.kind) {
      case FREE:
        return "; in LMDB's free-page list, which holds no entries";
      case NAMES:
        return "; the keyspaces recorded there are lost";
      default:
        return "";
    }
  }

  /**
   * Reports (rescue pass) what the page's header says wrongly (see {@link SalvagePage}): fields its
   * nodes make up for lose nothing; a page whose nodes fill no node area, with no damaged node to
   * explain it, may hide entries (its count is settled with the tree's).
   */
  void layout(SalvageTree t, SalvagePage p, boolean explained, byte[] lo, byte[] hi) {
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

  static KeyRange range(SalvageTree t, byte[] lo, boolean loInclusive, byte[] hi) {
    return t.kind == Kind.DATA ? range(lo, loInclusive, hi) : null;
  }

  static KeyRange range(byte[] lo, boolean loInclusive, byte[] hi) {
    KeyRange r = KeyRange.all();
    if (lo != null) {
      r = loInclusive ? r.gte(lo) : r.gt(lo);
    }
    return hi == null ? r : r.lt(hi);
  }
}
