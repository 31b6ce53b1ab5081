package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LockKeeperTest {
  private static final Duration PERIOD = Duration.ofMillis(5);
  private static final Duration LIMIT = Duration.ofSeconds(30);

  @Test
  void start_refreshesRepeatedly_untilClosed() {
    AtomicInteger runs = new AtomicInteger();
    AtomicBoolean afterClose = new AtomicBoolean();
    AtomicBoolean closed = new AtomicBoolean();
    LockKeeper k =
        LockKeeper.start(
            "test lock",
            PERIOD,
            () -> {
              runs.incrementAndGet();
              if (closed.get()) {
                afterClose.set(true);
              }
            });
    Await.until("three refreshes", LIMIT, () -> k.refreshes() >= 3);
    k.close();
    closed.set(true);
    int atClose = runs.get();
    // Another keeper on the same timer refreshing several times proves the timer kept ticking.
    LockKeeper other = LockKeeper.start("other", PERIOD, () -> {});
    Await.until("other keeper's refreshes", LIMIT, () -> other.refreshes() >= 5);
    other.close();
    assertThat(runs.get()).as("no refresh after close()").isEqualTo(atClose);
    assertThat(afterClose.get()).isFalse();
    k.close(); // idempotent
  }

  @Test
  void refresh_throwing_isCountedAndRetried() {
    LockKeeper k =
        LockKeeper.start(
            "failing",
            PERIOD,
            () -> {
              throw new IllegalStateException("server away");
            });
    try {
      Await.until("two failures", LIMIT, () -> k.failures() >= 2);
      assertThat(k.lastFailure()).hasMessage("server away");
      assertThat(k.refreshes()).isZero();
    } finally {
      k.close();
    }
  }

  @Test
  void slowRefresh_doesNotDelayAnotherKeeper_andCloseWaitsForIt() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean finished = new AtomicBoolean();
    AtomicInteger slowRuns = new AtomicInteger();
    LockKeeper slow =
        LockKeeper.start(
            "slow",
            PERIOD,
            () -> {
              slowRuns.incrementAndGet();
              entered.countDown();
              try {
                release.await(LIMIT.toMillis(), TimeUnit.MILLISECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              finished.set(true);
            });
    assertThat(entered.await(LIMIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    LockKeeper fast = LockKeeper.start("fast", PERIOD, () -> {});
    Await.until("fast keeper refreshes while slow one blocks", LIMIT, () -> fast.refreshes() >= 3);
    fast.close();
    assertThat(slowRuns.get()).as("a tick during a running refresh is skipped").isEqualTo(1);
    AtomicReference<Throwable> closeError = new AtomicReference<>();
    AtomicBoolean finishedWhenClosed = new AtomicBoolean();
    Thread closer =
        new Thread(
            () -> {
              try {
                slow.close();
                finishedWhenClosed.set(finished.get());
              } catch (Throwable t) {
                closeError.set(t);
              }
            });
    closer.start();
    Await.until(
        "close() waits for the running refresh",
        LIMIT,
        () -> closer.getState() == Thread.State.WAITING);
    assertThat(finished.get()).isFalse();
    release.countDown();
    closer.join(LIMIT.toMillis());
    assertThat(closer.isAlive()).isFalse();
    assertThat(closeError.get()).isNull();
    assertThat(finishedWhenClosed.get()).as("close() returned after the refresh ended").isTrue();
  }

  @Test
  void close_fromOwnRefresh_isRefused() {
    AtomicReference<LockKeeper> self = new AtomicReference<>();
    CountDownLatch started = new CountDownLatch(1);
    LockKeeper k =
        LockKeeper.start(
            "self-closing",
            PERIOD,
            () -> {
              try {
                started.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              self.get().close();
            });
    self.set(k);
    started.countDown();
    Await.until("the refresh tried to close", LIMIT, () -> k.failures() >= 1);
    assertThat(k.lastFailure())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("self-closing");
    k.close();
  }

  @Test
  void start_invalidArguments_areRefused() {
    assertThatThrownBy(() -> LockKeeper.start("x", Duration.ZERO, () -> {}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LockKeeper.start(null, PERIOD, () -> {}))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> LockKeeper.start("x", PERIOD, null))
        .isInstanceOf(NullPointerException.class);
  }
}
