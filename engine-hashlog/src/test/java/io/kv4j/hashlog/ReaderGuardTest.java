package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader guard of issue #27 (a slot per thread instead of a shared striped counter): gets raced
 * hard against compaction runs that unmap the segments they read, the waits of a retirement and of
 * a close, nesting, thread churn, and every damaged byte of a record still reported by a get.
 */
class ReaderGuardTest {
  @TempDir Path dir;

  private static byte[] key(int k) {
    return String.format("key-%06d", k).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** A value that says whose it is: key, write number, length, and bytes derived from them. */
  private static byte[] value(int k, int write, int length) {
    byte[] v = new byte[length];
    ByteBuffer b = ByteBuffer.wrap(v);
    b.putInt(k).putInt(write).putInt(length);
    for (int i = 12; i < length; i++) {
      v[i] = (byte) (k * 31 + write * 17 + i);
    }
    return v;
  }

  /**
   * What is wrong with {@code v} as a value of key {@code k}, or null if it is one of its values.
   */
  private static String problem(int k, byte[] v) {
    if (v == null) {
      return "absent";
    }
    if (v.length < 12) {
      return "only " + v.length + " bytes";
    }
    ByteBuffer b = ByteBuffer.wrap(v);
    int owner = b.getInt();
    int write = b.getInt();
    int length = b.getInt();
    if (owner != k || length != v.length) {
      return "value of key " + owner + " with length " + length + " in " + v.length + " bytes";
    }
    for (int i = 12; i < length; i++) {
      if (v[i] != (byte) (k * 31 + write * 17 + i)) {
        return "byte " + i + " of write " + write + " is wrong";
      }
    }
    return null;
  }

  @Test
  void getsRacingCompactionsThatUnmapTheirSegments_neverCrashNorReturnAnotherValue()
      throws Exception {
    long seed = Long.getLong("kv4j.test.seed", System.nanoTime());
    int keys = 150;
    for (int round = 0; round < 6; round++) {
      long roundSeed = seed + round;
      ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong gets = new AtomicLong();
      Path d = dir.resolve("round-" + round);
      try (HashLogStore s =
          TestStores.open(
              d,
              Durability.BUFFERED,
              "segment-size",
              "4KiB",
              "compaction-threads",
              "2",
              "compaction-garbage-threshold",
              "0.05")) {
        SplittableRandom rnd = new SplittableRandom(roundSeed);
        for (int k = 0; k < keys; k++) {
          s.put(key(k), value(k, 0, 12 + rnd.nextInt(600)));
        }
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          final int id = t;
          readers.add(
              new Thread(
                  () -> {
                    SplittableRandom r = new SplittableRandom(roundSeed * 31 + id);
                    try {
                      while (!stop.get()) {
                        if (id == 2) {
                          // Thread churn: short-lived readers, each with a new thread id.
                          Thread c = new Thread(() -> readSome(s, r.split(), keys, 50, errors));
                          c.start();
                          c.join();
                        } else if (id == 1 && r.nextInt(4) == 0) {
                          int k = r.nextInt(keys - 4);
                          List<byte[]> vs = s.getAll(List.of(key(k), key(k + 1), key(k + 2)));
                          for (int i = 0; i < 3; i++) {
                            String p = problem(k + i, vs.get(i));
                            if (p != null) {
                              errors.add("getAll of key " + (k + i) + ": " + p);
                            }
                          }
                        } else {
                          readSome(s, r, keys, 1, errors);
                        }
                        gets.incrementAndGet();
                      }
                    } catch (Exception | Error e) {
                      errors.add(e.toString());
                    }
                  }));
        }
        readers.forEach(Thread::start);
        // Writes until enough compaction runs have retired segments under the readers, within a
        // budget of writes and of time (a loaded machine makes each run slow, not rare).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        int w = 0;
        while (w < 12_000 && System.nanoTime() < deadline) {
          int k = rnd.nextInt(keys);
          s.put(key(k), value(k, ++w, 12 + rnd.nextInt(600)));
        }
        System.out.printf(
            "seed %d round %d: %d writes, %d compaction runs, %d reads%n",
            seed, round, w, TestStores.figure(s, "compaction-runs"), gets.get());
        stop.set(true);
        for (Thread r : readers) {
          r.join();
        }
        assertThat(errors).as("seed %d, round %d", seed, round).isEmpty();
        assertThat(TestStores.figure(s, "compaction-runs"))
            .as("seed %d: compaction ran and unmapped segments under the readers", seed)
            .isGreaterThan(2);
        assertThat(gets.get()).as("seed %d", seed).isPositive();
        // Background compaction may still be running (the threshold is low), and a run buries its
        // victims just before its own thread reaps them. Stopped first (its threads joined, each
        // having reaped after its last run), nothing is buried behind this reap: with no cursor
        // pinning anything, a grave left now is a leak.
        s.compactor.stop();
        s.guard.reap();
        assertThat(TestStores.figure(s, "retired-segments-pinned"))
            .as("seed %d: retired segments still pinned", seed)
            .isZero();
        for (int k = 0; k < keys; k++) {
          assertThat(problem(k, s.get(key(k)))).as("seed %d, key %d", seed, k).isNull();
        }
      }
    }
  }

