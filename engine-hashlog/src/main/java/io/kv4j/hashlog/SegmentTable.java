package io.kv4j.hashlog;

import java.util.Arrays;

/**
 * The installed segments by id: an immutable open-addressing table that the store replaces on each
 * install or removal (copy on write), so readers resolve a location's segment without a lock.
 *
 * <p>Why not an array indexed by id: ids only grow (every roll and every compaction output takes a
 * new one), while the live segments are a few dozen spread over an ever wider range (cold data can
 * sit in an old segment for days). An array by id grows with the highest id, and copying it on each
 * change under the writer lock (and scanning it to choose victims) costs time proportional to how
 * long the store has been written, not to how much it holds. This table is sized by the number of
 * installed segments (load factor at most 1/2), so both stay proportional to the segment count.
 */
final class SegmentTable {
  static final SegmentTable EMPTY = new SegmentTable(new Segment[0]);

  private final Segment[] all; // installed segments, ascending id, no nulls
  private final Segment[] slots;
  private final int[] ids; // ids[i] is slots[i].id: a probe compares ids without touching a Segment
  private final int mask;

  private SegmentTable(Segment[] all) {
    this.all = all;
    int capacity = Integer.highestOneBit(Math.max(4, all.length) * 2 - 1) << 1; // >= 2n, >= 8
    slots = new Segment[capacity];
    ids = new int[capacity];
    mask = capacity - 1;
    for (Segment s : all) {
      int i = slot(s.id);
      while (slots[i] != null) {
        i = (i + 1) & mask;
      }
      slots[i] = s;
      ids[i] = s.id;
    }
  }

  private int slot(int id) {
    int h = id * 0x9E3779B9; // Fibonacci hashing: consecutive ids spread over the table
    return (h ^ (h >>> 16)) & mask;
  }

  /** The segment with this id, or null. */
  Segment get(int id) {
    int i = slot(id);
    while (true) {
      Segment s = slots[i];
      if (s == null || ids[i] == id) {
        return s;
      }
      i = (i + 1) & mask;
    }
  }

  /** The installed segments in ascending id order; callers must not modify the array. */
  Segment[] all() {
    return all;
  }

  int size() {
    return all.length;
  }

  /** This table with {@code seg} added, replacing any segment with the same id. */
  SegmentTable with(Segment seg) {
    int at = find(seg.id);
    Segment[] a;
    if (at >= 0) {
      a = all.clone();
      a[at] = seg;
    } else {
      int ins = -at - 1;
      a = new Segment[all.length + 1];
      System.arraycopy(all, 0, a, 0, ins);
      a[ins] = seg;
      System.arraycopy(all, ins, a, ins + 1, all.length - ins);
    }
    return new SegmentTable(a);
  }

  /** This table without the segment of {@code seg}'s id (this table if there is none). */
  SegmentTable without(Segment seg) {
    int at = find(seg.id);
    if (at < 0) {
      return this;
    }
    Segment[] a = new Segment[all.length - 1];
    System.arraycopy(all, 0, a, 0, at);
    System.arraycopy(all, at + 1, a, at, all.length - at - 1);
    return a.length == 0 ? EMPTY : new SegmentTable(a);
  }

  /** Index of {@code id} in {@link #all}, or {@code -(insertion point) - 1}. */
  private int find(int id) {
    int lo = 0;
    int hi = all.length - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = Integer.compare(all[mid].id, id);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -(lo + 1);
  }

  @Override
  public String toString() {
    return Arrays.toString(Arrays.stream(all).mapToInt(s -> s.id).toArray());
  }
}
