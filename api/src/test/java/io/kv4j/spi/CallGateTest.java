package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The gate's rules, and the retire-after-await protocol checked under contention. */
class CallGateTest {

  @Test
  void awaitEarlier_readerInside_waitsUntilItExits() throws Exception {
    CallGate r = new CallGate();
    int token = r.enter();
    CountDownLatch done = new CountDownLatch(1);
    Thread retirer =
        new Thread(
            () -> {
              r.awaitEarlier();
              done.countDown();
            });
    retirer.start();
    assertThat(done.await(200, TimeUnit.MILLISECONDS))
        .as("awaitEarlier returned while a reader was inside")
        .isFalse();
    r.exit(token);
    assertThat(done.await(10, TimeUnit.SECONDS)).as("awaitEarlier after the exit").isTrue();
    retirer.join();
  }

  @Test
  void awaitEarlier_readerEnteredAfter_isNotWaitedFor() throws Exception {
    CallGate r = new CallGate();
    r.awaitEarlier(); // flips once: later readers count in the other epoch
    int later = r.enter();
    CountDownLatch done = new CountDownLatch(1);
    Thread retirer =
        new Thread(
            () -> {
              r.awaitEarlier();
              done.countDown();
            });
    // The reader entered before this await, so it is waited for; a reader entering now is not.
    retirer.start();
    // "Now" is once the retirer has flipped the epoch, which a slow machine may delay by seconds:
    // wait for it instead of assuming it within a fixed time. A call entered from this thread gets
    // the other epoch's counter (same thread, same stripe) once the flip happened, so its token
    // differs from the one of `later`.
    int[] newer = {r.enter()};
    Await.until(
        "the retirer begins awaitEarlier",
        Duration.ofSeconds(60),
        () -> {
          if (newer[0] != later) {
            return true;
          }
          r.exit(newer[0]);
          newer[0] = r.enter();
          return false;
        });
    assertThat(done.await(200, TimeUnit.MILLISECONDS))
        .as("awaitEarlier returned while an earlier reader was inside")
        .isFalse();
    r.exit(later);
    assertThat(done.await(10, TimeUnit.SECONDS))
        .as("awaitEarlier waited for a reader that entered after it")
        .isTrue();
    r.exit(newer[0]);
    retirer.join();
    r.awaitEmpty();
  }

  @Test
  void exit_fromAnotherThread_countsTheReaderOut() throws Exception {
    CallGate r = new CallGate();
    int token = r.enter();
    Thread other = new Thread(() -> r.exit(token));
    other.start();
    other.join();
    r.awaitEmpty(); // returns: the reader was counted out by the other thread
    r.awaitEarlier();
  }

  @Test
  void close_callInside_waitsForItThenRefusesNewCalls() throws Exception {
    CallGate r = new CallGate();
    int token = r.enter();
    assertThat(token).isNotNegative();
    CountDownLatch closed = new CountDownLatch(1);
    Thread closer =
        new Thread(
            () -> {
              r.close();
              closed.countDown();
            });
    closer.start();
    // The closer may start seconds later on a loaded machine: wait until it has closed the gate
    // rather than assuming it did within a fixed time.
    Await.until("the closer calls close", Duration.ofSeconds(60), r::isClosed);
    assertThat(closed.await(200, TimeUnit.MILLISECONDS))
        .as("close returned while a call was inside")
        .isFalse();
    assertThat(r.enter()).as("enter on a closing gate").isEqualTo(-1);
    r.exit(token);
    assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
    closer.join();
    assertThat(r.enter()).as("enter on a closed gate").isEqualTo(-1);
    assertThat(r.inside()).isZero();
    r.close(); // again: returns at once
  }

  @Test
  void enter_threadsStartedInSequence_countOnSeparateCounters() throws Exception {
    // A pool's workers and an engine's background threads are started one after another: they
    // must not share a counter, or every call of one bounces the other's cache line.
    CallGate gate = new CallGate();
    int n = 16;
    int[] tokens = new int[n];
    for (int i = 0; i < n; i++) {
      int k = i;
      Thread t = new Thread(() -> tokens[k] = gate.enter());
      t.start();
      t.join();
    }
    assertThat(tokens).as("tokens of %d threads started in sequence", n).doesNotHaveDuplicates();
    assertThat(gate.inside()).isEqualTo(n);
    for (int token : tokens) {
      gate.exit(token);
    }
    assertThat(gate.inside()).isZero();
  }

  @Test
  void exit_foreignToken_isRejected() {
    CallGate r = new CallGate();
    assertThatThrownBy(() -> r.exit(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a token of this gate: -1");
    assertThatThrownBy(() -> r.exit(3)).isInstanceOf(IllegalArgumentException.class);
    assertThat(r.inside()).isZero();
  }

  @Test
  void enter_manyThreads_countsEveryCallInside() throws Exception {
    CallGate r = new CallGate();
    int threads = 8;
    CountDownLatch in = new CountDownLatch(threads);
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th =
          new Thread(
              () -> {
                int token = r.enter();
                in.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                r.exit(token);
              });
      ts.add(th);
      th.start();
    }
    assertThat(in.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(r.inside()).isEqualTo(threads);
    release.countDown();
    for (Thread th : ts) {
      th.join();
    }
    assertThat(r.inside()).isZero();
  }

  /**
   * The protocol as compaction uses it, under contention: readers enter, read the current
   * generation, and check while inside that it has not been freed; a retirer publishes a new
   * generation, awaits earlier readers, then frees the old one. A reader that sees its generation
   * freed while inside means a reader was not waited for.
   */
  @Test
  void awaitEarlier_manyReadersAndRetirer_neverFreesAGenerationInUse() throws Exception {
    CallGate r = new CallGate();
    int generations = 20_000;
    AtomicBoolean[] freed = new AtomicBoolean[generations + 1];
    for (int i = 0; i < freed.length; i++) {
      freed[i] = new AtomicBoolean();
    }
    AtomicInteger current = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<String> violation = new AtomicReference<>();
    AtomicLong sections = new AtomicLong();
    List<Thread> readers = new ArrayList<>();
    CountDownLatch running = new CountDownLatch(4); // each reader inside once before generations
    for (int t = 0; t < 4; t++) {
      Thread th =
          new Thread(
              () -> {
                long n = 0;
                while (!stop.get()) {
                  int token = r.enter();
                  int g = current.get();
                  for (int spin = 0; spin < (n & 7); spin++) {
                    Thread.onSpinWait();
                  }
                  if (freed[g].get()) {
                    violation.compareAndSet(null, "generation " + g + " freed under a reader");
                  }
                  r.exit(token);
                  if (n++ == 0) {
                    running.countDown();
                  }
                }
                sections.addAndGet(n);
              });
      readers.add(th);
      th.start();
    }
    assertThat(running.await(60, TimeUnit.SECONDS)).as("every reader started").isTrue();
    for (int g = 1; g <= generations && violation.get() == null; g++) {
      current.set(g);
      r.awaitEarlier();
      freed[g - 1].set(true);
    }
    stop.set(true);
    for (Thread th : readers) {
      th.join();
    }
    assertThat(violation.get()).isNull();
    assertThat(sections.get()).as("reader sections run").isPositive();
    r.awaitEmpty();
  }
}
