package io.kv4j.server;

import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
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
  @ParameterizedTest
  @ValueSource(strings = {"native", "nio"})
  void acceptLoop_survivesRunningOutOfFileDescriptors(String transport) throws Exception {
    String java =
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    String cp = System.getProperty("java.class.path");
    String command =
        "ulimit -n 256 && exec '"
            + java
            + "' -Xmx256m -cp '"
            + cp
            + "' io.kv4j.server.FdHogServer "
            + transport;
    Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
    List<Socket> waiting = new ArrayList<>();
    StringBuilder output = new StringBuilder();
    try {
      BufferedReader childOut =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      OutputStream childIn = p.getOutputStream();
      String line = nextLine(childOut, output, "PORT ");
      int port = Integer.parseInt(line.split(" ")[1]);
      try (Socket admin = new Socket("127.0.0.1", port)) {
        admin.setSoTimeout(30_000);
        send(admin, "PING\r\n");
        assertThat(readLine(admin)).isEqualTo("+PONG");

        childIn.write("hog\n".getBytes(StandardCharsets.US_ASCII));
        childIn.flush();
        assertThat(nextLine(childOut, output, "HOGGED ")).isNotEqualTo("HOGGED 0");

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
          assertThat(System.nanoTime())
              .as("accept errors counted, output:%n%s", output)
              .isLessThan(deadline);
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
        nextLine(childOut, output, "RELEASED");
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
      assertThat(p.isAlive()).isTrue();
      assertThat(output.toString()).doesNotContain("Exception in thread").doesNotContain("Error:");
    } finally {
      for (Socket s : waiting) {
        s.close();
      }
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** Reads the child's output until a line starting with {@code prefix}; fails at end of output. */
  private static String nextLine(BufferedReader in, StringBuilder output, String prefix)
      throws Exception {
    for (String line; (line = in.readLine()) != null; ) {
      output.append(line).append('\n');
      if (line.startsWith(prefix)) {
        return line;
      }
    }
    throw new AssertionError("child ended before printing " + prefix + "; output:\n" + output);
  }
}
