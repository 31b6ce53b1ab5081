package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbCloseTest {
  @TempDir Path dir;

  @Test
  void useAfterClose_throwsStoreClosedException() {
    Store s = Lmdb.open(dir);
    s.put(b("k"), b("v"));
    Cursor c = s.scan(KeyRange.all());
    s.close();
    s.close();
    assertThatThrownBy(() -> s.get(b("k"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.put(b("k"), b("v"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.delete(b("k"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.write(new WriteBatch().put(b("k"), b("v"))))
        .isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> s.scan(KeyRange.all())).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(s::stats).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(s::sync).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(c::hasNext).isInstanceOf(StoreClosedException.class);
    c.close();
    // The directory is free again.
    try (Store again = Lmdb.open(dir)) {
      assertThat(again.get(b("k"))).isEqualTo(b("v"));
    }
  }

  /**
   * Threads read, write, batch, scan and ask for stats while the store is closed underneath them.
   * Every call either works or fails with StoreClosedException (cursors: IllegalStateException
   * never, since only the store closes them); the JVM survives (a native use-after-free would crash
   * the test run), and the directory reopens with its data.
   */
  @Test
  void closeWhileOtherThreadsWork_neverCrashesAndFailsCleanly() throws Exception {
    long seed = new Random().nextLong();
    for (int round = 0; round < 6; round++) {
      Path p = dir.resolve("r" + round);
      Store s = Lmdb.open(p, "map-size", "1MiB", "map-growth-step", "1MiB");
      for (int i = 0; i < 200; i++) {
        s.put(b("k" + i), b("v" + i));
      }
      Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
      AtomicLong ops = new AtomicLong();
      CountDownLatch running = new CountDownLatch(4);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int kind = t;
        Random rnd = new Random(seed + round * 10 + t);
        Thread th =
            new Thread(
                () -> {
                  running.countDown();
                  try {
                    while (true) {
                      int i = rnd.nextInt(200);
                      switch (kind) {
                        case 0 -> s.get(b("k" + i));
                        case 1 -> s.put(b("k" + i), new byte[rnd.nextInt(3000)]);
                        case 2 -> {
                          try (Cursor c = s.scan(KeyRange.all().limit(50))) {
                            while (c.hasNext()) {
                              c.next();
                            }
                          }
                        }
                        default -> {
                          s.write(new WriteBatch().put(b("b" + i), b("x")).delete(b("k" + i)));
                          s.stats();
                        }
                      }
                      ops.incrementAndGet();
                    }
                  } catch (StoreClosedException expected) {
                    // The store closed underneath: the one acceptable failure.
                  } catch (Throwable e) {
                    unexpected.add(e);
                  }
                });
        th.start();
        threads.add(th);
      }
      running.await();
      long target = ops.get() + 200;
      while (ops.get() < target && threads.stream().anyMatch(Thread::isAlive)) {
        Thread.onSpinWait();
      }
      s.close();
      for (Thread th : threads) {
        th.join();
      }
      assertThat(unexpected).as("seed %d round %d", seed, round).isEmpty();
      try (Store again = Lmdb.open(p)) {
        assertThat(again.stats().keyCount()).isPositive();
      }
    }
  }
}
