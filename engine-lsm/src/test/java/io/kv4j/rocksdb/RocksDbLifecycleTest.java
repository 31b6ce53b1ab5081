package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.AbstractImmutableNativeReference;
import org.rocksdb.AbstractNativeReference;

/**
 * Native lifecycle: closing under load, use after close, every native object freed, and no native
 * memory growth across many open/close cycles. A failure here is either an assertion or, worse, a
 * crashed test JVM (which surefire reports as a failed fork).
 */
class RocksDbLifecycleTest {
  /** Windows of the open/close loop; a steady leak shows in every one of them. */
  private static final int WINDOWS = 4;

  private static final int CYCLES_PER_WINDOW = 50;

  @TempDir Path tmp;

  private static byte[] key(long i) {
    return ByteBuffer.allocate(8).putLong(i).array();
  }

  private StoreConfig config(Path dir) {
    return StoreConfig.builder("rocksdb").path(dir).durability(Durability.BUFFERED).build();
  }

  /**
   * Four threads run get, put, delete, batches, scans and stats while the main thread closes the
   * store. Every thread must end on {@link StoreClosedException}; anything else, or a JVM crash,
   * fails. Ten rounds, seeded.
   */
  @Test
  void close_whileThreadsHammer_waitsForCallsAndFailsLaterOnesClearly() throws Exception {
    long seed = 42;
    for (int round = 0; round < 10; round++) {
      Path dir = tmp.resolve("hammer" + round);
      Store store = Stores.open(config(dir));
      for (int i = 0; i < 500; i++) {
        store.put(key(i), new byte[32]);
      }
      AtomicLong ops = new AtomicLong();
      ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
      ConcurrentLinkedQueue<Throwable> endings = new ConcurrentLinkedQueue<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        SplittableRandom rnd = new SplittableRandom(seed + round * 31L + t);
        Thread th =
            new Thread(
                () -> {
                  try {
                    while (true) {
                      hammerOnce(store, rnd);
                      ops.incrementAndGet();
                    }
                  } catch (StoreClosedException expected) {
                    endings.add(expected);
                  } catch (Throwable e) {
                    unexpected.add(e);
                  }
                });
        th.start();
        threads.add(th);
      }
      while (ops.get() < 2_000 && unexpected.isEmpty()) {
        Thread.onSpinWait();
      }
      store.close();
      for (Thread th : threads) {
        th.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(th.isAlive()).as("thread still running after close, seed %d", seed).isFalse();
      }
      assertThat(unexpected).as("unexpected errors, seed %d round %d", seed, round).isEmpty();
      assertThat(endings).as("every thread ended on StoreClosedException").hasSize(4);
      assertThat(((RocksDbStore) store).ownedNativeObjects())
          .allSatisfy(o -> assertThat(owning(o)).as("%s still owns its handle", o).isFalse());
    }
  }

  private static void hammerOnce(Store s, SplittableRandom rnd) {
    long k = rnd.nextInt(1000);
    switch (rnd.nextInt(7)) {
      case 0, 1 -> s.get(key(k));
      case 2 -> s.put(key(k), new byte[rnd.nextInt(64)]);
      case 3 -> s.delete(key(k));
      case 4 -> s.write(new WriteBatch().put(key(k), new byte[8]).delete(key(k + 1)));
      case 5 -> {
        try (Cursor c = s.scan(KeyRange.all().gte(key(k)).limit(50))) {
          while (c.hasNext()) {
            c.next();
          }
        }
      }
      default -> {
        try (Cursor c = s.scan(KeyRange.all().reverse())) {
          for (int i = 0; i < 20 && c.hasNext(); i++) {
            c.next();
          }
        }
        if (rnd.nextInt(10) == 0) {
          s.stats();
        }
      }
    }
  }

  @Test
  void useAfterClose_storeAndCursorsThrowClearly() {
    Store s = Stores.open(config(tmp.resolve("db")));
    for (int i = 0; i < 10; i++) {
      s.put(key(i), new byte[] {(byte) i});
    }
    Cursor open = s.scan(KeyRange.all());
    open.next();
    Cursor closedByUser = s.scan(KeyRange.all().reverse());
    closedByUser.close();
    s.close();

    assertThatThrownBy(open::hasNext)
        .isInstanceOf(StoreClosedException.class)
        .hasMessageContaining("rocksdb");
    assertThatThrownBy(open::next).isInstanceOf(StoreClosedException.class);
    assertThatCode(open::close).doesNotThrowAnyException();
    assertThatThrownBy(closedByUser::hasNext).isInstanceOf(IllegalStateException.class);

    assertThatThrownBy(() -> s.get(key(1))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.put(key(1), new byte[1])).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.delete(key(1))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.scan(KeyRange.all())).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.write(new WriteBatch().put(key(1), new byte[1])))
        .isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(s::sync).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(s::stats).isInstanceOf(StoreClosedException.class);
    assertThatCode(s::close).as("close is idempotent").doesNotThrowAnyException();
  }

  /** Every native object of the store and of its cursors reports its handle released. */
  @Test
  void close_freesEveryNativeObjectIncludingOpenCursors() {
    RocksDbStore s = (RocksDbStore) Stores.open(config(tmp.resolve("db")));
    for (int i = 0; i < 100; i++) {
      s.put(key(i), new byte[16]);
    }
    s.write(new WriteBatch().put(key(1000), new byte[1]).delete(key(3)));
    RocksDbCursor open = (RocksDbCursor) s.scan(KeyRange.all().gt(key(5)).lte(key(50)));
    open.next();
    RocksDbCursor exhausted = (RocksDbCursor) s.scan(KeyRange.all().limit(3));
    exhausted.forEachRemaining(e -> {});
    RocksDbCursor closed = (RocksDbCursor) s.scan(KeyRange.all().reverse());
    closed.close();

    List<Object> natives = new ArrayList<>(s.ownedNativeObjects());
    natives.addAll(nonNull(open.owned()));
    assertThat(natives)
        .hasSizeGreaterThanOrEqualTo(10)
        .allSatisfy(o -> assertThat(owning(o)).isTrue());
    assertThat(nonNull(exhausted.owned()))
        .as("an exhausted cursor already freed its iterator")
        .allSatisfy(o -> assertThat(owning(o)).isFalse());
    assertThat(nonNull(closed.owned())).allSatisfy(o -> assertThat(owning(o)).isFalse());

    s.close();
    assertThat(natives).allSatisfy(o -> assertThat(owning(o)).as("%s", o).isFalse());
  }

  /**
   * scan() racing close(): a cursor created while close runs must still be freed before the
   * database, and the caller gets either a working cursor or StoreClosedException.
   */
  @Test
  void scan_racingClose_neverLeavesAnIteratorBehind() throws Exception {
    for (int round = 0; round < 20; round++) {
      RocksDbStore s = (RocksDbStore) Stores.open(config(tmp.resolve("race" + round)));
      s.put(key(1), new byte[1]);
      List<RocksDbCursor> made = Collections.synchronizedList(new ArrayList<>());
      ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
      AtomicLong scans = new AtomicLong();
      Thread scanner =
          new Thread(
              () -> {
                try {
                  while (true) {
                    made.add((RocksDbCursor) s.scan(KeyRange.all()));
                    scans.incrementAndGet();
                  }
                } catch (StoreClosedException expected) {
                  // the store closed: done
                } catch (Throwable e) {
                  unexpected.add(e);
                }
              });
      scanner.start();
      while (scans.get() < 50 && unexpected.isEmpty()) {
        Thread.onSpinWait();
      }
      s.close();
      scanner.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(unexpected).isEmpty();
      assertThat(made).isNotEmpty();
      for (RocksDbCursor c : made) {
        assertThat(nonNull(c.owned())).allSatisfy(o -> assertThat(owning(o)).isFalse());
        assertThatThrownBy(c::hasNext).isInstanceOf(StoreClosedException.class);
      }
    }
  }

  /**
   * close() racing a running compact(): close cancels the manual compaction (or waits for it), the
   * compacting caller either returns or gets StoreClosedException, every handle is freed, and the
   * data is intact after reopen. Which of the two endings happens depends on timing; both are
   * correct, a crash or any other exception is not.
   */
  @Test
  void compact_racingClose_endsCleanlyAndKeepsData() throws Exception {
    long seed = 77;
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int round = 0; round < 5; round++) {
      Path dir = tmp.resolve("compact" + round);
      StoreConfig c =
          StoreConfig.builder("rocksdb")
              .path(dir)
              .durability(Durability.BUFFERED)
              .option("write-buffer-size", "256KiB")
              .option("rocksdb-options", "disable_auto_compactions=true")
              .build();
      RocksDbStore s = (RocksDbStore) Stores.open(c);
      for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 3000; i++) {
          byte[] v = new byte[1024];
          rnd.nextBytes(v);
          s.put(key(i), v);
        }
      }
      ConcurrentLinkedQueue<Throwable> endings = new ConcurrentLinkedQueue<>();
      AtomicLong started = new AtomicLong();
      Thread compactor =
          new Thread(
              () -> {
                started.incrementAndGet();
                try {
                  s.compact();
                } catch (Throwable e) {
                  endings.add(e);
                }
              });
      compactor.start();
      while (started.get() == 0) {
        Thread.onSpinWait();
      }
      s.close();
      compactor.join(TimeUnit.SECONDS.toMillis(60));
      assertThat(compactor.isAlive()).as("compact() still running after close").isFalse();
      assertThat(endings)
          .as("compact() returns or ends on StoreClosedException, seed %d round %d", seed, round)
          .allSatisfy(e -> assertThat(e).isInstanceOf(StoreClosedException.class));
      assertThat(s.ownedNativeObjects())
          .allSatisfy(o -> assertThat(owning(o)).as("%s still owns its handle", o).isFalse());
      try (Store again = Stores.open(c)) {
        long n;
        try (Stream<?> all = again.stream(KeyRange.all())) {
          n = all.count();
        }
        assertThat(n)
            .as("every key survives an interrupted compaction, round %d", round)
            .isEqualTo(3000);
      }
    }
  }

  /**
   * Opens and closes a store 200 times after a warm-up of 30, each time writing a 1 MiB batch and
   * some puts, reading them back, and leaving a cursor open for close to free. The loop is measured
   * in four windows of 50 cycles; in at least one window, resident memory (VmRSS) minus Java heap
   * growth must grow by less than 16 MiB.
   *
   * <p>What it proves: nothing sizeable leaks per cycle. A leaked database, memtable or block cache
   * keeps at least the 1 MiB written per cycle resident, so a steady leak grows every window by 50
   * MiB or more (a store never closed measured 110-130 MiB per window); a leaked iterator pins its
   * memtable the same way. Why the least window and not the total: the allocator's free lists and
   * RocksDB's background threads move VmRSS by up to ±50 MiB from one window to the next with
   * nothing leaking (a 200-cycle total once read +74 MiB in CI), but noise does not grow every
   * window the way a leak does. What it does not prove: that small objects (an options struct, a
   * filter policy) are freed; {@link #close_freesEveryNativeObjectIncludingOpenCursors()} checks
   * those handle by handle.
   */
  @Test
  void openCloseLoop_residentMemoryDoesNotGrow() throws IOException {
    // On disk, not tmpfs: RocksDB preallocates WAL files, which on tmpfs costs real memory and
    // time.
    Path base = tmp;
    byte[] value = new byte[4096];
    new SplittableRandom(1).nextBytes(value);
    Runnable cycle =
        new Runnable() {
          int n;

          @Override
          public void run() {
            Path dir = base.resolve("loop" + (n++));
            Store s = Stores.open(config(dir));
            WriteBatch batch = new WriteBatch();
            for (int i = 0; i < 256; i++) {
              batch.put(key(i), value);
            }
            s.write(batch);
            for (int i = 256; i < 300; i++) {
              s.put(key(i), value);
            }
            assertThat(s.get(key(7))).isEqualTo(value);
            Cursor c = s.scan(KeyRange.all());
            c.next();
            s.close();
            deleteTree(dir);
          }
        };
    for (int i = 0; i < 30; i++) {
      cycle.run();
    }
    long[] growth = new long[WINDOWS];
    System.gc();
    long rss = rssBytes();
    long heap = heapCommitted();
    for (int w = 0; w < WINDOWS; w++) {
      for (int i = 0; i < CYCLES_PER_WINDOW; i++) {
        cycle.run();
      }
      System.gc();
      long rssNow = rssBytes();
      long heapNow = heapCommitted();
      growth[w] = (rssNow - rss) - Math.max(0, heapNow - heap);
      rss = rssNow;
      heap = heapNow;
    }
    long least = Arrays.stream(growth).min().getAsLong();
    System.out.printf(
        "open/close %d x %d: native growth per window %s KiB%n",
        WINDOWS,
        CYCLES_PER_WINDOW,
        Arrays.toString(Arrays.stream(growth).map(g -> g >> 10).toArray()));
    assertThat(least)
        .as(
            "least native memory growth over any %d open/close cycles (all windows, KiB: %s)",
            CYCLES_PER_WINDOW, Arrays.toString(Arrays.stream(growth).map(g -> g >> 10).toArray()))
        .isLessThan(16L << 20);
  }

  private static long heapCommitted() {
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
  }

  private static long rssBytes() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
      }
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new AssertionError("cannot delete " + dir, e);
    }
  }

  private static List<Object> nonNull(Object[] objects) {
    List<Object> out = new ArrayList<>();
    for (Object o : objects) {
      if (o != null) {
        out.add(o);
      }
    }
    return out;
  }

  /** Whether a RocksDB object still owns native memory (Slice hides the method: reflect). */
  private static boolean owning(Object o) {
    if (o instanceof AbstractImmutableNativeReference r) {
      return r.isOwningHandle();
    }
    try {
      Method m = AbstractNativeReference.class.getDeclaredMethod("isOwningHandle");
      for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
        try {
          m = c.getDeclaredMethod("isOwningHandle");
          break;
        } catch (NoSuchMethodException e) {
          // look further up
        }
      }
      m.setAccessible(true);
      return (Boolean) m.invoke(o);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError("cannot ask " + o + " whether it owns its handle", e);
    }
  }
}
