package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Transaction;

/**
 * WATCH/MULTI/EXEC and the multi-key commands across two servers sharing one store, as two
 * kv4j-server instances in front of one postgres table or redis prefix are. The memory engine
 * declares CONDITIONAL_BATCH, so EXEC commits with {@code writeIf} on what it watched and read; the
 * store object is opened once and served by both servers.
 */
class SharedTransactionTest {
  private static final ServerOptions OPTIONS =
      ServerOptions.defaults().with(PORT, 0).with(THREADS, 2);

  @Test
  void watchIncrementLoops_onTwoServersSharingAStore_loseNoIncrement() throws Exception {
    Store shared = Stores.open("memory:");
    assertThat(shared.info().has(Feature.CONDITIONAL_BATCH)).isTrue();
    int clientsPerServer = 3;
    int perClient = 150;
    try (TestServer a = new TestServer(shared, OPTIONS, () -> shared);
        TestServer b = new TestServer(shared, OPTIONS, () -> shared)) {
      List<List<Object>> unused =
          onBothServers(
              a,
              b,
              clientsPerServer,
              j -> {
                long aborts = 0;
                for (int done = 0; done < perClient; ) {
                  j.watch("counter");
                  String v = j.get("counter");
                  Transaction t = j.multi();
                  t.set("counter", String.valueOf(v == null ? 1 : Long.parseLong(v) + 1));
                  if (t.exec() == null) {
                    aborts++; // a watched key changed: Redis's answer, the client retries
                  } else {
                    done++;
                  }
                }
                return List.of(aborts);
              });
      assertThat(unused).hasSize(2 * clientsPerServer);
      try (Jedis check = new Jedis("127.0.0.1", b.port(), 30_000)) {
        assertThat(check.get("counter"))
            .as("WATCH/GET/MULTI/SET/EXEC increments through two servers on one store")
            .isEqualTo(String.valueOf(2L * clientsPerServer * perClient));
      }
    } finally {
      shared.close();
    }
  }

  @Test
  void multiIncr_onTwoServersSharingAStore_losesNoIncrementAndRepliesAreTheCommittedOnes()
      throws Exception {
    Store shared = Stores.open("memory:");
    int clientsPerServer = 3;
    int perClient = 300;
    try (TestServer a = new TestServer(shared, OPTIONS, () -> shared);
        TestServer b = new TestServer(shared, OPTIONS, () -> shared)) {
      List<List<Object>> replies =
          onBothServers(
              a,
              b,
              clientsPerServer,
              j -> {
                List<Object> seen = new ArrayList<>();
                for (int i = 0; i < perClient; i++) {
                  Transaction t = j.multi();
                  t.incr("counter");
                  List<Object> r = t.exec();
                  assertThat(r).as("EXEC without WATCH is never aborted").hasSize(1);
                  seen.add(r.get(0));
                }
                return seen;
              });
      long total = 2L * clientsPerServer * perClient;
      List<Object> all = new ArrayList<>();
      replies.forEach(all::addAll);
      // A reply from a run that did not commit would repeat a value another client also got.
      assertThat(all)
          .as("every INCR reply is the value its transaction committed")
          .containsExactlyInAnyOrderElementsOf(
              LongStream.rangeClosed(1, total).boxed().map(Object.class::cast).toList());
      try (Jedis check = new Jedis("127.0.0.1", a.port(), 30_000)) {
        assertThat(check.get("counter")).isEqualTo(String.valueOf(total));
      }
    } finally {
      shared.close();
    }
  }

