package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.CLIENT_QUERY_BUFFER_LIMIT;
import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.ServerOptions.Setting.TOTAL_QUERY_BUFFER_LIMIT;
import static io.kv4j.server.TestServer.await;
import static io.kv4j.server.TestServer.closedByServer;
import static io.kv4j.server.TestServer.info;
import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * What a hostile client tried against memory bounds and access, each answered as Redis would (or
 * more strictly): a MULTI queue charged to the query-buffer limits, unauthenticated clients held to
 * small requests and a deadline, and the rest of the access probes.
 */
class HostileClientTest {
  private static final int VALUE = 100_000;

  private static ServerOptions options() {
    return ServerOptions.defaults().with(PORT, 0).with(THREADS, 1);
  }

  /** A RESP SET of key to {@code size} bytes of 'x'. */
  static byte[] set(String key, int size) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    byte[] head =
        ("*3\r\n$3\r\nSET\r\n$" + key.length() + "\r\n" + key + "\r\n$" + size + "\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    b.writeBytes(head);
    b.writeBytes("x".repeat(size).getBytes(StandardCharsets.US_ASCII));
    b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    return b.toByteArray();
  }

  private static String queue(Socket s, String key) throws IOException {
    s.getOutputStream().write(set(key, VALUE));
    s.getOutputStream().flush();
    return readLine(s);
  }

  @Test
  void multiQueue_isChargedToTheClientLimitAndDiscardedPastIt() throws Exception {
    try (TestServer server =
            new TestServer("memory:", options().with(CLIENT_QUERY_BUFFER_LIMIT, 1 << 20));
        Socket s = server.socket();
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      send(s, "MULTI\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      for (int i = 0; i < 5; i++) {
        assertThat(queue(s, "k" + i)).isEqualTo("+QUEUED");
      }
      assertThat(Long.parseLong(info(other, "kv4j_query_buffers_bytes")))
          .as("five queued 100 kB SETs are charged to the input budget")
          .isGreaterThanOrEqualTo(5L * VALUE);
      String refused = null;
      int sent = 5;
      while (refused == null && sent < 20) {
        String answer = queue(s, "k" + sent++);
        if (!answer.equals("+QUEUED")) {
          refused = answer;
        }
      }
      assertThat(refused)
          .as("a reply to one of %s queued SETs of %s bytes under a 1 MiB limit", sent, VALUE)
          .isEqualTo(
              "-ERR transaction discarded: its queued commands would pass this client's limit of"
                  + " 1048576 bytes (client-query-buffer-limit)");
      assertThat(sent).isLessThanOrEqualTo(11);
      // The transaction is dropped at once: its memory is no longer charged.
      assertThat(Long.parseLong(info(other, "kv4j_query_buffers_bytes"))).isLessThan(VALUE * 3L);
      // Later commands are answered QUEUED (as Redis does) but kept nowhere; EXEC aborts.
      assertThat(queue(s, "late")).isEqualTo("+QUEUED");
      send(s, "EXEC\r\nPING\r\n");
      assertThat(readLine(s))
          .isEqualTo("-EXECABORT Transaction discarded because of previous errors.");
      assertThat(readLine(s)).isEqualTo("+PONG");
      assertThat(other.exists("k0", "k4", "late")).isZero();
      assertThat(Long.parseLong(info(other, "kv4j_query_buffer_rejections"))).isEqualTo(1);
    }
  }

  @Test
  void multiQueue_isChargedToTheTotalLimitAndOtherClientsKeepTheirs() throws Exception {
    try (TestServer server =
            new TestServer("memory:", options().with(TOTAL_QUERY_BUFFER_LIMIT, 1 << 20));
        Socket first = server.socket();
        Socket second = server.socket();
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      send(first, "MULTI\r\n");
      assertThat(readLine(first)).isEqualTo("+OK");
      for (int i = 0; i < 5; i++) {
        assertThat(queue(first, "a" + i)).isEqualTo("+QUEUED");
      }
      send(second, "MULTI\r\n");
      assertThat(readLine(second)).isEqualTo("+OK");
      String refused = null;
      int sent = 0;
      while (refused == null && sent < 20) {
        String answer = queue(second, "b" + sent++);
        if (!answer.equals("+QUEUED")) {
          refused = answer;
        }
      }
      assertThat(refused)
          .as("a reply to one of %s queued SETs beside another client's 500 kB queue", sent)
          .isEqualTo(
              "-ERR transaction discarded: its queued commands would pass the server's limit of"
                  + " 1048576 bytes for all clients' input (total-query-buffer-limit)");
      send(second, "EXEC\r\n");
      assertThat(readLine(second)).startsWith("-EXECABORT");
      // The first client's transaction was charged first and runs.
      send(first, "EXEC\r\n");
      assertThat(readLine(first)).isEqualTo("*5");
      for (int i = 0; i < 5; i++) {
        assertThat(readLine(first)).isEqualTo("+OK");
      }
      assertThat(other.strlen("a4")).isEqualTo(VALUE);
      assertThat(other.exists("b0")).isFalse();
    }
  }

