package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreCorruptedException;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conditional writes and conditional batches ({@code writeIf}): compared and written under the
 * writer lock through the one append path.
 */
class ConditionalWriteTest {
  @TempDir Path dir;

  private static byte[] counter(long n) {
    byte[] v = new byte[64]; // padded, so that segments fill and roll
    ByteBuffer.wrap(v).putLong(n);
    return v;
  }

  private static long count(byte[] v) {
    return ByteBuffer.wrap(v).getLong();
  }

  private static void runAll(List<Thread> threads, AtomicReference<Throwable> failure)
      throws InterruptedException {
    for (Thread t : threads) {
      t.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
      t.start();
    }
    for (Thread t : threads) {
      t.join(120_000);
      assertThat(t.isAlive()).as("thread %s finished", t.getName()).isFalse();
    }
  }

  @Test
  void replaceLoops_withPutsBatchesDeletesAndCompactionRunning_loseNoIncrement() throws Exception {
    long seed = 77L;
    int threads = 3;
    int increments = 3000;
    int counters = 4;
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            "segment-size",
            "8192",
            "compaction-garbage-threshold",
            "0.1",
            "compaction-threads",
            "1")) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        SplittableRandom rnd = new SplittableRandom(seed + t);
        workers.add(
            new Thread(
                () -> {
                  for (int i = 0; i < increments; i++) {
                    byte[] k = bytes("counter-" + rnd.nextInt(counters));
                    while (true) {
                      byte[] old = s.get(k);
                      boolean done =
                          old == null
                              ? s.putIfAbsent(k, counter(1))
                              : s.replace(k, old, counter(count(old) + 1));
                      if (done) {
                        break;
                      }
                    }
                  }
                },
                "incrementer-" + t));
      }
      // Plain writes of other keys (and of keys sharing the counters' hash slots' neighbourhood),
      // batches and deletes, all on the same writer lock; a third thread compacts explicitly too.
      Thread noise =
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed * 31);
                for (int i = 0; !stop.get(); i++) {
                  byte[] k = bytes("noise-" + rnd.nextInt(50));
                  switch (i % 3) {
                    case 0:
                      s.put(k, new byte[rnd.nextInt(200)]);
                      break;
                    case 1:
                      s.delete(k);
                      break;
                    default:
                      s.write(
                          new WriteBatch()
                              .put(k, new byte[32])
                              .put(bytes("noise-pair"), new byte[16])
                              .delete(bytes("noise-" + rnd.nextInt(50))));
                  }
                }
              },
              "noise");
      Thread compactor =
          new Thread(
              () -> {
                while (!stop.get()) {
                  s.compact();
                }
              },
              "compact");
      noise.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
      compactor.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
      noise.start();
      compactor.start();
      runAll(workers, failure);
      awaitCompactionRun(s, failure); // the compacting thread may not have run yet on a busy CPU
      stop.set(true);
      noise.join(60_000);
      compactor.join(60_000);
      assertThat(failure.get()).as("seed %s: no thread failed", seed).isNull();
      long total = 0;
      for (int c = 0; c < counters; c++) {
        byte[] v = s.get(bytes("counter-" + c));
        total += v == null ? 0 : count(v);
      }
      assertThat(total)
          .as("seed %s: every increment counted", seed)
          .isEqualTo((long) threads * increments);
      assertThat(TestStores.figure(s, "compaction-runs"))
          .as("compaction ran while the conditional writes did")
          .isPositive();
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      long total = 0;
      for (int c = 0; c < counters; c++) {
        byte[] v = s.get(bytes("counter-" + c));
        total += v == null ? 0 : count(v);
      }
      assertThat(total).as("seed %s: after reopen", seed).isEqualTo((long) threads * increments);
    }
  }

  @Test
  void putIfAbsentAndConditionalDelete_asALock_admitOneHolderAtATime() throws Exception {
    int threads = 3;
    int rounds = 2000;
    try (HashLogStore s =
        TestStores.open(
            dir, Durability.BUFFERED, "segment-size", "4096", "compaction-threads", "1")) {
      byte[] lock = bytes("lock");
      int[] unguarded = new int[1]; // changed only by the lock's holder
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        byte[] me = bytes("holder-" + t);
        workers.add(
            new Thread(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    while (!s.putIfAbsent(lock, me)) {
                      Thread.onSpinWait();
                    }
                    int before = unguarded[0];
                    assertThat(s.get(lock)).isEqualTo(me);
                    unguarded[0] = before + 1;
                    assertThat(s.delete(lock, bytes("someone-else"))).isFalse();
                    assertThat(s.delete(lock, me)).as("the holder releases its own lock").isTrue();
                  }
                },
                "locker-" + t));
      }
      runAll(workers, failure);
      assertThat(failure.get()).isNull();
      assertThat(unguarded[0]).as("no two holders at once").isEqualTo(threads * rounds);
      assertThat(s.get(lock)).isNull();
    }
  }

  @Test
  void replace_ofADamagedValue_withChecksumsOffOnRead_throwsAndWritesNothing() throws IOException {
    byte[] original = bytes("original-" + "o".repeat(200));
    byte[] key = bytes("victim");
    String[] options = {"segment-size", "4096", "verify-checksums-on-read", "false"};
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      s.put(key, original);
      for (int i = 0; s.segments().length < 4; i++) {
        s.put(bytes("filler-" + i), new byte[300]);
      }
    }
    Path first = dir.resolve(Segment.fileName(1));
    byte[] file = Files.readAllBytes(first);
    int at = indexOf(file, original);
    assertThat(at).as("the value is in the first (sealed) segment").isPositive();
    try (RandomAccessFile f = new RandomAccessFile(first.toFile(), "rw")) {
      f.seek(at + 20);
      f.write(file[at + 20] ^ 0x04);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      byte[] damaged = s.get(key);
      assertThat(damaged).as("reads do not check with the option off").isNotEqualTo(original);
      assertThatThrownBy(() -> s.replace(key, original, bytes("new")))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(first.getFileName().toString());
      assertThatThrownBy(() -> s.replace(key, damaged, bytes("new")))
          .as("never written on the strength of damaged bytes")
          .isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(() -> s.delete(key, damaged)).isInstanceOf(StoreCorruptedException.class);
      assertThat(s.putIfAbsent(key, bytes("new"))).as("the key is present").isFalse();
      assertThat(s.get(key)).isEqualTo(damaged);
      s.put(key, bytes("repaired")); // a plain put still overwrites it
      assertThat(s.replace(key, bytes("repaired"), bytes("next"))).isTrue();
      assertThat(s.get(key)).isEqualTo(bytes("next"));
    }
  }

  @Test
  void conditionalWrites_onEveryHashCollision_compareTheRightKey() {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, key -> 7L)) {
      assertThat(s.putIfAbsent(bytes("a"), bytes("1"))).isTrue();
      assertThat(s.putIfAbsent(bytes("b"), bytes("2"))).isTrue();
      assertThat(s.putIfAbsent(bytes("a"), bytes("x"))).isFalse();
      assertThat(s.replace(bytes("b"), bytes("1"), bytes("x"))).isFalse();
      assertThat(s.replace(bytes("b"), bytes("2"), bytes("3"))).isTrue();
      assertThat(s.delete(bytes("c"), bytes("2"))).isFalse();
      assertThat(s.delete(bytes("a"), bytes("1"))).isTrue();
      assertThat(s.get(bytes("a"))).isNull();
      assertThat(s.get(bytes("b"))).isEqualTo(bytes("3"));
      assertThat(s.putIfAbsent(bytes("a"), new byte[0])).isTrue();
      assertThat(s.replace(bytes("a"), new byte[0], bytes("e"))).isTrue();
      assertThat(s.get(bytes("a"))).isEqualTo(bytes("e"));
    }
  }

  @Test
  void writeIfTransfers_withPutsAndCompactionRunning_conserveTheTotal_alsoAfterReopen()
      throws Exception {
    long seed = 78L;
    int threads = 3;
    int transfers = 1500;
    int counters = 4;
    long start = 1_000_000;
    String[] options = {"segment-size", "8192", "compaction-threads", "1"};
    long[] done = new long[threads];
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, options)) {
      for (int c = 0; c < counters; c++) {
        s.put(bytes("counter-" + c), counter(start));
      }
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int me = t;
        workers.add(
            new Thread(
                () -> {
                  SplittableRandom r = new SplittableRandom(seed + me);
                  for (int i = 0; i < transfers; i++) {
                    int a = r.nextInt(counters);
                    int b = (a + 1 + r.nextInt(counters - 1)) % counters;
                    byte[] ka = bytes("counter-" + a);
                    byte[] kb = bytes("counter-" + b);
                    while (true) {
                      byte[] va = s.get(ka);
                      byte[] vb = s.get(kb);
                      WriteBatch w =
                          new WriteBatch()
                              .expect(ka, va)
                              .expect(kb, vb)
                              .put(ka, counter(count(va) - 1))
                              .put(kb, counter(count(vb) + 1));
                      if (s.writeIf(w)) {
                        done[me]++;
                        break;
                      }
                    }
                  }
                },
                "transfer-" + t));
      }
      Thread churn =
          new Thread(
              () -> {
                SplittableRandom r = new SplittableRandom(seed);
                for (int i = 0; !stop.get(); i++) {
                  s.put(bytes("noise-" + r.nextInt(50)), new byte[100]);
                  if (i % 500 == 0) {
                    s.compact();
                  }
                }
              },
              "churn");
      churn.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
      churn.start();
      runAll(workers, failure);
      awaitCompactionRun(s, failure); // the churning thread may not have run yet on a busy CPU
      stop.set(true);
      churn.join(120_000);
      assertThat(failure.get()).as("seed %d", seed).isNull();
      assertThat(total(s, counters)).as("seed %d", seed).isEqualTo(counters * start);
      assertThat(TestStores.figure(s, "compaction-runs")).isPositive();
    }
    assertThat(done).containsOnly(transfers);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, options)) {
      assertThat(total(s, counters)).as("after reopen, seed %d", seed).isEqualTo(counters * start);
    }
  }

  private static long total(HashLogStore s, int counters) {
    long sum = 0;
    for (int c = 0; c < counters; c++) {
      sum += count(s.get(bytes("counter-" + c)));
    }
    return sum;
  }

  @Test
  void writeIf_onADamagedValue_withChecksumsOffOnRead_throwsAndWritesNothing() throws IOException {
    byte[] original = bytes("original-" + "o".repeat(200));
    byte[] key = bytes("victim");
    String[] options = {"segment-size", "4096", "verify-checksums-on-read", "false"};
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      s.put(key, original);
      for (int i = 0; s.segments().length < 4; i++) {
        s.put(bytes("filler-" + i), new byte[300]);
      }
    }
    Path first = dir.resolve(Segment.fileName(1));
    byte[] file = Files.readAllBytes(first);
    int at = indexOf(file, original);
    assertThat(at).as("the value is in the first (sealed) segment").isPositive();
    try (RandomAccessFile f = new RandomAccessFile(first.toFile(), "rw")) {
      f.seek(at + 20);
      f.write(file[at + 20] ^ 0x04);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.SYNC, options)) {
      byte[] damaged = s.get(key);
      long written = TestStores.figure(s, "user-bytes-written");
      WriteBatch onDamaged =
          new WriteBatch().expect(key, damaged).put(bytes("other"), bytes("x")).delete(key);
      assertThatThrownBy(() -> s.writeIf(onDamaged))
          .as("never written on the strength of damaged bytes")
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(first.getFileName().toString());
      WriteBatch absentFirst =
          new WriteBatch().expectAbsent(bytes("other")).expect(key, original).put(key, bytes("y"));
      assertThatThrownBy(() -> s.writeIf(absentFirst)).isInstanceOf(StoreCorruptedException.class);
      assertThat(s.writeIf(new WriteBatch().expectAbsent(key).put(bytes("other"), bytes("x"))))
          .as("the damaged key is present")
          .isFalse();
      assertThat(TestStores.figure(s, "user-bytes-written")).isEqualTo(written);
      assertThat(s.get(bytes("other"))).isNull();
      assertThat(s.get(key)).isEqualTo(damaged);
      s.put(key, bytes("repaired"));
      assertThat(s.writeIf(new WriteBatch().expect(key, bytes("repaired")).put(key, bytes("z"))))
          .isTrue();
      assertThat(s.get(key)).isEqualTo(bytes("z"));
    }
  }

  @Test
  void writeIf_onEveryHashCollision_checksTheRightKeys_andAFalseAnswerWritesNothing() {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, key -> 7L)) {
      s.put(bytes("a"), bytes("1"));
      s.put(bytes("b"), bytes("2"));
      long written = TestStores.figure(s, "user-bytes-written");
      assertThat(
              s.writeIf(
                  new WriteBatch().expect(bytes("a"), bytes("2")).put(bytes("c"), bytes("3"))))
          .isFalse();
      assertThat(s.writeIf(new WriteBatch().expectAbsent(bytes("b")).put(bytes("c"), bytes("3"))))
          .isFalse();
      assertThat(s.writeIf(new WriteBatch().expect(bytes("c"), new byte[0]).delete(bytes("a"))))
          .as("absent is not empty")
          .isFalse();
      assertThat(
              s.writeIf(new WriteBatch().expect(bytes("a"), bytes("1")).expectAbsent(bytes("c"))))
          .as("an atomic check without operations")
          .isTrue();
      assertThat(TestStores.figure(s, "user-bytes-written"))
          .as("false answers and checks write nothing")
          .isEqualTo(written);
      assertThat(s.get(bytes("c"))).isNull();
      assertThat(
              s.writeIf(
                  new WriteBatch()
                      .expect(bytes("a"), bytes("1"))
                      .expect(bytes("b"), bytes("2"))
                      .expectAbsent(bytes("c"))
                      .put(bytes("c"), new byte[0])
                      .delete(bytes("a"))
                      .put(bytes("b"), bytes("b2"))))
          .isTrue();
      assertThat(s.get(bytes("a"))).isNull();
      assertThat(s.get(bytes("b"))).isEqualTo(bytes("b2"));
      assertThat(s.get(bytes("c"))).isEqualTo(new byte[0]);
      assertThat(
              s.writeIf(
                  new WriteBatch().expect(bytes("c"), new byte[0]).put(bytes("a"), bytes("4"))))
          .isTrue();
      assertThat(s.get(bytes("a"))).isEqualTo(bytes("4"));
    }
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /**
   * Waits (at most a minute) until compaction has run once while the threads that cause it go on,
   * so a check that it ran beside the conditional writes does not depend on the scheduler.
   */
  private static void awaitCompactionRun(HashLogStore s, AtomicReference<Throwable> failure) {
    long backstop = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (TestStores.figure(s, "compaction-runs") == 0
        && failure.get() == null
        && System.nanoTime() - backstop < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
