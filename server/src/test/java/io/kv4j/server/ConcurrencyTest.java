package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;

/** Read-modify-write commands from many connections on several event loops lose no update. */
class ConcurrencyTest {
  @Test
  void incrAndAppend_fromManyClients_areAtomic() throws Exception {
    int clients = 8;
    int perClient = 2_000;
    try (TestServer server =
            new TestServer("memory:", ServerOptions.defaults().with(PORT, 0).with(THREADS, 4));
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
    }
  }
}
