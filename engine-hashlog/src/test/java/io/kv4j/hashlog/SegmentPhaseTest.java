package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A segment's life is one phase, moved only along the transitions its lifecycle allows. */
class SegmentPhaseTest {
  @TempDir Path tmp;

  /** Every legal transition; every other pair must be refused. */
  private static final Map<SegmentPhase, Set<SegmentPhase>> LEGAL =
      Map.of(
          SegmentPhase.ACTIVE, EnumSet.of(SegmentPhase.SEALED, SegmentPhase.CLOSED),
          SegmentPhase.SEALED, EnumSet.of(SegmentPhase.SEALING, SegmentPhase.COMPACTING),
          SegmentPhase.SEALING, EnumSet.of(SegmentPhase.SEALED),
          SegmentPhase.COMPACTING,
              EnumSet.of(SegmentPhase.SEALED, SegmentPhase.UNREADABLE, SegmentPhase.RETIRED),
          SegmentPhase.RETIRED, EnumSet.of(SegmentPhase.DROPPED),
          SegmentPhase.DROPPED, EnumSet.of(SegmentPhase.DELETED));

  private Segment active(int id) throws IOException {
    return Segment.create(Storage.NIO, id, tmp.resolve(Segment.fileName(id)), 4096, 0, false);
  }

  @Test
  void mayMoveTo_allowsExactlyTheLifecycleTransitions() {
    for (SegmentPhase from : SegmentPhase.values()) {
      for (SegmentPhase to : SegmentPhase.values()) {
        boolean legal = LEGAL.getOrDefault(from, Set.of()).contains(to);
        assertThat(from.mayMoveTo(to)).as(from + " -> " + to).isEqualTo(legal);
      }
    }
  }

  @Test
  void aCompactedSegment_goesThroughItsWholeLife() throws IOException {
    Segment s = active(16);
    try {
      assertThat(s.phase()).isEqualTo(SegmentPhase.ACTIVE);
      assertThat(s.isSealed()).isFalse();
      s.finish();
      assertThat(s.phase()).isEqualTo(SegmentPhase.SEALED);
      s.move(SegmentPhase.SEALING);
      assertThat(s.isSealed()).isTrue();
      s.move(SegmentPhase.SEALED);
      s.move(SegmentPhase.COMPACTING);
      s.move(SegmentPhase.RETIRED);
      assertThat(s.isRetired()).isTrue();
      assertThat(s.isDropped()).isFalse();
      s.move(SegmentPhase.DROPPED);
      assertThat(s.isDropped()).isTrue();
      assertThat(s.isDeleted()).isFalse();
      s.move(SegmentPhase.DELETED);
      assertThat(s.isDeleted()).isTrue();
      assertThat(s.isSealed()).isTrue();
    } finally {
      s.closeUnforced();
      Mappings.unmap(s.map);
    }
  }

  @Test
  void anIllegalMove_throwsAndLeavesThePhase() throws IOException {
    Segment s = active(32);
    try {
      assertThatThrownBy(() -> s.move(SegmentPhase.COMPACTING))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("ACTIVE")
          .hasMessageContaining("COMPACTING");
      assertThat(s.phase()).isEqualTo(SegmentPhase.ACTIVE);
      s.finish();
      s.move(SegmentPhase.SEALING);
      // A segment whose hint is still queued cannot be claimed by a compaction run.
      assertThatThrownBy(() -> s.move(SegmentPhase.COMPACTING))
          .isInstanceOf(IllegalStateException.class);
      assertThat(s.moveIf(SegmentPhase.SEALED, SegmentPhase.COMPACTING)).isFalse();
      assertThat(s.phase()).isEqualTo(SegmentPhase.SEALING);
    } finally {
      s.closeUnforced();
      Mappings.unmap(s.map);
    }
  }

  @Test
  void closingAnActiveSegment_closesIt_butASealedOneStaysSealed() throws IOException {
    Segment a = active(48);
    a.closeFile();
    assertThat(a.phase()).isEqualTo(SegmentPhase.CLOSED);
    assertThat(a.isSealed()).isFalse();
    assertThatThrownBy(() -> a.move(SegmentPhase.SEALED)).isInstanceOf(IllegalStateException.class);
    Mappings.unmap(a.map);

    Segment b = active(64);
    b.finish(); // sealed, its descriptor still open (as when the force after it failed)
    b.closeFile();
    assertThat(b.phase()).isEqualTo(SegmentPhase.SEALED);
    Mappings.unmap(b.map);
  }
}
