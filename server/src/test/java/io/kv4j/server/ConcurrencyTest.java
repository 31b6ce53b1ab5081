package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.TestServer.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;

/** Read-modify-write commands from many connections on several event loops lose no update. */
class ConcurrencyTest {
  @TempDir Path dir;

  /** The stores Main serves as their sole writer ({@link Writers#SOLE}): the stripe locks alone. */
  @ParameterizedTest
  @ValueSource(strings = {"memory:", "hashlog:%s/h?durability=buffered"})
  void incrAndAppend_fromManyClients_areAtomic(String pattern) throws Exception {
    int clients = 8;
    int perClient = 2_000;
    String uri = pattern.contains("%s") ? String.format(pattern, dir) : pattern;
    try (TestServer server =
            new TestServer(uri, ServerOptions.defaults().with(PORT, 0).with(THREADS, 4));
        Jedis check = new Jedis("127.0.0.1", server.port(), 30_000)) {
      ExecutorService pool = Executors.newFixedThreadPool(clients);
      try {
        List<Future<?>> futures = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
          futures.add(
              pool.submit(
                  () -> {
                    try (Jedis j = new Jedis("127.0.0.1", server.port(), 60_000)) {
                      Pipeline p = j.pipelined();
                      for (int i = 0; i < perClient; i++) {
                        p.incr("counter");
                        p.incrBy("by3", 3);
                        p.append("log", "x");
                        if (i % 100 == 0) {
                          p.set("counter-shadow", "x"); // a plain SET on another key
                        }
                      }
                      p.sync();
                    }
                    return null;
                  }));
        }
        for (Future<?> f : futures) {
          f.get();
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(check.get("counter")).isEqualTo(String.valueOf(clients * perClient));
      assertThat(check.get("by3")).isEqualTo(String.valueOf(3L * clients * perClient));
      assertThat(check.strlen("log")).isEqualTo((long) clients * perClient);
      assertThat(Writers.ofOpened(server.store)).isEqualTo(Writers.SOLE);
    }
  }

  @Test
  void incr_onASoleWriterServer_holdsItsKeyAgainstAPlainSet() throws Exception {
    // A sole writer's INCR is a read and a write with no compare-and-set in the engine: only the
    // key's stripe lock keeps a SET from landing between them (and being overwritten by the INCR).
    Store memory = Stores.open("memory:");
    memory.put(BlockingStore.BLOCK, "5".getBytes(StandardCharsets.US_ASCII));
    CountDownLatch release = new CountDownLatch(1);
    BlockingStore store = new BlockingStore(memory, release, new BlockingStore.FaultSwitch());
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try (TestServer server =
            new TestServer(
                store,
                ServerOptions.defaults().with(PORT, 0).with(THREADS, 2),
                () -> store,
                Writers.SOLE);
        Jedis a = new Jedis("127.0.0.1", server.port(), 60_000);
        Jedis b = new Jedis("127.0.0.1", server.port(), 60_000)) {
      Future<Long> incr = pool.submit(() -> a.incr("block")); // waits inside the engine's get
      assertThat(store.blocked.await(30, TimeUnit.SECONDS)).isTrue();
      Future<String> set = pool.submit(() -> b.set("block", "100"));
      KeyLocks locks = server.server.commands.data().locks;
      await(
          "the SET to answer or to wait for the key",
          () -> set.isDone() || locks.contended(BlockingStore.BLOCK));
      assertThat(set.isDone()).as("SET answered while the INCR of its key was running").isFalse();
      release.countDown();
      assertThat(incr.get(30, TimeUnit.SECONDS)).isEqualTo(6);
      assertThat(set.get(30, TimeUnit.SECONDS)).isEqualTo("OK");
      assertThat(new String(memory.get(BlockingStore.BLOCK), StandardCharsets.US_ASCII))
          .isEqualTo("100");
    } finally {
      release.countDown();
      pool.shutdownNow();
      memory.close();
    }
  }

  @Test
  void writers_areSoleOnlyForEnginesNoOneElseCanWrite() {
    try (Store memory = Stores.open("memory:")) {
      assertThat(Writers.ofOpened(memory)).isEqualTo(Writers.SOLE);
      Store wrapped =
          new BlockingStore(memory, new CountDownLatch(0), new BlockingStore.FaultSwitch());
      assertThat(Writers.ofOpened(wrapped)).isEqualTo(Writers.SHARED);
    }
  }
}
