package io.kv4j.hashlog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which sealed segments a compaction run takes, chosen from the per-segment byte accounting alone
 * (no data is read to choose): garbage ratio = dead bytes / data bytes (tombstones count as garbage
 * in the oldest segment, where they can be dropped), highest first, then oldest first, until their
 * live and tombstone bytes fill one segment; and for each victim whether its tombstones may be
 * dropped. Split from {@link Compactor}, which decides when to run and reserves output ids.
 */
final class Victims {
  /** What a run compacts. */
  enum Mode {
    /** Segments above the garbage threshold (background threads). */
    BACKGROUND,
    /** Every segment with any garbage ({@code Store.compact()}). */
    ALL,
    /** Exactly the given segments (tests). */
    ONLY
  }

  /** Map from victim to whether its tombstones may be dropped. */
  static final class DropMap extends HashMap<Segment, Boolean> {
    private static final long serialVersionUID = 1L;
  }

  private final Segments segments;
  private final double garbageThreshold;
  private final long budget;

  Victims(Segments segments, double garbageThreshold, long segmentSize) {
    this.segments = segments;
    this.garbageThreshold = garbageThreshold;
    this.budget = segmentSize;
  }

  /**
   * Chooses victims (ascending id). Caller holds the write lock.
   *
   * @param only the ids for {@link Mode#ONLY}
   * @param reserved output ids of runs in progress (they count as older live segments)
   * @param dropTombs filled: for each victim, whether its tombstones may be dropped
   */
  List<Segment> pick(Mode mode, Set<Integer> only, Set<Integer> reserved, DropMap dropTombs) {
    Segment act = segments.active;
    Segment[] all = segments.all();
    int oldest = Integer.MAX_VALUE;
    List<Segment> candidates = new ArrayList<>();
    for (Segment s : all) {
      if (s.isRetired()) {
        continue;
      }
      oldest = Math.min(oldest, s.id);
      if (s != act && s.phase() == SegmentPhase.SEALED) {
        candidates.add(s);
      }
    }
    for (int r : reserved) {
      oldest = Math.min(oldest, r);
    }
    List<Segment> chosen = new ArrayList<>();
    if (mode == Mode.ONLY) {
      for (Segment s : candidates) {
        if (only.contains(s.id)) {
          chosen.add(s);
        }
      }
    } else {
      chosen = byGarbage(mode, candidates, oldest);
    }
    chosen.sort(Comparator.comparingInt((Segment s) -> s.id));
    Set<Integer> victimIds = new HashSet<>();
    for (Segment s : chosen) {
      victimIds.add(s.id);
    }
    for (Segment v : chosen) {
      dropTombs.put(v, mayDropTombstones(v, all, victimIds, reserved));
    }
    return chosen;
  }

  /**
   * The candidates above the garbage threshold (any garbage for {@link Mode#ALL}), highest ratio
   * first, until their live and tombstone bytes fill one segment; empty segments go along.
   */
  private List<Segment> byGarbage(Mode mode, List<Segment> candidates, int oldest) {
    Map<Segment, Double> ratio = new HashMap<>();
    for (Segment s : candidates) {
      long data = s.end - RecordCodec.FILE_HEADER;
      long garbage = s.deadBytes() + (s.id == oldest ? s.tombstoneBytes : 0);
      ratio.put(s, data <= 0 ? 1.0 : (double) garbage / data);
    }
    double min = mode == Mode.ALL ? Double.MIN_VALUE : garbageThreshold;
    List<Segment> order = new ArrayList<>();
    List<Segment> empty = new ArrayList<>();
    for (Segment s : candidates) {
      if (s.end <= RecordCodec.FILE_HEADER) {
        empty.add(s);
      } else if (ratio.get(s) >= min) {
        order.add(s);
      }
    }
    order.sort(
        Comparator.comparingDouble((Segment s) -> -ratio.get(s))
            .thenComparingInt((Segment s) -> s.id));
    long used = 0;
    List<Segment> chosen = new ArrayList<>();
    for (Segment s : order) {
      long keep = s.liveBytes + s.tombstoneBytes;
      if (!chosen.isEmpty() && used + keep > budget) {
        continue;
      }
      chosen.add(s);
      used += keep;
    }
    if (!chosen.isEmpty() || mode == Mode.ALL) {
      chosen.addAll(empty); // free to delete alongside a real run
    }
    return chosen;
  }

  /**
   * Whether victim {@code v}'s tombstones may be dropped: every live segment (or reserved output)
   * older than it is a victim of the same run.
   */
  private static boolean mayDropTombstones(
      Segment v, Segment[] all, Set<Integer> victimIds, Set<Integer> reserved) {
    for (Segment s : all) {
      if (!s.isRetired() && s.id < v.id && !victimIds.contains(s.id)) {
        return false;
      }
    }
    for (int r : reserved) {
      if (r < v.id) {
        return false;
      }
    }
    return true;
  }
}
