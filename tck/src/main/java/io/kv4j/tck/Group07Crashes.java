package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Group 7: crash. A child JVM (same classpath and module flags, engine opened from the config URI)
 * writes and acknowledges; the kit kills it with SIGKILL mid-stream, reopens, and checks every
 * acknowledged write and every batch.
 */
final class Group07Crashes extends RuleGroup {
  /**
   * Group 7's rules as JUnit tests, in rule order, each run in a new {@code Group07Crashes}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r7_1_killSyncKeepsAcknowledgedWrites() throws Exception {
      new Group07Crashes(this).required_r7_1_killSyncKeepsAcknowledgedWrites();
    }

    @Test
    default void required_r7_2_killBufferedKeepsAcknowledgedWrites() throws Exception {
      new Group07Crashes(this).required_r7_2_killBufferedKeepsAcknowledgedWrites();
    }

    @Test
    default void required_r7_3_crashNeverLeavesHalfABatch() throws Exception {
      new Group07Crashes(this).required_r7_3_crashNeverLeavesHalfABatch();
    }

    @Test
    default void required_r7_4_crashedStoreOpensAndKeepsNewWrites() throws Exception {
      new Group07Crashes(this).required_r7_4_crashedStoreOpensAndKeepsNewWrites();
    }

    @Test
    default void required_r7_5_killDuringOverwritesLeavesOldOrNewValue() throws Exception {
      new Group07Crashes(this).required_r7_5_killDuringOverwritesLeavesOldOrNewValue();
    }

    @Test
    default void required_r7_6_syncAcknowledgesOnlyAfterASync() throws Exception {
      new Group07Crashes(this).required_r7_6_syncAcknowledgesOnlyAfterASync();
    }

    @Test
    default void required_r7_7_crashNeverLeavesHalfAKeyspaceBatch() throws Exception {
      new Group07Crashes(this).required_r7_7_crashNeverLeavesHalfAKeyspaceBatch();
    }

    @Test
    default void required_r7_8_crashAfterACleanCloseKeepsEveryWrite() throws Exception {
      new Group07CleanCloseCrash((TckBase) this)
          .required_r7_8_crashAfterACleanCloseKeepsEveryWrite();
    }

    @Test
    default void required_r7_9_keyspaceSyncIsASync() throws Exception {
      new Group07KeyspaceSync((TckBase) this).required_r7_9_keyspaceSyncIsASync();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group07Crashes(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group07Crashes(TckBase kit) {
    super(kit);
  }

  void required_r7_1_killSyncKeepsAcknowledgedWrites() throws Exception {
    require("7.1", Feature.PERSISTENT);
    crashRounds("7.1", Durability.SYNC, this::verifyAcknowledged);
  }

  void required_r7_2_killBufferedKeepsAcknowledgedWrites() throws Exception {
    require("7.2", Feature.PERSISTENT);
    crashRounds("7.2", Durability.BUFFERED, this::verifyAcknowledged);
  }

  void required_r7_3_crashNeverLeavesHalfABatch() throws Exception {
    require("7.3", Feature.PERSISTENT);
    require("7.3", Feature.ATOMIC_BATCH);
    batchCrashRounds("7.3", false);
  }

  void required_r7_7_crashNeverLeavesHalfAKeyspaceBatch() throws Exception {
    require("7.7", Feature.PERSISTENT);
    require("7.7", Feature.ATOMIC_BATCH);
    require("7.7", Feature.KEYSPACE_BATCH);
    batchCrashRounds("7.7", true);
  }

  void required_r7_4_crashedStoreOpensAndKeepsNewWrites() throws Exception {
    require("7.4", Feature.PERSISTENT);
    crashRounds("7.4", null, this::verifyUsableAfterCrash);
  }

  /**
   * Rule 7.6: with SYNC, in an strace of the crash rules' child JVM, every acknowledgement MUST
   * follow a completed sync call made since the previous one (see {@link SyncTrace}).
   */
  void required_r7_6_syncAcknowledgesOnlyAfterASync() throws Exception {
    require("7.6", Feature.PERSISTENT);
    Assumptions.assumeTrue(
        dataLivesInLocationFiles(),
        "[7.6] skipped: engine '"
            + engine()
            + "' keeps its data on a server, whose syncs the kit cannot trace");
    List<String> strace = SyncTrace.command();
    Path trace = tempDir.resolve("sync-trace.strace");
    long seed = seed(76);
    long target = 40;
    runTracedChild(strace, trace, seed, target);
    long acks = SyncTrace.acksAfterSyncs(trace, seed);
    assertThat(acks)
        .as(rule("7.6", "the trace " + trace + " shows the child's acks (writes to fd 1)"))
        .isGreaterThanOrEqualTo(target);
  }