  @Test
  void watchedKey_changedThroughTheOtherServer_abortsExec() {
    Store shared = Stores.open("memory:");
    try (TestServer a = new TestServer(shared, OPTIONS, () -> shared);
        TestServer b = new TestServer(shared, OPTIONS, () -> shared);
        Jedis viaA = new Jedis("127.0.0.1", a.port(), 30_000);
        Jedis viaB = new Jedis("127.0.0.1", b.port(), 30_000)) {
      viaA.set("balance", "100");
      assertThat(viaA.watch("balance")).isEqualTo("OK");
      viaB.set("balance", "50");
      Transaction t = viaA.multi();
      t.set("balance", "200");
      t.set("other", "x");
      assertThat(t.exec()).as("EXEC after the other server wrote a watched key").isNull();
      assertThat(viaA.get("balance")).isEqualTo("50");
      assertThat(viaA.exists("other")).as("an aborted EXEC writes nothing").isFalse();

      // Deleted through the other server counts as a change too.
      assertThat(viaA.watch("balance")).isEqualTo("OK");
      viaB.del("balance");
      Transaction u = viaA.multi();
      u.set("balance", "300");
      assertThat(u.exec()).isNull();
      assertThat(viaA.exists("balance")).isFalse();

      // Unchanged: commits.
      assertThat(viaA.watch("balance")).isEqualTo("OK");
      viaB.get("balance");
      Transaction v = viaA.multi();
      v.set("balance", "400");
      assertThat(v.exec()).hasSize(1);
      assertThat(viaB.get("balance")).isEqualTo("400");
    } finally {
      shared.close();
    }
  }

  @Test
  void watchedKeyOfAnotherDatabase_changedThroughTheOtherServer_abortsExec() {
    Store shared = Stores.open("memory:");
    try (TestServer a = new TestServer(shared, OPTIONS, () -> shared);
        TestServer b = new TestServer(shared, OPTIONS, () -> shared);
        Jedis viaA = new Jedis("127.0.0.1", a.port(), 30_000);
        Jedis viaB = new Jedis("127.0.0.1", b.port(), 30_000)) {
      viaA.set("k", "1");
      viaA.watch("k"); // in database 0
      viaA.select(1);
      viaB.set("k", "2"); // database 0, through the other server
      Transaction t = viaA.multi();
      t.set("k", "db1");
      assertThat(t.exec()).as("the watch names database 0's key").isNull();
      assertThat(viaA.exists("k")).as("database 1 untouched").isFalse();

      viaA.select(0);
      viaA.watch("k");
      viaA.select(1);
      Transaction u = viaA.multi();
      u.set("k", "db1");
      assertThat(u.exec()).hasSize(1);
      assertThat(viaA.get("k")).isEqualTo("db1");
      assertThat(viaB.get("k")).isEqualTo("2");
    } finally {
      shared.close();
    }
  }

  @Test
  void watchedKey_changedAndChangedBackOnThisServer_stillAbortsExec() {
    Store shared = Stores.open("memory:");
    try (TestServer a = new TestServer(shared, OPTIONS, () -> shared);
        Jedis watcher = new Jedis("127.0.0.1", a.port(), 30_000);
        Jedis other = new Jedis("127.0.0.1", a.port(), 30_000)) {
      watcher.set("k", "1");
      watcher.watch("k");
      other.set("k", "2");
      other.set("k", "1"); // the value is as watched, the server's version is not
      Transaction t = watcher.multi();
      t.set("k", "3");
      assertThat(t.exec()).isNull();
      assertThat(watcher.get("k")).isEqualTo("1");
    } finally {
      shared.close();
    }
  }

  @Test
  void keyRead_changedByAnotherWriterBeforeTheCommit_runsTheTransactionAgain() {
    Store memory = Stores.open("memory:");
    InterferingStore store = new InterferingStore(memory, true);
    try (TestServer a = new TestServer(store, OPTIONS, () -> store);
        Jedis j = new Jedis("127.0.0.1", a.port(), 30_000)) {
      j.set("price", "10");
      store.beforeWriteIf =
          call -> {
            if (call == 1) {
              memory.put(bytes("price"), bytes("12")); // another server, between read and commit
            }
          };
      Transaction t = j.multi();
      t.get("price");
      t.append("log", "bought;");
      t.incr("orders");
      List<Object> reply = t.exec();
      assertThat(reply)
          .as("the reply of the run that committed, the first run's discarded")
          .containsExactly("12", 7L, 1L);
      assertThat(store.writeIfCalls.get()).isEqualTo(2);
      assertThat(j.get("log")).as("the first run wrote nothing").isEqualTo("bought;");
      assertThat(j.get("orders")).isEqualTo("1");
      assertThat(TestServer.info(j, "transaction_reruns")).isEqualTo("1");
      assertThat(TestServer.info(j, "shared_store_transactions")).isEqualTo("1");
    } finally {
      memory.close();
    }
  }

