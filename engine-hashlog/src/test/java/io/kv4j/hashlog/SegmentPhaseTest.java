package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.hashlog.Segment.Phase;
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
  private static final Map<Phase, Set<Phase>> LEGAL =
      Map.of(
          Phase.ACTIVE, EnumSet.of(Phase.SEALED, Phase.CLOSED),
          Phase.SEALED, EnumSet.of(Phase.SEALING, Phase.COMPACTING),
          Phase.SEALING, EnumSet.of(Phase.SEALED),
          Phase.COMPACTING, EnumSet.of(Phase.SEALED, Phase.UNREADABLE, Phase.RETIRED),
          Phase.RETIRED, EnumSet.of(Phase.DROPPED),
          Phase.DROPPED, EnumSet.of(Phase.DELETED));

  private Segment active(int id) throws IOException {
    return Segment.create(Storage.NIO, id, tmp.resolve(Segment.fileName(id)), 4096, 0, false);
  }

  @Test
  void mayMoveTo_allowsExactlyTheLifecycleTransitions() {
    for (Phase from : Phase.values()) {
      for (Phase to : Phase.values()) {
        boolean legal = LEGAL.getOrDefault(from, Set.of()).contains(to);
        assertThat(from.mayMoveTo(to)).as(from + " -> " + to).isEqualTo(legal);
      }
    }
  }

  @Test
  void aCompactedSegment_goesThroughItsWholeLife() throws IOException {
    Segment s = active(16);
    try {
      assertThat(s.phase()).isEqualTo(Phase.ACTIVE);
      assertThat(s.isSealed()).isFalse();
      s.finish();
      assertThat(s.phase()).isEqualTo(Phase.SEALED);
      s.move(Phase.SEALING);
      assertThat(s.isSealed()).isTrue();
      s.move(Phase.SEALED);
      s.move(Phase.COMPACTING);
      s.move(Phase.RETIRED);
      assertThat(s.isRetired()).isTrue();
      assertThat(s.isDropped()).isFalse();
      s.move(Phase.DROPPED);
      assertThat(s.isDropped()).isTrue();
      assertThat(s.isDeleted()).isFalse();
      s.move(Phase.DELETED);
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
      assertThatThrownBy(() -> s.move(Phase.COMPACTING))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("ACTIVE")
          .hasMessageContaining("COMPACTING");
      assertThat(s.phase()).isEqualTo(Phase.ACTIVE);
      s.finish();
      s.move(Phase.SEALING);
      // A segment whose hint is still queued cannot be claimed by a compaction run.
      assertThatThrownBy(() -> s.move(Phase.COMPACTING)).isInstanceOf(IllegalStateException.class);
      assertThat(s.moveIf(Phase.SEALED, Phase.COMPACTING)).isFalse();
      assertThat(s.phase()).isEqualTo(Phase.SEALING);
    } finally {
      s.closeUnforced();
      Mappings.unmap(s.map);
    }
  }

  @Test
  void closingAnActiveSegment_closesIt_butASealedOneStaysSealed() throws IOException {
    Segment a = active(48);
    a.closeFile();
    assertThat(a.phase()).isEqualTo(Phase.CLOSED);
    assertThat(a.isSealed()).isFalse();
    assertThatThrownBy(() -> a.move(Phase.SEALED)).isInstanceOf(IllegalStateException.class);
    Mappings.unmap(a.map);

    Segment b = active(64);
    b.finish(); // sealed, its descriptor still open (as when the force after it failed)
    b.closeFile();
    assertThat(b.phase()).isEqualTo(Phase.SEALED);
    Mappings.unmap(b.map);
  }
}