  /**
   * Rule 7.6's child JVM, writing with SYNC under strace into {@code trace}, read until it
   * acknowledged {@code target} writes, then killed ({@link SyncTrace#acksThenKill}).
   */
  private void runTracedChild(List<String> strace, Path trace, long seed, long target)
      throws IOException, InterruptedException {
    StoreConfig cfg = config(tempDir.resolve("sync-trace"), Durability.SYNC);
    List<String> prefix = new ArrayList<>(strace);
    prefix.addAll(List.of("-o", trace.toString(), "-e", SyncTrace.TRACED));
    try (ChildProcess c = child(prefix, CrashWorker.class, cfg.toUri(), Long.toString(seed))) {
      SyncTrace.acksThenKill("7.6", c, target, env().childTimeout(), "SYNC writes");
    }
  }

  void required_r7_5_killDuringOverwritesLeavesOldOrNewValue() throws Exception {
    require("7.5", Feature.PERSISTENT);
    long base = randomSeed();
    for (int round = 0; round < env().crashRounds(); round++) {
      overwriteRound(base, round);
    }
  }

  /**
   * How a crash round names itself in failure messages: durability, round, its seed and the base
   * seed that replays the rule.
   */
  static String roundContext(Durability d, int round, long seed, long base) {
    return d + " round " + round + ", seed " + seed + " (replay with -Dkv4j.tck.seed=" + base + ")";
  }

  /** What a crash rule checks in the store a killed child JVM left. */
  interface CrashCheck {
    void check(String ruleId, StoreConfig cfg, long seed, long lastAck, String ctx);
  }

  /**
   * Rounds of: a child JVM writes {@link CrashWorker}'s sequence with durability {@code d} (null:
   * SYNC and BUFFERED in turn) and is killed after a random number of acks; then {@code check}.
   */
  private void crashRounds(String ruleId, Durability d, CrashCheck check) throws Exception {
    long base = randomSeed();
    for (int round = 0; round < env().crashRounds(); round++) {
      long seed = base + round;
      Durability dr = d != null ? d : round % 2 == 0 ? Durability.SYNC : Durability.BUFFERED;
      Path dir = tempDir.resolve("crash-" + dr + "-" + round);
      StoreConfig cfg = config(dir, dr);
      long target = 20 + new SplittableRandom(seed).nextInt(400);
      long lastAck = runAndKill(ruleId, cfg, seed, target);
      String ctx = roundContext(dr, round, seed, base) + ", last ack " + lastAck;
      check.check(ruleId, cfg, seed, lastAck, ctx);
    }
  }

  /**
   * Runs {@link CrashWorker} with {@code cfg} and {@code seed} in a child JVM, kills it with
   * SIGKILL once it acknowledged {@code target} operations, and returns the last acknowledged
   * operation (also used by rule 10.14, which checks the image the kill left).
   */
  long runAndKill(String ruleId, StoreConfig cfg, long seed, long target) throws Exception {
    long lastAck = -1;
    String killed;
    try (ChildProcess c = child(CrashWorker.class, cfg.toUri(), Long.toString(seed))) {
      Process p = c.process();
      // Killed after 120 s with no line, or at the backstop: a slow child still acknowledging
      // goes on.
      try (ChildWatch watch = new ChildWatch(p, env().childTimeout())) {
        for (String line = readLine(ruleId, c, ChildWatch.LINE_WAIT);
            line != null;
            line = readLine(ruleId, c, ChildWatch.LINE_WAIT)) {
          watch.progress();
          if (line.startsWith("ack ")) {
            lastAck = Long.parseLong(line.substring(4).trim());
            if (lastAck >= target) {
              // SIGKILL on Unix: no shutdown hooks, no close. Through the handle, because
              // Process.destroyForcibly (and ChildProcess.kill) also closes our end of the pipe
              // and loses unread acks.
              p.toHandle().destroyForcibly();
            }
          }
        }
        // Reading to EOF collects every ack the child flushed before it died: each ack is flushed
        // before the next operation starts, so at most operation lastAck + 1 was in flight.
        killed = watch.killed();
      }
      if (lastAck < target) {
        await(ruleId, c, Duration.ofSeconds(30)); // its exit, and its stderr read to the end
        fail(
            rule(
                ruleId,
                "the child JVM stopped after "
                    + lastAck
                    + " acks, before being killed"
                    + (killed != null
                        ? " (it had not acknowledged " + target + " writes: " + killed + ", killed)"
                        : "")
                    + "; seed "
                    + seed
                    + "; "
                    + c.describe()));
      }
    }
    return lastAck;
  }

