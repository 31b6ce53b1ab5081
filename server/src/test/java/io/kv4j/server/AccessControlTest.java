package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.TestServer.closedByServer;
import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/** AUTH, ACL users, protected mode and TLS, over raw sockets, Jedis and redis-cli. */
class AccessControlTest {
  @TempDir Path dir;

  private static ServerOptions secured() {
    return ServerOptions.defaults()
        .with(PORT, 0)
        .with(THREADS, 1)
        .withRequirePass("s3cret")
        .withUser("alice:ro:alice-pw")
        .withUser("bob:rw:bob:pw");
  }

  @Test
  void requirepass_refusesCommandsUntilAuth() throws Exception {
    try (TestServer server = new TestServer("memory:", secured());
        Socket s = server.socket()) {
      send(s, "GET k\r\nAUTH wrong\r\nAUTH s3cret\r\nSET k v\r\nGET k\r\n");
      assertThat(readLine(s)).isEqualTo("-NOAUTH Authentication required.");
      assertThat(readLine(s))
          .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$1");
      assertThat(readLine(s)).isEqualTo("v");
      send(s, "RESET\r\nGET k\r\nAUTH default s3cret\r\nGET k\r\n");
      assertThat(readLine(s)).isEqualTo("+RESET");
      assertThat(readLine(s)).isEqualTo("-NOAUTH Authentication required.");
      assertThat(readLine(s)).isEqualTo("+OK");
      assertThat(readLine(s)).isEqualTo("$1");
      readLine(s);
      send(s, "QUIT\r\n");
      assertThat(readLine(s)).isEqualTo("+OK");
    }
  }

  @Test
  void helloAuth_authenticatesAndSwitchesProtocol() throws Exception {
    try (TestServer server = new TestServer("memory:", secured());
        Socket s = server.socket()) {
      send(s, "HELLO 3\r\nHELLO 3 AUTH default nope\r\nHELLO 3 AUTH bob bob:pw\r\nGET x\r\n");
      assertThat(readLine(s)).startsWith("-NOAUTH HELLO must be called with the client already");
      assertThat(readLine(s))
          .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.");
      assertThat(readLine(s)).isEqualTo("%7");
      String line;
      while (!(line = readLine(s)).equals("*0")) {
        assertThat(line).isNotNull();
      }
      assertThat(readLine(s)).isEqualTo("_"); // RESP3 null: HELLO 3 took effect
    }
  }

  @Test
  void aclUsers_readOnlyUserCannotWrite() throws Exception {
    try (TestServer server = new TestServer("memory:", secured());
        Jedis alice = new Jedis("127.0.0.1", server.port(), 30_000);
        Jedis bob = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(bob.auth("bob", "bob:pw")).isEqualTo("OK");
      assertThat(bob.set("k", "v")).isEqualTo("OK");
      assertThat(alice.auth("alice", "alice-pw")).isEqualTo("OK");
      assertThat(alice.get("k")).isEqualTo("v");
      assertThatThrownBy(() -> alice.set("k", "x"))
          .isInstanceOf(JedisDataException.class)
          .hasMessage("NOPERM User alice has no permissions to run the 'set' command");
      assertThatThrownBy(() -> alice.flushAll())
          .hasMessageStartingWith("NOPERM User alice has no permissions to run the 'flushall'");
      assertThat(alice.aclWhoAmI()).isEqualTo("alice");
      assertThatThrownBy(() -> alice.auth("alice", "bob:pw"))
          .hasMessage("WRONGPASS invalid username-password pair or user is disabled.");
      assertThat(bob.get("k")).isEqualTo("v");
    }
  }

  @Test
  void noPassword_authAnswersAsRedis() throws Exception {
    try (TestServer server = new TestServer("memory:");
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThatThrownBy(() -> j.auth("anything"))
          .hasMessage(
              "ERR AUTH <password> called without any password configured for the default user."
                  + " Are you sure your configuration is correct?");
      // The default user is "nopass": Redis accepts any password for it by name.
      assertThat(j.auth("default", "anything")).isEqualTo("OK");
      assertThatThrownBy(() -> j.auth("nobody", "x")).hasMessageStartingWith("WRONGPASS");
    }
  }