  private static void readSome(
      HashLogStore s, SplittableRandom r, int keys, int n, ConcurrentLinkedQueue<String> errors) {
    for (int i = 0; i < n; i++) {
      int k = r.nextInt(keys);
      String p = problem(k, s.get(key(k)));
      if (p != null) {
        errors.add("get of key " + k + ": " + p);
      }
    }
  }

  @Test
  void retirement_waitsForAReaderInside_untilItsOutermostExit() throws Exception {
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      ReaderGuard g = s.guard;
      CountDownLatch inside = new CountDownLatch(1);
      CountDownLatch leaveInner = new CountDownLatch(1);
      CountDownLatch leaveOuter = new CountDownLatch(1);
      Thread reader =
          new Thread(
              () -> {
                int outer = g.enter();
                int inner = g.enter();
                inside.countDown();
                await(leaveInner);
                g.exit(inner);
                await(leaveOuter);
                g.exit(outer);
              });
      reader.start();
      inside.await();
      Thread bury = new Thread(() -> g.bury(List.of()));
      bury.start();
      bury.join(200);
      assertThat(bury.isAlive()).as("a retirement waits for the reader inside").isTrue();
      leaveInner.countDown();
      bury.join(200);
      assertThat(bury.isAlive()).as("a nested exit does not let the retirement through").isTrue();
      // A reader entering on another thread now is not waited for.
      int late = g.enter();
      leaveOuter.countDown();
      bury.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(bury.isAlive()).as("the outermost exit lets it through").isFalse();
      g.exit(late);
      reader.join();
      // With nobody inside, a retirement does not wait at all.
      g.bury(List.of());
      g.reap();
    }
  }

  @Test
  void closingStore_waitsForTheReaderInside_thenRefusesEveryEntry() throws Exception {
    HashLogStore s = TestStores.open(dir, Durability.BUFFERED);
    s.put(key(1), value(1, 1, 100));
    ReaderGuard g = s.guard;
    int r = g.enter();
    Thread closer = new Thread(s::close);
    closer.start();
    closer.join(200);
    assertThat(closer.isAlive()).as("close waits for the reader inside").isTrue();
    g.exit(r);
    closer.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(closer.isAlive()).isFalse();
    assertThatThrownBy(g::enter).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.get(key(1))).isInstanceOf(StoreClosedException.class);
    // A refused entry left the slot outside: a retirement does not wait for it.
    g.bury(List.of());
  }

  @Test
  void everyDamagedByteOfARecord_isReportedByGet_neverReturned() throws IOException {
    long seed = Long.getLong("kv4j.test.seed", System.nanoTime());
    SplittableRandom rnd = new SplittableRandom(seed);
    byte[] k = key(7);
    byte[] v = value(7, 1, 1024);
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
      s.put(k, v);
      int at = RecordCodec.FILE_HEADER; // the store's first record
      int size = RecordCodec.RECORD_HEADER + k.length + v.length;
      Path file = s.activeSegment().path;
      try (FileChannel ch =
          FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        for (int i = 0; i < size; i++) {
          // Every bit of the header and the key; one seeded bit of each value byte.
          int bits = i < RecordCodec.RECORD_HEADER + k.length ? 8 : 1;
          for (int b = 0; b < bits; b++) {
            int bit = bits == 8 ? b : rnd.nextInt(8);
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, at + i);
            byte original = one.get(0);
            ch.write(ByteBuffer.wrap(new byte[] {(byte) (original ^ (1 << bit))}), at + i);
            try {
              final int pos = i;
              assertThatThrownBy(() -> s.get(k))
                  .as("seed %d: bit %d of record byte %d flipped", seed, bit, pos)
                  .isInstanceOf(StoreCorruptedException.class)
                  .hasMessageContaining(file.toString());
            } finally {
              ch.write(ByteBuffer.wrap(new byte[] {original}), at + i);
            }
          }
        }
      }
      assertThat(s.get(k)).isEqualTo(v);
    }
  }

  private static void await(CountDownLatch l) {
    try {
      l.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