  /** 7.1 and 7.2: every acknowledged write is there, the one in flight absent or whole. */
  private void verifyAcknowledged(
      String ruleId, StoreConfig cfg, long seed, long lastAck, String ctx) {
    Store s = open(cfg);
    checkAcknowledged(ruleId, s, seed, lastAck, ctx);
    close(s);
  }

  /**
   * Every write {@link CrashWorker} acknowledged up to {@code lastAck} reads back from {@code s}
   * (the one in flight absent or whole, the later ones absent); also used by rule 10.14 on a crash
   * image opened read-only.
   */
  void checkAcknowledged(String ruleId, Store s, long seed, long lastAck, String ctx) {
    boolean batches = has(Feature.ATOMIC_BATCH);
    for (long n = 0; n <= lastAck + 1; n++) {
      if (CrashWorker.isBatch(n, batches)) {
        int present = 0;
        for (int i = 0; i < 8; i++) {
          byte[] v = s.get(CrashWorker.batchKey(n, i));
          if (v != null) {
            assertThat(v)
                .as(rule(ruleId, "batch " + n + " key " + i + " value; " + ctx))
                .isEqualTo(CrashWorker.value(seed, n));
            present++;
          }
        }
        if (n <= lastAck) {
          assertThat(present)
              .as(
                  rule(
                      ruleId,
                      "acknowledged batch "
                          + n
                          + " must be present, found "
                          + present
                          + " of 8 keys; "
                          + ctx))
              .isEqualTo(8);
        }
      } else {
        byte[] v = s.get(CrashWorker.putKey(n));
        boolean deletedByBatch =
            batches
                && CrashWorker.isBatch(n + 3, true)
                && s.get(CrashWorker.batchKey(n + 3, 0)) != null;
        if (deletedByBatch) {
          assertThat(v)
              .as(rule(ruleId, "k/" + n + " was deleted by batch " + (n + 3) + "; " + ctx))
              .isNull();
        } else if (n <= lastAck) {
          assertThat(v)
              .as(rule(ruleId, "acknowledged put k/" + n + " must survive kill -9; " + ctx))
              .isEqualTo(CrashWorker.value(seed, n));
        } else if (v != null) {
          assertThat(v)
              .as(rule(ruleId, "in-flight put k/" + n + " is absent or whole; " + ctx))
              .isEqualTo(CrashWorker.value(seed, n));
        }
      }
    }
    for (long n = lastAck + 2; n < lastAck + 6; n++) {
      assertThat(s.get(CrashWorker.putKey(n)))
          .as(rule(ruleId, "k/" + n + " was never written; " + ctx))
          .isNull();
    }
  }

  /** 7.4: the crashed store opens, takes puts, deletes and batches, and keeps them. */
  private void verifyUsableAfterCrash(
      String ruleId, StoreConfig cfg, long seed, long lastAck, String ctx) {
    Store s;
    try {
      s = open(cfg);
    } catch (RuntimeException e) {
      throw new AssertionError(
          rule(ruleId, "the crashed store must open, but the open threw " + e + "; " + ctx), e);
    }
    s.put(CrashWorker.putKey(-1), b("after crash"));
    s.delete(CrashWorker.putKey(0));
    boolean batches = has(Feature.ATOMIC_BATCH);
    if (batches) {
      s.write(new WriteBatch().put(b("b/after/0"), b("x")).put(b("b/after/1"), b("y")));
    }
    s = reopen(s);
    assertThat(s.get(CrashWorker.putKey(-1)))
        .as(rule(ruleId, "a put made after the crash survives a reopen; " + ctx))
        .isEqualTo(b("after crash"));
    assertThat(s.get(CrashWorker.putKey(0)))
        .as(rule(ruleId, "a delete made after the crash survives a reopen; " + ctx))
        .isNull();
    if (batches) {
      assertThat(List.of(hex(orEmpty(s.get(b("b/after/0")))), hex(orEmpty(s.get(b("b/after/1"))))))
          .as(rule(ruleId, "a batch written after the crash survives a reopen; " + ctx))
          .containsExactly(hex(b("x")), hex(b("y")));
    }
    close(s);
  }