  @Test
  void keyRead_changedBeforeEveryCommit_failsWithAClearErrorAndWritesNothing() {
    Store memory = Stores.open("memory:");
    InterferingStore store = new InterferingStore(memory, true);
    try (TestServer a = new TestServer(store, OPTIONS, () -> store);
        Jedis j = new Jedis("127.0.0.1", a.port(), 30_000)) {
      j.set("price", "10");
      store.beforeWriteIf = call -> memory.put(bytes("price"), bytes(String.valueOf(10 + call)));
      Transaction t = j.multi();
      t.get("price");
      t.set("bought", "yes");
      assertThatThrownBy(t::exec)
          .hasMessageContaining(
              "transaction not committed after "
                  + SharedStoreTransaction.MAX_ATTEMPTS
                  + " attempts");
      assertThat(store.writeIfCalls.get()).isEqualTo(SharedStoreTransaction.MAX_ATTEMPTS);
      store.beforeWriteIf = call -> {};
      assertThat(j.exists("bought")).isFalse();
      assertThat(j.ping()).as("the connection goes on").isEqualTo("PONG");
    } finally {
      memory.close();
    }
  }

  @Test
  void rename_whenAnotherWriterChangesTheSourceBeforeTheCommit_movesTheNewValue() {
    Store memory = Stores.open("memory:");
    InterferingStore store = new InterferingStore(memory, true);
    try (TestServer a = new TestServer(store, OPTIONS, () -> store);
        Jedis j = new Jedis("127.0.0.1", a.port(), 30_000)) {
      j.set("from", "old");
      store.beforeWriteIf =
          call -> {
            if (call == 1) {
              memory.put(bytes("from"), bytes("new"));
            }
          };
      assertThat(j.rename("from", "to")).isEqualTo("OK");
      assertThat(j.get("to")).as("no update of the source is lost").isEqualTo("new");
      assertThat(j.exists("from")).isFalse();

      // MSETNX checks absence inside the same commit.
      store.beforeWriteIf =
          call -> {
            if (call == 3) {
              memory.put(bytes("n2"), bytes("theirs"));
            }
          };
      assertThat(j.msetnx("n1", "mine", "n2", "mine")).isZero();
      assertThat(j.exists("n1")).isFalse();
      assertThat(j.get("n2")).isEqualTo("theirs");
    } finally {
      memory.close();
    }
  }

  @Test
  void withoutConditionalBatch_execCommitsAsBefore() {
    Store memory = Stores.open("memory:");
    InterferingStore store = new InterferingStore(memory, false);
    try (TestServer a = new TestServer(store, OPTIONS, () -> store);
        Jedis j = new Jedis("127.0.0.1", a.port(), 30_000)) {
      j.watch("k");
      Transaction t = j.multi();
      t.incr("k");
      t.rename("k", "m");
      assertThat(t.exec()).containsExactly(1L, "OK");
      assertThat(j.renamenx("m", "n")).isEqualTo(1L);
      assertThat(j.get("n")).isEqualTo("1");
      assertThat(store.writeIfCalls.get()).as("the old path: write, never writeIf").isZero();
      assertThat(TestServer.info(j, "shared_store_transactions")).isEqualTo("0");
    } finally {
      memory.close();
    }
  }

  /** One client's work on one connection; returns what it saw. */
  @FunctionalInterface
  interface ClientWork {
    List<Object> run(Jedis j) throws Exception;
  }

  /** Runs {@code work} on {@code perServer} connections to each server at once. */
  private static List<List<Object>> onBothServers(
      TestServer a, TestServer b, int perServer, ClientWork work) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2 * perServer);
    try {
      List<Future<List<Object>>> futures = new ArrayList<>();
      for (int c = 0; c < 2 * perServer; c++) {
        int port = c % 2 == 0 ? a.port() : b.port();
        futures.add(
            pool.submit(
                () -> {
                  try (Jedis j = new Jedis("127.0.0.1", port, 60_000)) {
                    return work.run(j);
                  }
                }));
      }
      List<List<Object>> results = new ArrayList<>();
      for (Future<List<Object>> f : futures) {
        results.add(f.get(5, TimeUnit.MINUTES));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