  @Test
  void multiQueue_chargeIsReleasedByDiscardExecAndDisconnect() throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      for (String end : new String[] {"DISCARD", "EXEC", "RESET", null}) {
        try (Socket s = server.socket()) {
          send(s, "MULTI\r\n");
          assertThat(readLine(s)).isEqualTo("+OK");
          for (int i = 0; i < 3; i++) {
            assertThat(queue(s, "k" + i)).isEqualTo("+QUEUED");
          }
          assertThat(Long.parseLong(info(other, "kv4j_query_buffers_bytes")))
              .isGreaterThanOrEqualTo(3L * VALUE);
          if (end != null) {
            send(s, end + "\r\n");
            assertThat(readLine(s)).isNotNull();
            // Only the connection's input buffer (at most 128 KiB) stays charged.
            assertThat(Long.parseLong(info(other, "kv4j_query_buffers_bytes")))
                .as("charged after %s", end)
                .isLessThan(2L * VALUE);
          }
        }
        await(
            "the budget to be empty after " + end + " and a disconnect",
            () -> "0".equals(info(other, "kv4j_query_buffers_bytes")));
      }
    }
  }

  private static ServerOptions secured() {
    return options().withRequirePass("pw");
  }

  @Test
  void unauthenticatedClient_isHeldToSmallRequests() throws Exception {
    try (TestServer server = new TestServer("memory:", secured())) {
      try (Socket s = server.socket()) {
        send(s, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n");
        assertThat(readLine(s)).isEqualTo("-ERR Protocol error: unauthenticated bulk length");
        assertThat(closedByServer(s)).isTrue();
      }
      try (Socket s = server.socket()) {
        send(s, "*11\r\n");
        assertThat(readLine(s)).isEqualTo("-ERR Protocol error: unauthenticated multibulk length");
        assertThat(closedByServer(s)).isTrue();
      }
      try (Socket s = server.socket()) {
        // At the limits: answered (NOAUTH), not closed.
        s.getOutputStream().write(set("k", 16384));
        send(s, "*10\r\n$6\r\nEXISTS\r\n" + "$1\r\nx\r\n".repeat(9));
        assertThat(readLine(s)).isEqualTo("-NOAUTH Authentication required.");
        assertThat(readLine(s)).isEqualTo("-NOAUTH Authentication required.");
        // Once authenticated (AUTH in the same write as the big request), the usual limits hold.
        s.getOutputStream().write("AUTH pw\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write(set("big", VALUE));
        s.getOutputStream().flush();
        assertThat(readLine(s)).isEqualTo("+OK");
        assertThat(readLine(s)).isEqualTo("+OK");
        send(s, "STRLEN big\r\n");
        assertThat(readLine(s)).isEqualTo(":" + VALUE);
      }
    }
    // Without a password every client is authenticated: no such limit.
    try (TestServer server = new TestServer("memory:", options());
        Socket s = server.socket()) {
      s.getOutputStream().write(set("big", VALUE));
      s.getOutputStream().flush();
      assertThat(readLine(s)).isEqualTo("+OK");
    }
  }

  @Test
  void unauthenticatedClient_isClosedAfterTheAuthTimeout() throws Exception {
    ServerOptions o = secured().with(ServerOptions.Setting.AUTH_TIMEOUT, 1);
    try (TestServer server = new TestServer("memory:", o);
        Socket authed = server.socket()) {
      send(authed, "AUTH pw\r\n");
      assertThat(readLine(authed)).isEqualTo("+OK");
      try (Socket silent = server.socket();
          Socket trickle = server.socket()) {
        send(trickle, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nx");
        // The socket read timeout (30 s) guards these two waits.
        assertThat(closedByServer(silent)).as("silent client closed").isTrue();
        assertThat(closedByServer(trickle)).as("trickling client closed").isTrue();
      }
      // Connected before both, so past its own deadline too: authenticated, it stays.
      send(authed, "PING\r\n");
      assertThat(readLine(authed)).isEqualTo("+PONG");
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        j.auth("pw");
        assertThat(info(j, "kv4j_auth_timeouts")).isEqualTo("2");
      }
    }
  }

  @Test
  void failedAuth_isCountedInInfo() throws Exception {
    try (TestServer server = new TestServer("memory:", secured());
        Socket s = server.socket()) {
      send(s, "AUTH wrong\r\nAUTH nobody x\r\nHELLO 3 AUTH default nope\r\nAUTH pw\r\n");
      for (int i = 0; i < 3; i++) {
        assertThat(readLine(s)).startsWith("-WRONGPASS");
      }
      assertThat(readLine(s)).isEqualTo("+OK");
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        j.auth("pw");
        assertThat(info(j, "acl_access_denied_auth")).isEqualTo("3");
      }
    }
  }

  @Test
  void clientSetinfo_refusesNewlinesAndSpaces() throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Socket s = server.socket()) {
      send(s, "*4\r\n$6\r\nCLIENT\r\n$7\r\nSETINFO\r\n$8\r\nLIB-NAME\r\n$9\r\nx\r\nid=666\r\n");
      assertThat(readLine(s))
          .isEqualTo("-ERR LIB-NAME cannot contain spaces, newlines or special characters.");
      send(s, "*4\r\n$6\r\nCLIENT\r\n$7\r\nSETINFO\r\n$7\r\nLIB-VER\r\n$3\r\n1 2\r\n");
      assertThat(readLine(s))
          .isEqualTo("-ERR LIB-VER cannot contain spaces, newlines or special characters.");
      send(s, "CLIENT SETINFO LIB-NAME jedis\r\nCLIENT INFO\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      readLine(s); // the bulk's length
      assertThat(readLine(s)).contains(" lib-name=jedis ").doesNotContain("666");
    }
  }

  @Test
  void http2Preface_abortsTheConnectionBeforeAnythingRuns() throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      try (Socket s = server.socket()) {
        send(s, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\nSET k pwned\r\n");
        assertThat(TestServer.readToEnd(s)).as("bytes the server wrote back").isEmpty();
      }
      assertThat(other.get("k")).isNull();
      assertThat(info(other, "kv4j_security_attacks")).isEqualTo("1");
    }
  }
}
