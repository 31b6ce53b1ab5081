package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.kv4j.Store;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Startup: every option validated, one-line errors, non-zero exit, the store released. */
class MainTest {
  @TempDir Path dir;

  private record Result(int code, String out, String err, RespServer server) {}

  private static Result launch(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Main.Launch l =
        Main.launch(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(
        l.exitCode(),
        out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8),
        l.server());
  }

  private static void assertOneLineError(Result r, int code, String text) {
    assertThat(r.code()).as(r.err()).isEqualTo(code);
    assertThat(r.server()).isNull();
    assertThat(r.err()).startsWith("kv4j-server: ").contains(text).endsWith("\n");
    assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
  }

  @Test
  void badOptions_printOneLineAndExitWithUsageStatus() {
    assertOneLineError(launch("--port", "abc", "memory:"), 2, "--port: not a whole number: 'abc'");
    assertOneLineError(
        launch("--port", "70000", "memory:"), 2, "--port must be between 0 and 65535");
    assertOneLineError(launch("--threads", "-1", "memory:"), 2, "--threads must be between");
    assertOneLineError(
        launch("--max-request-size", "0", "memory:"),
        2,
        "--max-request-size must be at least 1024");
    assertOneLineError(launch("--maxclients", "0", "memory:"), 2, "--maxclients must be between");
    assertOneLineError(launch("--timeout", "x", "memory:"), 2, "--timeout: not a whole number");
    assertOneLineError(launch("--protected-mode", "maybe", "memory:"), 2, "wants yes or no");
    assertOneLineError(launch("--user", "alice:admin:pw", "memory:"), 2, "--user wants NAME:rw");
    assertOneLineError(launch("--requirepass", "", "memory:"), 2, "non-empty password");
    assertOneLineError(launch("--tls-cert-file", "/nonexistent.pem", "memory:"), 2, "cannot read");
    assertOneLineError(launch("--frobnicate", "memory:"), 2, "unknown option --frobnicate");
    assertOneLineError(launch("--port"), 2, "--port needs a value");
    assertOneLineError(launch(), 2, "ENGINE_URI missing");
    assertOneLineError(launch("memory:", "memory:"), 2, "one ENGINE_URI expected");
    assertOneLineError(
        launch("--client-query-buffer-limit", "12q", "memory:"), 2, "not a byte count");
    assertOneLineError(launch("--bind", "no.such.host.invalid", "memory:"), 2, "--bind");
  }

  /** The table of numeric options drives parsing: each flag is read, checked and listed. */
  @Test
  void everyNumericOption_isCheckedNamingItsFlagRangeAndTheValue() {
    String usage = launch("--help").out();
    for (ServerOptions.Setting s : ServerOptions.Setting.values()) {
      assertThat(usage).as("--help lists %s", s.flag).contains("  " + s.flag + " ");
      long below = s.min - 1;
      String range =
          s.max == Long.MAX_VALUE
              ? s.flag + " must be at least " + s.min + ", got " + below
              : s.flag + " must be between " + s.min + " and " + s.max + ", got " + below;
      assertOneLineError(launch(s.flag, Long.toString(below), "memory:"), 2, range);
      long top = s.max == Long.MAX_VALUE ? Long.MAX_VALUE / 2 : s.max;
      assertThatCode(
              () -> ServerOptions.defaults().with(s, s.min).with(s, top).with(s, s.defaultValue))
          .as("%s takes both ends of its range and its default", s.flag)
          .doesNotThrowAnyException();
    }
    assertThat(ServerOptions.defaults().with(ServerOptions.Setting.PORT, 7000).port())
        .isEqualTo(7000);
  }

  @Test
  void byteOptions_takeRedisUnits() {
    assertThat(Main.bytes(new String[] {"64mb"}, 0, "--x")).isEqualTo(64L << 20);
    assertThat(Main.bytes(new String[] {"1g"}, 0, "--x")).isEqualTo(1L << 30);
    assertThat(Main.bytes(new String[] {"512k"}, 0, "--x")).isEqualTo(512L << 10);
    assertThat(Main.bytes(new String[] {"1000"}, 0, "--x")).isEqualTo(1000L);
  }

  @Test
  void unknownEngine_printsOneLineAndExitsNonZero() {
    assertOneLineError(launch("--port", "0", "nosuchengine:/x"), 1, "cannot open store");
  }

