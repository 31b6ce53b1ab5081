package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How plain writes and conditional writes share the key stripes ({@link KeyLocks}): plain writes
 * take no stripe while no conditional write runs, take their stripes while one does, and never land
 * between a conditional write's compare and its write. No timing is asserted.
 */
class RocksDbWriteLockingTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  @TempDir Path tmp;

  private Store open() {
    return Stores.open(
        StoreConfig.builder("rocksdb")
            .path(tmp.resolve("db"))
            .durability(Durability.BUFFERED)
            .build());
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Thread start(Runnable r, ConcurrentLinkedQueue<Throwable> errors) {
    Thread t =
        new Thread(
            () -> {
              try {
                r.run();
              } catch (Throwable e) {
                errors.add(e);
              }
            });
    t.start();
    return t;
  }

  /**
   * With no conditional write running, put, delete and a batch take no stripe: each lands while the
   * test holds its key's stripe lock.
   */
  @Test
  void plainWrites_noConditionalWrite_takeNoStripe() throws Exception {
    try (RocksDbStore s = (RocksDbStore) open()) {
      byte[] k = b("key");
      ReentrantLock lock = s.keyLock(k);
      List<Runnable> writes =
          List.of(
              () -> s.put(k, b("put")),
              () -> s.delete(k),
              () -> s.write(new WriteBatch().put(b("other"), b("x")).put(k, b("batch"))));
      List<byte[]> after = java.util.Arrays.asList(b("put"), null, b("batch"));
      lock.lock();
      try {
        for (int i = 0; i < writes.size(); i++) {
          ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
          Thread t = start(writes.get(i), errors);
          t.join(DEADLINE.toMillis());
          assertThat(t.isAlive()).as("write %d waited for the stripe", i).isFalse();
          assertThat(errors).isEmpty();
          assertThat(s.get(k)).as("write %d", i).isEqualTo(after.get(i));
        }
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * A plain write racing a conditional write on the same key, at the worst moment: the conditional
   * write has compared (the key held its expected value) and not yet written. The put, delete or
   * batch must wait on the key's stripe and land after, so the key ends with the plain write's
   * value and the conditional write still answers true. A put landing inside that window would be
   * overwritten by the conditional write (shown by letting plain writes go without stripes: the put
   * never queued and the wait for it timed out).
   */
  @Test
  void plainWrite_duringConditionalCompareAndWrite_landsAfterIt() throws Exception {
    try (RocksDbStore s = (RocksDbStore) open()) {
      byte[] k = b("key");
      List<Runnable> plain =
          List.of(
              () -> s.put(k, b("put")),
              () -> s.delete(k),
              () -> s.write(new WriteBatch().put(b("other"), b("x")).put(k, b("batch"))));
      List<byte[]> after = java.util.Arrays.asList(b("put"), null, b("batch"));
      for (int i = 0; i < plain.size(); i++) {
        s.put(k, b("v0"));
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicReference<Boolean> answer = new AtomicReference<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        s.betweenReadAndWrite =
            () -> {
              paused.countDown();
              try {
                if (!resume.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                  throw new AssertionError("not resumed");
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
              }
            };
        Thread cas;
        Thread w;
        try {
          cas = start(() -> answer.set(s.replace(k, b("v0"), b("cas"))), errors);
          assertThat(paused.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
          w = start(plain.get(i), errors);
          ReentrantLock lock = s.keyLock(k);
          Waits.await(
              "plain write " + i + " queued for the stripe",
              DEADLINE,
              () -> lock.hasQueuedThreads());
          assertThat(s.get(k))
              .as("plain write %d landed inside the compare-and-write", i)
              .isEqualTo(b("v0"));
        } finally {
          resume.countDown();
          s.betweenReadAndWrite = null;
        }
        cas.join(DEADLINE.toMillis());
        w.join(DEADLINE.toMillis());
        assertThat(cas.isAlive() || w.isAlive()).isFalse();
        assertThat(errors).isEmpty();
        assertThat(answer.get()).isTrue();
        assertThat(s.get(k))
            .as("plain write %d after the conditional one", i)
            .isEqualTo(after.get(i));
      }
    }
  }

  /**
   * The handshake itself: a conditional write that begins while a plain write is writing without
   * stripes waits until that write has ended; while it runs, plain writes are told to take their
   * stripes; once it ends they go without again.
   */
  @Test
  void beginConditional_plainWriteInFlight_waitsForIt() throws Exception {
    KeyLocks locks = new KeyLocks();
    int token = locks.enterUnlocked();
    assertThat(token).as("no conditional write: unlocked").isNotNegative();
    AtomicBoolean begun = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    Thread c =
        start(
            () -> {
              locks.beginConditional();
              begun.set(true);
            },
            errors);
    // The conditional write has raised its count once plain writes are refused the unlocked path.
    Waits.await(
        "the conditional write started",
        DEADLINE,
        () -> {
          int t = locks.enterUnlocked();
          if (t >= 0) {
            locks.exitUnlocked(t); // not yet: a plain write that went through, ended at once
          }
          return t < 0;
        });
    Waits.await(
        "the conditional write parked waiting",
        DEADLINE,
        () -> c.getState() == Thread.State.TIMED_WAITING || c.getState() == Thread.State.WAITING);
    assertThat(begun).as("began while a plain write was in flight").isFalse();
    locks.exitUnlocked(token);
    c.join(DEADLINE.toMillis());
    assertThat(c.isAlive()).isFalse();
    assertThat(errors).isEmpty();
    assertThat(begun).isTrue();
    assertThat(locks.enterUnlocked()).as("while a conditional write runs").isNegative();
    locks.endConditional();
    int again = locks.enterUnlocked();
    assertThat(again).as("after the conditional write").isNotNegative();
    locks.exitUnlocked(again);
  }

  /**
   * Atomicity under a mix: 4 threads increment 8 counters by compare-and-set, conditional batches
   * move tokens between two keys (their sum is invariant), while 2 threads write the counters' and
   * tokens' neighbours with puts, deletes and batches of 200 keys (both modes keep switching). No
   * increment is lost and the token sum never changes, seen through snapshots meanwhile.
   */
  @Test
  void conditionalWrites_mixedWithPlainWrites_loseNothing() throws Exception {
    long seed = 4242;
    int casThreads = 4;
    int rounds = 300;
    try (Store s = open()) {
      List<byte[]> counters = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        counters.add(b("counter-" + i));
        s.put(counters.get(i), b("0"));
      }
      byte[] a = b("tokens-a");
      byte[] z = b("tokens-z");
      s.put(a, b("1000"));
      s.put(z, b("0"));
      AtomicBoolean stop = new AtomicBoolean();
      ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < casThreads; t++) {
        SplittableRandom r = new SplittableRandom(seed + t);
        threads.add(
            start(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    byte[] c = counters.get(r.nextInt(counters.size()));
                    while (true) {
                      byte[] v = s.get(c);
                      long n = Long.parseLong(new String(v, StandardCharsets.UTF_8));
                      if (s.replace(c, v, b(Long.toString(n + 1)))) {
                        break;
                      }
                    }
                    moveToken(s, a, z, r.nextBoolean());
                  }
                },
                errors));
      }
      List<Thread> plain = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        SplittableRandom r = new SplittableRandom(seed + 100 + t);
        plain.add(
            start(
                () -> {
                  while (!stop.get()) {
                    byte[] k = b("counter-" + r.nextInt(8) + "-n" + r.nextInt(50));
                    switch (r.nextInt(3)) {
                      case 0 -> s.put(k, b("x"));
                      case 1 -> s.delete(k);
                      default -> {
                        WriteBatch wb = new WriteBatch();
                        for (int j = 0; j < 200; j++) {
                          wb.put(b("n-" + r.nextInt(10_000)), b("y"));
                        }
                        s.write(wb);
                      }
                    }
                  }
                },
                errors));
      }
      Supplier<String> state = () -> "seed " + seed + ", errors " + errors;
      for (Thread t : threads) {
        t.join(DEADLINE.toMillis() * 2);
        assertThat(t.isAlive()).as(state.get()).isFalse();
      }
      stop.set(true);
      for (Thread t : plain) {
        t.join(DEADLINE.toMillis());
        assertThat(t.isAlive()).as(state.get()).isFalse();
      }
      assertThat(errors).as(state.get()).isEmpty();
      long total = 0;
      for (byte[] c : counters) {
        total += Long.parseLong(new String(s.get(c), StandardCharsets.UTF_8));
      }
      assertThat(total).as("increments, %s", state.get()).isEqualTo((long) casThreads * rounds);
      assertThat(num(s.get(a)) + num(s.get(z))).as("tokens, %s", state.get()).isEqualTo(1000);
    }
  }

  private static long num(byte[] v) {
    return Long.parseLong(new String(v, StandardCharsets.UTF_8));
  }

  /** Moves one token between two keys with a conditional batch, retrying until it applies. */
  private static void moveToken(Store s, byte[] a, byte[] z, boolean toZ) {
    byte[] from = toZ ? a : z;
    byte[] to = toZ ? z : a;
    while (true) {
      byte[] f = s.get(from);
      byte[] t = s.get(to);
      if (num(f) == 0) {
        return;
      }
      WriteBatch wb =
          new WriteBatch()
              .expect(from, f)
              .expect(to, t)
              .put(from, b(Long.toString(num(f) - 1)))
              .put(to, b(Long.toString(num(t) + 1)));
      if (s.writeIf(wb)) {
        return;
      }
    }
  }
}
