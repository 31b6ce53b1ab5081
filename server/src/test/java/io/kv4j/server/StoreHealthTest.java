package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.REOPEN_INTERVAL;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.TestServer.await;
import static io.kv4j.server.TestServer.info;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * A store that fails its writes is visible (INFO, -MISCONF) and is reopened when the cause goes.
 */
class StoreHealthTest {
  @TempDir Path dir;

  /**
   * With no reopening (interval 0) nothing changes the state after the failed write, however slowly
   * the checks run: a reopen racing them would make writes answer -LOADING and reads fail.
   */
  @Test
  void diskFull_refusesWritesWithMisconf_readsGoOn() throws Exception {
    BlockingStore.FaultSwitch faults = new BlockingStore.FaultSwitch();
    CountDownLatch never = new CountDownLatch(0);
    try (Store memory = Stores.open("memory:")) {
      BlockingStore first = new BlockingStore(memory, never, faults);
      ServerOptions options =
          ServerOptions.defaults().with(PORT, 0).with(THREADS, 1).with(REOPEN_INTERVAL, 0);
      TestServer server =
          new TestServer(first, options, () -> new BlockingStore(memory, never, faults));
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        assertThat(j.set("a", "1")).isEqualTo("OK");
        assertThat(info(j, "store_state")).isEqualTo("ok");
        faults.diskFull = true;
        assertThatThrownBy(() -> j.set("b", "2"))
            .hasMessageStartingWith("MISCONF kv4j store failed a write")
            .hasMessageContaining("No space left on device");
        int calls = first.writeCalls.get();
        faults.diskFull = false; // refused anyway: the store failed a write and is not reopened
        assertThatThrownBy(() -> j.incr("n")).hasMessageStartingWith("MISCONF");
        assertThat(first.writeCalls.get())
            .as("refused before reaching the engine")
            .isEqualTo(calls);
        assertThat(j.get("a")).isEqualTo("1"); // reads go on
        assertThat(j.ping()).isEqualTo("PONG");
        assertThat(info(j, "store_state")).isEqualTo("failed");
        assertThat(info(j, "rdb_last_bgsave_status")).isIn("err", "ok");
        assertThat(info(j, "store_write_failures")).isEqualTo("1");
        assertThat(info(j, "store_reopens")).isEqualTo("0");
      } finally {
        server.close();
      }
    }
  }

  @Test
  void diskFull_storeIsReopenedAfterTheInterval_andTakesWritesAgain() throws Exception {
    BlockingStore.FaultSwitch faults = new BlockingStore.FaultSwitch();
    CountDownLatch never = new CountDownLatch(0);
    try (Store memory = Stores.open("memory:")) {
      BlockingStore first = new BlockingStore(memory, never, faults);
      ServerOptions options =
          ServerOptions.defaults().with(PORT, 0).with(THREADS, 1).with(REOPEN_INTERVAL, 1);
      TestServer server =
          new TestServer(first, options, () -> new BlockingStore(memory, never, faults));
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        assertThat(j.set("a", "1")).isEqualTo("OK");
        faults.diskFull = true;
        assertThatThrownBy(() -> j.set("b", "2"))
            .hasMessageStartingWith("MISCONF kv4j store failed a write");
        faults.diskFull = false;
        await("the store to be reopened", () -> "1".equals(info(j, "store_reopens")));
        assertThat(info(j, "store_state")).isEqualTo("ok");
        assertThat(info(j, "store_error")).isEmpty();
        assertThat(j.set("b", "2")).isEqualTo("OK");
        assertThat(j.get("a")).isEqualTo("1");
        assertThat(info(j, "store_write_failures")).isEqualTo("1");
      } finally {
        server.close();
      }
    }
  }

  @Test
  void info_storeDegradedOrFailed_saysSoWithTheProblem() throws Exception {
    BlockingStore.FaultSwitch faults = new BlockingStore.FaultSwitch();
    try (Store memory = Stores.open("memory:")) {
      BlockingStore store = new BlockingStore(memory, new CountDownLatch(0), faults);
      TestServer server =
          new TestServer(store, ServerOptions.defaults().with(PORT, 0).with(THREADS, 1), null);
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        assertThat(info(j, "store_health")).isEqualTo("ok");
        assertThat(info(j, "store_problem")).isEmpty();
        faults.degradedBecause = "background compaction fails and is retried: disk full\nline two";
        assertThat(info(j, "store_health")).isEqualTo("degraded");
        assertThat(info(j, "store_problem"))
            .isEqualTo("background compaction fails and is retried: disk full line two");
        assertThat(j.set("a", "1")).as("a degraded store takes writes").isEqualTo("OK");
      } finally {
        server.close();
      }
    }
  }

  @Test
  void failedWriteInsideExec_answersMisconfForTheTransaction() throws Exception {
    BlockingStore.FaultSwitch faults = new BlockingStore.FaultSwitch();
    try (Store memory = Stores.open("memory:")) {
      BlockingStore store = new BlockingStore(memory, new CountDownLatch(0), faults);
      TestServer server =
          new TestServer(store, ServerOptions.defaults().with(PORT, 0).with(THREADS, 1), null);
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        j.set("before", "kept");
        faults.diskFull = true;
        redis.clients.jedis.Transaction t = j.multi();
        t.set("x", "1");
        t.set("y", "2");
        assertThatThrownBy(t::exec).hasMessageStartingWith("MISCONF");
        assertThat(j.exists("x", "y")).isZero();
        // Reads go on in a failed store, also in a transaction that only reads (memory has
        // CONDITIONAL_BATCH: such a transaction is checked without writeIf, which the store
        // refuses).
        redis.clients.jedis.Transaction r = j.multi();
        r.get("before");
        r.exists("x");
        assertThat(r.exec()).containsExactly("kept", false);
        assertThat(info(j, "store_reopen_interval_seconds")).isEqualTo("0"); // no reopener
      } finally {
        server.close();
      }
    }
  }

  @Test
  void readOnlyStore_answersReadonlyToWrites() throws Exception {
    String uri = "hashlog:" + dir.resolve("db");
    try (Store s = Stores.open(uri)) {
      s.put("k".getBytes(), "v".getBytes());
    }
    try (TestServer server = new TestServer(uri + "?read-only=true");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(j.get("k")).isEqualTo("v");
      assertThatThrownBy(() -> j.set("k", "x"))
          .hasMessage("READONLY You can't write against a read only kv4j store");
      assertThat(info(j, "store_state")).isEqualTo("read-only");
    }
  }
}