  @Test
  void portInUse_printsOneLineExitsNonZeroAndReleasesTheStore() throws Exception {
    String uri = "hashlog:" + dir.resolve("db");
    try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Result r = launch("--port", String.valueOf(port), uri);
      assertOneLineError(r, 1, "cannot listen on 127.0.0.1:" + port);
      // The store was closed: its directory lock is free for another process.
      try (Store again = Stores.open(uri)) {
        assertThat(again.info().engine()).isEqualTo("hashlog");
      }
    }
  }

  @Test
  void portInUse_theProcessExitsWithStatus1() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      try (ChildProcess c =
          ChildProcess.java(
                  Main.class,
                  "--port",
                  String.valueOf(taken.getLocalPort()),
                  "hashlog:" + dir.resolve("db"))
              .start()) {
        c.process().getOutputStream().close();
        int exit = c.await(Duration.ofSeconds(60)); // fails with the child's state if it hangs
        String output = (c.stdout() + "\n" + c.stderr()).strip();
        assertThat(exit).as("%s", c.describe()).isEqualTo(1);
        assertThat(output)
            .as("%s", c.describe())
            .startsWith("kv4j-server: cannot listen on 127.0.0.1:");
        assertThat(output.lines().count()).as("%s", c.describe()).isEqualTo(1);
      }
    }
  }

  @Test
  void validOptions_startAServer() {
    Result r = launch("--port", "0", "--maxclients", "50", "--timeout", "300", "memory:");
    assertThat(r.code()).isZero();
    assertThat(r.server()).isNotNull();
    try {
      assertThat(r.out()).startsWith("kv4j-server listening on 127.0.0.1:");
      assertThat(r.err()).isEmpty();
      assertThat(r.server().maxClients).isEqualTo(50);
    } finally {
      r.server().close();
      r.server().store().close();
    }
  }

  @Test
  void bindingBeyondLoopbackWithoutPassword_warnsLoudly() {
    Result r = launch("--port", "0", "--bind", "0.0.0.0", "memory:");
    try {
      assertThat(r.code()).isZero();
      assertThat(r.err())
          .contains("WARNING: listening on 0.0.0.0:")
          .contains("with no password")
          .contains("Protected mode is on");
    } finally {
      r.server().close();
      r.server().store().close();
    }
  }

  private Path privateFile(String name, String text) throws Exception {
    Path f = dir.resolve(name);
    java.nio.file.Files.writeString(f, text);
    java.nio.file.Files.setPosixFilePermissions(
        f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    return f;
  }

  @Test
  void usersFile_addsUsersWhosePasswordsStayOutOfTheCommandLine() throws Exception {
    Path users = privateFile("users", "# kv4j users\n\nalice:ro:alice pw\n  \nbob:rw:b:pw\n");
    Result r =
        launch("--port", "0", "--requirepass", "root", "--users-file", users.toString(), "memory:");
    assertThat(r.code()).as(r.err()).isZero();
    try (redis.clients.jedis.Jedis alice =
            new redis.clients.jedis.Jedis("127.0.0.1", r.server().port(), 30_000);
        redis.clients.jedis.Jedis bob =
            new redis.clients.jedis.Jedis("127.0.0.1", r.server().port(), 30_000)) {
      assertThat(r.err()).isEmpty();
      assertThat(bob.auth("bob", "b:pw")).isEqualTo("OK");
      assertThat(bob.set("k", "v")).isEqualTo("OK");
      assertThat(alice.auth("alice", "alice pw")).isEqualTo("OK");
      assertThat(alice.get("k")).isEqualTo("v");
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> alice.set("k", "x"))
          .hasMessageStartingWith("NOPERM User alice");
      assertThat(alice.aclUsers()).containsExactly("default", "alice", "bob");
    } finally {
      r.server().close();
      r.server().store().close();
    }
  }

  @Test
  void usersFile_badLineIsNamedWithoutShowingIt() throws Exception {
    Path users = privateFile("users", "alice:ro:pw1\nbob:admin:secret-pw\n");
    Result r = launch("--port", "0", "--users-file", users.toString(), "memory:");
    assertOneLineError(r, 2, "--users-file " + users + " line 2 wants NAME:rw:PASSWORD");
    assertThat(r.err()).doesNotContain("secret-pw");
    assertOneLineError(
        launch("--users-file", dir.resolve("missing").toString(), "memory:"), 2, "cannot read");
  }

  @Test
  void usersWithoutRequirepass_warnThatTheDefaultUserIsOpen() throws Exception {
    Path users = dir.resolve("users");
    java.nio.file.Files.writeString(users, "alice:ro:pw\n");
    java.nio.file.Files.setPosixFilePermissions(
        users, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    for (String[] args :
        new String[][] {
          {"--port", "0", "--user", "alice:ro:pw", "memory:"},
          {"--port", "0", "--users-file", users.toString(), "memory:"}
        }) {
      Result r = launch(args);
      try {
        assertThat(r.code()).isZero();
        assertThat(r.err())
            .as("%s", String.join(" ", args))
            .contains("WARNING: ACL users are set but the default user has no password")
            .contains("may read and write every key");
      } finally {
        r.server().close();
        r.server().store().close();
      }
    }
    Result r =
        launch("--port", "0", "--requirepass", "x", "--users-file", users.toString(), "memory:");
    try {
      assertThat(r.err())
          .doesNotContain("default user has no password")
          .contains("WARNING: --users-file " + users + " can be read by other users");
    } finally {
      r.server().close();
      r.server().store().close();
    }
  }
}
