package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Group 10: lifecycle, locking, info and damaged locations. */
final class Group10Lifecycle extends RuleGroup {
  /**
   * Group 10's rules as JUnit tests, in rule order, each run in a new {@code Group10Lifecycle};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r10_1_closeIsIdempotent() {
      new Group10Lifecycle(this).required_r10_1_closeIsIdempotent();
    }

    @Test
    default void required_r10_2_useAfterCloseIsStoreClosedException() {
      new Group10Lifecycle(this).required_r10_2_useAfterCloseIsStoreClosedException();
    }

    @Test
    default void required_r10_3_secondOpenIsLocked() {
      new Group10Lifecycle(this).required_r10_3_secondOpenIsLocked();
    }

    @Test
    default void required_r10_4_lockReleasedOnClose() {
      new Group10Lifecycle(this).required_r10_4_lockReleasedOnClose();
    }

    @Test
    default void required_r10_5_readOnlyRefusesWrites() {
      new Group10Lifecycle(this).required_r10_5_readOnlyRefusesWrites();
    }

    @Test
    default void required_r10_6_missingLocationWithoutCreate() {
      new Group10Lifecycle(this).required_r10_6_missingLocationWithoutCreate();
    }

    @Test
    default void required_r10_7_corruptLocationIsReported() throws IOException {
      new CorruptLocation((TckBase) this).required_r10_7_corruptLocationIsReported();
    }

    @Test
    default void required_r10_8_infoDescribesTheStore() {
      new Group10Lifecycle(this).required_r10_8_infoDescribesTheStore();
    }

    @Test
    default void required_r10_9_statsCountKeys() {
      new Group10Lifecycle(this).required_r10_9_statsCountKeys();
    }

    @Test
    default void required_r10_10_compactKeepsEveryEntry() {
      new Group10Lifecycle(this).required_r10_10_compactKeepsEveryEntry();
    }

    @Test
    default void required_r10_11_secondProcessIsLocked() throws Exception {
      new Group10Lifecycle(this).required_r10_11_secondProcessIsLocked();
    }

    @Test
    default void required_r10_12_compactDuringWritesLosesNothing() throws Exception {
      new Group10Lifecycle(this).required_r10_12_compactDuringWritesLosesNothing();
    }

    @Test
    default void required_r10_13_verifyDuringWritesRaisesNoFalseAlarm() throws Exception {
      new Group10Lifecycle(this).required_r10_13_verifyDuringWritesRaisesNoFalseAlarm();
    }

    @Test
    default void required_r10_14_verifyOnACrashImageRaisesNoFalseAlarm() throws Exception {
      new Group10Lifecycle(this).required_r10_14_verifyOnACrashImageRaisesNoFalseAlarm();
    }

    @Test
    default void required_r10_15_backgroundFailureIsVisible() {
      new Group10Lifecycle(this).required_r10_15_backgroundFailureIsVisible();
    }

    @Test
    default void required_r10_16_callsRacingCloseAnswerOrThrowStoreClosed() throws Exception {
      new CloseRace((TckBase) this).required_r10_16_callsRacingCloseAnswerOrThrowStoreClosed();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group10Lifecycle(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group10Lifecycle(TckBase kit) {
    super(kit);
  }

  void required_r10_1_closeIsIdempotent() {
    Store s = open();
    s.put(b("a"), b("1"));
    s.close();
    s.close();
    close(s);
  }

  /**
   * 10.2: after {@code close()} every method of the store, of a snapshot taken from it and of a
   * keyspace handle opened from it throws {@link StoreClosedException} (each where the engine
   * declares its feature); {@code info()} stays readable, closing the snapshot and the handle
   * throws nothing, and a refused backup creates nothing.
   */
  void required_r10_2_useAfterCloseIsStoreClosedException() {
    Store s = open();
    s.put(b("a"), b("1"));
    Store ks = has(Feature.KEYSPACES) ? s.keyspace("users") : null;
    if (ks != null) {
      ks.put(b("a"), b("k"));
    }
    Snapshot snap = has(Feature.SNAPSHOT_READ) ? s.snapshot() : null;
    Snapshot ksSnap = ks != null && snap != null ? ks.snapshot() : null;
    Path target = tempDir.resolve("backup-of-a-closed-store");
    close(s);
    Map<String, Runnable> calls = new LinkedHashMap<>();
    storeCalls("", s, calls);
    calls.put("verify()", s::verify);
    if (has(Feature.BACKUP)) {
      calls.put("backup(target)", () -> s.backup(target));
    }
    if (has(Feature.KEYSPACES)) {
      calls.put("keyspace(\"users\")", () -> s.keyspace("users"));
      calls.put("keyspace(\"fresh\")", () -> s.keyspace("fresh"));
      calls.put("keyspaces()", s::keyspaces);
      calls.put("dropKeyspace(\"users\")", () -> s.dropKeyspace("users"));
      storeCalls("keyspace handle's ", ks, calls);
      calls.put("keyspace handle's verify()", ks::verify);
    }
    if (snap != null) {
      snapshotCalls("snapshot's ", snap, calls);
    }
    if (ksSnap != null) {
      snapshotCalls("keyspace handle's snapshot's ", ksSnap, calls);
    }
    for (Map.Entry<String, Runnable> call : calls.entrySet()) {
      assertThat(thrown(call.getValue()::run))
          .as(
              rule(
                  "10.2",
                  call.getKey()
                      + " after the store was closed throws StoreClosedException (it must neither"
                      + " answer nor fail otherwise)"))
          .isInstanceOf(StoreClosedException.class);
    }
    assertThat(s.info().engine())
        .as(rule("10.2", "info() stays readable after close"))
        .isEqualTo(engine());
    if (has(Feature.BACKUP)) {
      assertThat(target)
          .as(rule("10.2", "backup() refused on a closed store created nothing"))
          .doesNotExist();
    }
    for (AutoCloseable c : java.util.Arrays.asList(snap, ksSnap, ks)) {
      if (c != null) {
        assertThat(thrown(c::close))
            .as(
                rule(
                    "10.2",
                    "closing a snapshot or keyspace handle after its store closed throws nothing"))
            .isNull();
      }
    }
  }

