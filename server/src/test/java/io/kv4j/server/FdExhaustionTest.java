package io.kv4j.server;

import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The accept loop survives a process that has run out of file descriptors: a child JVM with {@code
 * ulimit -n 256} serves clients, then uses up every descriptor; clients that connect meanwhile wait
 * in the kernel's backlog while accept fails with EMFILE; once the descriptors are given back, the
 * waiting clients and new ones are served, and an already connected client was served throughout.
 */
class FdExhaustionTest {
  /** How long the child may take to print its next line. */
  private static final Duration LINE_WAIT = Duration.ofMinutes(2);

  @ParameterizedTest
  @ValueSource(strings = {"native", "nio"})
  void acceptLoop_survivesRunningOutOfFileDescriptors(String transport) throws Exception {
    List<Socket> waiting = new ArrayList<>();
    try (ChildProcess c =
        ChildProcess.java(FdHogServer.class, transport)
            .jvmOptions("-Xmx256m")
            .prefix(List.of("sh", "-c", "ulimit -n 256 && exec \"$@\"", "sh"))
            .start()) {
      try {
        OutputStream childIn = c.process().getOutputStream();
        String line = nextLine(c, "PORT ");
        int port = Integer.parseInt(line.split(" ")[1]);
        String output;
        try (Socket admin = new Socket("127.0.0.1", port)) {
          admin.setSoTimeout(30_000);
          send(admin, "PING\r\n");
          assertThat(readLine(admin)).isEqualTo("+PONG");

          childIn.write("hog\n".getBytes(StandardCharsets.US_ASCII));
          childIn.flush();
          assertThat(nextLine(c, "HOGGED ")).isNotEqualTo("HOGGED 0");

          for (int i = 0; i < 20; i++) {
            Socket s = new Socket("127.0.0.1", port); // completes in the kernel's backlog
            s.setSoTimeout(30_000);
            send(s, "PING\r\n");
            waiting.add(s);
          }
          // The server tries to accept them and fails with EMFILE, and keeps serving the admin.
          long errors = 0;
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (errors == 0) {
            assertThat(System.nanoTime()).as("accept errors counted").isLessThan(deadline);
            send(admin, "INFO stats\r\n");
            String header = readLine(admin);
            assertThat(header).startsWith("$");
            byte[] body =
                admin.getInputStream().readNBytes(Integer.parseInt(header.substring(1)) + 2);
            for (String l : new String(body, StandardCharsets.US_ASCII).split("\r\n")) {
              if (l.startsWith("kv4j_accept_errors:")) {
                errors = Long.parseLong(l.substring(l.indexOf(':') + 1));
              }
            }
          }

          childIn.write("release\n".getBytes(StandardCharsets.US_ASCII));
          childIn.flush();
          nextLine(c, "RELEASED");
          output = c.stdout() + "\n" + c.stderr(); // what it printed up to the release
          for (Socket s : waiting) {
            assertThat(readLine(s)).as("a client that waited in the backlog").isEqualTo("+PONG");
          }
          try (Socket late = new Socket("127.0.0.1", port)) {
            late.setSoTimeout(30_000);
            send(late, "PING\r\n");
            assertThat(readLine(late)).isEqualTo("+PONG");
          }
          send(admin, "PING\r\n");
          assertThat(readLine(admin)).isEqualTo("+PONG");
        }
        assertThat(c.process().isAlive()).isTrue();
        assertThat(output).doesNotContain("Exception in thread").doesNotContain("Error:");
      } catch (Throwable t) {
        // Whatever failed, say what the server process did: it may have died or hung.
        throw new AssertionError(t + "\nthe server: " + c.describe(), t);
      }
    } finally {
      for (Socket s : waiting) {
        s.close();
      }
    }
  }

  /** Reads the child's stdout until a line starting with {@code prefix}; fails at its end. */
  private static String nextLine(ChildProcess c, String prefix) throws Exception {
    for (String line; (line = c.readLine(LINE_WAIT)) != null; ) {
      if (line.startsWith(prefix)) {
        return line;
      }
    }
    c.await(Duration.ofSeconds(30)); // it closed stdout: its exit, and its stderr to the end
    throw new AssertionError("child ended before printing " + prefix);
  }
}
