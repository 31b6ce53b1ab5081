package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** An in-process server on a free port over a store it owns. */
final class TestServer implements AutoCloseable {
  final Store store;
  final RespServer server;

  TestServer(String uri) {
    this(uri, ServerOptions.defaults().with(PORT, 0).with(THREADS, 2));
  }

  TestServer(String uri, ServerOptions options) {
    this.store = Stores.open(uri);
    RespServer s;
    try {
      s = RespServer.start(store, options, () -> Stores.open(uri), Writers.ofOpened(store));
    } catch (RuntimeException | Error e) {
      store.close();
      throw e;
    }
    this.server = s;
  }

  /** Serves a store the test made (reopened through {@code reopener} after a write failure). */
  TestServer(Store store, ServerOptions options, java.util.function.Supplier<Store> reopener) {
    this(store, options, reopener, Writers.SHARED);
  }

  TestServer(
      Store store,
      ServerOptions options,
      java.util.function.Supplier<Store> reopener,
      Writers writers) {
    this.store = store;
    this.server = RespServer.start(store, options, reopener, writers);
  }

  int port() {
    return server.port();
  }

  Socket socket() throws IOException {
    Socket s = new Socket("127.0.0.1", port());
    s.setSoTimeout(30_000);
    return s;
  }

  @Override
  public void close() {
    server.close();
    server.store().close();
  }

  static void send(Socket s, String text) throws IOException {
    OutputStream o = s.getOutputStream();
    o.write(text.getBytes(StandardCharsets.UTF_8));
    o.flush();
  }

  /** Reads one CRLF-terminated line (without the CRLF), or null at end of stream. */
  static String readLine(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      if (c == '\n' && sb.length() > 0 && sb.charAt(sb.length() - 1) == '\r') {
        return sb.substring(0, sb.length() - 1);
      }
      sb.append((char) c);
    }
    return sb.length() == 0 ? null : sb.toString();
  }

  /** True when the server has closed the connection (reads end of stream). */
  static boolean closedByServer(Socket s) throws IOException {
    try {
      return s.getInputStream().read() < 0;
    } catch (java.net.SocketException e) {
      return true; // connection reset
    }
  }

  /** The value of one INFO field, or null when INFO does not show it. */
  static String info(redis.clients.jedis.Jedis j, String field) {
    for (String line : j.info("everything").split("\r\n")) {
      if (line.startsWith(field + ":")) {
        return line.substring(field.length() + 1);
      }
    }
    return null;
  }

  /**
   * Waits until {@code condition} holds (see {@link ConditionWait}); fails naming {@code what}
   * after 30 s.
   */
  static void await(String what, java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    ConditionWait.until(what, java.time.Duration.ofSeconds(30), condition);
  }

  /** Reads everything until the server closes the connection. */
  static byte[] readToEnd(Socket s) throws IOException {
    try {
      return s.getInputStream().readAllBytes();
    } catch (java.net.SocketException e) {
      return new byte[0]; // reset: nothing more arrived
    }
  }
}
