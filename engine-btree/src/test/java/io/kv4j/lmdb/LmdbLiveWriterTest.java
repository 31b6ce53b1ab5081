package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
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
 * Reading a store while another process writes it, the documented use of read-only opens ({@code
 * kv4j get/scan/verify} on a live store): the open's checks of the meta pages and the file's
 * length, and {@code verify()}, see the file change under them and must never take that for damage.
 */
class LmdbLiveWriterTest {
  private static final int OPENS = 60;

  /** verify() calls per read-only open: each reads the meta pages again. */
  private static final int VERIFIES = 5;

  @TempDir Path dir;

  @Test
  void readOnlyOpenAndVerify_besideAWriterProcess_neverReportDamage() throws Exception {
    try (ChildProcess writer =
        ChildProcess.java(LmdbChildMain.class, "churn", dir.toString())
            .jvmOptions("-Xmx128m")
            .start()) {
      assertThat(writer.readLine(Duration.ofMinutes(2))).as(writer.describe()).isEqualTo("READY");
      long first = -1;
      long last = -1;
      // OPENS opens, and more until the writer has committed since the first (a starved child on
      // a loaded machine): at most two minutes.
      long backstop = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      for (int i = 0; i < OPENS || (last <= first && System.nanoTime() - backstop < 0); i++) {
        try (Store r = Stores.open(Lmdb.config(dir).readOnly(true).build())) {
          last = Lmdb.figure(r, "last-txn-id");
          first = first < 0 ? last : first;
          for (int v = 0; v < VERIFIES; v++) {
            r.verify();
          }
          r.get(b("key7"));
          r.forEach(KeyRange.all(), e -> {}); // every frame, keys in order, in one snapshot
        } catch (StoreException e) {
          throw new AssertionError(
              "read-only open + verify() x "
                  + VERIFIES
                  + ", "
                  + (i + 1)
                  + " of "
                  + OPENS
                  + " beside a live writer: "
                  + e,
              e);
        }
      }
      assertThat(writer.process().isAlive()).as(writer.describe()).isTrue();
      assertThat(last)
          .as("the writer committed while the store was opened and verified")
          .isGreaterThan(first);
    }
  }

  @Test
  void verifyAndScans_besideWriterThreads_neverReportDamage() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong commits = new AtomicLong();
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
                      commits.incrementAndGet();
                    }
                    return null;
                  }));
        }
        long first = -1;
        long backstop = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        for (int i = 0;
            i < OPENS || (commits.get() <= first && System.nanoTime() - backstop < 0);
            i++) {
          long seen = commits.get();
          first = first < 0 ? seen : first;
          try {
            s.verify();
            s.forEach(KeyRange.all(), e -> {});
          } catch (StoreException e) {
            throw new AssertionError(
                "verify() " + (i + 1) + " of " + OPENS + " beside writer threads: " + e, e);
          }
        }
        assertThat(commits.get()).as("the writers committed meanwhile").isGreaterThan(first);
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
