package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Group 8: concurrency. Threads start together on a barrier; every failure is collected. */
abstract class ConcurrencyRules extends CrashRules {

  interface Task {
    void run(int thread) throws Exception;
  }

  /**
   * Runs {@code task} on n threads started together and returns their failures. Waits at most
   * {@link #threadTimeout()} for the threads to meet and to finish: a deadlocked engine fails the
   * rule, naming the threads still running and where they are stuck, instead of hanging the build.
   */
  List<Throwable> runThreads(String ruleId, int n, Task task) throws InterruptedException {
    long timeoutNanos = threadTimeout().toNanos();
    CyclicBarrier start = new CyclicBarrier(n);
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < n; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  start.await(timeoutNanos, TimeUnit.NANOSECONDS);
                  task.run(id);
                } catch (Throwable e) {
                  errors.add(e);
                }
              },
              "kv4j-tck-" + t);
      th.setDaemon(true); // a thread stuck in the engine must not keep the test JVM alive
      threads.add(th);
      th.start();
    }
    long deadline = System.nanoTime() + timeoutNanos;
    List<String> stuck = new ArrayList<>();
    for (Thread th : threads) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      th.join(Math.max(1, left));
      if (th.isAlive()) {
        StringBuilder where = new StringBuilder(th.getName());
        for (StackTraceElement e : th.getStackTrace()) {
          where.append("\n    at ").append(e);
        }
        stuck.add(where.toString());
        th.interrupt();
      }
    }
    if (!stuck.isEmpty()) {
      throw new AssertionError(
          rule(
              ruleId,
              stuck.size()
                  + " of "
                  + n
                  + " threads did not finish within "
                  + threadTimeout().toSeconds()
                  + " s (kv4j.tck.timeoutSeconds): the engine deadlocked or stalled:\n"
                  + String.join("\n", stuck)));
    }
    return new ArrayList<>(errors);
  }

  @Test
  void required_r8_1_threadsOnDisjointKeys() throws Exception {
    Store s = open();
    int per = 500;
    List<Throwable> errors =
        runThreads(
            "8.1",
            THREADS,
            t -> {
              for (int i = 0; i < per; i++) {
                long k = (long) t * per + i;
                s.put(key(k), b("t" + t + "-" + i));
                if (i % 5 == 0) {
                  s.delete(key(k));
                }
                if (i % 7 == 0 && has(Feature.ATOMIC_BATCH)) {
                  s.write(new WriteBatch().put(key(k), b("batched" + k)));
                }
                byte[] want =
                    i % 7 == 0 && has(Feature.ATOMIC_BATCH)
                        ? b("batched" + k)
                        : i % 5 == 0 ? null : b("t" + t + "-" + i);
                assertThat(s.get(key(k)))
                    .as(rule("8.1", "thread " + t + " reads its own last write of key " + k))
                    .isEqualTo(want);
              }
            });
    assertThat(errors).as(rule("8.1", "no thread failed")).isEmpty();
    for (int t = 0; t < THREADS; t++) {
      for (int i = 0; i < per; i++) {
        long k = (long) t * per + i;
        byte[] want =
            i % 7 == 0 && has(Feature.ATOMIC_BATCH)
                ? b("batched" + k)
                : i % 5 == 0 ? null : b("t" + t + "-" + i);
        assertThat(s.get(key(k))).as(rule("8.1", "final value of key " + k)).isEqualTo(want);
      }
    }
  }

  @Test
  void required_r8_2_threadsOnSharedKeys() throws Exception {
    Store s = open();
    int keys = 20;
    int rounds = 300;
    List<Throwable> errors =
        runThreads(
            "8.2",
            THREADS,
            t -> {
              for (int r = 0; r < rounds; r++) {
                int k = (r * 7 + t) % keys;
                s.put(key(k), b("t" + t + "-r" + r));
                byte[] v = s.get(key(k));
                assertThat(v)
                    .as(rule("8.2", "a key being overwritten is never absent"))
                    .isNotNull();
                assertThat(new String(v, StandardCharsets.UTF_8))
                    .as(rule("8.2", "a value is one that was written, never torn"))
                    .matches("t\\d+-r\\d+");
              }
            });
    assertThat(errors).as(rule("8.2", "no thread failed")).isEmpty();
    for (int k = 0; k < keys; k++) {
      Set<String> lastWrites = new HashSet<>();
      for (int t = 0; t < THREADS; t++) {
        for (int r = rounds - 1; r >= 0; r--) {
          if ((r * 7 + t) % keys == k) {
            lastWrites.add("t" + t + "-r" + r);
            break;
          }
        }
      }
      String fin = new String(s.get(key(k)), StandardCharsets.UTF_8);
      assertThat(lastWrites)
          .as(
              rule(
                  "8.2",
                  "the final value of a shared key is some thread's LAST write to it (a serial order exists); got "
                      + fin))
          .contains(fin);
    }
  }

  @Test
  void required_r8_3_scansDuringWrites() throws Exception {
    require("8.3", Feature.ORDERED_SCAN);
    Store s = open();
    for (int i = 0; i < 200; i++) {
      s.put(key(i), b("v"));
    }
    AtomicBoolean done = new AtomicBoolean();
    int writers = Math.max(1, THREADS / 2);
    List<Throwable> errors =
        runThreads(
            "8.3",
            THREADS,
            t -> {
              if (t < writers) {
                try {
                  for (int i = 0; i < 1500; i++) {
                    int k = (i * 31 + t) % 400;
                    if (i % 3 == 0) {
                      s.delete(key(k));
                    } else {
                      s.put(key(k), b("w" + t));
                    }
                  }
                } finally {
                  done.set(true); // also when a write fails: the scanners must stop
                }
              } else {
                int scans = 0;
                while ((!done.get() || scans < 3) && !Thread.currentThread().isInterrupted()) {
                  boolean reverse = has(Feature.REVERSE_SCAN) && scans % 2 == 1;
                  byte[] prev = null;
                  try (Cursor c = s.scan(reverse ? KeyRange.all().reverse() : KeyRange.all())) {
                    while (c.hasNext()) {
                      byte[] k = c.next().key();
                      if (prev != null) {
                        int cmp = Arrays.compareUnsigned(prev, k);
                        assertThat(reverse ? cmp > 0 : cmp < 0)
                            .as(
                                rule(
                                    "8.3",
                                    "a scan during writes stays strictly ordered with each key once"))
                            .isTrue();
                      }
                      prev = k;
                    }
                  }
                  scans++;
                }
              }
            });
    assertThat(errors)
        .as(rule("8.3", "no exception (e.g. ConcurrentModificationException) in scans or writes"))
        .isEmpty();
  }

  @Test
  void required_r8_4_concurrentBatchesStayAtomic() throws Exception {
    require("8.4", Feature.ATOMIC_BATCH);
    Store s = open();
    int per = 200;
    List<Throwable> errors =
        runThreads(
            "8.4",
            THREADS,
            t -> {
              for (int i = 0; i < per; i++) {
                WriteBatch wb = new WriteBatch();
                byte[] v = b("t" + t + "-" + i);
                for (int k = 0; k < 4; k++) {
                  wb.put(key(k), v);
                }
                s.write(wb);
              }
            });
    assertThat(errors).as(rule("8.4", "no thread failed")).isEmpty();
    byte[] first = s.get(key(0));
    for (int k = 1; k < 4; k++) {
      assertThat(s.get(key(k)))
          .as(
              rule(
                  "8.4",
                  "after concurrent batches over the same 4 keys all 4 hold one batch's value"))
          .isEqualTo(first);
    }
  }
}
