package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.CLIENT_QUERY_BUFFER_LIMIT;
import static io.kv4j.server.ServerOptions.Setting.IDLE_TIMEOUT;
import static io.kv4j.server.ServerOptions.Setting.MAX_CLIENTS;
import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.REQUEST_TIMEOUT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.ServerOptions.Setting.TOTAL_QUERY_BUFFER_LIMIT;
import static io.kv4j.server.TestServer.await;
import static io.kv4j.server.TestServer.closedByServer;
import static io.kv4j.server.TestServer.info;
import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.readToEnd;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/** The probes of issue 22 against the network layer: each must behave as Redis would, or better. */
class HardeningTest {
  private static ServerOptions options() {
    return ServerOptions.defaults().with(PORT, 0).with(THREADS, 1);
  }

  @Test
  void httpPost_abortsBeforeTheBodyRuns() throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      String body = "\r\nSET k pwned\r\nFLUSHALL\r\n";
      other.set("survivor", "yes");
      try (Socket s = server.socket()) {
        send(
            s,
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: "
                + body.length()
                + "\r\n\r\n"
                + body);
        assertThat(readToEnd(s)).as("bytes the server wrote back").isEmpty();
      }
      assertThat(other.get("k")).isNull();
      assertThat(other.get("survivor")).isEqualTo("yes");
      assertThat(info(other, "kv4j_security_attacks")).isEqualTo("1");
    }
  }

  @Test
  void httpHostLine_abortsTheConnection() throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      try (Socket s = server.socket()) {
        // A GET request: its first line is a (failing) command, as in Redis; "Host:" aborts.
        send(s, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nSET k pwned\r\n");
        String answer = new String(readToEnd(s), StandardCharsets.UTF_8);
        assertThat(answer).doesNotContain("+OK");
      }
      assertThat(other.get("k")).isNull();
      assertThat(info(other, "kv4j_security_attacks")).isEqualTo("1");
    }
  }

  @Test
  void maxClients_refusesTheExtraClientAndServesAgainWhenOneLeaves() throws Exception {
    try (TestServer server = new TestServer("memory:", options().with(MAX_CLIENTS, 3))) {
      List<Socket> held = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          Socket s = server.socket();
          held.add(s);
          send(s, "PING\r\n");
          assertThat(readLine(s)).isEqualTo("+PONG");
        }
        try (Socket extra = server.socket()) {
          assertThat(readLine(extra)).isEqualTo("-ERR max number of clients reached");
          assertThat(closedByServer(extra)).isTrue();
        }
        held.remove(0).close();
        // The server sees the close asynchronously: retry until a client is admitted.
        String[] answer = new String[1];
        await(
            "a client to be admitted after one left",
            () -> {
              try (Socket s = server.socket()) {
                send(s, "PING\r\n");
                answer[0] = readLine(s);
                return "+PONG".equals(answer[0]);
              } catch (java.io.IOException e) {
                return false;
              }
            });
        assertThat(answer[0]).isEqualTo("+PONG");
      } finally {
        for (Socket s : held) {
          s.close();
        }
      }
      String[] stats = new String[2];
      await(
          "an admin client to be admitted",
          () -> {
            try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
              stats[0] = info(j, "rejected_connections");
              stats[1] = info(j, "maxclients");
              return true;
            } catch (redis.clients.jedis.exceptions.JedisException e) {
              return false; // still full: the closes above are not processed yet
            }
          });
      assertThat(Long.parseLong(stats[0])).isPositive();
      assertThat(stats[1]).isEqualTo("3");
    }
  }

  @Test
  void idleTimeout_closesAnIdleClient() throws Exception {
    try (TestServer server = new TestServer("memory:", options().with(IDLE_TIMEOUT, 1));
        Socket s = server.socket()) {
      send(s, "PING\r\n");
      assertThat(readLine(s)).isEqualTo("+PONG");
      assertThat(closedByServer(s)).isTrue(); // the 30 s read timeout guards the test
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        assertThat(Long.parseLong(info(j, "kv4j_timed_out_clients"))).isPositive();
      }
    }
  }

  @Test
  void stalledPartialRequest_isClosedAndReleasesItsBuffer() throws Exception {
    try (TestServer server = new TestServer("memory:", options().with(REQUEST_TIMEOUT, 1));
        Socket s = server.socket()) {
      OutputStream o = s.getOutputStream();
      o.write("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n".getBytes(StandardCharsets.US_ASCII));
      o.write(new byte[1_000_000]);
      o.flush();
      assertThat(closedByServer(s)).isTrue();
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        await("the buffer to be released", () -> "0".equals(info(j, "kv4j_query_buffers_bytes")));
        assertThat(j.get("k")).isNull();
      }
    }
  }

  @Test
  void bulkOverTheEngineValueLimit_isRefusedAtItsHeader() throws Exception {
    // 512 MiB - 1 passes Redis's proto-max-bulk-len, but the memory engine takes at most 256 MiB.
    try (TestServer server = new TestServer("memory:", options());
        Socket s = server.socket()) {
      long limit = server.store.info().limits().maxValueSize();
      send(s, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870911\r\n");
      assertThat(readLine(s))
          .isEqualTo(
              "-ERR Protocol error: bulk length 536870911 is over the engine's value limit of "
                  + limit
                  + " bytes");
      assertThat(closedByServer(s)).isTrue();
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        assertThat(info(j, "kv4j_query_buffers_bytes")).isEqualTo("0");
      }
    }
  }

  @Test
  void clientQueryBufferLimit_closesTheClientThatPassesIt() throws Exception {
    try (TestServer server =
            new TestServer("memory:", options().with(CLIENT_QUERY_BUFFER_LIMIT, 1 << 20));
        Socket s = server.socket();
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      OutputStream o = s.getOutputStream();
      o.write("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n".getBytes(StandardCharsets.US_ASCII));
      o.write(new byte[1_500_000]);
      o.flush();
      assertThat(readLine(s))
          .isEqualTo(
              "-ERR Protocol error: client query buffer over the limit of 1048576 bytes"
                  + " (client-query-buffer-limit)");
      assertThat(closedByServer(s)).isTrue();
      assertThat(other.ping()).isEqualTo("PONG");
      await("the buffer to be released", () -> "0".equals(info(other, "kv4j_query_buffers_bytes")));
    }
  }

  @Test
  void protocolError_reachesAClientThatGoesOnSending() throws Exception {
    // 32 MiB after the bad request: more than the two sockets' buffers hold, so without the
    // server draining its input after the answer the close is a reset mid-write, every run.
    try (TestServer server = new TestServer("memory:", options());
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      try (Socket s = server.socket()) {
        OutputStream o = s.getOutputStream();
        o.write("*1\r\n$x\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] piece = new byte[1 << 20];
        for (int i = 0; i < 32; i++) {
          o.write(piece);
        }
        o.flush();
        assertThat(readLine(s)).isEqualTo("-ERR Protocol error: invalid bulk length");
        assertThat(closedByServer(s)).isTrue();
      }
      // The client's close ends the drain at once (the 5 s bound is for clients that go on).
      await("the client to be gone", () -> "1".equals(info(other, "connected_clients")));
    }
  }

  @Test
  void protocolError_drainsABoundedAmountFromAClientThatNeverStops() throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000);
        Socket s = server.socket()) {
      OutputStream o = s.getOutputStream();
      o.write("*1\r\n$x\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] piece = new byte[1 << 20];
      long sent = 0;
      long cap = 16 * RespHandler.LINGER_BYTES;
      try {
        while (sent < cap) {
          o.write(piece);
          sent += piece.length;
        }
      } catch (SocketException e) {
        // the server closed after draining at most its bound (or its time limit)
      }
      assertThat(sent).as("bytes the server took before it closed").isLessThan(cap);
      await("the client to be gone", () -> "1".equals(info(other, "connected_clients")));
    }
  }

  @Test
  void totalQueryBufferLimit_refusesTheClientThatWouldPassIt() throws Exception {
    long total = 16L << 20;
    try (TestServer server =
            new TestServer("memory:", options().with(TOTAL_QUERY_BUFFER_LIMIT, total));
        Socket first = server.socket();
        Socket second = server.socket();
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      int size = 6_000_000;
      OutputStream a = first.getOutputStream();
      a.write(
          ("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$" + size + "\r\n").getBytes(StandardCharsets.US_ASCII));
      a.write(new byte[size - 1000]);
      a.flush();
      await(
          "the first client's input to be buffered",
          () -> Long.parseLong(info(other, "kv4j_query_buffers_bytes")) >= size - 1000);
      OutputStream b = second.getOutputStream();
      try {
        b.write("*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$9000000\r\n".getBytes(StandardCharsets.US_ASCII));
        // In pieces, stopping once the answer is there: the server refuses part way and closes.
        byte[] piece = new byte[100_000];
        for (int sent = 0; sent < 8_900_000 && second.getInputStream().available() == 0; ) {
          b.write(piece);
          b.flush();
          sent += piece.length;
        }
      } catch (SocketException e) {
        // The refusal under test: the server answered and closed while these bytes were still
        // going out (its unread input makes the close a reset). Its answer was sent first.
      }
      assertThat(readLine(second))
          .startsWith("-ERR Protocol error: the query buffers of all clients would pass");
      assertThat(closedByServer(second)).isTrue();
      // The first client was not harmed: it completes its request.
      a.write(new byte[1000]);
      a.write("\r\n".getBytes(StandardCharsets.US_ASCII));
      a.flush();
      assertThat(readLine(first)).isEqualTo("+OK");
      assertThat(other.strlen("a")).isEqualTo(size);
      assertThat(other.exists("b")).isFalse();
      assertThat(Long.parseLong(info(other, "kv4j_query_buffer_rejections"))).isEqualTo(1);
    }
  }

  @Test
  void blockedEngineCall_doesNotStallOtherClientsOfTheSameEventLoop() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (Store memory = Stores.open("memory:")) {
      BlockingStore store = new BlockingStore(memory, release, new BlockingStore.FaultSwitch());
      // One event loop: without workers, the blocked GET would stall the PING below.
      TestServer server = new TestServer(store, options(), null);
      try (Socket slow = server.socket();
          Socket fast = server.socket()) {
        send(slow, "GET block\r\nPING\r\n");
        store.blocked.await();
        send(fast, "PING\r\n");
        assertThat(readLine(fast)).isEqualTo("+PONG");
        assertThat(slow.getInputStream().available()).isZero(); // still blocked: the latch holds
        release.countDown();
        assertThat(readLine(slow)).isEqualTo("$-1");
        assertThat(readLine(slow)).isEqualTo("+PONG"); // in order after the slow reply
      } finally {
        release.countDown();
        server.close();
      }
    }
  }

  @Test
  void flushallAsync_returnsAtOnceHidesOldKeysAndKeepsNewOnes() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (Store memory = Stores.open("memory:")) {
      BlockingStore store = new BlockingStore(memory, release, new BlockingStore.FaultSwitch());
      TestServer server = new TestServer(store, options(), null);
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        KeyLocks stripes = new KeyLocks(1024);
        Set<Integer> old = new HashSet<>();
        for (int i = 0; i < 10; i++) {
          j.set("old" + i, "v");
          old.add(stripes.stripe(("old" + i).getBytes(StandardCharsets.UTF_8)));
        }
        // A new key on a stripe no old key uses: the blocked background delete holds one of those.
        String fresh = null;
        for (int i = 0; fresh == null; i++) {
          if (!old.contains(stripes.stripe(("new" + i).getBytes(StandardCharsets.UTF_8)))) {
            fresh = "new" + i;
          }
        }
        store.blockDeletes = true;
        assertThat(j.flushAll(redis.clients.jedis.args.FlushMode.ASYNC)).isEqualTo("OK");
        store.blocked.await(); // the background flush is stuck in its first delete
        assertThat(j.dbSize()).isZero();
        assertThat(j.get("old3")).isNull();
        assertThat(j.keys("*")).isEmpty();
        assertThat(j.set(fresh, "kept")).isEqualTo("OK");
        assertThat(j.get(fresh)).isEqualTo("kept");
        assertThat(j.dbSize()).isEqualTo(1);
        assertThat(info(j, "flushall_async_in_progress")).isEqualTo("1");
        release.countDown();
        await(
            "the background flush to end", () -> "0".equals(info(j, "flushall_async_in_progress")));
        assertThat(j.keys("*")).containsExactly(fresh);
        assertThat(memory.get("old3".getBytes(StandardCharsets.UTF_8))).isNull();
      } finally {
        release.countDown();
        server.close();
      }
    }
  }
}
