package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The public recorder: what it records of calls that return, are refused, or fail. */
class HistoryTest {
  private static final Duration BUDGET = Duration.ofSeconds(20);
  private final Store memory = Stores.open(StoreConfig.builder("memory").build());

  @AfterEach
  void close() {
    memory.close();
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The memory store whose {@code put} of a value starting with {@code fail} throws {@link
   * StoreIOException}, after writing it when {@code applied}, as a server that restarts after or
   * before it applied a write would.
   */
  private Store failingPuts(boolean applied) {
    return (Store)
        Proxy.newProxyInstance(
            Store.class.getClassLoader(),
            new Class<?>[] {Store.class},
            (proxy, method, args) -> {
              boolean fails =
                  method.getName().equals("put")
                      && new String((byte[]) args[1], StandardCharsets.US_ASCII).startsWith("fail");
              if (fails && !applied) {
                throw new StoreIOException("connection reset", null);
              }
              Object r;
              try {
                r = method.invoke(memory, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (fails) {
                throw new StoreIOException("connection reset", null);
              }
              return r;
            });
  }

  @Test
  void concurrentClients_onACorrectStore_areLinearizable() throws InterruptedException {
    History h = new History();
    List<Thread> threads = new ArrayList<>();
    long seed = 7;
    for (int t = 0; t < 4; t++) {
      int client = t;
      threads.add(
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed + client);
                for (int i = 0; i < 300; i++) {
                  byte[] k = b("k" + rnd.nextInt(2));
                  switch (rnd.nextInt(5)) {
                    case 0 -> h.put(client, memory, k, b("t" + client + "#" + i));
                    case 1 -> h.replace(client, memory, k, b("t0#0"), b("t" + client + "#" + i));
                    case 2 ->
                        h.write(
                            client,
                            memory,
                            new WriteBatch()
                                .put(b("k0"), b("b" + client + "#" + i))
                                .delete(b("k1")));
                    case 3 -> h.getAll(client, memory, List.of(b("k0"), b("k1")));
                    default -> {
                      try (History.SnapshotReads s = h.snapshot(client, memory)) {
                        s.get(b("k0"));
                        h.put(client, memory, b("k1"), b("s" + client + "#" + i));
                        s.get(b("k1"));
                      }
                    }
                  }
                }
              }));
    }
    threads.forEach(Thread::start);
    for (Thread th : threads) {
      th.join();
    }
    HistoryVerdict v = h.check(BUDGET);
    assertThat(v.linearizable()).as("seed %d: %s", seed, v.explanation()).isTrue();
    assertThat(v.operations()).as("every call recorded").isEqualTo(h.size()).isGreaterThan(1200);
    assertThat(v.partitions()).as("k0 and k1 joined by the batches").isEqualTo(1);
  }

  @Test
  void refusedCall_isNotRecorded() {
    History h = new History();
    assertThat(catchThrowable(() -> h.put(0, memory, new byte[0], b("v"))))
        .as("the store's refusal reaches the client")
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(h.size()).as("a refused call took no effect: not recorded").isZero();
  }

  @Test
  void failedPutThatWasApplied_isIndeterminateAndExplainsLaterReads() {
    History h = new History();
    Store s = failingPuts(true);
    h.put(0, s, b("k"), b("a"));
    assertThat(catchThrowable(() -> h.put(1, s, b("k"), b("fail-1"))))
        .as("rethrown to the client")
        .isInstanceOf(StoreIOException.class);
    assertThat(h.get(2, s, b("k"))).as("the failed put was applied").isEqualTo(b("fail-1"));
    assertThat(h.operations().get(1).indeterminate()).as("the failed put").isTrue();
    HistoryVerdict v = h.check(BUDGET);
    assertThat(v.linearizable()).as(v.explanation()).isTrue();
  }

  @Test
  void failedPutThatWasNotApplied_isIndeterminateAndMayNeverHappen() {
    History h = new History();
    Store s = failingPuts(false);
    h.put(0, s, b("k"), b("a"));
    assertThat(catchThrowable(() -> h.put(1, s, b("k"), b("fail-1"))))
        .as("rethrown to the client")
        .isInstanceOf(StoreIOException.class);
    assertThat(h.get(2, s, b("k"))).as("the failed put was not applied").isEqualTo(b("a"));
    HistoryVerdict v = h.check(BUDGET);
    assertThat(v.linearizable()).as(v.explanation()).isTrue();
  }

  @Test
  void valueReturnedByAStoreThatLies_failsWithTheTimeline() {
    History h = new History();
    Store liar =
        (Store)
            Proxy.newProxyInstance(
                Store.class.getClassLoader(),
                new Class<?>[] {Store.class},
                (proxy, method, args) ->
                    method.getName().equals("get") ? b("old") : method.invoke(memory, args));
    h.put(0, liar, b("k"), b("old"));
    h.put(1, liar, b("k"), b("new"));
    h.get(2, liar, b("k"));
    HistoryVerdict v = h.check(BUDGET);
    assertThat(v.decided()).as(v.explanation()).isTrue();
    assertThat(v.linearizable()).as(v.explanation()).isFalse();
    assertThat(v.explanation())
        .as("the stale read, with the put it missed")
        .contains("ends when #2 returned")
        .containsPattern("#1 +t1 .* put \"k\" := \"new\"")
        .containsPattern("#2 +t2 .* get \"k\" -> \"old\"   <-- no order explains this answer");
  }

  @Test
  void check_refusesANonPositiveBudget() {
    assertThat(catchThrowable(() -> new History().check(Duration.ZERO)))
        .as("a budget of zero")
        .isInstanceOf(IllegalArgumentException.class);
  }
}