  /**
   * The calls of 10.2 on a store or keyspace handle {@code s}, named with {@code prefix}: every
   * {@code Store} method but {@code info} and {@code close}, each where its feature is declared.
   */
  void storeCalls(String prefix, Store s, Map<String, Runnable> calls) {
    calls.put(prefix + "get", () -> s.get(b("a")));
    calls.put(prefix + "contains", () -> s.contains(b("a")));
    calls.put(prefix + "getAll", () -> s.getAll(List.of(b("a"), b("b"))));
    calls.put(prefix + "put", () -> s.put(b("a"), b("2")));
    calls.put(prefix + "delete", () -> s.delete(b("a")));
    calls.put(prefix + "sync()", s::sync);
    calls.put(prefix + "stats()", s::stats);
    calls.put(prefix + "compact()", s::compact);
    if (has(Feature.ORDERED_SCAN)) {
      calls.put(prefix + "scan", () -> s.scan(KeyRange.all()));
    }
    if (has(Feature.ATOMIC_BATCH)) {
      calls.put(prefix + "write(batch)", () -> s.write(new WriteBatch().put(b("a"), b("3"))));
    }
    if (has(Feature.CONDITIONAL_WRITE)) {
      calls.put(prefix + "putIfAbsent", () -> s.putIfAbsent(b("n"), b("1")));
      calls.put(prefix + "replace", () -> s.replace(b("a"), b("1"), b("4")));
      calls.put(prefix + "delete(key, expected)", () -> s.delete(b("a"), b("1")));
    }
    if (has(Feature.CONDITIONAL_BATCH)) {
      calls.put(
          prefix + "writeIf",
          () -> s.writeIf(new WriteBatch().expect(b("a"), b("1")).put(b("a"), b("5"))));
    }
    if (has(Feature.SNAPSHOT_READ)) {
      calls.put(prefix + "snapshot()", s::snapshot);
    }
  }

  /** The calls of 10.2 on a snapshot whose store was closed. */
  private void snapshotCalls(String prefix, Snapshot snap, Map<String, Runnable> calls) {
    calls.put(prefix + "get", () -> snap.get(b("a")));
    calls.put(prefix + "getAll", () -> snap.getAll(List.of(b("a"), b("b"))));
    if (has(Feature.ORDERED_SCAN)) {
      calls.put(prefix + "scan", () -> snap.scan(KeyRange.all()));
    }
  }

