package io.kv4j.lmdb;

import io.kv4j.lmdb.SalvagePage.Node;
import io.kv4j.lmdb.SalvageTree.Kind;
import io.kv4j.lmdb.SalvageWalk.Claim;
import io.kv4j.lmdb.SalvageWalk.Pass;
import java.nio.ByteBuffer;
import java.util.ArrayList;

/**
 * Values held in overflow pages, as a salvage walk ({@link SalvageWalk}) reads them: a run of pages
 * whose first page's header records how many it spans. The survey and claims passes mark the pages
 * a run reaches; the rescue reads its value once every page checks out. A run whose header is
 * damaged is still read when a checksum frame vouches for the value (see {@link #overflowRun}).
 */
final class OverflowRuns {
  private static final long MAX_VALUE = (long) LmdbProvider.MAX_VALUE_SIZE + ValueFrame.HEADER;

  private final SalvageWalk walk;

  OverflowRuns(SalvageWalk walk) {
    this.walk = walk;
  }

  void overflowSurvey(SalvageTree t, SalvagePage p, Node nd) {
    long ov = p.b.getLong(nd.dataAt);
    long pages = overflowPages(t, ov, nd.lohi);
    if (pages < 0) {
      return;
    }
    for (long q = ov; q < ov + pages; q++) {
      int i = (int) q;
      if (walk.pass == Pass.SURVEY) {
        if (walk.reached.get(i)) {
          walk.conflicted.set(i);
        }
        walk.reached.set(i);
      } else if (walk.conflicted.get(i)) {
        walk.claims
            .computeIfAbsent(q, k -> new ArrayList<>())
            .add(new Claim(t.id, p.pgno, nd.index, 1));
      }
    }
  }

  /**
   * The pages of the overflow run at {@code ov} holding {@code size} bytes, or -1 if it is not a
   * sane run (see {@link #overflowRun}).
   */
  long overflowPages(SalvageTree t, long ov, long size) {
    return overflowRun(
        ov, size, t.kind != Kind.FREE && walk.framedGiven != Boolean.FALSE, new String[2]);
  }

  private long overflowRun(long ov, long size, boolean lenient, String[] why) {
    String bad = walk.pointerProblem(ov);
    if (bad != null) {
      why[0] = "its value's first page " + ov + " is " + bad;
      return -1;
    }
    if (size > MAX_VALUE) {
      why[0] = "its value's size (" + size + " bytes) is damaged";
      return -1;
    }
    ByteBuffer head = walk.read(ov * walk.psize, MetaPages.HEADER);
    long pages = head.getInt(12) & 0xFFFFFFFFL;
    long needed = (MetaPages.HEADER - 1 + size) / walk.psize + 1;
    boolean overflowPage =
        head.getLong(0) == ov && (head.getShort(10) & PageWalk.TYPE_MASK) == PageWalk.P_OVERFLOW;
    if (!overflowPage
        || pages < needed
        || ov + pages - 1 > walk.lastPage
        || (ov + pages) * walk.psize > walk.fileSize) {
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
      if (!lenient
          || ov + needed - 1 > walk.lastPage
          || (ov + needed) * walk.psize > walk.fileSize) {
        why[0] = header;
        return -1;
      }
      // A checksum frame vouches for the value: read the pages its size needs.
      why[1] = header + " (its header is damaged)";
      pages = needed;
    }
    int f = walk.free.nextSetBit((int) ov);
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
  byte[] overflowValue(SalvageTree t, SalvagePage p, Node nd, String[] why) {
    long ov = p.b.getLong(nd.dataAt);
    long pages = overflowRun(ov, nd.lohi, t.kind == Kind.DATA && walk.framed, why);
    if (pages < 0) {
      return null;
    }
    for (long q = ov; q < ov + pages; q++) {
      int i = (int) q;
      if (walk.conflicted.get(i) && !walk.wins(q, t.id, p.pgno, nd.index)) {
        why[0] = "its value's page " + q + " is referred to from elsewhere as well";
        return null;
      }
      if (walk.visited.get(i)) {
        why[0] = "its value's page " + q + " was reached before";
        return null;
      }
    }
    walk.visited.set((int) ov, (int) (ov + pages));
    ByteBuffer v = walk.read(ov * walk.psize + MetaPages.HEADER, (int) nd.lohi);
    return v.array();
  }
}
