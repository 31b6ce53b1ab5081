package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CloseRaceTest {
  @TempDir Path dir;

  @Test
  void closeDuringReadsScansAndWrites_unmapsOnlyAfterThem_andTheyFailCleanly() throws Exception {
    for (int round = 0; round < 5; round++) {
      Path d = dir.resolve("r" + round);
      HashLogStore s = TestStores.open(d, Durability.BUFFERED, "segment-size", "64KiB");
      for (int i = 0; i < 2000; i++) {
        s.put(bytes("k" + i), new byte[100]);
      }
      ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
      CountDownLatch running = new CountDownLatch(3);
      List<Thread> threads = new ArrayList<>();
      threads.add(
          loop(
              running,
              unexpected,
              () -> {
                byte[] v = s.get(bytes("k" + (System.nanoTime() % 2000)));
                assertThat(v).hasSize(100);
              }));
      threads.add(
          loop(
              running,
              unexpected,
              () -> {
                try (Cursor c = s.scan(KeyRange.all())) {
                  while (c.hasNext()) {
                    assertThat(c.next().value()).hasSize(100);
                  }
                }
              }));
      threads.add(
          loop(
              running,
              unexpected,
              () -> s.put(bytes("k" + (System.nanoTime() % 2000)), new byte[100])));
      running.await();
      s.close();
      for (Thread t : threads) {
        t.join();
      }
      assertThat(unexpected).as("round " + round).isEmpty();
      try (HashLogStore again = TestStores.open(d, Durability.BUFFERED, "segment-size", "64KiB")) {
        assertThat(again.stats().keyCount()).isEqualTo(2000);
      }
    }
  }

  private static Thread loop(
      CountDownLatch running, ConcurrentLinkedQueue<Throwable> unexpected, Runnable op) {
    Thread t =
        new Thread(
            () -> {
              running.countDown();
              try {
                while (true) {
                  op.run();
                }
              } catch (StoreClosedException expected) {
                // the only acceptable way out
              } catch (Throwable e) {
                unexpected.add(e);
              }
            });
    t.start();
    return t;
  }
}
