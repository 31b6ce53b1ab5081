package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a power loss could find after each file a compaction deletes (issue #27). A victim whose
 * records a {@code sync()} promised may only be deleted once the output holding its live records,
 * the directory and the newer writes that superseded the rest are forced; a victim never forced may
 * go with nothing forced (BUFFERED promises kill -9 only, which keeps the page cache). The order of
 * forces and deletions is traced by the store's {@link FaultyStorage}.
 */
class CompactionDurabilityTest {
  @TempDir Path dir;

  private final List<String> trace = Collections.synchronizedList(new ArrayList<>());
  private final FaultyStorage storage = new FaultyStorage();

  private HashLogStore open(Durability d) {
    return HashLogProvider.open(
        TestStores.config(dir, d)
            .option("segment-size", "4KiB")
            .option("compaction-threads", "0")
            .build(),
        HashLogProvider.seededHasher(42),
        storage);
  }

  /** Puts 8 keys (about 2.7 KiB) into the first segment; with {@code sync}, syncs it then. */
  private static void fillFirst(HashLogStore s, boolean sync) {
    for (int i = 0; i < 8; i++) {
      s.put(bytes("a" + i), ("first-" + i + "-").repeat(40).getBytes());
    }
    assertThat(s.activeSegment().id).isEqualTo(1);
    if (sync) {
      s.sync(); // forces the first segment while it is still the active one
    }
  }

  /** Rolls the first segment (unforced in BUFFERED), then overwrites half of its keys. */
  private static void rollAndOverwrite(HashLogStore s) {
    for (int i = 0; s.activeSegment().id == 1; i++) {
      s.put(bytes("f" + i), new byte[300]);
    }
    for (int i = 0; i < 4; i++) {
      s.put(bytes("a" + i), ("second-" + i + "-").repeat(40).getBytes());
    }
  }

  /** Compacts segment 1 with the trace on; returns the output's id. */
  private int compactFirst(HashLogStore s) {
    Set<Integer> before = ids(s);
    storage.trace(trace::add);
    try {
      s.compactor.compactSegments(Set.of(1));
    } finally {
      storage.trace(null);
    }
    Set<Integer> added = ids(s);
    added.removeAll(before);
    assertThat(added).as("one output (trace %s)", trace).hasSize(1);
    assertThat(ids(s)).doesNotContain(1);
    return added.iterator().next();
  }

  private static Set<Integer> ids(HashLogStore s) {
    Set<Integer> out = new HashSet<>();
    for (Segment g : s.segments()) {
      if (!g.isRetired()) {
        out.add(g.id);
      }
    }
    return out;
  }

  private int indexOf(String event, Path p) {
    return trace.indexOf(event + " " + p);
  }

  /** The output (as itself or its temporary file) was forced before {@code at} in the trace. */
  private boolean outputForcedBefore(int output, int at) {
    Path f = dir.resolve(Segment.fileName(output));
    Path tmp = dir.resolve(Segment.fileName(output) + ".tmp");
    int i = indexOf("force", f);
    int j = indexOf("force", tmp);
    return (i >= 0 && i < at) || (j >= 0 && j < at);
  }

  /**
   * The synced victim, segment 1, was deleted only after its output and the directory were forced,
   * and after segment {@code newest} (the overwrites) was, unless {@code newest} is -1: its writes
   * were durable before the run (a SYNC store, a sync after them).
   */
  private void assertSafeDeletion(int output, int newest) {
    int deleted = indexOf("delete", dir.resolve(Segment.fileName(1)));
    assertThat(deleted).as("victim deleted (trace %s)", trace).isPositive();
    assertThat(outputForcedBefore(output, deleted))
        .as("output %s forced before the synced victim's deletion (trace %s)", output, trace)
        .isTrue();
    int dirForced = indexOf("force", dir);
    assertThat(dirForced)
        .as("directory forced before the deletion (trace %s)", trace)
        .isBetween(0, deleted);
    if (newest < 0) {
      return;
    }
    int newer = indexOf("force", dir.resolve(Segment.fileName(newest)));
    assertThat(newer)
        .as("the overwrites (segment %d) forced before the deletion (trace %s)", newest, trace)
        .isBetween(0, deleted);
  }

  /**
   * Fills segment 1 (synced while active if {@code syncWhileActive}), rolls it, overwrites half of
   * its keys, lets {@code prepare} act on the store, compacts segment 1 and checks that the
   * deletion was safe; with {@code runMustForceNewer} the overwrites were not durable before the
   * run, so the run must force them.
   */
  private void compactSyncedVictim(
      Durability d,
      boolean syncWhileActive,
      Consumer<HashLogStore> prepare,
      boolean runMustForceNewer) {
    try (HashLogStore s = open(d)) {
      fillFirst(s, syncWhileActive);
      rollAndOverwrite(s);
      int newest = s.activeSegment().id;
      prepare.accept(s);
      int output = compactFirst(s);
      assertSafeDeletion(output, runMustForceNewer ? newest : -1);
    }
  }

  @Test
  void compaction_victimSyncedWhileActive_forcesOutputAndNewerWritesBeforeDeleting() {
    compactSyncedVictim(Durability.BUFFERED, true, s -> {}, true);
  }

  @Test
  void compaction_victimSyncedAfterItsSeal_forcesOutputBeforeDeleting() {
    // The sync forces the sealed first segment from the queue of unforced ones, and the overwrites.
    compactSyncedVictim(Durability.BUFFERED, false, HashLogStore::sync, false);
  }

  @Test
  void compaction_syncDuringTheRun_forcesOutputBeforeDeleting() {
    // The run starts with no victim forced; a sync while it copies forces the victim (and the
    // newer writes), and returns before the output exists: the run must notice.
    Consumer<HashLogStore> syncDuringCopy =
        s ->
            s.compactor.hook =
                step -> {
                  if (step == Compactor.Step.OUTPUT_WRITTEN) {
                    s.sync();
                  }
                };
    compactSyncedVictim(Durability.BUFFERED, false, syncDuringCopy, true);
  }

  @Test
  void compaction_syncStore_forcesOutputBeforeDeleting() {
    compactSyncedVictim(Durability.SYNC, false, s -> {}, false);
  }

  @Test
  void compaction_victimNeverForced_forcesNoSegment() {
    try (HashLogStore s = open(Durability.BUFFERED)) {
      fillFirst(s, false);
      rollAndOverwrite(s);
      compactFirst(s);
      assertThat(indexOf("delete", dir.resolve(Segment.fileName(1)))).isNotNegative();
      for (String e : trace) {
        assertThat(e)
            .as("no segment data forced for victims nothing was promised of (trace %s)", trace)
            .doesNotStartWith("force " + dir.resolve("seg-"));
      }
    }
    try (HashLogStore s = open(Durability.BUFFERED)) {
      for (int i = 0; i < 8; i++) {
        byte[] want = ((i < 4 ? "second-" : "first-") + i + "-").repeat(40).getBytes();
        assertThat(s.get(bytes("a" + i))).as("a%d after reopen", i).isEqualTo(want);
      }
    }
  }
}