  void required_r10_3_secondOpenIsLocked() {
    require("10.3", Feature.PERSISTENT);
    Store s = open();
    s.put(b("a"), b("1"));
    StoreConfig again = config(Durability.BUFFERED);
    assertThat(thrown(() -> Stores.open(again).close()))
        .as(
            rule(
                "10.3",
                "a second open of the same location fails with StoreLockedException naming it"))
        .isInstanceOf(StoreLockedException.class)
        .hasMessageContaining(dir().getFileName().toString());
    assertThat(s.get(b("a")))
        .as(rule("10.3", "the failed open disturbed nothing"))
        .isEqualTo(b("1"));
  }

  void required_r10_11_secondProcessIsLocked() throws Exception {
    require("10.11", Feature.PERSISTENT);
    org.junit.jupiter.api.Assumptions.assumeTrue(
        dataLivesInLocationFiles(),
        "[10.11] skipped: engine '"
            + engine()
            + "' keeps its data on a server, not in a directory");
    Store s = open();
    s.put(b("a"), b("1"));
    try (ChildProcess c = child(LockProbe.class, configOf(s).toUri())) {
      c.process().getOutputStream().close();
      boolean ended = c.process().waitFor(120, java.util.concurrent.TimeUnit.SECONDS);
      if (!ended) {
        c.kill();
      }
      await("10.11", c, java.time.Duration.ofSeconds(30)); // its streams, read to the end
      String out = c.stdout().trim();
      assertThat(ended)
          .as(
              rule(
                  "10.11",
                  "the child JVM opening the same location ended within 120 s; " + c.describe()))
          .isTrue();
      assertThat(out)
          .as(
              rule(
                  "10.11",
                  "an open of the same location from another process (a child JVM) while this one"
                      + " holds it must fail with StoreLockedException naming the location (a lock"
                      + " that guards only its own JVM lets two processes write one store); child"
                      + " printed '"
                      + out
                      + "'; "
                      + c.describe()))
          .startsWith("locked ")
          .contains(dir().getFileName().toString());
    }
    assertThat(s.get(b("a")))
        .as(rule("10.11", "the other process's failed open disturbed nothing"))
        .isEqualTo(b("1"));
  }

  /**
   * Rule 10.12: compactions run while writers put and delete their own keys MUST lose nothing;
   * after a reopen every key holds its last write (see {@link CompactionRace}).
   */
  void required_r10_12_compactDuringWritesLosesNothing() throws Exception {
    require("10.12", Feature.PERSISTENT);
    Store s = open();
    int writers = Math.max(1, env().stressThreads() - 1);
    int rounds = Math.max(3, env().stressOps() / 500);
    int cap = Math.max(1000, env().stressOps() * 20); // writes per writer, at most
    CompactionRace race = new CompactionRace(s, writers, rounds, cap);
    List<Throwable> errors = runThreads("10.12", writers + 1, race::run);
    assertThat(errors).as(rule("10.12", "no thread failed")).isEmpty();
    race.checkEveryWrite(reopen(s));
  }

