package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbMapGrowthTest {
  private static final String[] TINY = {"map-size", "1MiB", "map-growth-step", "1MiB"};

  @TempDir Path dir;

  @Test
  void fullMap_growsTransparentlyAndKeepsEverything() {
    try (Store s = Lmdb.open(dir, TINY)) {
      for (int i = 0; i < 2000; i++) {
        s.put(key(i), value(i, 4000));
      }
      assertThat(Lmdb.figure(s, "map-growths")).isGreaterThanOrEqualTo(5);
      assertThat(Lmdb.figure(s, "map-size-bytes")).isGreaterThanOrEqualTo(2000L * 4000);
      for (int i = 0; i < 2000; i++) {
        assertThat(s.get(key(i))).isEqualTo(value(i, 4000));
      }
    }
    // The grown map is remembered: reopening with a small initial size still holds the data.
    try (Store s = Lmdb.open(dir, TINY)) {
      assertThat(s.stats().keyCount()).isEqualTo(2000);
      s.put(key(5000), value(5000, 4000));
      assertThat(s.get(key(1999))).isEqualTo(value(1999, 4000));
    }
  }

  @Test
  void valueLargerThanTheGrowthStep_growsSeveralTimes() {
    try (Store s = Lmdb.open(dir, TINY)) {
      byte[] v = value(7, 6 << 20);
      s.put(b("big"), v);
      assertThat(s.get(b("big"))).isEqualTo(v);
      assertThat(Lmdb.figure(s, "map-growths")).isGreaterThanOrEqualTo(5);
    }
  }

  @Test
  void growth_runsWhileOtherThreadsReadAndScan() throws Exception {
    try (Store s = Lmdb.open(dir, TINY)) {
      for (int i = 0; i < 50; i++) {
        s.put(key(i), value(i, 100));
      }
      AtomicBoolean stop = new AtomicBoolean();
      Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
      AtomicLong reads = new AtomicLong();
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        Thread th =
            new Thread(
                () -> {
                  try {
                    while (!stop.get()) {
                      for (int i = 0; i < 50; i++) {
                        if (!java.util.Arrays.equals(s.get(key(i)), value(i, 100))) {
                          throw new AssertionError("wrong value for key " + i);
                        }
                      }
                      try (Cursor c = s.scan(KeyRange.all().limit(20))) {
                        int n = 0;
                        while (c.hasNext()) {
                          c.next();
                          n++;
                        }
                        if (n != 20) {
                          throw new AssertionError("scan saw " + n);
                        }
                      }
                      reads.incrementAndGet();
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                });
        th.start();
        readers.add(th);
      }
      for (int i = 1000; i < 3000; i++) {
        s.put(key(i), value(i, 4000));
      }
      stop.set(true);
      for (Thread th : readers) {
        th.join();
      }
      assertThat(errors).isEmpty();
      assertThat(reads.get()).isPositive();
      assertThat(Lmdb.figure(s, "map-growths")).isGreaterThanOrEqualTo(5);
    }
  }

  @Test
  void writerHoldingItsOwnCursor_getsAClearErrorInsteadOfADeadlock() {
    try (Store s = Lmdb.open(dir, TINY)) {
      s.put(b("a"), b("1"));
      Cursor c = s.scan(KeyRange.all());
      assertThatThrownBy(
              () -> {
                for (int i = 0; i < 2000; i++) {
                  s.put(key(i), value(i, 4000));
                }
              })
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("open cursor")
          .hasMessageContaining("map-size");
      // The cursor still works, and its snapshot is intact.
      assertThat(c.next()).isEqualTo(new Entry(b("a"), b("1")));
      c.close();
      for (int i = 0; i < 2000; i++) {
        s.put(key(i), value(i, 4000));
      }
      assertThat(s.get(key(1999))).isEqualTo(value(1999, 4000));
    }
  }

  @Test
  void growth_waitsForAnotherThreadsCursorThenProceeds() throws Exception {
    try (Store s = Lmdb.open(dir, TINY)) {
      s.put(b("a"), b("1"));
      CountDownLatch opened = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<List<Entry>> holder =
          CompletableFuture.supplyAsync(
              () -> {
                try (Cursor c = s.scan(KeyRange.all())) {
                  opened.countDown();
                  await(release);
                  // A thread holding a cursor may still read while growth is pending.
                  if (!java.util.Arrays.equals(s.get(b("a")), b("1"))) {
                    throw new AssertionError("get during pending growth failed");
                  }
                  List<Entry> seen = new ArrayList<>();
                  c.forEachRemaining(seen::add);
                  return seen;
                }
              });
      await(opened);
      Thread writer =
          new Thread(
              () -> {
                for (int i = 0; i < 2000; i++) {
                  s.put(key(i), value(i, 4000));
                }
              });
      writer.start();
      // Wait until the writer is parked in the growth wait (map full, cursor open elsewhere).
      awaitTimedWaiting(writer);
      assertThat(writer.isAlive()).isTrue();
      release.countDown();
      assertThat(holder.get(60, TimeUnit.SECONDS)).containsExactly(new Entry(b("a"), b("1")));
      writer.join();
      assertThat(s.get(key(1999))).isEqualTo(value(1999, 4000));
    }
  }

  @Test
  void cursorHolderWritingWhileGrowthWaitsForIt_isNotStuckBehindTheGrower() throws Exception {
    try (Store s = Lmdb.open(dir, TINY)) {
      s.put(b("a"), b("1"));
      CountDownLatch opened = new CountDownLatch(1);
      CountDownLatch go = new CountDownLatch(1);
      CompletableFuture<String> holder =
          CompletableFuture.supplyAsync(
              () -> {
                String outcome;
                try (Cursor c = s.scan(KeyRange.all())) {
                  opened.countDown();
                  await(go);
                  try {
                    s.put(b("small"), b("x"));
                    outcome = "written";
                  } catch (IllegalStateException e) {
                    outcome = e.getMessage().contains("open cursor") ? "refused" : e.toString();
                  }
                  c.forEachRemaining(e -> {});
                }
                return outcome;
              });
      await(opened);
      Thread writer =
          new Thread(
              () -> {
                for (int i = 0; i < 2000; i++) {
                  s.put(key(i), value(i, 4000));
                }
              });
      java.util.concurrent.atomic.AtomicReference<Throwable> writerError =
          new java.util.concurrent.atomic.AtomicReference<>();
      writer.setUncaughtExceptionHandler((t, e) -> writerError.set(e));
      writer.start();
      awaitTimedWaiting(writer);
      go.countDown();
      // The holder's write returns (it does not queue behind the grower, which waits for the
      // holder's cursor until 'map-growth-timeout'); then the holder closes its cursor and the
      // grower finishes. Had the holder been stuck, the grower would have failed on the timeout.
      assertThat(holder.get(60, TimeUnit.SECONDS)).isIn("written", "refused");
      writer.join();
      assertThat(writerError.get()).isNull();
      assertThat(s.get(key(1999))).isEqualTo(value(1999, 4000));
    }
  }

  @Test
  void growth_givesUpAfterTheTimeoutWhenACursorStaysOpen() throws Exception {
    try (Store s = Lmdb.open(dir, "map-size", "1MiB", "map-growth-timeout", "300")) {
      CountDownLatch opened = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Void> holder =
          CompletableFuture.runAsync(
              () -> {
                Cursor c = s.scan(KeyRange.all());
                try {
                  opened.countDown();
                  await(release);
                } finally {
                  c.close();
                }
              });
      await(opened);
      try {
        assertThatThrownBy(
                () -> {
                  for (int i = 0; i < 2000; i++) {
                    s.put(key(i), value(i, 4000));
                  }
                })
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("map-growth-timeout");
      } finally {
        release.countDown();
      }
      holder.get(60, TimeUnit.SECONDS);
      for (int i = 0; i < 2000; i++) {
        s.put(key(i), value(i, 4000));
      }
      assertThat(s.stats().keyCount()).isEqualTo(2000);
    }
  }

  private static void await(CountDownLatch l) {
    try {
      if (!l.await(60, TimeUnit.SECONDS)) {
        throw new AssertionError("latch timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  static byte[] key(int i) {
    return b(String.format("key%08d", i));
  }

  static byte[] value(int i, int size) {
    ByteBuffer bb = ByteBuffer.allocate(size);
    while (bb.remaining() >= 4) {
      bb.putInt(i * 31 + bb.position());
    }
    return bb.array();
  }

  /**
   * Waits until {@code t} is in a timed wait or has ended, parking (not spinning: on two cores a
   * spin takes the core the awaited thread needs), for at most a minute.
   */
  private static void awaitTimedWaiting(Thread t) {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
    while (t.getState() != Thread.State.TIMED_WAITING && t.isAlive()) {
      assertThat(System.nanoTime() - deadline)
          .as("%s in a timed wait within 60 s (now %s)", t.getName(), t.getState())
          .isNegative();
      java.util.concurrent.locks.LockSupport.parkNanos(100_000);
    }
  }
}
