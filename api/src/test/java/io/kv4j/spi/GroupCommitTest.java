package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

class GroupCommitTest {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /** A test write: an id, a size, and the answer the committer records in it. */
  static final class Write {
    final int thread;
    final int id;
    final long bytes;
    int answer = -1;

    Write(int thread, int id, long bytes) {
      this.thread = thread;
      this.id = id;
      this.bytes = bytes;
    }
  }

  /**
   * Commits by recording each group and answering each write with twice its id; a group holding a
   * write the predicate picks fails with {@code failWith}; the first commit can be held on a latch.
   */
  static final class Recorder implements GroupCommit.Committer<Write> {
    final List<List<Write>> groups = Collections.synchronizedList(new ArrayList<>());
    final CountDownLatch firstEntered = new CountDownLatch(1);
    volatile CountDownLatch holdFirst; // null: commit at once
    volatile Predicate<Write> failing = w -> false;
    volatile Throwable failWith = new IllegalStateException("disk on fire");
    volatile boolean retryAlone;
    volatile int failures;

    @Override
    public void commit(List<Write> group) throws Exception {
      CountDownLatch hold = holdFirst;
      if (hold != null) {
        holdFirst = null;
        firstEntered.countDown();
        assertThat(hold.await(LIMIT.toSeconds(), TimeUnit.SECONDS)).as("released").isTrue();
      }
      groups.add(List.copyOf(group));
      for (Write w : group) {
        if (failing.test(w)) {
          if (failWith instanceof Error) {
            throw (Error) failWith;
          }
          throw (Exception) failWith;
        }
      }
      for (Write w : group) {
        w.answer = w.id * 2;
      }
    }

    @Override
    public RuntimeException failure(List<Write> group, Throwable cause) {
      failures++;
      return retryAlone
          ? null
          : new RuntimeException("group of " + group.size() + " failed", cause);
    }

    @Override
    public long bytes(Write write) {
      return write.bytes;
    }
  }