  /**
   * 10.13: {@code verify()} called again and again while other threads write (puts, overwrites,
   * deletes and, with ATOMIC_BATCH, batches) must never throw: a healthy store is never reported
   * damaged because it was written during the check. Every writer reads its own writes back, the
   * store's {@code stats().health()} stays OK, and afterwards every key holds its last write (also
   * after a reopen, with PERSISTENT) and {@code verify()} passes.
   */
  void required_r10_13_verifyDuringWritesRaisesNoFalseAlarm() throws Exception {
    Store s = open();
    int writers = Math.max(1, env().threads());
    int keysPerWriter = 64;
    int verifies = Math.max(20, env().stressOps() / 100);
    assertThat(s.stats().health())
        .as(rule("10.13", "stats().health() of a new store"))
        .isEqualTo(StoreStats.Health.OK);
    java.util.concurrent.atomic.AtomicBoolean done =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicInteger writing =
        new java.util.concurrent.atomic.AtomicInteger(writers);
    byte[][][] last = new byte[writers][keysPerWriter][];
    List<Throwable> errors =
        runThreads(
            "10.13",
            writers + 1,
            t -> {
              if (t == writers) {
                try {
                  verifyWhileWriting(s, verifies, writes, writing);
                } finally {
                  done.set(true);
                }
                return;
              }
              try {
                writeUntil(s, t, writers, last[t], done, writes);
              } finally {
                writing.decrementAndGet();
              }
            });
    noThreadFailed("10.13", errors);
    Store after = s;
    for (String when : has(Feature.PERSISTENT) ? List.of("", " after a reopen") : List.of("")) {
      if (!when.isEmpty()) {
        after = reopen(after);
      }
      Store r = after;
      run("10.13", () -> "verify()" + when + ", the writers stopped", r::verify);
      for (int t = 0; t < writers; t++) {
        for (int i = 0; i < keysPerWriter; i++) {
          assertThat(r.get(key((long) i * writers + t)))
              .as(rule("10.13", "writer " + t + "'s key " + i + " holds its last write" + when))
              .isEqualTo(last[t][i]);
        }
      }
    }
  }

  /**
   * 10.13: {@code n} verify() calls, each after a write since the last, while writers are {@code
   * writing}; the health checked after each.
   */
  private void verifyWhileWriting(
      Store s,
      int n,
      java.util.concurrent.atomic.AtomicLong writes,
      java.util.concurrent.atomic.AtomicInteger writing) {
    long seen = 0;
    for (int v = 0; v < n; v++) {
      while (writes.get() == seen) {
        if (writing.get() == 0) {
          return; // the writers failed: their failure is the rule's
        }
        Thread.yield(); // a verify() with no write since the last one proves nothing new
      }
      seen = writes.get();
      int round = v;
      run(
          "10.13",
          () -> "verify() #" + round + " while " + writes.get() + " writes were made",
          s::verify);
      StoreStats st = call("10.13", () -> "stats() after verify() #" + round, s::stats);
      assertThat(st.health())
          .as(
              rule(
                  "10.13",
                  "stats().health() of a healthy store being written, after verify() #"
                      + round
                      + " (problem: "
                      + st.problem()
                      + ")"))
          .isEqualTo(StoreStats.Health.OK);
    }
  }

  /**
   * 10.13: writer {@code t} of {@code writers} puts, overwrites and deletes its own 64 keys (keys i
   * x writers + t, interleaved with the other writers'), and with ATOMIC_BATCH writes some of them
   * in batches, reading each back, until {@code done}; {@code last} keeps each key's last write.
   */
  private void writeUntil(
      Store s,
      int t,
      int writers,
      byte[][] last,
      java.util.concurrent.atomic.AtomicBoolean done,
      java.util.concurrent.atomic.AtomicLong writes) {
    SplittableRandom rnd = new SplittableRandom(seed(1013) + t);
    for (int op = 0; !done.get(); op++) {
      int i = rnd.nextInt(last.length);
      byte[] k = key((long) i * writers + t);
      int kind = rnd.nextInt(8);
      int index = op;
      if (kind == 0) {
        run("10.13", () -> "writer " + t + " op #" + index + " (delete)", () -> s.delete(k));
        last[i] = null;
      } else if (kind == 1 && has(Feature.ATOMIC_BATCH)) {
        int j = (i + 1) % last.length;
        byte[] v = value(rnd, 1 + rnd.nextInt(200));
        WriteBatch batch =
            new WriteBatch().put(k, v).delete(key((long) j * writers + t)).put(k, v.clone());
        run("10.13", () -> "writer " + t + " op #" + index + " (batch)", () -> s.write(batch));
        last[i] = v;
        last[j] = null;
      } else {
        byte[] v = value(rnd, 1 + rnd.nextInt(200));
        run("10.13", () -> "writer " + t + " op #" + index + " (put)", () -> s.put(k, v));
        last[i] = v;
      }
      writes.incrementAndGet();
      assertThat(call("10.13", () -> "writer " + t + " op #" + index + " (get)", () -> s.get(k)))
          .as(rule("10.13", "writer " + t + " reads back its write #" + index))
          .isEqualTo(last[i]);
    }
  }

