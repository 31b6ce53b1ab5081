package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.Stores;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.params.SetParams;

/**
 * Two servers sharing one store, as two kv4j-server instances in front of one postgres table or
 * redis prefix are: each server's stripe locks guard only its own clients, so read-modify-write
 * commands must lose no update through the engine's conditional writes (issue 25).
 */
class SharedStoreTest {
  @Test
  void readModifyWrites_fromTwoServersOnOneStore_loseNoUpdate() throws Exception {
    Store shared = Stores.open("memory:");
    assertThat(shared.info().has(Feature.CONDITIONAL_WRITE)).isTrue();
    int clientsPerServer = 3;
    int perClient = 1_500;
    ServerOptions options = ServerOptions.defaults().with(PORT, 0).with(THREADS, 2);
    try (TestServer a = new TestServer(shared, options, () -> shared);
        TestServer b = new TestServer(shared, options, () -> shared);
        Jedis check = new Jedis("127.0.0.1", a.port(), 30_000)) {
      ExecutorService pool = Executors.newFixedThreadPool(2 * clientsPerServer);
      try {
        List<Future<?>> futures = new ArrayList<>();
        for (int c = 0; c < 2 * clientsPerServer; c++) {
          int port = c % 2 == 0 ? a.port() : b.port();
          int client = c;
          futures.add(
              pool.submit(
                  () -> {
                    try (Jedis j = new Jedis("127.0.0.1", port, 60_000)) {
                      Pipeline p = j.pipelined();
                      for (int i = 0; i < perClient; i++) {
                        p.incr("counter");
                        p.append("log", "x");
                        p.incrByFloat("half", 0.5);
                        p.set("first-" + (i % 50), "client-" + client, SetParams.setParams().nx());
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
      long total = 2L * clientsPerServer * perClient;
      assertThat(check.get("counter"))
          .as("INCR through two servers on one store")
          .isEqualTo(String.valueOf(total));
      assertThat(check.strlen("log")).as("APPEND through two servers").isEqualTo(total);
      assertThat(check.get("half"))
          .as("INCRBYFLOAT through two servers")
          .isEqualTo(String.valueOf(total / 2));
      try (Jedis viaB = new Jedis("127.0.0.1", b.port(), 30_000)) {
        assertThat(viaB.get("counter"))
            .as("both servers read one store")
            .isEqualTo(String.valueOf(total));
      }
    }
  }
}
