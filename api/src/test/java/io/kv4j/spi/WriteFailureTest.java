package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Limits;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link WriteFailure}: the failed state of one store, the first failure wins. */
class WriteFailureTest {
  private static final StoreInfo INFO =
      new StoreInfo("disk", Set.of(), new Limits(511, 1 << 24), Durability.SYNC, "/data", false);

  @Test
  void check_beforeAnyFailure_passes() {
    WriteFailure w = new WriteFailure(INFO);
    w.check();
    assertThat(w.first()).isNull();
  }

  @Test
  void fail_first_namesTheStoreWhatFailedAndTheCause() {
    WriteFailure w = new WriteFailure(INFO);
    IOException disk = new IOException("No space left on device");
    StoreIOException e = w.fail("append to segment 7", disk);
    assertThat(e)
        .hasMessage(
            "engine 'disk' at /data failed until reopened: append to segment 7:"
                + " No space left on device")
        .hasCause(disk);
    assertThat(w.first()).isSameAs(e);
  }

  @Test
  void fail_withoutCauseMessage_endsWithWhatFailed() {
    assertThat(new WriteFailure(INFO).fail("fsync", null))
        .hasMessage("engine 'disk' at /data failed until reopened: fsync")
        .hasNoCause();
    assertThat(new WriteFailure(INFO).fail("fsync", new IOException()))
        .hasMessage("engine 'disk' at /data failed until reopened: fsync");
  }

  @Test
  void fail_later_keepsTheFirstCause() {
    WriteFailure w = new WriteFailure(INFO);
    StoreIOException first = w.fail("append", new IOException("No space left on device"));
    StoreIOException later = w.fail("sync", new IOException("Input/output error"));
    assertThat(later).isNotSameAs(first).hasMessage(first.getMessage()).hasCause(first);
    assertThat(w.first()).isSameAs(first);
  }

  @Test
  void check_afterFailure_throwsAFreshExceptionCausedByTheFirst() {
    WriteFailure w = new WriteFailure(INFO);
    StoreIOException first = w.fail("append", new IOException("No space left on device"));
    assertThatThrownBy(w::check)
        .isInstanceOf(StoreIOException.class)
        .isNotSameAs(first)
        .hasMessage(first.getMessage())
        .hasCause(first);
  }

  @Test
  void fail_racingFromManyThreads_keepsExactlyOneFirst() throws Exception {
    int threads = 8;
    for (int round = 0; round < 50; round++) {
      WriteFailure w = new WriteFailure(INFO);
      CyclicBarrier start = new CyclicBarrier(threads);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<StoreIOException>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          String what = "writer " + t;
          results.add(
              pool.submit(
                  () -> {
                    start.await();
                    return w.fail(what, new IOException("disk full"));
                  }));
        }
        List<StoreIOException> returned = new ArrayList<>();
        for (Future<StoreIOException> r : results) {
          returned.add(r.get(1, TimeUnit.MINUTES));
        }
        StoreIOException first = w.first();
        int firsts = 0;
        for (StoreIOException e : returned) {
          if (e == first) {
            firsts++;
          } else {
            assertThat(e.getCause()).as("round %d", round).isSameAs(first);
          }
        }
        assertThat(firsts).as("round %d: exactly one caller got the first failure", round).isOne();
      } finally {
        pool.shutdownNow();
      }
    }
  }
}