  /** A non-loopback address of this machine, to connect from as a "remote" client. */
  private static InetAddress externalAddress() throws IOException {
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nif.isUp() || nif.isLoopback()) {
        continue;
      }
      for (InetAddress a : Collections.list(nif.getInetAddresses())) {
        if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
          return a;
        }
      }
    }
    return null;
  }

  private static Socket connect(InetAddress to, int port) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(to, port), 30_000);
    s.setSoTimeout(30_000);
    return s;
  }

  @Test
  void protectedMode_refusesNonLoopbackClientsWithoutPassword() throws Exception {
    InetAddress external = externalAddress();
    assumeTrue(external != null, "no non-loopback IPv4 address on this machine");
    ServerOptions wide =
        ServerOptions.defaults().with(PORT, 0).with(THREADS, 1).withBind("0.0.0.0");
    try (TestServer server = new TestServer("memory:", wide)) {
      try (Socket remote = connect(external, server.port())) {
        send(remote, "SET k pwned\r\n");
        assertThat(readLine(remote)).startsWith("-DENIED kv4j-server is running in protected mode");
        assertThat(closedByServer(remote)).isTrue();
      }
      try (Socket local = connect(InetAddress.getLoopbackAddress(), server.port())) {
        send(local, "GET k\r\n");
        assertThat(readLine(local)).isEqualTo("$-1");
      }
    }
    try (TestServer server = new TestServer("memory:", wide.withRequirePass("pw"));
        Socket remote = connect(external, server.port())) {
      send(remote, "GET k\r\nAUTH pw\r\nGET k\r\n");
      assertThat(readLine(remote)).isEqualTo("-NOAUTH Authentication required.");
      assertThat(readLine(remote)).isEqualTo("+OK");
      assertThat(readLine(remote)).isEqualTo("$-1");
    }
    try (TestServer server = new TestServer("memory:", wide.withProtectedMode(false));
        Socket remote = connect(external, server.port())) {
      send(remote, "PING\r\n");
      assertThat(readLine(remote)).isEqualTo("+PONG");
    }
  }

  // ---- redis-cli ----

  private static ToolRun run(List<String> command) throws Exception {
    return ToolRun.of(command, Duration.ofSeconds(60));
  }

  /** Runs {@code command} and asserts on its output; a failure names its exit code too. */
  private static AbstractStringAssert<?> assertOutput(List<String> command) throws Exception {
    ToolRun r = run(command);
    return assertThat(r.output()).as("%s", r);
  }

  private static List<String> cli(int port, String... args) {
    List<String> c = new ArrayList<>(List.of("redis-cli", "--no-auth-warning", "-p", "" + port));
    c.addAll(List.of(args));
    return c;
  }

  @Test
  void redisCli_authenticatesWithPasswordAndUser() throws Exception {
    assumeTrue(RedisToolsIntegrationTest.onPath("redis-cli"), "redis-cli not installed");
    try (TestServer server = new TestServer("memory:", secured())) {
      int port = server.port();
      assertOutput(cli(port, "SET", "k", "v")).startsWith("NOAUTH");
      assertOutput(cli(port, "-a", "s3cret", "SET", "k", "v")).isEqualTo("OK\n");
      assertOutput(cli(port, "--user", "alice", "--pass", "alice-pw", "GET", "k")).isEqualTo("v\n");
      assertOutput(cli(port, "--user", "alice", "--pass", "alice-pw", "SET", "k", "x"))
          .startsWith("NOPERM");
      assertOutput(cli(port, "-a", "wrong", "PING")).contains("WRONGPASS");
    }
  }

  @Test
  void redisCli_overTls() throws Exception {
    assumeTrue(RedisToolsIntegrationTest.onPath("redis-cli"), "redis-cli not installed");
    assumeTrue(RedisToolsIntegrationTest.onPath("openssl"), "openssl not installed");
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    selfSigned(cert, key);
    ServerOptions tls =
        ServerOptions.defaults()
            .with(PORT, 0)
            .with(THREADS, 1)
            .withRequirePass("pw")
            .withTls(cert, key);
    try (TestServer server = new TestServer("memory:", tls)) {
      int port = server.port();
      List<String> c = cli(port, "--tls", "--cacert", cert.toString(), "-a", "pw");
      List<String> set = new ArrayList<>(c);
      set.addAll(List.of("SET", "greeting", "over tls"));
      assertOutput(set).isEqualTo("OK\n");
      List<String> get = new ArrayList<>(c);
      get.addAll(List.of("GET", "greeting"));
      assertOutput(get).isEqualTo("over tls\n");
      // Plain text on the TLS port gets no answer: the TLS handshake fails and the server closes.
      try (Socket plain = server.socket()) {
        send(plain, "AUTH pw\r\nPING\r\n");
        byte[] answer = TestServer.readToEnd(plain);
        assertThat(new String(answer, StandardCharsets.ISO_8859_1)).doesNotContain("PONG");
      }
    }
  }

  /** Makes a self-signed certificate for 127.0.0.1 and its PKCS#8 key with openssl. */
  private static void selfSigned(Path cert, Path key) throws Exception {
    ToolRun made =
        run(
            List.of(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout",
                key.toString(),
                "-out",
                cert.toString()));
    assertThat(cert).as("%s", made).exists();
    assertThat(key).as("%s", made).exists();
  }

  @Test
  void tlsKeyOfAnotherCertificate_isRefusedAtStart() throws Exception {
    assumeTrue(RedisToolsIntegrationTest.onPath("openssl"), "openssl not installed");
    Path cert = dir.resolve("cert.pem");
    Path otherKey = dir.resolve("other-key.pem");
    selfSigned(cert, dir.resolve("key.pem"));
    selfSigned(dir.resolve("other-cert.pem"), otherKey);
    ServerOptions mismatched =
        ServerOptions.defaults().with(PORT, 0).with(THREADS, 1).withTls(cert, otherKey);
    try (io.kv4j.Store store = io.kv4j.Stores.open("memory:")) {
      assertThatThrownBy(() -> RespServer.start(store, mismatched).close())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("TLS certificate " + cert + " and key " + otherKey)
          .hasMessageContaining("do not work together");
    }
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    Main.Launch l =
        Main.launch(
            new String[] {
              "--port",
              "0",
              "--tls-cert-file",
              cert.toString(),
              "--tls-key-file",
              otherKey.toString(),
              "memory:"
            },
            new java.io.PrintStream(
                new java.io.ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
    String text = err.toString(StandardCharsets.UTF_8);
    assertThat(l.exitCode()).as(text).isEqualTo(1);
    assertThat(l.server()).isNull();
    assertThat(text).startsWith("kv4j-server: TLS certificate ").contains("do not work together");
    assertThat(text.strip().lines().count()).as(text).isEqualTo(1);
  }
}
