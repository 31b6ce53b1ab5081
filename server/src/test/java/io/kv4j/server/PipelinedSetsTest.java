package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.net.Socket;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Plain SETs of a pipeline run by a worker are written as one batch: on a SYNC store they share one
 * fsync, and every reply keeps its place, errors included.
 */
class PipelinedSetsTest {
  @TempDir Path dir;

  private static ServerOptions options() {
    return ServerOptions.defaults().with(PORT, 0).with(THREADS, 1);
  }

  private static long fsyncs(TestServer server) {
    return server.server.store().stats().figures().get("fsyncs").longValue();
  }

  @Test
  void pipelinedSets_onASyncStore_shareTheirFsyncs() throws Exception {
    String uri = "hashlog:" + dir.resolve("db") + "?durability=sync";
    try (TestServer server = new TestServer(uri, options());
        Socket s = server.socket();
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(TestServer.info(j, "kv4j_loop_mode")).isEqualTo("reads");
      long before = fsyncs(server);
      StringBuilder pipeline = new StringBuilder();
      for (int i = 0; i < 200; i++) {
        pipeline.append("SET key").append(i).append(" value").append(i).append("\r\n");
      }
      send(s, pipeline + "GET key199\r\n");
      for (int i = 0; i < 200; i++) {
        assertThat(readLine(s)).as("reply %s", i).isEqualTo("+OK");
      }
      assertThat(readLine(s)).isEqualTo("$8");
      assertThat(readLine(s)).isEqualTo("value199");
      long forced = fsyncs(server) - before;
      assertThat(forced).as("fsyncs for 200 pipelined SETs").isPositive().isLessThanOrEqualTo(20);
      assertThat(j.get("key0")).isEqualTo("value0");
      assertThat(j.dbSize()).isEqualTo(200);
    }
  }