  private static byte[] orEmpty(byte[] v) {
    return v == null ? b("(absent)") : v;
  }

  /**
   * One round of 7.5: the child's threads overwrite their keys until it is killed at a random
   * moment after every key was overwritten at least once; then each key must hold the value of its
   * thread's last acknowledged put to it, or of the one put that thread had in flight. An engine
   * that overwrites in place without keeping the old value until the new one is whole fails here
   * with a missing or torn value.
   */
  private void overwriteRound(long base, int round) throws Exception {
    long seed = base + round;
    String ctx =
        "round " + round + ", seed " + seed + " (replay with -Dkv4j.tck.seed=" + base + ")";
    Path dir = tempDir.resolve("overwrite-" + round);
    Path ackFile = tempDir.resolve("overwrite-" + round + ".acks");
    Files.write(ackFile, new byte[OverwriteWorker.fileSize()]);
    MappedByteBuffer acks = OverwriteWorker.map(ackFile);
    OverwriteWorker.reset(acks);
    StoreConfig cfg = config(dir, Durability.BUFFERED);
    long warm = 2L * OverwriteWorker.KEYS - 1;
    long delayNanos = TimeUnit.MILLISECONDS.toNanos(5 + new SplittableRandom(seed).nextInt(200));
    try (ChildProcess c =
        child(OverwriteWorker.class, cfg.toUri(), Long.toString(seed), ackFile.toString())) {
      long started = System.nanoTime();
      long lastProgress = started;
      long progress = -1;
      // Until every key was overwritten: wait on the child's exit (a failure), a millisecond at a
      // time, re-reading the mapped acknowledgements in between (they give nothing to block on).
      // An ack by any thread is progress: the child fails after 120 s with none, or at the
      // backstop (kv4j.tck.childTimeoutSeconds).
      while (OverwriteWorker.slowest(acks) < warm) {
        if (c.process().waitFor(1, TimeUnit.MILLISECONDS)) {
          await("7.5", c, Duration.ofSeconds(30)); // its streams, read to the end
          fail(
              rule(
                  "7.5",
                  "the child JVM stopped before being killed; " + ctx + "; " + c.describe()));
        }
        long now = OverwriteWorker.acknowledged(acks);
        if (now != progress) {
          progress = now;
          lastProgress = System.nanoTime();
        }
        String overdue = ChildWatch.overdue(started, lastProgress, env().childTimeout().toNanos());
        if (overdue != null) {
          fail(
              rule(
                  "7.5",
                  "a child thread acknowledged only "
                      + (OverwriteWorker.slowest(acks) + 1)
                      + " puts ("
                      + overdue
                      + "); "
                      + ctx
                      + "; "
                      + c.describe()));
        }
      }
      // The kill moment itself is the random part of the rule, not a condition to wait for.
      TimeUnit.NANOSECONDS.sleep(delayNanos);
      c.kill(); // SIGKILL: no shutdown hooks, no close
    }
    long[] last = new long[OverwriteWorker.THREADS];
    for (int t = 0; t < last.length; t++) {
      last[t] = OverwriteWorker.lastAck(acks, t);
    }
    ctx += ", last acks " + Arrays.toString(last);
    Store s = open(cfg);
    for (int t = 0; t < last.length; t++) {
      for (int k = 0; k < OverwriteWorker.KEYS; k++) {
        long acked = last[t] - Math.floorMod(last[t] - k, OverwriteWorker.KEYS);
        long inFlight = last[t] + 1;
        boolean mayBeInFlight = inFlight % OverwriteWorker.KEYS == k;
        byte[] key = OverwriteWorker.key(t, acked);
        byte[] v = s.get(key);
        if (!Arrays.equals(v, OverwriteWorker.value(seed, t, acked))
            && !(mayBeInFlight && Arrays.equals(v, OverwriteWorker.value(seed, t, inFlight)))) {
          fail(
              rule(
                  "7.5",
                  new String(key, StandardCharsets.UTF_8)
                      + " must hold the value of its last acknowledged put (operation "
                      + acked
                      + " of thread "
                      + t
                      + ")"
                      + (mayBeInFlight
                          ? " or of the put in flight (operation " + inFlight + ")"
                          : "")
                      + " after kill -9, but "
                      + describe(v, seed, t, acked)
                      + "; "
                      + ctx));
        }
      }
    }
    close(s);
  }

