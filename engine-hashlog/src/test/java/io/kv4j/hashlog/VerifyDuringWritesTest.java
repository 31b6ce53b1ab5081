package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code verify()} of a live read-write store while writers roll segments, the sealer writes their
 * hints and compaction replaces segments: it reports nothing, because nothing is damaged.
 *
 * <p>The race it is about: verify checks the active segment's records up to the end it read, and
 * meanwhile a writer seals that segment and the sealer writes its hint, which lists the records
 * appended since too. Checking that hint against the records read is a false alarm ("hint file …
 * entry n does not match the record count"). {@link #verifyWhileItsSegmentIsSealed_leavesTheHint}
 * crosses that race in every run: its storage holds verify where it asks for the hint of the
 * segment it checked, while the test appends, rolls and waits for the hint. The loop beside batch
 * writers then looks for any other interleaving, for a bounded time.
 */
class VerifyDuringWritesTest {
  /** The loop stops after this many hints written while verify checked their segment. */
  private static final int RACES = 8;

  /** Or after this long: the loop looks for interleavings; the race itself is proven below. */
  private static final long LIMIT_NANOS = 30_000_000_000L;

  /** How long the deterministic test waits for a step of the other thread before failing. */
  private static final long STEP_SECONDS = 60;

  @TempDir Path tmp;

  private static byte[] key(int i) {
    return ByteBuffer.allocate(4).putInt(i).array();
  }

  /**
   * Verify reads the active segment's end and checks the records below it; before it looks for that
   * segment's hint, the test appends past that end, rolls the segment and waits for the sealer's
   * hint. Verify must neither check that hint against the records it read (a false alarm) nor miss
   * that it was written (the count the loop below relies on); the next verify checks it.
   */
  @ParameterizedTest
  @EnumSource(Durability.class)
  void verifyWhileItsSegmentIsSealed_leavesTheHint(Durability d) throws Exception {
    Path dir = tmp.resolve(d.name());
    FaultyStorage storage = new FaultyStorage();
    try (HashLogStore s =
        TestStores.open(dir, d, storage, "segment-size", "64KiB", "compaction-threads", "0")) {
      for (int i = 0; i < 20; i++) {
        s.put(key(i), new byte[100]);
      }
      Segment checked = s.activeSegment();
      Path hint = HintFile.path(dir, checked.id);
      CountDownLatch held = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicInteger endWhenHeld = new AtomicInteger(-1);
      AtomicReference<Throwable> verifyFailure = new AtomicReference<>();
      Thread verifier =
          new Thread(
              () -> {
                try {
                  s.verify();
                } catch (Throwable t) {
                  verifyFailure.set(t);
                }
              },
              "verify");
      storage.beforeExists(
          (p, caller) -> {
            if (caller == verifier && p.equals(hint) && held.getCount() > 0) {
              endWhenHeld.set(checked.end);
              held.countDown();
              try {
                release.await(STEP_SECONDS, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          });
      verifier.start();
      while (!held.await(10, TimeUnit.MILLISECONDS)) {
        assertThat(verifier.isAlive())
            .as(
                "%s: verify ended (%s) without asking for the hint of segment %d, which it checked"
                    + " as the active one",
                d, verifyFailure.get(), checked.id)
            .isTrue();
      }
      int i = 20;
      while (s.activeSegment() == checked) {
        s.put(key(i++), new byte[1_000]); // a roll within ~64 puts, even with a slow fsync
      }
      s.log.sealer.drain();
      assertThat(storage.exists(hint)).as("%s: the sealed segment's hint", d).isTrue();
      assertThat(checked.end)
          .as("%s: the hint lists records past the end verify read", d)
          .isGreaterThan(endWhenHeld.get());
      release.countDown();
      verifier.join(TimeUnit.SECONDS.toMillis(STEP_SECONDS));
      storage.beforeExists(null);
      assertThat(verifier.isAlive()).as("%s: verify still running", d).isFalse();
      assertThat(verifyFailure.get())
          .as("%s: verify of a live, undamaged store while its segment was sealed", d)
          .isNull();
      assertThat(s.hintsWrittenDuringVerify())
          .as("%s: hints written while verify checked their segment", d)
          .isEqualTo(1);
      s.verify(); // now checks the hint against the sealed segment
    }
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