  /**
   * 10.14: a crash image (the directory a SIGKILLed writer left, copied as a filesystem snapshot
   * would give it) is a healthy store. Opened read-only, {@code verify()} must not throw, every
   * acknowledged SYNC write reads back, and the open and the check change no file; opened
   * read-write (recovered), {@code verify()} passes.
   */
  void required_r10_14_verifyOnACrashImageRaisesNoFalseAlarm() throws Exception {
    require("10.14", Feature.PERSISTENT);
    requireDataInLocationFiles("10.14");
    Group07Crashes crashes = new Group07Crashes(kit);
    long base = randomSeed();
    for (int round = 0; round < env().crashRounds(); round++) {
      long seed = base + round;
      Durability d = round % 2 == 0 ? Durability.SYNC : Durability.BUFFERED;
      Path image = tempDir.resolve("crash-image-" + d + "-" + round);
      StoreConfig cfg = config(image, d);
      long target = 20 + new SplittableRandom(seed).nextInt(400);
      long lastAck = crashes.runAndKill("10.14", cfg, seed, target);
      String ctx = Group07Crashes.roundContext(d, round, seed, base) + ", last ack " + lastAck;
      Path copy = tempDir.resolve("crash-image-" + d + "-" + round + "-copy");
      copyTree(image, copy);
      Map<String, String> before = fingerprints(copy);
      Store ro;
      try {
        ro = open(config(copy, d).toBuilder().readOnly(true).build());
      } catch (RuntimeException e) {
        throw engineThrew("10.14", "opening a copy of the crash image read-only; " + ctx, e);
      }
      run("10.14", () -> "verify() of the crash image opened read-only; " + ctx, ro::verify);
      if (d == Durability.SYNC) {
        crashes.checkAcknowledged("10.14", ro, seed, lastAck, "read-only, " + ctx);
      }
      close(ro);
      Map<String, String> after = fingerprints(copy);
      assertThat(changes(before, after))
          .as(
              rule(
                  "10.14",
                  "the files of the crash image (lock and diagnostic files aside) after a"
                      + " read-only open and verify(): a read-only open changes nothing; "
                      + ctx))
          .isEmpty();
      Store rw;
      try {
        rw = open(cfg);
      } catch (RuntimeException e) {
        throw engineThrew("10.14", "opening the crash image read-write; " + ctx, e);
      }
      run("10.14", () -> "verify() of the crash image opened read-write; " + ctx, rw::verify);
      close(rw);
    }
  }

  /** Copies the directory tree {@code from} to {@code to}, as a filesystem snapshot would. */
  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : all.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (Files.isRegularFile(p)) {
          Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }

