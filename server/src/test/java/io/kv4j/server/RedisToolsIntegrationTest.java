package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Redis tools against kv4j-server on a persistent engine: redis-cli (commands, --scan,
 * --bigkeys) and redis-benchmark. Skipped when the tools are not installed; CI installs them (see
 * server/ci-packages.txt).
 */
class RedisToolsIntegrationTest {
  @TempDir static Path dir;
  static TestServer server;

  @BeforeAll
  static void start() throws Exception {
    assumeTrue(
        onPath("redis-cli") && onPath("redis-benchmark"),
        "redis-cli/redis-benchmark not installed (Debian package redis-tools:"
            + " apt-get install -y redis-tools); CI installs it, see server/ci-packages.txt");
    server = new TestServer("hashlog:" + dir.resolve("db") + "?durability=buffered");
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  static boolean onPath(String tool) {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    return Arrays.stream(path.split(File.pathSeparator))
        .anyMatch(d -> new File(d, tool).canExecute());
  }

  static String run(String... command) throws IOException, InterruptedException {
    ToolRun r = ToolRun.of(List.of(command), Duration.ofSeconds(120));
    assertThat(r.exit()).as("%s", r).isZero();
    return r.output();
  }

  static String cli(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(server.port())));
    cmd.addAll(List.of(args));
    return run(cmd.toArray(String[]::new));
  }

  @Test
  void redisCli_runsCommands() throws Exception {
    assertThat(cli("PING")).isEqualTo("PONG\n");
    assertThat(cli("SET", "greeting", "hello world")).isEqualTo("OK\n");
    assertThat(cli("GET", "greeting")).isEqualTo("hello world\n");
    assertThat(cli("GET", "nothing")).isEqualTo("\n");
    assertThat(cli("INCRBY", "n", "5")).isEqualTo("5\n");
    assertThat(cli("MSET", "a", "1", "b", "2")).isEqualTo("OK\n");
    assertThat(cli("MGET", "a", "b", "c")).isEqualTo("1\n2\n\n");
    assertThat(cli("FROB")).startsWith("ERR unknown command 'FROB'");
    assertThat(cli("SET", "k", "v", "EX", "5")).contains("no key expiry");
    assertThat(cli("INFO", "server")).contains("redis_version:", "netty_transport:");
    assertThat(cli("-3", "HELLO", "3")).contains("proto", "3");
    assertThat(cli("COMMAND", "COUNT")).matches("\\d+\n");
  }

  @Test
  void redisCliScan_walksLongAndShortKeys() throws Exception {
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 250; i++) {
      String k = (i % 2 == 0 ? "s" + i : "a-rather-long-key-name:" + i);
      expected.add(k);
    }
    List<String> mset = new ArrayList<>(List.of("MSET"));
    for (String k : expected) {
      mset.add(k);
      mset.add("v");
    }
    assertThat(cli(mset.toArray(String[]::new))).isEqualTo("OK\n");
    // redis-cli parses cursors as unsigned 64-bit numbers: this works only with numeric cursors.
    String scanned = cli("--scan");
    List<String> keys = new ArrayList<>(List.of(scanned.split("\n")));
    assertThat(keys).containsAll(expected).doesNotHaveDuplicates();
    String matched = cli("--scan", "--pattern", "a-rather-long-key-name:1*");
    assertThat(matched.split("\n"))
        .hasSize(56)
        .allMatch(k -> k.startsWith("a-rather-long-key-name:1"));
    String big = cli("--bigkeys");
    assertThat(big).contains("Biggest string found");
  }

  @Test
  void redisBenchmark_runsGetAndSetWithPipelining() throws Exception {
    String out =
        run(
            "redis-benchmark",
            "-p",
            String.valueOf(server.port()),
            "-t",
            "set,get",
            "-n",
            "20000",
            "-r",
            "1000",
            "-c",
            "10",
            "-P",
            "16",
            "-d",
            "100",
            "-q");
    assertThat(out).containsPattern("SET: [0-9.]+ requests per second");
    assertThat(out).containsPattern("GET: [0-9.]+ requests per second");
    assertThat(out).doesNotContain("ERR");
    long keys = Long.parseLong(cli("DBSIZE").trim());
    assertThat(keys).isBetween(1L, 1300L);
  }
}