  /** What a key held instead of an allowed value, for the 7.5 failure message. */
  private static String describe(byte[] v, long seed, int thread, long acked) {
    if (v == null) {
      return "it is missing";
    }
    for (long n = acked - OverwriteWorker.KEYS;
        n >= 0 && n > acked - OverwriteWorker.PERIOD;
        n -= OverwriteWorker.KEYS) {
      if (Arrays.equals(v, OverwriteWorker.value(seed, thread, n))) {
        return "it holds the older value of operation " + n + " (an acknowledged put was lost)";
      }
    }
    if (v.length != OverwriteWorker.VALUE_LENGTH) {
      return "it holds " + v.length + " bytes instead of " + OverwriteWorker.VALUE_LENGTH;
    }
    return "it holds a torn value: "
        + OverwriteWorker.VALUE_LENGTH
        + " bytes, first differing from the acknowledged one at byte "
        + Arrays.mismatch(v, OverwriteWorker.value(seed, thread, acked));
  }

  /**
   * Rules 7.3 and 7.7: rounds ({@code SYNC} and {@code BUFFERED} in turn) of a child JVM writing
   * large batches ({@link BatchCrashWorker}: 64 puts of 16 KiB and 16 deletes each, spanning eight
   * keyspaces for 7.7), killed with SIGKILL inside a batch: after a few batches, once it says
   * {@code in n}, the kit waits until the child has written a seeded fraction (25–75%) of the bytes
   * the previous batch wrote (where the system reports them and the engine writes through write
   * calls; else that fraction of the time the previous batch took), then kills it. Each batch must
   * then be whole or absent, its deletes included, in every keyspace. Rounds go on until {@code
   * max(6, 3 × crashRounds)} kills landed while the batch was in flight (its write had not
   * returned), at most three times as many rounds: a batch too fast for the kill to land in it is
   * not held against the engine, but it is not counted either.
   */
  private void batchCrashRounds(String id, boolean spaces) throws Exception {
    long base = randomSeed();
    int need = Math.max(6, 3 * env().crashRounds());
    int inFlight = 0;
    int round = 0;
    for (; inFlight < need && round < 3 * need; round++) {
      long seed = base + round;
      Durability dr = round % 2 == 0 ? Durability.SYNC : Durability.BUFFERED;
      SplittableRandom rnd = new SplittableRandom(seed);
      long target = 3 + rnd.nextInt(5);
      double fraction = 0.25 + 0.5 * rnd.nextDouble();
      StoreConfig cfg = config(tempDir.resolve("batch-crash-" + round), dr);
      BatchKill kill = runAndKillInBatch(id, cfg, seed, spaces, target, fraction);
      long lastAck = kill.lastAck();
      if (kill.inFlight()) {
        inFlight++;
      }
      String ctx =
          roundContext(dr, round, seed, base) + ", " + kill.describe() + ", last ack " + lastAck;
      System.out.printf(
          "[%s] %s round %d: batch %d took %d us; %s, %s%n",
          id,
          dr,
          round,
          kill.aimedAt() - 1,
          kill.previousNanos() / 1000,
          kill.describe(),
          kill.inFlight() ? "before its write returned" : "after its write returned");
      checkBatchesWhole(id, cfg, seed, spaces, lastAck, ctx);
    }
    System.out.printf(
        "[%s] %d rounds, %d of them killed while a batch was in flight (%d wanted)%n",
        id, round, inFlight, need);
  }

  /** Below this many bytes written per batch, an engine writes through a mapping: aim by time. */
  private static final long MIN_AIM_BYTES = 256 << 10;