  /**
   * Each data file under {@code dir} (the lock files, the engine's included, and the diagnostic
   * files left out), by path relative to it, with its size and SHA-256.
   */
  private Map<String, String> fingerprints(Path dir) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.filter(Files::isRegularFile).toList()) {
        String name = dir.relativize(p).toString().replace(java.io.File.separatorChar, '/');
        if (p.getFileName().toString().equals(DirectoryLock.FILE_NAME)
            || isDiagnosticFile(name)
            || isLockFile(name)) {
          continue;
        }
        java.security.MessageDigest sha;
        try {
          sha = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
          throw new IllegalStateException("every JVM has SHA-256", e);
        }
        out.put(name, Files.size(p) + " bytes, sha-256 " + hex(sha.digest(Files.readAllBytes(p))));
      }
    }
    return out;
  }

  /** The files created, deleted or changed between two {@link #fingerprints}. */
  private static List<String> changes(Map<String, String> before, Map<String, String> after) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, String> e : before.entrySet()) {
      String now = after.get(e.getKey());
      if (now == null) {
        out.add(e.getKey() + " deleted");
      } else if (!now.equals(e.getValue())) {
        out.add(e.getKey() + " changed from " + e.getValue() + " to " + now);
      }
    }
    for (Map.Entry<String, String> e : after.entrySet()) {
      if (!before.containsKey(e.getKey())) {
        out.add(e.getKey() + " created (" + e.getValue() + ")");
      }
    }
    return out;
  }

  /**
   * 10.15: once the engine's background work fails ({@link StoreTck#failBackgroundWork}), the
   * failure shows: {@code stats().health()} leaves OK within the kit's thread timeout ({@code
   * kv4j.tck.timeoutSeconds}: the rule goes on as soon as it changed, so only a silent engine waits
   * it out, and a slow machine fails no correct one) while the kit writes and syncs, with a problem
   * text, and does not come back to OK; {@code verify()} throws a {@link StoreException} (as {@code
   * AbstractStore}'s does for a store that is not healthy); the data written before reads back.
   */
  void required_r10_15_backgroundFailureIsVisible() {
    Store s = open(Durability.BUFFERED);
    Map<Integer, byte[]> written = new TreeMap<>();
    SplittableRandom rnd = new SplittableRandom(seed(1015));
    for (int i = 0; i < 100; i++) {
      byte[] v = value(rnd, 1 + rnd.nextInt(300));
      s.put(key(i), v);
      written.put(i, v);
    }
    s.sync();
    assertThat(s.stats().health())
        .as(rule("10.15", "stats().health() before the background work was made to fail"))
        .isEqualTo(StoreStats.Health.OK);
    boolean failing = failBackgroundWork(s);
    org.junit.jupiter.api.Assumptions.assumeTrue(
        failing,
        "[10.15] skipped: engine '"
            + engine()
            + "' has no background work the kit can fail: failBackgroundWork(Store) returned"
            + " false (an engine with a compactor, flusher or sealer overrides"
            + " StoreTck.failBackgroundWork in its TCK test to make it fail)");
    long wait = threadTimeout().toNanos();
    long deadline = System.nanoTime() + wait;
    long[] churned = {0};
    StoreStats st = s.stats();
    while (st.health() == StoreStats.Health.OK && System.nanoTime() < deadline) {
      churn(s, rnd, churned);
      st = s.stats();
    }
    StoreStats seen = st;
    assertThat(seen.health())
        .as(
            rule(
                "10.15",
                "stats().health() within "
                    + java.time.Duration.ofNanos(wait).toSeconds()
                    + " s of failBackgroundWork (kv4j.tck.timeoutSeconds), while "
                    + churned[0]
                    + " writes and syncs were made: a background failure the health never shows"
                    + " is silent"))
        .isNotEqualTo(StoreStats.Health.OK);
    assertThat(seen.problem())
        .as(rule("10.15", "the problem text of a " + seen.health() + " store says what failed"))
        .isNotBlank();
    assertThat(thrown(s::verify))
        .as(
            rule(
                "10.15",
                "verify() of a store whose stats() say "
                    + seen.health()
                    + " ("
                    + seen.problem()
                    + ") throws a StoreException, as AbstractStore's does: it must not pass"
                    + " silently"))
        .isInstanceOf(StoreException.class);
    // The failure stays visible while the kit goes on writing: no flapping back to OK.
    long until = System.nanoTime() + java.time.Duration.ofMillis(500).toNanos();
    for (int round = 0; round < 20 || System.nanoTime() < until; round++) {
      churn(s, rnd, churned);
      StoreStats now = s.stats();
      assertThat(now.health())
          .as(
              rule(
                  "10.15",
                  "stats().health() "
                      + round
                      + " rounds of writes after it said "
                      + seen.health()
                      + " ("
                      + seen.problem()
                      + "): nothing recovered, so it must not say OK again"))
          .isNotEqualTo(StoreStats.Health.OK);
    }
    for (Map.Entry<Integer, byte[]> e : written.entrySet()) {
      int i = e.getKey();
      assertThat(
              call(
                  "10.15",
                  () -> "get of key " + i + " written before the failure",
                  () -> s.get(key(i))))
          .as(
              rule(
                  "10.15",
                  "key "
                      + i
                      + ", written before the background failure, reads back from the "
                      + s.stats().health()
                      + " store (reads go on)"))
          .isEqualTo(e.getValue());
    }
  }

  /**
   * 10.15: one round of work for the background: 16 overwrites of 32 keys, then a sync. The first
   * {@value #CHURN_BIG_WRITES} writes carry 16 KiB values (32 MiB of garbage: segments to seal and
   * compact), later ones 100 bytes with a millisecond's pause after the round, so that waiting for
   * a silent engine does not fill the disk. A write or sync the store refuses (StoreException: it
   * failed, and must say so in its health, checked next) ends the round.
   */
  private static void churn(Store s, SplittableRandom rnd, long[] count) {
    boolean big = count[0] < CHURN_BIG_WRITES;
    try {
      for (int i = 0; i < 16; i++) {
        s.put(key(1000 + rnd.nextInt(32)), value(rnd, big ? 16 << 10 : 100));
        count[0]++;
      }
      s.sync();
      count[0]++;
    } catch (StoreException refused) {
      // A store failed until reopened refuses writes; its health must say so (checked next).
    }
    if (!big) {
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
    }
  }

  /** 10.15: how many of the kit's writes carry 16 KiB values. */
  private static final long CHURN_BIG_WRITES = 2048;

  void required_r10_4_lockReleasedOnClose() {
    require("10.4", Feature.PERSISTENT);
    Store s = open();
    s.put(b("a"), b("1"));
    close(s);
    Store again = open();
    assertThat(again.get(b("a")))
        .as(rule("10.4", "after close the location opens again"))
        .isEqualTo(b("1"));
  }

  void required_r10_5_readOnlyRefusesWrites() {
    require("10.5", Feature.PERSISTENT);
    Store s = open();
    s.put(b("a"), b("1"));
    close(s);
    Store ro = open(config(Durability.BUFFERED).toBuilder().readOnly(true).build());
    assertThat(ro.info().readOnly()).as(rule("10.5", "info says read-only")).isTrue();
    assertThat(ro.get(b("a"))).as(rule("10.5", "a read-only store reads")).isEqualTo(b("1"));
    assertThat(thrown(() -> ro.put(b("b"), b("2"))))
        .as(rule("10.5", "a read-only store refuses put with UnsupportedOperationException"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(thrown(() -> ro.delete(b("a"))))
        .as(rule("10.5", "a read-only store refuses delete with UnsupportedOperationException"))
        .isInstanceOf(UnsupportedOperationException.class);
    close(ro);
    Store rw = open();
    assertThat(rw.get(b("a"))).as(rule("10.5", "nothing changed")).isEqualTo(b("1"));
    assertThat(rw.get(b("b")))
        .as(rule("10.5", "the put the read-only store refused stored nothing"))
        .isNull();
  }

  void required_r10_6_missingLocationWithoutCreate() {
    require("10.6", Feature.PERSISTENT);
    Path missing = tempDir.resolve("does-not-exist");
    StoreConfig c = config(missing, Durability.BUFFERED).toBuilder().createIfMissing(false).build();
    assertThat(thrown(() -> Stores.open(c).close()))
        .as(rule("10.6", "create-if-missing=false on a missing location is a StoreException"))
        .isInstanceOf(StoreException.class);
    assertThat(missing).as(rule("10.6", "and creates nothing")).doesNotExist();
  }

  void required_r10_8_infoDescribesTheStore() {
    Store s = open(Durability.SYNC);
    StoreInfo info = s.info();
    assertThat(info.engine())
        .as(rule("10.8", "info names the provider's id"))
        .isEqualTo(provider().id());
    assertThat(info.features())
        .as(rule("10.8", "info declares the provider's features"))
        .isEqualTo(provider().features());
    assertThat(info.durability())
        .as(rule("10.8", "info reports the configured durability"))
        .isEqualTo(Durability.SYNC);
    assertThat(info.readOnly())
        .as(rule("10.8", "info of a store opened read-write says not read-only"))
        .isFalse();
    assertThat(info.location()).as(rule("10.8", "info names a location")).isNotBlank();
  }

  void required_r10_9_statsCountKeys() {
    Store s = open();
    for (int i = 0; i < 300; i++) {
      s.put(key(i), b("v"));
    }
    for (int i = 0; i < 100; i++) {
      s.delete(key(i));
    }
    var st = s.stats();
    if (st.keyCountExact()) {
      assertThat(st.keyCount())
          .as(rule("10.9", "an exact key count counts live keys"))
          .isEqualTo(200);
    } else {
      assertThat(st.keyCount())
          .as(rule("10.9", "an estimated key count is non-negative"))
          .isNotNegative();
    }
    assertThat(st.diskBytes()).as(rule("10.9", "disk bytes are non-negative")).isNotNegative();
    if (has(Feature.PERSISTENT)) {
      s.sync();
      assertThat(s.stats().diskBytes())
          .as(rule("10.9", "a persistent store with data occupies disk"))
          .isPositive();
    }
  }

  void required_r10_10_compactKeepsEveryEntry() {
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    SplittableRandom rnd = new SplittableRandom(1010);
    // Three rounds of overwrites and deletes leave the engine garbage to reclaim.
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 1000; i++) {
        byte[] v = value(rnd, rnd.nextInt(200));
        s.put(key(i), v);
        model.put(key(i), v);
      }
      for (int i = round; i < 1000; i += 3) {
        s.delete(key(i));
        model.remove(key(i));
      }
    }
    byte[] longest = new byte[s.info().limits().maxKeySize()];
    Arrays.fill(longest, (byte) 0xff);
    for (byte[][] kv : new byte[][][] {{b("empty"), new byte[0]}, {longest, b("longest")}}) {
      s.put(kv[0], kv[1]);
      model.put(kv[0], kv[1]);
    }
    List<Entry> seen = new ArrayList<>();
    Cursor open = null;
    if (has(Feature.ORDERED_SCAN)) {
      open = s.scan(KeyRange.all());
      for (int i = 0; i < 10 && open.hasNext(); i++) {
        seen.add(open.next());
      }
    }
    assertThat(thrown(s::compact))
        .as(rule("10.10", "compact() returns normally, also with a cursor open"))
        .isNull();
    assertThat(thrown(s::compact))
        .as(rule("10.10", "compact() right after compact() returns normally"))
        .isNull();
    if (open != null) {
      open.forEachRemaining(seen::add);
      open.close();
      List<Entry> want = expected(model, KeyRange.all());
      assertThat(keysOf(seen))
          .as(rule("10.10", "a cursor opened before compact() yields every key, in order"))
          .containsExactlyElementsOf(keysOf(want));
      assertThat(seen)
          .as(rule("10.10", "a cursor opened before compact() yields every value"))
          .isEqualTo(want);
    }
    assertKeptByCompact("after compact()", s, model);
    s.put(key(5000), b("after"));
    s.delete(key(0));
    model.put(key(5000), b("after"));
    model.remove(key(0));
    assertKeptByCompact("after writes that follow compact()", s, model);
    if (has(Feature.PERSISTENT)) {
      s = reopen(s);
      assertKeptByCompact("after compact() and reopen", s, model);
    }
    close(s);
    assertThat(thrown(s::compact))
        .as(rule("10.10", "compact() on a closed store throws StoreClosedException"))
        .isInstanceOf(StoreClosedException.class);
    if (has(Feature.PERSISTENT)) {
      Store ro = open(config(Durability.BUFFERED).toBuilder().readOnly(true).build());
      assertThat(thrown(ro::compact))
          .as(
              rule(
                  "10.10",
                  "compact() on a read-only store throws UnsupportedOperationException, like every"
                      + " write"))
          .isInstanceOf(UnsupportedOperationException.class);
      close(ro);
      assertKeptByCompact("after a refused read-only compact()", open(), model);
    }
  }

  /** Every model entry is readable, deleted keys stay absent, scans and counts match the model. */
  private void assertKeptByCompact(String when, Store s, TreeMap<byte[], byte[]> model) {
    for (int i = 0; i < 1000; i++) {
      assertThat(s.get(key(i)))
          .as(
              rule(
                  "10.10",
                  "key " + i + " " + when + " (stored and deleted keys are kept as they were)"))
          .isEqualTo(model.get(key(i)));
    }
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      assertThat(s.get(e.getKey()))
          .as(rule("10.10", "get " + hex(e.getKey()) + " " + when))
          .isEqualTo(e.getValue());
    }
    if (has(Feature.ORDERED_SCAN)) {
      assertScan("10.10", s, model, KeyRange.all());
    }
    if (has(Feature.REVERSE_SCAN)) {
      assertScan("10.10", s, model, KeyRange.all().reverse());
    }
    StoreStats st = s.stats();
    if (st.keyCountExact()) {
      assertThat(st.keyCount())
          .as(rule("10.10", "the exact key count " + when))
          .isEqualTo(model.size());
    }
  }
}