  @Test
  void submit_whileALeaderCommits_queuedWritesFormOneGroupInQueueOrder() throws Exception {
    Recorder r = new Recorder();
    CountDownLatch release = new CountDownLatch(1);
    r.holdFirst = release;
    GroupCommit<Write> gc = new GroupCommit<>(r, 1_000, 1 << 20);
    ExecutorService pool = Executors.newFixedThreadPool(9);
    try {
      Future<Boolean> first = pool.submit(() -> gc.submit(new Write(0, 0, 1)));
      assertThat(r.firstEntered.await(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      List<Write> writes = new ArrayList<>();
      List<Future<Boolean>> rest = new ArrayList<>();
      for (int i = 1; i <= 8; i++) {
        Write w = new Write(i, i, 1);
        writes.add(w);
        rest.add(pool.submit(() -> gc.submit(w)));
        int queued = i;
        Await.until(queued + " queued", LIMIT, () -> gc.queued() == queued);
      }
      release.countDown();
      assertThat(first.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      for (Future<Boolean> f : rest) {
        assertThat(f.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).as("committed").isTrue();
      }
      assertThat(r.groups).hasSize(2);
      assertThat(r.groups.get(1)).as("the eight waiters' group, in queue order").isEqualTo(writes);
      assertThat(writes).allSatisfy(w -> assertThat(w.answer).isEqualTo(w.id * 2));
      assertThat(gc.queued()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void submit_groupLimits_splitQueuedWritesByCountAndBytes() throws Exception {
    Recorder r = new Recorder();
    CountDownLatch release = new CountDownLatch(1);
    r.holdFirst = release;
    GroupCommit<Write> gc = new GroupCommit<>(r, 3, 10);
    // Queued behind the held leader: sizes 1,1,1 (count limit), 4,4 (bytes: 4+4+4 > 10), 4, 50
    // (alone: larger than the limit), 2.
    long[] sizes = {1, 1, 1, 4, 4, 4, 50, 2};
    ExecutorService pool = Executors.newFixedThreadPool(sizes.length + 1);
    try {
      Future<Boolean> first = pool.submit(() -> gc.submit(new Write(0, 0, 1)));
      assertThat(r.firstEntered.await(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      List<Future<Boolean>> rest = new ArrayList<>();
      for (int i = 0; i < sizes.length; i++) {
        Write w = new Write(i + 1, i + 1, sizes[i]);
        rest.add(pool.submit(() -> gc.submit(w)));
        int queued = i + 1;
        Await.until(queued + " queued", LIMIT, () -> gc.queued() == queued);
      }
      release.countDown();
      first.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      for (Future<Boolean> f : rest) {
        assertThat(f.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      }
      List<List<Long>> groupSizes = new ArrayList<>();
      for (List<Write> g : r.groups.subList(1, r.groups.size())) {
        groupSizes.add(g.stream().map(w -> w.bytes).toList());
      }
      assertThat(groupSizes)
          .isEqualTo(
              List.of(
                  List.of(1L, 1L, 1L), List.of(4L, 4L), List.of(4L), List.of(50L), List.of(2L)));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void submit_failingGroup_failsEachMemberWithTheCauseAndLaterWritesCommit() throws Exception {
    Recorder r = new Recorder();
    CountDownLatch release = new CountDownLatch(1);
    r.holdFirst = release;
    r.failing = w -> w.id == 3;
    GroupCommit<Write> gc = new GroupCommit<>(r, 1_000, 1 << 20);
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      Future<Boolean> first = pool.submit(() -> gc.submit(new Write(0, 0, 1)));
      assertThat(r.firstEntered.await(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      List<Future<Boolean>> members = new ArrayList<>();
      for (int i = 1; i <= 5; i++) {
        Write w = new Write(i, i, 1);
        members.add(pool.submit(() -> gc.submit(w)));
        int queued = i;
        Await.until(queued + " queued", LIMIT, () -> gc.queued() == queued);
      }
      release.countDown();
      assertThat(first.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      for (Future<Boolean> f : members) {
        assertThatThrownBy(() -> f.get(LIMIT.toSeconds(), TimeUnit.SECONDS))
            .as("every member of the failed group")
            .cause()
            .hasMessage("group of 5 failed")
            .cause()
            .hasMessage("disk on fire");
      }
      assertThat(r.failures).as("the mapper runs once per failed group").isEqualTo(1);
      Write later = new Write(9, 9, 1);
      assertThat(gc.submit(later)).isTrue();
      assertThat(later.answer).isEqualTo(18);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void submit_failureMappedToNull_returnsFalseSoTheCallerRetriesAlone() {
    Recorder r = new Recorder();
    r.failing = w -> w.id == 1;
    r.retryAlone = true;
    GroupCommit<Write> gc = new GroupCommit<>(r, 1_000, 1 << 20);
    Write w = new Write(0, 1, 1);
    assertThat(gc.submit(w)).isFalse();
    assertThat(w.answer).as("nothing applied").isEqualTo(-1);
    assertThat(gc.submit(new Write(0, 2, 1))).isTrue();
  }

  @Test
  void submit_errorInTheLeader_rethrownThereAndItsMembersGetTheirAnswer() throws Exception {
    Recorder r = new Recorder();
    CountDownLatch release = new CountDownLatch(1);
    r.holdFirst = release;
    r.failWith = new AssertionError("out of something");
    GroupCommit<Write> gc = new GroupCommit<>(r, 1_000, 1 << 20);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      Future<Boolean> first = pool.submit(() -> gc.submit(new Write(0, 0, 1)));
      assertThat(r.firstEntered.await(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      r.failing = w -> w.id >= 1;
      Future<Boolean> a = pool.submit(() -> gc.submit(new Write(1, 1, 1)));
      Await.until("1 queued", LIMIT, () -> gc.queued() == 1);
      Future<Boolean> b = pool.submit(() -> gc.submit(new Write(2, 2, 1)));
      Await.until("2 queued", LIMIT, () -> gc.queued() == 2);
      release.countDown();
      assertThat(first.get(LIMIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      // One of the two leads the failing group and sees the Error; the other sees the mapping.
      List<Throwable> seen = new ArrayList<>();
      for (Future<Boolean> f : List.of(a, b)) {
        try {
          f.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          seen.add(e.getCause());
        }
      }
      assertThat(seen).hasSize(2);
      assertThat(seen).anySatisfy(t -> assertThat(t).isInstanceOf(AssertionError.class));
      assertThat(seen)
          .anySatisfy(
              t ->
                  assertThat(t)
                      .hasMessage("group of 2 failed")
                      .hasCauseInstanceOf(AssertionError.class));
      assertThat(gc.queued()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Many threads, random write counts and random failing writes: every call returns (no lost wakeup
   * leaves one waiting), each gets its own answer, and each thread's writes are committed in the
   * order it made them.
   */
  @Test
  void submit_manyThreads_everyCallReturnsWithItsOwnAnswerInThreadOrder() throws Exception {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    int threads = 8;
    Recorder r = new Recorder();
    r.failing = w -> w.id % 97 == 13;
    GroupCommit<Write> gc = new GroupCommit<>(r, 1 + random.nextInt(16), 1 + random.nextInt(64));
    int[] counts = new int[threads];
    for (int t = 0; t < threads; t++) {
      counts[t] = 200 + random.nextInt(300);
    }
    long[] sizeSeeds = random.longs(threads).toArray();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<List<Write>>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(
            pool.submit(
                () -> {
                  Random sizes = new Random(sizeSeeds[thread]);
                  List<Write> mine = new ArrayList<>();
                  start.await();
                  for (int i = 0; i < counts[thread]; i++) {
                    Write w = new Write(thread, thread * 10_000 + i, sizes.nextInt(20));
                    boolean failed = false;
                    try {
                      assertThat(gc.submit(w)).as("seed %d", seed).isTrue();
                    } catch (RuntimeException e) {
                      failed = true;
                      assertThat(e).as("seed %d", seed).hasMessageContaining("failed");
                    }
                    assertThat(w.answer)
                        .as("seed %d: write %d's own answer", seed, w.id)
                        .isEqualTo(failed ? -1 : w.id * 2);
                    mine.add(w);
                  }
                  return mine;
                }));
      }
      start.countDown();
      int total = 0;
      for (Future<List<Write>> f : done) {
        total += f.get(LIMIT.toSeconds(), TimeUnit.SECONDS).size();
      }
      List<Write> committed = new ArrayList<>();
      for (List<Write> g : r.groups) {
        committed.addAll(g);
      }
      assertThat(committed)
          .as("seed %d: every write handed to the committer once", seed)
          .hasSize(total);
      int[] last = new int[threads];
      java.util.Arrays.fill(last, -1);
      for (Write w : committed) {
        assertThat(w.id)
            .as("seed %d: thread %d's order", seed, w.thread)
            .isGreaterThan(last[w.thread]);
        last[w.thread] = w.id;
      }
      assertThat(gc.queued()).as("seed %d", seed).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void constructor_limitBelowOne_refused() {
    assertThatThrownBy(() -> new GroupCommit<>(new Recorder(), 0, 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new GroupCommit<>(new Recorder(), 1, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
