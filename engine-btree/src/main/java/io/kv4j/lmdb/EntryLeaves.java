package io.kv4j.lmdb;

import static io.kv4j.lmdb.SalvageReport.range;
import static io.kv4j.lmdb.SalvageWalk.within;

import io.kv4j.KeyRange;
import io.kv4j.lmdb.SalvagePage.Node;
import io.kv4j.lmdb.SalvageReport.Loss;
import io.kv4j.lmdb.SalvageWalk.Pass;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The leaves of the user's entries as a salvage walk ({@link SalvageWalk}) reads them. The survey
 * and claims passes reach their overflow pages and, when the format is not known, count the values
 * whose checksum frame holds; the rescue checks each entry on its own (its node, flags, overflow
 * run, checksum frame and key order), hands the intact ones to the sink and reports each run of
 * lost ones with the range between the intact keys on either side.
 */
final class EntryLeaves {
  private final SalvageWalk walk;

  EntryLeaves(SalvageWalk walk) {
    this.walk = walk;
  }

  void dataSurvey(SalvageTree t, SalvagePage p, Node[] nodes) {
    for (Node nd : nodes) {
      if (nd.problem == null) {
        dataNode(t, p, nd);
      }
    }
  }

  /** Survey and claims: an entry's overflow pages are reached; its frame is counted. */
  void dataNode(SalvageTree t, SalvagePage p, Node nd) {
    if ((nd.flags & PageWalk.F_BIGDATA) != 0) {
      walk.overflows.overflowSurvey(t, p, nd);
    } else if (walk.pass == Pass.SURVEY && walk.framedGiven == null) {
      byte[] v = p.inline(nd);
      if (unframe(nd.key, v) != null) {
        walk.framesPassed++;
      } else {
        walk.framesFailed++;
      }
    }
  }

  /** The rescue of a leaf of user entries: each entry handed over or lost on its own. */
  void dataLeaf(SalvageTree t, SalvagePage p, Node[] nodes, byte[] lo, byte[] hi) {
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
        stored = walk.overflows.overflowValue(t, p, nd, w);
        if (stored == null) {
          why[i] = "node " + i + " of page " + p.pgno + ": " + w[0];
          continue;
        }
        runNote[i] = w[1];
      } else {
        stored = p.inline(nd);
      }
      if (walk.framed) {
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
    walk.report.layout(t, p, structural || anyOf(why), lo, hi);
    // Keys ascend through the tree; a store without frames has nothing else to check them by.
    byte[] last = t.lastKey;
    for (int i = 0; i < n; i++) {
      if (why[i] != null) {
        continue;
      }
      byte[] k = nodes[i].key;
      boolean order = last == null || Arrays.compareUnsigned(k, last) > 0;
      boolean inRange = walk.framed || within(k, lo, hi);
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
      walk.sink.entry(t.keyspace, nodes[i].key, values[i]);
      walk.report.handedOver++;
      if (runNote[i] != null) {
        walk.report.losses.add(
            new Loss(
                p.b.getLong(nodes[i].dataAt) * walk.psize,
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
      SalvageTree t, SalvagePage p, Node[] nodes, String[] why, int from, int to, KeyRange keys) {
    long start = Long.MAX_VALUE;
    long end = -1;
    for (int i = from; i < to; i++) {
      Node nd = nodes[i];
      boolean inPage = nd.at >= MetaPages.HEADER && nd.at + nd.extent <= walk.psize;
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
    walk.report.losses.add(new Loss(start, end - start, t.keyspace, to - from, keys, problem));
  }

  /**
   * Two slots of a page's node table that point at the same node: one of them is damaged, the one
   * whose key does not fit between its neighbours'; its own entry is lost.
   */
  private static void sameNode(SalvagePage p, Node[] nodes, String[] why) {
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
}
