package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.MAX_REQUEST_BYTES;
import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.TestServer.closedByServer;
import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/** Raw RESP on a socket: framing, inline requests, and rejection of bad or oversized input. */
class ProtocolTest {
  TestServer server;
  Jedis other;

  @BeforeEach
  void start() throws Exception {
    server =
        new TestServer(
            "memory:",
            ServerOptions.defaults()
                .with(PORT, 0)
                .with(THREADS, 2)
                .with(MAX_REQUEST_BYTES, 8 << 20));
    other = new Jedis("127.0.0.1", server.port(), 30_000);
    other.set("survivor", "yes");
  }

  @AfterEach
  void stop() {
    other.close();
    server.close();
  }

  /** After a bad client was thrown out, another client still gets answers. */
  private void assertOthersUnaffected() {
    assertThat(other.get("survivor")).isEqualTo("yes");
    assertThat(other.ping()).isEqualTo("PONG");
  }

  private void assertRejected(String request, String expectedError) throws Exception {
    try (Socket s = server.socket()) {
      send(s, request);
      assertThat(readLine(s)).isEqualTo("-ERR Protocol error: " + expectedError);
      assertThat(closedByServer(s)).as("connection closed after " + expectedError).isTrue();
    }
    assertOthersUnaffected();
  }

  @Test
  void bulkLengthOf600MB_isRejectedAtTheHeader() throws Exception {
    // The default limit is 512 MiB like Redis; this server is configured with 8 MiB.
    assertRejected("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$629145600\r\n", "invalid bulk length");
    try (TestServer big = new TestServer("memory:");
        Socket s = big.socket()) {
      send(s, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$629145600\r\n");
      assertThat(readLine(s)).isEqualTo("-ERR Protocol error: invalid bulk length");
      assertThat(closedByServer(s)).isTrue();
    }
  }

  @Test
  void requestOverTheSizeLimit_isRejected() throws Exception {
    // Each bulk is under the per-bulk limit but together they pass the request limit.
    assertRejected(
        "*3\r\n$3\r\nSET\r\n$7000000\r\n" + "k".repeat(7_000_000) + "\r\n$2000000\r\n",
        "request larger than the limit of 8388608 bytes");
  }

  @Test
  void malformedMultibulk_isRejected() throws Exception {
    assertRejected("*abc\r\n", "invalid multibulk length");
    assertRejected("*99999999999\r\n", "invalid multibulk length");
    assertRejected("*2\r\n+GET\r\n", "expected '$', got '+'");
    assertRejected("*1\r\n$-5\r\n", "invalid bulk length");
    assertRejected("*1\r\n$4\r\nPINGxx", "bulk string not terminated by CRLF");
    assertRejected("*1\r\n$12345678901234567890123\r\n", "invalid bulk length");
  }

  @Test
  void inlineGarbage_isRejected() throws Exception {
    assertRejected("SET \"unterminated value\r\n", "unbalanced quotes in request");
    byte[] noise = new byte[70 * 1024];
    long seed = 42;
    new Random(seed).nextBytes(noise);
    for (int i = 0; i < noise.length; i++) {
      if (noise[i] == '\n' || noise[i] == '*') {
        noise[i] = 'x';
      }
    }
    noise[0] = 'x';
    try (Socket s = server.socket()) {
      s.getOutputStream().write(noise);
      assertThat(readLine(s))
          .as("seed " + seed)
          .isEqualTo("-ERR Protocol error: too big inline request");
      assertThat(closedByServer(s)).isTrue();
    }
    assertOthersUnaffected();
  }

  @Test
  void inlineCommands_workLikeRedis() throws Exception {
    try (Socket s = server.socket()) {
      send(s, "PING\r\nSET greeting \"hello world\\n\"\r\nGET greeting\r\n\r\necho 'it''s'\r\n");
      assertThat(readLine(s)).isEqualTo("+PONG");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$12");
      assertThat(readLine(s)).isEqualTo("hello world\n");
      // 'it''s' is not valid (a closing quote must be followed by a space)
      assertThat(readLine(s)).isEqualTo("-ERR Protocol error: unbalanced quotes in request");
    }
    assertOthersUnaffected();
  }

  @Test
  void inlineEscapes_decodeLikeRedis() throws Exception {
    try (Socket s = server.socket()) {
      // \xHH, \t, \a, an escaped quote and an unknown escape inside double quotes; \' in single.
      send(s, "SET e \"<\\x41\\x7a\\t\\a\\\"\\q>\"\r\nGET e\r\nECHO 'x\\'y'\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$8");
      assertThat(readLine(s)).isEqualTo("<Az\t\u0007\"q>");
      assertThat(readLine(s)).isEqualTo("$3");
      assertThat(readLine(s)).isEqualTo("x'y");
    }
  }

  @Test
  void unknownInlineCommand_keepsTheConnection() throws Exception {
    try (Socket s = server.socket()) {
      send(s, "\u0001\u0002garbage here\r\nPING\r\n");
      assertThat(readLine(s))
          .startsWith("-ERR unknown command '\u0001\u0002garbage', with args beginning with:");
      assertThat(readLine(s)).isEqualTo("+PONG");
    }
  }

  @Test
  void requestsSplitAtEveryByte_parseCorrectly() throws Exception {
    String req =
        "*3\r\n$3\r\nSET\r\n$5\r\nsplit\r\n$10\r\n0123456789\r\n*2\r\n$3\r\nGET\r\n$5\r\nsplit\r\n";
    try (Socket s = server.socket()) {
      s.setTcpNoDelay(true);
      OutputStream o = s.getOutputStream();
      for (byte b : req.getBytes(StandardCharsets.US_ASCII)) {
        o.write(b);
        o.flush();
      }
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$10");
      assertThat(readLine(s)).isEqualTo("0123456789");
    }
  }

  @Test
  void emptyMultibulk_isIgnored() throws Exception {
    try (Socket s = server.socket()) {
      send(s, "*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n");
      assertThat(readLine(s)).isEqualTo("+PONG");
    }
  }

  @Test
  void deepPipeline_inOneWrite_repliesInOrder() throws Exception {
    ByteArrayOutputStream req = new ByteArrayOutputStream();
    int n = 20_000;
    for (int i = 0; i < n; i++) {
      String k = "key" + i;
      req.writeBytes(
          ("*2\r\n$4\r\nINCR\r\n$" + k.length() + "\r\n" + k + "\r\n")
              .getBytes(StandardCharsets.US_ASCII));
    }
    req.writeBytes("*2\r\n$4\r\nINCR\r\n$4\r\nkey7\r\n".getBytes(StandardCharsets.US_ASCII));
    try (Socket s = server.socket()) {
      s.getOutputStream().write(req.toByteArray());
      for (int i = 0; i < n; i++) {
        assertThat(readLine(s)).as("reply " + i).isEqualTo(":1");
      }
      assertThat(readLine(s)).isEqualTo(":2");
    }
  }

  @Test
  void quit_repliesOkAndCloses() throws Exception {
    try (Socket s = server.socket()) {
      send(s, "*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(closedByServer(s)).isTrue();
    }
  }

  @Test
  void hello3_switchesToResp3Encoding() throws Exception {
    try (Socket s = server.socket()) {
      send(s, "HELLO 3\r\n");
      assertThat(readLine(s)).isEqualTo("%7");
      for (int i = 0; i < 14; i++) {
        String line = readLine(s);
        if (line.startsWith("$")) {
          readLine(s);
        }
        if (line.equals("*0")) {
          break;
        }
      }
      send(s, "GET nothing\r\nHELLO 4\r\nHELLO 2\r\nGET nothing\r\n");
      assertThat(readLine(s)).isEqualTo("_");
      assertThat(readLine(s)).isEqualTo("-NOPROTO unsupported protocol version");
      assertThat(readLine(s)).isEqualTo("*14");
      for (int i = 0; i < 14; i++) {
        String line = readLine(s);
        if (line.startsWith("$")) {
          readLine(s);
        }
      }
      assertThat(readLine(s)).isEqualTo("$-1");
    }
  }

  @Test
  void protocolErrors_areCountedInInfo() throws Exception {
    assertRejected("*x\r\n", "invalid multibulk length");
    assertThat(other.info("stats")).contains("kv4j_protocol_errors:1");
  }
}