  @Test
  void pipelinedSets_answerInPlaceBesideOtherCommandsAndTheirOwnErrors() throws Exception {
    // On the workers (memory would run them on the event loop).
    try (TestServer server = new TestServer("memory:", options().withLoopCommands("none"));
        Socket s = server.socket();
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      send(
          s,
          "SET a 1\r\nSET b 2\r\nGET a\r\nSET \"\" x\r\nSET c 3\r\nINCR a\r\nSET a 9\r\nSET a 10\r\n"
              + "NOSUCH\r\nSET d 4 XX\r\nSET e 5\r\nGET a\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$1");
      assertThat(readLine(s)).isEqualTo("1");
      assertThat(readLine(s)).startsWith("-ERR"); // an empty key, answered alone
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo(":2");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).startsWith("-ERR unknown command 'NOSUCH'");
      assertThat(readLine(s)).isEqualTo("$-1"); // XX: not kept with the plain SETs
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$2");
      assertThat(readLine(s)).isEqualTo("10"); // the later SET of a key in one batch wins
      assertThat(j.mget("a", "b", "c", "d", "e")).containsExactly("10", "2", "3", null, "5");
    }
  }

  @Test
  void failedBatch_answersEachOfItsSets() throws Exception {
    try (Store memory = Stores.open("memory:")) {
      BlockingStore.FaultSwitch faults = new BlockingStore.FaultSwitch();
      BlockingStore store = new BlockingStore(memory, new CountDownLatch(0), faults);
      TestServer server =
          new TestServer(store, options().with(ServerOptions.Setting.REOPEN_INTERVAL, 0), null);
      try (Socket s = server.socket()) {
        faults.diskFull = true;
        send(s, "SET a 1\r\nSET b 2\r\nSET c 3\r\nGET a\r\n");
        for (int i = 0; i < 3; i++) {
          assertThat(readLine(s))
              .as("reply %s", i)
              .startsWith("-MISCONF kv4j store failed a write");
        }
        assertThat(readLine(s)).isEqualTo("$-1");
        assertThat(store.writeCalls.get()).as("one batch reached the engine").isEqualTo(1);
        assertThat(memory.get("a".getBytes(java.nio.charset.StandardCharsets.UTF_8))).isNull();
      } finally {
        server.close();
      }
    }
  }

  @Test
  void setsOfManyConnections_onASyncStore_shareOneFsyncWhileTheLoopGoesOn() throws Exception {
    String uri = "hashlog:" + dir.resolve("db") + "?durability=sync";
    try (TestServer server = new TestServer(uri, options());
        Socket first = server.socket();
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      j.set("other", "o");
      KeyLocks locks = server.server.commands.data().locks;
      java.util.List<Socket> others = new java.util.ArrayList<>();
      // This thread holds the stripe of "held": the committer waits in its first batch.
      java.util.concurrent.locks.ReentrantLock lock =
          locks.lockFor("held".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      long before;
      try {
        before = fsyncs(server);
        long loopCommands = Long.parseLong(TestServer.info(j, "kv4j_loop_commands"));
        send(first, "SET held 1\r\n");
        TestServer.await(
            "the first SET to be handed to the committer",
            () -> Long.parseLong(TestServer.info(j, "kv4j_loop_commands")) > loopCommands);
        for (int c = 0; c < 10; c++) {
          Socket s = server.socket();
          others.add(s);
          StringBuilder sets = new StringBuilder();
          for (int i = 0; i < 20; i++) {
            sets.append("SET c").append(c).append("k").append(i).append(" v\r\n");
          }
          send(s, sets.toString());
        }
        // Each INFO is itself a command counted on the loop: wait for the 200 SETs and more.
        TestServer.await(
            "all 200 SETs to be gathered while the committer waits",
            () -> Long.parseLong(TestServer.info(j, "kv4j_loop_commands")) >= loopCommands + 201);
        assertThat(j.get("other")).as("the event loop still answers").isEqualTo("o");
        assertThat(Long.parseLong(TestServer.info(j, "kv4j_query_buffers_bytes")))
            .as("SETs waiting for the committer are charged as buffered input")
            .isGreaterThanOrEqualTo(200L * 32);
        assertThat(first.getInputStream().available()).as("not written yet").isZero();
      } finally {
        lock.unlock();
      }
      assertThat(TestServer.readLine(first)).isEqualTo("+OK");
      for (Socket s : others) {
        for (int i = 0; i < 20; i++) {
          assertThat(TestServer.readLine(s)).isEqualTo("+OK");
        }
        s.close();
      }
      assertThat(fsyncs(server) - before)
          .as("fsyncs: the first SET's, then one for the 200 gathered meanwhile")
          .isLessThanOrEqualTo(2);
      assertThat(j.dbSize()).isEqualTo(202);
      TestServer.await(
          "the charge to be released",
          () -> "0".equals(TestServer.info(j, "kv4j_query_buffers_bytes")));
    }
  }

  @Test
  void committedSets_answerInPlaceBeforeOtherCommandsAndAProtocolError() throws Exception {
    String uri = "hashlog:" + dir.resolve("db") + "?durability=sync";
    try (TestServer server = new TestServer(uri, options());
        Socket s = server.socket();
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      send(s, "SET a 1\r\nINCR n\r\nSET b 2\r\nSET c 3\r\nGET a\r\nKEYS *\r\nSET d 4\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo(":1");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$1");
      assertThat(readLine(s)).isEqualTo("1");
      assertThat(readLine(s)).isEqualTo("*4");
      for (int i = 0; i < 8; i++) {
        readLine(s);
      }
      assertThat(readLine(s)).isEqualTo("+OK");
      send(s, "SET e 5\r\nSET f 6\r\n*x\r\nSET g 7\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("-ERR Protocol error: invalid multibulk length");
      assertThat(TestServer.closedByServer(s)).isTrue();
      assertThat(j.mget("a", "b", "c", "d", "e", "f", "g"))
          .containsExactly("1", "2", "3", "4", "5", "6", null);
    }
  }
}