  /**
   * Where a kill of {@link BatchCrashWorker} landed: the last acknowledged batch, the batch the
   * kill was aimed at, the time from its {@code in} line to the kill, the previous batch's
   * duration, and (aimed by bytes) the bytes the child had written of the aimed batch at the kill
   * and the bytes the previous batch wrote, else -1 and -1.
   */
  private record BatchKill(
      long lastAck,
      long aimedAt,
      long delayNanos,
      long previousNanos,
      long writtenAtKill,
      long previousBytes) {

    boolean inFlight() {
      return lastAck < aimedAt;
    }

    String describe() {
      String into =
          writtenAtKill >= 0
              ? "after "
                  + writtenAtKill / 1024
                  + " KiB of its writes (the previous batch wrote "
                  + previousBytes / 1024
                  + " KiB), "
                  + delayNanos / 1000
                  + " us"
              : delayNanos / 1000 + " us (aimed by time)";
      return "killed " + into + " into batch " + aimedAt;
    }
  }

  /**
   * Runs {@link BatchCrashWorker} and kills it inside batch {@code target} or a later one, once it
   * says {@code in n}: where the system reports a process's written bytes ({@link WriteProgress})
   * and the engine writes its batches through write calls, when the child has written {@code
   * fraction} of the bytes the previous batch wrote (a moment between two of the engine's writes,
   * however busy the machine); else after {@code fraction} of the time the previous batch took.
   */
  private BatchKill runAndKillInBatch(
      String id, StoreConfig cfg, long seed, boolean spaces, long target, double fraction)
      throws Exception {
    long lastAck = -1;
    long lastTook = -1;
    long lastBytes = -1;
    BatchKill kill = null;
    String killed;
    try (ChildProcess c =
        child(
            BatchCrashWorker.class,
            cfg.toUri(),
            Long.toString(seed),
            spaces ? "keyspaces" : "plain")) {
      Process p = c.process();
      Optional<WriteProgress> progress = WriteProgress.of(p.pid());
      // Killed after 120 s with no line, or at the backstop (kv4j.tck.childTimeoutSeconds).
      try (ChildWatch watch = new ChildWatch(p, env().childTimeout())) {
        for (String line = readLine(id, c, ChildWatch.LINE_WAIT);
            line != null;
            line = readLine(id, c, ChildWatch.LINE_WAIT)) {
          watch.progress();
          String[] f = line.split(" ");
          if (f[0].equals("ack")) {
            lastAck = Long.parseLong(f[1]);
            lastTook = Long.parseLong(f[2]);
            lastBytes = Long.parseLong(f[3]);
          } else if (f[0].equals("in") && kill == null) {
            long n = Long.parseLong(f[1]);
            long before = Long.parseLong(f[2]);
            if (n >= target && lastTook > 0) {
              long start = System.nanoTime();
              long written = -1;
              if (progress.isPresent() && before >= 0 && lastBytes >= MIN_AIM_BYTES) {
                // The kill's moment inside the batch is the point of the rule, not a condition to
                // wait for: a share of the bytes the previous batch wrote. The deadline only ends
                // the wait for an engine that stopped writing through write calls.
                long goal = before + (long) (fraction * lastBytes);
                long deadline = start + Math.max(10 * lastTook, TimeUnit.SECONDS.toNanos(1));
                long now = before;
                while (now >= 0 && now < goal && System.nanoTime() < deadline) {
                  Thread.onSpinWait();
                  now = progress.get().written();
                }
                written = Math.max(0, now - before);
              } else {
                TimeUnit.NANOSECONDS.sleep((long) (fraction * lastTook));
              }
              p.toHandle().destroyForcibly(); // SIGKILL, through the handle: the pipes stay open
              kill =
                  new BatchKill(
                      -1,
                      n,
                      System.nanoTime() - start,
                      lastTook,
                      written,
                      written >= 0 ? lastBytes : -1);
            }
          }
        }
        killed = watch.killed();
      } finally {
        progress.ifPresent(WriteProgress::close);
      }
      if (kill == null) {
        await(id, c, Duration.ofSeconds(30));
        fail(
            rule(
                id,
                "the child JVM stopped after "
                    + lastAck
                    + " acknowledged batches, before being killed"
                    + (killed != null ? " (" + killed + ": killed)" : "")
                    + "; seed "
                    + seed
                    + "; "
                    + c.describe()));
      }
    }
    return new BatchKill(
        lastAck,
        kill.aimedAt(),
        kill.delayNanos(),
        kill.previousNanos(),
        kill.writtenAtKill(),
        kill.previousBytes());
  }

