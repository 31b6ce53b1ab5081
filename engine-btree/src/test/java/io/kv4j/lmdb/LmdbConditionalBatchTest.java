package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the kit (group 18) does not cover for the lmdb engine's conditional batches: their place in
 * a group commit, a group that fails and is retried member by member, keyspaces they must not
 * create, keyspaces not opened yet, and stores of formats 1 and 2.
 */
class LmdbConditionalBatchTest {
  private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);

  @TempDir Path dir;

  /** Waits, parking between checks, until {@code n} writes are queued for a group commit. */
  private static void awaitQueued(LmdbStore s, int n) {
    long end = System.nanoTime() + DEADLINE_NANOS;
    while (s.queuedWrites() < n) {
      assertThat(System.nanoTime() - end).as("%d writes queued in time", n).isNegative();
      LockSupport.parkNanos(50_000);
    }
  }

  /** Starts a write on a thread of its own; what it answers (or throws) goes to {@code out}. */
  private static Thread start(Supplier<Object> write, AtomicReference<Object> out) {
    Thread t =
        new Thread(
            () -> {
              try {
                out.set(write.get());
              } catch (Throwable e) {
                out.set(e);
              }
            });
    t.start();
    return t;
  }

  /**
   * Conditional batches join a group commit in queue order: one whose condition holds only after
   * the put queued before it applies, one whose condition fails writes nothing while the rest of
   * the same transaction commits, all in one commit.
   */
  @Test
  void writeIf_inAGroupCommit_seesEarlierMembersAndFailsAlone() throws Exception {
    try (LmdbStore s = (LmdbStore) Lmdb.open(dir)) {
      AtomicInteger commits = new AtomicInteger();
      s.beforeCommit(commits::incrementAndGet);
      List<Supplier<Object>> writes =
          List.of(
              () -> {
                s.put(b("k"), b("1"));
                return "put";
              },
              () -> s.writeIf(new WriteBatch().expect(b("k"), b("1")).put(b("x"), b("after"))),
              () -> s.writeIf(new WriteBatch().expectAbsent(b("k")).put(b("y"), b("never"))),
              () -> {
                s.put(b("z"), b("last"));
                return "put";
              });
      List<AtomicReference<Object>> answers = new ArrayList<>();
      List<Thread> threads = new ArrayList<>();
      s.writerLock().lock();
      try {
        for (int i = 0; i < writes.size(); i++) {
          answers.add(new AtomicReference<>());
          threads.add(start(writes.get(i), answers.get(i)));
          awaitQueued(s, i + 1); // one at a time: the queue order is the list's
        }
      } finally {
        s.writerLock().unlock();
      }
      for (Thread t : threads) {
        t.join(TimeUnit.NANOSECONDS.toMillis(DEADLINE_NANOS));
        assertThat(t.isAlive()).isFalse();
      }
      assertThat(answers)
          .extracting(AtomicReference::get)
          .containsExactly("put", true, false, "put");
      assertThat(commits.get()).as("one group commit").isEqualTo(1);
      assertThat(s.get(b("x"))).isEqualTo(b("after"));
      assertThat(s.get(b("y"))).isNull();
      assertThat(s.get(b("z"))).isEqualTo(b("last"));
    }
  }

  /**
   * A group whose transaction fails (the map is full) runs each member again alone: the conditional
   * batch in it answers from its own run, after the map grew.
   */
  @Test
  void writeIf_inAGroupThatOverflowsTheMap_answersFromItsRetry() throws Exception {
    try (LmdbStore s = (LmdbStore) Lmdb.open(dir, "map-size", "1MiB", "map-growth-step", "4MiB")) {
      s.put(b("k"), b("v"));
      AtomicInteger commits = new AtomicInteger();
      s.beforeCommit(commits::incrementAndGet);
      AtomicReference<Object> put = new AtomicReference<>();
      AtomicReference<Object> conditional = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      s.writerLock().lock();
      try {
        threads.add(
            start(
                () -> {
                  s.put(b("small"), b("1"));
                  return "put";
                },
                put));
        awaitQueued(s, 1);
        WriteBatch big =
            new WriteBatch()
                .expect(b("k"), b("v"))
                .put(b("big"), LmdbMapGrowthTest.value(1, 2 << 20))
                .delete(b("k"));
        threads.add(start(() -> s.writeIf(big), conditional));
        awaitQueued(s, 2);
      } finally {
        s.writerLock().unlock();
      }
      for (Thread t : threads) {
        t.join(TimeUnit.NANOSECONDS.toMillis(DEADLINE_NANOS));
        assertThat(t.isAlive()).isFalse();
      }
      assertThat(put.get()).isEqualTo("put");
      assertThat(conditional.get()).isEqualTo(true);
      assertThat(commits.get()).as("the group failed: each member committed alone").isEqualTo(2);
      assertThat(Lmdb.figure(s, "map-growths")).isPositive();
      assertThat(s.get(b("big"))).isEqualTo(LmdbMapGrowthTest.value(1, 2 << 20));
      assertThat(s.get(b("k"))).isNull();
      assertThat(s.get(b("small"))).isEqualTo(b("1"));
    }
  }

  /**
   * Conditions read keyspaces, never create them: a condition on a keyspace that does not exist
   * holds absence and fails on a value without adding a database, and a batch whose conditions fail
   * does not create the keyspaces its operations name; across a reopen too.
   */
  @Test
  void writeIf_absentKeyspaces_createdOnlyByABatchThatApplies() {
    try (Store s = Lmdb.open(dir)) {
      s.keyspace("users").put(b("k"), b("u"));
      assertThat(s.writeIf(new WriteBatch().expectAbsent("ghost", b("k")).put(b("a"), b("1"))))
          .isTrue();
      assertThat(s.writeIf(new WriteBatch().expect("ghost", b("k"), new byte[0]))).isFalse();
      assertThat(
              s.writeIf(
                  new WriteBatch()
                      .expect("users", b("k"), b("other"))
                      .put("orders", b("o"), b("1"))
                      .put("ghost", b("g"), b("1"))))
          .isFalse();
      assertThat(s.keyspaces()).containsExactly("users");
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.keyspaces()).containsExactly("users");
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  /**
   * A condition on a keyspace that exists but has no handle open yet (after a reopen) opens its
   * database in the write transaction and reads it; the handle then serves the keyspace.
   */
  @Test
  void writeIf_keyspaceNotOpenedSinceReopen_readsItsDatabase() {
    try (Store s = Lmdb.open(dir)) {
      s.keyspace("users").put(b("k"), b("u"));
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.writeIf(new WriteBatch().expectAbsent("users", b("k")).put(b("a"), b("1"))))
          .as("the key is there, in a database opened by the condition")
          .isFalse();
      assertThat(
              s.writeIf(
                  new WriteBatch()
                      .expect("users", b("k"), b("u"))
                      .put("users", b("k"), b("u2"))
                      .put(b("a"), b("2"))))
          .isTrue();
      assertThat(s.keyspace("users").get(b("k"))).isEqualTo(b("u2"));
      assertThat(s.get(b("a"))).isEqualTo(b("2"));
      assertThat(s.keyspaces()).containsExactly("users");
    }
  }

  /**
   * Stores of formats 1 and 2 (no keyspaces) have conditional batches on their own keys; a
   * condition naming a keyspace is refused, naming the feature, before anything is written.
   */
  @Test
  void legacyStores_conditionalBatchesOnTheirOwnKeys() throws Exception {
    for (boolean framed : new boolean[] {false, true}) {
      Path d = dir.resolve(framed ? "framed" : "raw");
      Lmdb.legacy(d, framed, Map.of("k1", "v1"));
      try (Store s = Lmdb.open(d)) {
        assertThat(s.info().features()).contains(Feature.CONDITIONAL_BATCH);
        assertThat(s.writeIf(new WriteBatch().expect(b("k1"), b("v1")).put(b("k2"), b("v2"))))
            .isTrue();
        assertThat(
                s.writeIf(
                    new WriteBatch()
                        .expect(Store.DEFAULT_KEYSPACE, b("k1"), b("v1"))
                        .expectAbsent(b("k2"))
                        .put(b("k3"), b("v3"))))
            .isFalse();
        assertThatThrownBy(
                () ->
                    s.writeIf(new WriteBatch().expectAbsent("users", b("k")).put(b("k4"), b("x"))))
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("KEYSPACE_BATCH");
        assertThat(s.get(b("k2"))).isEqualTo(b("v2"));
        assertThat(s.get(b("k3"))).isNull();
        assertThat(s.get(b("k4"))).isNull();
        s.verify();
      }
    }
  }
}
