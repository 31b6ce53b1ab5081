package io.kv4j.sqlite;

import static io.kv4j.sqlite.Sqlite.b;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreException;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reading and verifying a store while it is written, by another process (read-only opens, the
 * documented use of {@code kv4j get/scan/verify} on a live store) or by other threads of this one:
 * the open's checks, {@code verify()} and scans see the file change under them and must never take
 * that for damage.
 */
class SqliteLiveWriterTest {
  private static final int ROUNDS = 60;

  @TempDir Path dir;

  @Test
  void readOnlyOpenVerifyAndScan_besideAWriterProcess_neverReportDamage() throws Exception {
    try (ChildProcess writer =
        ChildProcess.java(ChurnChild.class, dir.toString()).jvmOptions("-Xmx128m").start()) {
      assertThat(writer.readLine(Duration.ofMinutes(2))).as(writer.describe()).isEqualTo("READY");
      for (int i = 0; i < ROUNDS; i++) {
        try (Store r = Stores.open(Sqlite.config(dir).readOnly(true).build())) {
          r.verify();
          r.get(b("key7"));
          r.forEach(KeyRange.all(), e -> {}); // every row checksum, keys in order, one snapshot
        } catch (StoreException e) {
          throw new AssertionError(
              "read-only open + verify() "
                  + (i + 1)
                  + " of "
                  + ROUNDS
                  + " beside a live writer: "
                  + e,
              e);
        }
      }
      assertThat(writer.process().isAlive()).as(writer.describe()).isTrue();
    }
  }

  @Test
  void verifyAndScans_ofTheStoreAndOfAReadOnlyOne_besideWriterThreads_neverReportDamage()
      throws Exception {
    try (Store s = Stores.open(Sqlite.config(dir).option("wal-autocheckpoint", "8").build())) {
      s.put(b("key7"), b("v"));
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong writes = new AtomicLong();
      List<Future<?>> writers = new ArrayList<>();
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        for (int t = 0; t < 2; t++) {
          Random r = new Random(t);
          writers.add(
              pool.submit(
                  () -> {
                    while (!stop.get()) {
                      byte[] k = b("key" + r.nextInt(2000));
                      if (r.nextInt(4) == 0) {
                        s.delete(k);
                      } else {
                        s.put(k, new byte[r.nextInt(8) == 0 ? 6000 : 40 + r.nextInt(400)]);
                      }
                      if (writes.incrementAndGet() % 500 == 0) {
                        s.compact();
                      }
                    }
                    return null;
                  }));
        }
        long first = writes.get();
        // ROUNDS rounds, and more until the writers have written since the first (starved threads
        // on a loaded machine): at most two minutes.
        long backstop = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        for (int i = 0;
            i < ROUNDS || (writes.get() <= first && System.nanoTime() - backstop < 0);
            i++) {
          try (Store r = Stores.open(Sqlite.config(dir).readOnly(true).build())) {
            s.verify();
            s.forEach(KeyRange.all(), e -> {});
            r.verify();
            r.forEach(KeyRange.all(), e -> {});
          } catch (StoreException e) {
            throw new AssertionError(
                "verify() " + (i + 1) + " of " + ROUNDS + " beside writer threads: " + e, e);
          }
        }
        assertThat(writes.get()).as("the writers wrote meanwhile").isGreaterThan(first);
      } finally {
        stop.set(true);
        pool.shutdown();
      }
      for (Future<?> w : writers) {
        w.get(); // a writer's own failure fails the test
      }
    }
  }
}
