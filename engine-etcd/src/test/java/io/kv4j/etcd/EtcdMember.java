package io.kv4j.etcd;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Assertions;

/**
 * A single-member etcd a test starts for itself ({@code /usr/bin/etcd}, Debian's etcd-server) on
 * free loopback ports, serving clients over TLS, its data under a directory the test owns. {@link
 * #close()} kills it and waits for it; a shutdown hook kills it should the test JVM end first. The
 * test talks to it for set-up ({@link #post}) over its own short connections ({@code Connection:
 * close}), so they never count among the engine's.
 */
final class EtcdMember implements AutoCloseable {
  /** Where Debian's etcd-server (what .ci/servers.sh installs) puts the binary. */
  static final Path BINARY = Path.of("/usr/bin/etcd");

  private final List<String> command;
  private final Path dir;
  private final Path log;
  private final SSLContext tls;
  private Process process;
  private Thread killer;

  /** The member's client port on 127.0.0.1. */
  final int port;

  /** Skips the test (fails it in CI) when there is no etcd binary to start. */
  static void require() {
    if (!Files.isExecutable(BINARY)) {
      String msg =
          "no "
              + BINARY
              + " to start a TLS etcd member with (Debian: apt-get install etcd-server, which"
              + " .ci/servers.sh does)";
      if (TestEtcd.required()) {
        Assertions.fail(msg + "; CI=true: server tests must run.");
      }
      TestEtcd.skip(msg);
    }
  }

  private EtcdMember(List<String> command, Path dir, SSLContext tls, int port) {
    this.command = command;
    this.dir = dir;
    this.log = dir.resolve("etcd.log");
    this.tls = tls;
    this.port = port;
  }

  /** Starts the process (its output appended to the log) and waits until it is healthy. */
  private void launch() throws Exception {
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .directory(dir.toFile())
            .start();
    killer = new Thread(process::destroyForcibly, "kill etcd " + port);
    Runtime.getRuntime().addShutdownHook(killer);
    boolean ok = false;
    try {
      awaitHealthy();
      ok = true;
    } finally {
      if (!ok) {
        close();
      }
    }
  }

  /**
   * Stops the member (SIGTERM) and starts it again on the same ports and data: its simple tokens
   * are gone (they live in its memory), its keys and leases are not.
   */
  void restart() throws Exception {
    close();
    launch();
  }

  /**
   * Starts a member and waits until it is healthy.
   *
   * @param dir its data and log go under it
   * @param ca the CA that issued its certificate
   * @param server its certificate
   * @param client the client certificate the test itself presents (for set-up and health checks),
   *     or null
   * @param flags further etcd flags (e.g. {@code --client-cert-auth})
   * @return the running member
   */
  static EtcdMember start(
      Path dir,
      Certificates ca,
      Certificates.Leaf server,
      Certificates.Leaf client,
      String... flags)
      throws Exception {
    int clientPort = freePort();
    int peerPort = freePort();
    String peer = "http://127.0.0.1:" + peerPort;
    String url = "https://127.0.0.1:" + clientPort;
    List<String> cmd =
        new ArrayList<>(
            List.of(
                BINARY.toString(),
                "--name=kv4j-security",
                "--data-dir=" + dir.resolve("data"),
                "--listen-client-urls=" + url,
                "--advertise-client-urls=" + url,
                "--listen-peer-urls=" + peer,
                "--initial-advertise-peer-urls=" + peer,
                "--initial-cluster=kv4j-security=" + peer,
                "--cert-file=" + server.certPem(),
                "--key-file=" + server.keyPem(),
                "--max-txn-ops=10000",
                "--max-request-bytes=" + (9 << 20)));
    cmd.addAll(List.of(flags));
    EtcdMember m = new EtcdMember(List.copyOf(cmd), dir, ca.context(client), clientPort);
    m.launch();
    return m;
  }

  /** The client URL. */
  String endpoint() {
    return "https://127.0.0.1:" + port;
  }

