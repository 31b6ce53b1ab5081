package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A client that pipelines big reads without reading replies is paused, not buffered without end.
 */
class BackpressureTest {
  @Test
  void slowReader_isPausedAndStillGetsEveryReply() throws Exception {
    try (TestServer server = new TestServer("memory:");
        Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      byte[] value = new byte[256 * 1024];
      Arrays.fill(value, (byte) 'v');
      other.set("big".getBytes(StandardCharsets.UTF_8), value);
      int n = 400; // 100 MiB of replies
      byte[] get = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".getBytes(StandardCharsets.US_ASCII);
      try (Socket slow = server.socket()) {
        slow.setReceiveBufferSize(64 * 1024);
        OutputStream o = slow.getOutputStream();
        for (int i = 0; i < n; i++) {
          o.write(get);
        }
        o.flush();
        // While the slow client reads nothing, the server pauses it and serves others.
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (pauses(other) == 0 && System.nanoTime() < deadline) {
          assertThat(other.ping()).isEqualTo("PONG");
        }
        assertThat(pauses(other)).isPositive();
        assertThat(other.get("big".getBytes(StandardCharsets.UTF_8))).hasSize(value.length);
        // Now read everything: every reply arrives intact and in order.
        DataInputStream in = new DataInputStream(slow.getInputStream());
        String header = "$" + value.length + "\r\n";
        byte[] expectedHeader = header.getBytes(StandardCharsets.US_ASCII);
        byte[] buf = new byte[value.length + 2];
        for (int i = 0; i < n; i++) {
          byte[] h = new byte[expectedHeader.length];
          in.readFully(h);
          assertThat(h).as("header of reply " + i).isEqualTo(expectedHeader);
          in.readFully(buf);
          assertThat(buf[0]).isEqualTo((byte) 'v');
          assertThat(buf[value.length - 1]).isEqualTo((byte) 'v');
          assertThat(buf[value.length]).isEqualTo((byte) '\r');
        }
        o.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream raw = slow.getInputStream();
        assertThat(new String(raw.readNBytes(7), StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
      }
    }
  }

  private static long pauses(Jedis j) {
    for (String line : j.info("stats").split("\r\n")) {
      if (line.startsWith("kv4j_backpressure_pauses:")) {
        return Long.parseLong(line.substring(line.indexOf(':') + 1));
      }
    }
    return -1;
  }
}
