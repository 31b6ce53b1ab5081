package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Rule 7.9: a keyspace handle's {@code sync()} is a sync. A child JVM opened with {@code BUFFERED}
 * puts through a keyspace handle and calls the handle's {@code sync()} before each acknowledgement,
 * under {@code strace} ({@link SyncTrace}); every acknowledgement must follow a completed sync call
 * made since the previous one. The child is then killed with SIGKILL and every acknowledged write
 * must read back through the keyspace after a reopen.
 *
 * <p>A kill alone cannot see a handle whose {@code sync()} does nothing: {@code BUFFERED} writes
 * already survive a process kill (the page cache does). The trace sees it in every run: a round (a
 * put, the handle's sync, the ack) takes well under a millisecond, and an engine's own background
 * flush, which could fall between two acks by chance, runs far less often than {@value #ACKS}
 * rounds in a row.
 */
final class Group07KeyspaceSync extends RuleGroup {
  /** How many acknowledged rounds the child makes before it is killed. */
  static final long ACKS = 200;

  Group07KeyspaceSync(TckBase kit) {
    super(kit);
  }

  void required_r7_9_keyspaceSyncIsASync() throws Exception {
    require("7.9", Feature.PERSISTENT);
    require("7.9", Feature.KEYSPACES);
    Assumptions.assumeTrue(
        dataLivesInLocationFiles(),
        "[7.9] skipped: engine '"
            + engine()
            + "' keeps its data on a server, whose syncs the kit cannot trace");
    List<String> strace = SyncTrace.command("7.9");
    Path trace = tempDir.resolve("keyspace-sync.strace");
    long seed = randomSeed();
    StoreConfig cfg = config(tempDir.resolve("keyspace-sync"), Durability.BUFFERED);
    long lastAck = runTracedChild(strace, trace, cfg, seed);
    String ctx =
        "seed " + seed + " (replay with -Dkv4j.tck.seed=" + seed + "), last ack " + lastAck;
    long acks =
        SyncTrace.acksAfterSyncs(
            "7.9",
            "with BUFFERED, the put and the keyspace handle's sync() acknowledged as ack",
            "the handle's sync() made nothing durable",
            trace,
            seed);
    assertThat(acks)
        .as(rule("7.9", "the trace " + trace + " shows the child's acks (writes to fd 1)"))
        .isGreaterThanOrEqualTo(ACKS);
    Store s;
    try {
      s = open(cfg);
    } catch (RuntimeException e) {
      throw new AssertionError(
          rule("7.9", "the killed store must open, but the open threw " + e + "; " + ctx), e);
    }
    Store ks = s.keyspace(KeyspaceSyncWorker.KEYSPACE);
    for (long n = 0; n <= lastAck; n++) {
      assertThat(ks.get(KeyspaceSyncWorker.key(n)))
          .as(
              rule(
                  "7.9",
                  "put s/"
                      + n
                      + " through the keyspace handle, synced by the handle and acknowledged,"
                      + " survives the kill; "
                      + ctx))
          .isEqualTo(KeyspaceSyncWorker.value(seed, n));
    }
    close(s);
  }

  /**
   * The child under strace into {@code trace}, read until it acknowledged {@link #ACKS} rounds,
   * then killed ({@link SyncTrace#acksThenKill}); returns the last ack read.
   */
  private long runTracedChild(List<String> strace, Path trace, StoreConfig cfg, long seed)
      throws IOException, InterruptedException {
    List<String> prefix = new ArrayList<>(strace);
    prefix.addAll(List.of("-o", trace.toString(), "-e", SyncTrace.TRACED));
    try (ChildProcess c =
        child(prefix, KeyspaceSyncWorker.class, cfg.toUri(), Long.toString(seed))) {
      return SyncTrace.acksThenKill(
          "7.9",
          c,
          ACKS,
          env().childTimeout(),
          "puts synced through a keyspace handle (seed " + seed + ")");
    }
  }
}
