package io.kv4j.lmdb;

import static io.kv4j.lmdb.SalvageReport.consequence;

import io.kv4j.lmdb.SalvagePage.Node;
import io.kv4j.lmdb.SalvageReport.Loss;
import io.kv4j.lmdb.SalvageWalk.Pass;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * LMDB's free-page database as a salvage walk ({@link SalvageWalk}) reads it: the survey collects
 * the free pages into {@link SalvageWalk#free} (a pointer to one is damage); the rescue reports the
 * lists it cannot read, which hold no entries.
 */
final class FreePageList {
  private final SalvageWalk walk;

  FreePageList(SalvageWalk walk) {
    this.walk = walk;
  }

  /**
   * A leaf of the free-page database: each value lists free pages (a count, then that many page
   * numbers, 8 bytes each, descending). The survey collects them; a damaged list adds every page
   * number it holds that lies in range (more pages taken for free only loses entries, never returns
   * an old version).
   */
  void freeLeaf(SalvageTree t, SalvagePage p, Node[] nodes, byte[] lo, byte[] hi) {
    if (walk.pass == Pass.RESCUE) {
      boolean broken = false;
      for (Node nd : nodes) {
        broken |= nd.problem != null;
      }
      walk.report.layout(t, p, broken, lo, hi);
    }
    for (int i = 0; i < nodes.length; i++) {
      Node nd = nodes[i];
      t.seen++;
      String why = nd.problem;
      byte[] list = null;
      if (why == null) {
        if ((nd.flags & PageWalk.F_BIGDATA) != 0) {
          if (walk.pass == Pass.RESCUE) {
            String[] w = new String[2];
            list = walk.overflows.overflowValue(t, p, nd, w);
            why = list == null ? w[0] : null;
          } else {
            walk.overflows.overflowSurvey(t, p, nd);
            long ov = p.b.getLong(nd.dataAt);
            if (walk.overflows.overflowPages(t, ov, nd.lohi) > 0 && walk.pass == Pass.SURVEY) {
              list = walk.read(ov * walk.psize + MetaPages.HEADER, (int) nd.lohi).array();
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
      if (why != null && walk.pass == Pass.RESCUE) {
        walk.report.losses.add(
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
      if (f < 2 || f > walk.lastPage || f >= prev) {
        problem = problem != null ? problem : "a free-page list names page " + f + " out of order";
      }
      if (f >= 2 && f <= walk.lastPage) {
        if (walk.pass == Pass.SURVEY) {
          walk.free.set((int) f);
        }
        prev = f;
      }
    }
    return problem;
  }
}
