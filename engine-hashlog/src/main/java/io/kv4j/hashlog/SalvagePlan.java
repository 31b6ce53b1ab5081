package io.kv4j.hashlog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which segments a {@link Salvage} reads and what the manifest says of them (see {@link Salvage}'s
 * class comment): those recovery would load, without its refusals, each refusal reported instead.
 */
final class SalvagePlan {
  /** Segment ids to read, ascending; the last is the newest. */
  final List<Integer> load = new ArrayList<>();

  /** The recorded length of each listed sealed segment. */
  final Map<Integer, Integer> sealedLength = new HashMap<>();

  /** The manifest records a clean close with the newest segment as the active one. */
  boolean clean;

  /** With {@link #clean}: the newest segment's length at the close. */
  int newestLength = -1;

  private SalvagePlan() {}

  /**
   * Decides which of the segment files {@code present} in {@code dir} to read, given its manifest
   * {@code m} (null: none or damaged, every segment is read), reporting each listed segment that is
   * missing and each unlisted one recovery would refuse.
   */
  static SalvagePlan of(
      Storage storage, Path dir, List<Integer> present, Manifest m, DamageReport report) {
    SalvagePlan plan = new SalvagePlan();
    if (m == null) {
      plan.load.addAll(present);
      return plan;
    }
    TreeSet<Integer> rest = new TreeSet<>(present);
    for (int r : m.retired) {
      rest.remove(r); // compacted away; its deletion was interrupted
    }
    TreeSet<Integer> listed = new TreeSet<>();
    for (int i = 0; i < m.liveIds.length; i++) {
      listed.add(m.liveIds[i]);
      plan.sealedLength.put(m.liveIds[i], m.liveLengths[i]);
    }
    listed.add(m.active);
    for (int id : listed) {
      if (rest.contains(id)) {
        plan.load.add(id);
      } else {
        report.lost(
            dir.resolve(Segment.fileName(id)),
            -1,
            -1,
            -1,
            "the segment file is missing, but the manifest "
                + Manifest.path(dir)
                + " lists it"
                + (id == m.active ? " as the active (newest) segment" : "")
                + ": its records are lost");
      }
    }
    rest.removeAll(listed);
    int chainTop = m.active;
    for (int id : rest) {
      Path p = dir.resolve(Segment.fileName(id));
      ByteBuffer h;
      try {
        h = Recovery.readHeader(storage, p);
      } catch (IOException e) {
        report.lost(p, -1, -1, -1, "the segment file cannot be read: " + e);
        continue;
      }
      String bad = RecordCodec.checkFileHeader(h, RecordCodec.SEGMENT_MAGIC, id);
      if (bad == null && RecordCodec.isOutput(h)) {
        continue; // a compaction run that never committed: its victims are still listed
      }
      plan.load.add(id);
      if (m.clean || id < m.active) {
        report.lost(
            p,
            -1,
            -1,
            0,
            "the segment is not listed in the manifest "
                + Manifest.path(dir)
                + (m.clean ? " of a cleanly closed store" : "")
                + ", so it does not belong to the store as recorded; its records were read all the"
                + " same, in id order");
      } else if (bad == null) {
        int prev = RecordCodec.previousSegment(h);
        if (prev != chainTop) {
          report.lost(
              p,
              RecordCodec.PREVIOUS_AT,
              4,
              -1,
              "the segment was created after segment "
                  + Segment.fileName(prev)
                  + ", but the segment before it is "
                  + Segment.fileName(chainTop)
                  + ": a segment written since the manifest is missing, its records lost");
        }
        chainTop = id;
      }
    }
    plan.load.sort(null);
    int newest = plan.load.isEmpty() ? -1 : plan.load.get(plan.load.size() - 1);
    plan.clean = m.clean && newest == m.active;
    plan.newestLength = m.activeLength;
    return plan;
  }
}