  private void awaitHealthy() throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String last = "no answer";
    while (System.nanoTime() - deadline < 0) {
      if (!process.isAlive()) {
        Assertions.fail("etcd exited with " + process.exitValue() + ": " + logTail());
      }
      try {
        last = request("GET", "/health", null, null);
        if (last.replace(" ", "").contains("\"health\":\"true\"")) {
          return;
        }
      } catch (IOException e) {
        last = e.toString();
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
    Assertions.fail("etcd at " + endpoint() + " not healthy in 60 s (" + last + "): " + logTail());
  }

  /**
   * Posts JSON to the member's gateway and checks the answer is not an error.
   *
   * @param path the gateway path
   * @param json the body
   * @param token an auth token, or null
   * @return the answer's object
   */
  Map<String, Object> post(String path, String json, String token) throws IOException {
    String body = request("POST", path, json, token);
    Map<String, Object> answer = Json.object(Json.parse(body));
    if (answer.containsKey("error")) {
      throw new IllegalStateException(path + " " + json + " failed: " + body);
    }
    return answer;
  }

  /**
   * Adds a user with a role of the same name granting read and write on the keys under {@code
   * prefix} (what an operator grants a tenant).
   */
  void addUser(String user, String password, String prefix, String token) throws IOException {
    StringBuilder b = new StringBuilder("{\"name\":");
    Json.quote(b, user).append(",\"password\":");
    Json.quote(b, password).append('}');
    post("/v3/auth/user/add", b.toString(), token);
    post("/v3/auth/role/add", "{\"name\":\"" + user + "\"}", token);
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    post(
        "/v3/auth/role/grant",
        "{\"name\":\""
            + user
            + "\",\"perm\":{\"permType\":\"READWRITE\",\"key\":\""
            + Base64.getEncoder().encodeToString(p)
            + "\",\"range_end\":\""
            + Base64.getEncoder().encodeToString(ValueCodec.prefixEnd(p))
            + "\"}}",
        token);
    post("/v3/auth/user/grant", "{\"user\":\"" + user + "\",\"role\":\"" + user + "\"}", token);
  }

  /** Adds user root (role root) and enables auth. */
  void enableAuth(String rootPassword) throws IOException {
    StringBuilder b = new StringBuilder("{\"name\":\"root\",\"password\":");
    Json.quote(b, rootPassword).append('}');
    post("/v3/auth/user/add", b.toString(), null);
    post("/v3/auth/role/add", "{\"name\":\"root\"}", null);
    post("/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}", null);
    post("/v3/auth/enable", "{}", null);
  }

  /** A token for a user. */
  String token(String user, String password) throws IOException {
    StringBuilder b = new StringBuilder("{\"name\":");
    Json.quote(b, user).append(",\"password\":");
    Json.quote(b, password).append('}');
    return String.valueOf(post("/v3/auth/authenticate", b.toString(), null).get("token"));
  }

  /** One HTTP/1.0 exchange on a new TLS connection (the server closes it: no chunked bodies). */
  private String request(String method, String path, String json, String token) throws IOException {
    try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      s.setSoTimeout(10_000);
      byte[] body = json == null ? new byte[0] : json.getBytes(StandardCharsets.UTF_8);
      StringBuilder head = new StringBuilder();
      head.append(method).append(' ').append(path).append(" HTTP/1.0\r\n");
      head.append("Host: 127.0.0.1:").append(port).append("\r\n");
      head.append("Content-Type: application/json\r\n");
      head.append("Content-Length: ").append(body.length).append("\r\n");
      if (token != null) {
        head.append("Authorization: ").append(token).append("\r\n");
      }
      head.append("\r\n");
      OutputStream out = s.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      String answer = all.toString(StandardCharsets.UTF_8);
      int split = answer.indexOf("\r\n\r\n");
      if (split < 0) {
        throw new IOException("no HTTP answer from " + endpoint() + path + ": " + answer);
      }
      return answer.substring(split + 4);
    }
  }

  /** The last lines of the member's log, for failure messages. */
  String logTail() {
    try (Stream<String> lines = Files.lines(log)) {
      List<String> all = lines.toList();
      return String.join("\n", all.subList(Math.max(0, all.size() - 20), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(15, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(killer);
    } catch (IllegalStateException e) {
      // The JVM is shutting down: the hook runs anyway, and the process is gone already.
    }
  }
}