  /**
   * After the kill: every acknowledged batch whole; the one in flight whole or absent; none later.
   * Whole means its 64 puts with their values and its 16 deletes (of the first 16 keys of the batch
   * two before it), each in its keyspace.
   */
  private void checkBatchesWhole(
      String id, StoreConfig cfg, long seed, boolean spaces, long lastAck, String ctx) {
    Store s = open(cfg);
    Store[] in = new Store[BatchCrashWorker.KEYSPACES];
    for (int k = 0; k < in.length; k++) {
      String ks = BatchCrashWorker.keyspace(spaces, k);
      in[k] = ks == null ? s : s.keyspace(ks);
    }
    int n = (int) lastAck + 3;
    boolean[] applied = new boolean[n];
    int lasting = BatchCrashWorker.PUTS - BatchCrashWorker.DELETES; // keys no later batch deletes
    for (int m = 0; m < n; m++) {
      int present = 0;
      List<String> where = new ArrayList<>();
      for (int i = BatchCrashWorker.DELETES; i < BatchCrashWorker.PUTS; i++) {
        byte[] v = in[i % in.length].get(BatchCrashWorker.key(m, i));
        if (v != null) {
          assertThat(v)
              .as(rule(id, "batch " + m + " put c/" + m + "/" + i + " whole; " + ctx))
              .isEqualTo(BatchCrashWorker.value(seed, m, i));
          present++;
          String ks = BatchCrashWorker.keyspace(spaces, i);
          if (!where.contains(ks == null ? "default" : ks)) {
            where.add(ks == null ? "default" : ks);
          }
        }
      }
      if (present != 0 && present != lasting) {
        fail(
            rule(
                id,
                "batch "
                    + m
                    + " is half applied after kill -9: "
                    + present
                    + " of its "
                    + lasting
                    + " puts that no later batch deletes are there"
                    + (spaces ? " (in keyspaces " + where + " only)" : "")
                    + ", the others absent (half a batch applied); "
                    + ctx));
      }
      applied[m] = present == lasting;
      if (m <= lastAck && !applied[m]) {
        fail(rule(id, "acknowledged batch " + m + " is absent after kill -9; " + ctx));
      }
      if (m == lastAck + 2 && applied[m]) {
        fail(rule(id, "batch " + m + " was never written, yet its puts are there; " + ctx));
      }
    }
    // The first keys of batch m: put by it, deleted by batch m + 2.
    for (int m = 0; m < n; m++) {
      boolean deletedLater = m + 2 < n && applied[m + 2];
      boolean want = applied[m] && !deletedLater;
      int wrong = 0;
      for (int i = 0; i < BatchCrashWorker.DELETES; i++) {
        byte[] v = in[i % in.length].get(BatchCrashWorker.key(m, i));
        if (v != null) {
          assertThat(v)
              .as(rule(id, "batch " + m + " put c/" + m + "/" + i + " whole; " + ctx))
              .isEqualTo(BatchCrashWorker.value(seed, m, i));
        }
        if ((v != null) != want) {
          wrong++;
        }
      }
      if (wrong == 0) {
        continue;
      }
      if (!applied[m]) {
        fail(
            rule(
                id,
                "batch "
                    + m
                    + " is half applied after kill -9: its other puts are absent, but "
                    + wrong
                    + " of c/"
                    + m
                    + "/0.."
                    + (BatchCrashWorker.DELETES - 1)
                    + " are there (half a batch applied); "
                    + ctx));
      }
      fail(
          rule(
              id,
              "batch "
                  + (m + 2)
                  + "'s puts are "
                  + (deletedLater ? "all there" : "absent")
                  + ", but "
                  + (deletedLater ? BatchCrashWorker.DELETES - wrong : wrong)
                  + " of its "
                  + BatchCrashWorker.DELETES
                  + " deletes (of c/"
                  + m
                  + "/0.."
                  + (BatchCrashWorker.DELETES - 1)
                  + ") took effect (half a batch applied); "
                  + ctx));
    }
    close(s);
  }
}
