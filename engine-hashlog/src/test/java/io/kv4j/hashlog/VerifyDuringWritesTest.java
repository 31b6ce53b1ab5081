package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code verify()} of a live read-write store while batch writers roll segments, the sealer writes
 * their hints and compaction replaces segments: it reports nothing, because nothing is damaged.
 *
 * <p>The race it is about: verify checks the active segment's records up to the end it read, and
 * meanwhile a writer seals that segment and the sealer writes its hint, which lists the records
 * appended since too. Checking that hint against the records read is a false alarm ("hint file …
 * entry n does not match the record count"). The loop runs until that has happened {@link #RACES}
 * times (the store counts it), so the test cannot pass without having crossed the race.
 */
class VerifyDuringWritesTest {
  /** Times a hint must have been written while verify checked its segment as the active one. */
  private static final int RACES = 8;

  /** Upper bound on the loop; on this 2-core VM the races take 3–15 s per durability. */
  private static final long LIMIT_NANOS = 180_000_000_000L;

  @TempDir Path tmp;

  private static byte[] key(int i) {
    return ByteBuffer.allocate(4).putInt(i).array();
  }

  @ParameterizedTest
  @EnumSource(Durability.class)
  void verifyInALoopBesideBatchWriters_reportsNothing(Durability d) throws Exception {
    long seed = 20261204L + d.ordinal();
    // Large segments, so that checking the active one takes long enough for the sealer to write a
    // hint meanwhile; SYNC (an fsync per batch) rolls them often enough only with large values.
    boolean sync = d == Durability.SYNC;
    int keys = sync ? 64 : 2_000;
    int maxValue = sync ? 64 << 10 : 1_000;
    Path dir = tmp.resolve(d.name());
    ConcurrentLinkedQueue<Throwable> writerErrors = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong batches = new AtomicLong();
    int calls = 0;
    long races;
    RuntimeException alarm = null;
    try (HashLogStore s =
        TestStores.open(dir, d, "segment-size", "8MiB", "compaction-garbage-threshold", "0.2")) {
      Thread[] writers = new Thread[2];
      for (int w = 0; w < writers.length; w++) {
        SplittableRandom r = new SplittableRandom(seed * 31 + w);
        writers[w] =
            new Thread(
                () -> {
                  try {
                    while (!stop.get()) {
                      WriteBatch b = new WriteBatch();
                      for (int i = 0; i < 8; i++) {
                        byte[] v = new byte[64 + r.nextInt(maxValue)];
                        r.nextBytes(v);
                        b.put(key(r.nextInt(keys)), v);
                      }
                      s.write(b);
                      batches.incrementAndGet();
                    }
                  } catch (Throwable t) {
                    writerErrors.add(t);
                  }
                },
                "writer-" + w);
        writers[w].start();
      }
      try {
        long deadline = System.nanoTime() + LIMIT_NANOS;
        while (alarm == null
            && s.hintsWrittenDuringVerify() < RACES
            && System.nanoTime() < deadline) {
          calls++;
          try {
            s.verify();
          } catch (RuntimeException e) {
            alarm = e;
          }
        }
      } finally {
        stop.set(true);
        for (Thread t : writers) {
          t.join();
        }
      }
      races = s.hintsWrittenDuringVerify();
      assertThat(writerErrors).as("writer failures (seed %d)", seed).isEmpty();
      assertThat(alarm)
          .as(
              "%s: verify() call %d of a live, undamaged store (seed %d, %d batches written, %d"
                  + " hints written while their segment was checked)",
              d, calls, seed, batches.get(), races)
          .isNull();
      assertThat(races)
          .as(
              "%s: hints written while verify checked their segment, in %d calls (seed %d): the"
                  + " race this test is about",
              d, calls, seed)
          .isGreaterThanOrEqualTo(RACES);
      s.verify();
    }
    System.out.printf(
        "verify beside batch writers, %s: %d calls, %d hints written during a check, %d batches%n",
        d, calls, races, batches.get());
    try (HashLogStore s = TestStores.open(dir, d)) {
      s.verify();
    }
  }
}
