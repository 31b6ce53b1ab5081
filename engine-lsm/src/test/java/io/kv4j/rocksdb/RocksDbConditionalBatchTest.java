package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the kit (group 18) does not cover for the rocksdb engine's conditional batches: which stripe
 * locks they hold while they read their conditions, keyspaces they must not create, and conditional
 * batches mixed with conditional writes and plain batches on shared stripes.
 */
class RocksDbConditionalBatchTest {
  private static final long DEADLINE_MS = TimeUnit.SECONDS.toMillis(60);

  @TempDir Path tmp;

  private StoreConfig config() {
    return StoreConfig.builder("rocksdb")
        .path(tmp.resolve("db"))
        .durability(Durability.BUFFERED)
        .build();
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] num(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  private static long num(byte[] v) {
    return ByteBuffer.wrap(v).getLong();
  }

  /**
   * Runs a writeIf on a thread of its own; its answer, or what it threw, lands in the references.
   */
  private static Thread startWriteIf(
      Store s,
      WriteBatch batch,
      AtomicReference<Boolean> answer,
      AtomicReference<Throwable> error) {
    Thread t =
        new Thread(
            () -> {
              try {
                answer.set(s.writeIf(batch));
              } catch (Throwable e) {
                error.set(e);
              }
            });
    t.start();
    return t;
  }

  /**
   * A conditional batch waits for the stripe lock of a condition key it does not write, and reads
   * the condition only once it has it: a put landing while the batch waits (here by the thread that
   * holds the lock) makes the condition fail, and nothing of the batch is written.
   */
  @Test
  void writeIf_conditionKeyLockHeld_readsTheConditionAfterTheLock() throws Exception {
    try (RocksDbStore s = (RocksDbStore) Stores.open(config())) {
      byte[] guard = b("guard");
      s.put(guard, b("v0"));
      ReentrantLock lock = s.keyLock(guard);
      AtomicReference<Boolean> answer = new AtomicReference<>();
      AtomicReference<Throwable> error = new AtomicReference<>();
      Thread t;
      lock.lock();
      try {
        WriteBatch batch = new WriteBatch().expect(guard, b("v0")).put(b("other"), b("x"));
        t = startWriteIf(s, batch, answer, error);
        Waits.await(
            "the conditional batch queued for the guard's lock",
            Duration.ofMillis(DEADLINE_MS),
            lock::hasQueuedThreads);
        assertThat(s.get(b("other"))).as("written while its condition's lock was held").isNull();
        s.put(guard, b("v1")); // this thread holds the stripe (reentrant): lands before the batch
      } finally {
        lock.unlock();
      }
      t.join(DEADLINE_MS);
      assertThat(t.isAlive()).isFalse();
      assertThat(error.get()).isNull();
      assertThat(answer.get()).as("the condition saw the put made while it waited").isFalse();
      assertThat(s.get(b("other"))).isNull();
      assertThat(s.get(guard)).isEqualTo(b("v1"));
    }
  }

  /**
   * A condition on a key of a keyspace that does not exist yet takes that key's stripe (its salt
   * comes from the name): a writer that creates the keyspace and puts the key while the batch waits
   * is seen by the condition.
   */
  @Test
  void writeIf_absentKeyspaceConditionLockHeld_seesTheKeyspaceCreatedMeanwhile() throws Exception {
    try (RocksDbStore s = (RocksDbStore) Stores.open(config())) {
      byte[] k = b("k");
      ReentrantLock lock = s.keyLocks.of(Column.saltOf("later"), k);
      AtomicReference<Boolean> answer = new AtomicReference<>();
      AtomicReference<Throwable> error = new AtomicReference<>();
      Thread t;
      lock.lock();
      try {
        WriteBatch batch = new WriteBatch().expectAbsent("later", k).put(b("x"), b("1"));
        t = startWriteIf(s, batch, answer, error);
        Waits.await(
            "the conditional batch queued for the stripe of (later, k)",
            Duration.ofMillis(DEADLINE_MS),
            lock::hasQueuedThreads);
        try (Store later = s.keyspace("later")) {
          later.put(k, b("now")); // the same stripe, held by this thread: lands first
        }
      } finally {
        lock.unlock();
      }
      t.join(DEADLINE_MS);
      assertThat(t.isAlive()).isFalse();
      assertThat(error.get()).isNull();
      assertThat(answer.get()).as("absence of a key put while the batch waited").isFalse();
      assertThat(s.get(b("x"))).isNull();
    }
  }

  /**
   * Conditions read keyspaces, never create them: conditions on keyspaces that do not exist hold
   * absence and fail on values without adding a column family, and a batch whose conditions fail
   * does not create the keyspaces its operations name. Only a batch that applies creates them.
   */
  @Test
  void writeIf_absentKeyspaces_createdOnlyByABatchThatApplies() {
    try (RocksDbStore s = (RocksDbStore) Stores.open(config())) {
      s.keyspace("users").put(b("k"), b("u"));
      assertThat(s.writeIf(new WriteBatch().expectAbsent("ghost", b("k")).put(b("a"), b("1"))))
          .as("absence in a keyspace that does not exist holds")
          .isTrue();
      assertThat(s.writeIf(new WriteBatch().expect("ghost", b("k"), new byte[0])))
          .as("a value in a keyspace that does not exist does not hold")
          .isFalse();
      assertThat(
              s.writeIf(
                  new WriteBatch()
                      .expect("users", b("k"), b("other"))
                      .put("orders", b("o"), b("1"))
                      .put("ghost", b("g"), b("1"))))
          .as("a failed batch naming absent keyspaces")
          .isFalse();
      assertThat(s.keyspaces()).containsExactly("users");
      assertThat(s.column("ghost")).isNull();
      assertThat(s.column("orders")).isNull();
      assertThat(
              s.writeIf(
                  new WriteBatch()
                      .expect("users", b("k"), b("u"))
                      .expectAbsent("orders", b("o"))
                      .put("orders", b("o"), b("1"))))
          .as("a batch that applies creates the keyspace it writes")
          .isTrue();
      assertThat(s.keyspaces()).containsExactlyInAnyOrder("users", "orders");
    }
    try (Store s = Stores.open(config())) {
      assertThat(s.keyspaces()).containsExactlyInAnyOrder("users", "orders");
      assertThat(s.keyspace("orders").get(b("o"))).isEqualTo(b("1"));
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
    }
  }

  /**
   * Increments through conditional batches (a counter of the store and one of a keyspace, one batch
   * with two conditions) racing increments of the same counters through compare-and-set, while a
   * plain writer puts and batches keys in the counters' stripes: no increment is lost, no lock
   * order deadlocks, and the plain writes land.
   */
  @Test
  void writeIf_racingCompareAndSetAndPlainBatches_losesNothing() throws Exception {
    long seed = 2026;
    int rounds = 300;
    try (Store s = Stores.open(config())) {
      Store ks = s.keyspace("ks");
      byte[] c = b("counter");
      s.put(c, num(0));
      ks.put(c, num(0));
      List<byte[]> neighbours = new ArrayList<>(); // keys sharing a counter's stripe
      for (int i = 0; neighbours.size() < 6; i++) {
        byte[] k = b("n" + i);
        int stripe = KeyLocks.stripe(0, k);
        if (stripe == KeyLocks.stripe(0, c) || stripe == KeyLocks.stripe(Column.saltOf("ks"), c)) {
          neighbours.add(k);
        }
      }
      AtomicBoolean stop = new AtomicBoolean();
      ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
      AtomicLong plainWrites = new AtomicLong();
      List<Thread> threads = new ArrayList<>();
      threads.add(
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                try {
                  for (long n = 0; !stop.get(); n++) {
                    WriteBatch batch = new WriteBatch();
                    for (int i = 0; i < 20; i++) {
                      batch.put(b("wide" + rnd.nextInt(5000)), num(n));
                    }
                    for (byte[] k : neighbours) {
                      batch.put(k, num(n));
                    }
                    s.write(batch);
                    s.put(neighbours.get(rnd.nextInt(neighbours.size())), num(n));
                    plainWrites.set(n + 1);
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              }));
      for (int t = 0; t < 2; t++) {
        threads.add(new Thread(() -> incrementBoth(s, c, rounds, errors)));
      }
      threads.add(new Thread(() -> incrementOne(s, c, rounds, errors)));
      threads.add(new Thread(() -> incrementOne(ks, c, rounds, errors)));
      threads.forEach(Thread::start);
      for (Thread th : threads.subList(1, threads.size())) {
        th.join(DEADLINE_MS * 4);
        assertThat(th.isAlive()).as("conditional writer stuck, seed %d", seed).isFalse();
      }
      stop.set(true);
      threads.get(0).join(DEADLINE_MS);
      assertThat(threads.get(0).isAlive()).isFalse();
      assertThat(errors).as("seed %d", seed).isEmpty();
      assertThat(num(s.get(c))).as("store counter, seed %d", seed).isEqualTo(3L * rounds);
      assertThat(num(ks.get(c))).as("keyspace counter, seed %d", seed).isEqualTo(3L * rounds);
      long last = plainWrites.get() - 1;
      assertThat(last).isGreaterThanOrEqualTo(0);
      for (byte[] k : neighbours) {
        assertThat(num(s.get(k))).isBetween(last - 1, last);
      }
    }
  }

  /** Increments the store's and keyspace ks's counter together, by conditional batches. */
  private static void incrementBoth(
      Store s, byte[] c, int rounds, ConcurrentLinkedQueue<Throwable> errors) {
    try {
      Store ks = s.keyspace("ks");
      for (int i = 0; i < rounds; i++) {
        while (true) {
          byte[] mine = s.get(c);
          byte[] theirs = ks.get(c);
          WriteBatch tx =
              new WriteBatch()
                  .expect(c, mine)
                  .expect("ks", c, theirs)
                  .put(c, num(num(mine) + 1))
                  .put("ks", c, num(num(theirs) + 1));
          if (s.writeIf(tx)) {
            break;
          }
        }
      }
    } catch (Throwable e) {
      errors.add(e);
    }
  }

  /** Increments one counter by compare-and-set. */
  private static void incrementOne(
      Store s, byte[] c, int rounds, ConcurrentLinkedQueue<Throwable> errors) {
    try {
      for (int i = 0; i < rounds; i++) {
        while (true) {
          byte[] cur = s.get(c);
          if (s.replace(c, cur, num(num(cur) + 1))) {
            break;
          }
        }
      }
    } catch (Throwable e) {
      errors.add(e);
    }
  }
}
