package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.spi.StoreProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server-engine group of the runner, tested without any server. */
class ServersTest {
  @TempDir Path tmp;

  private static List<String> ids(String... args) {
    return Engines.select(Options.parse(args)).stream()
        .map(StoreProvider::id)
        .collect(Collectors.toList());
  }

  @Test
  void select_noFlags_excludesTheServerEngines() {
    assertThat(ids()).contains("memory", "hashlog").doesNotContain("postgres", "mysql", "redis");
  }

  @Test
  void select_serversFlag_addsTheServerEnginesToTheSelection() {
    assertThat(ids("--servers", "--engines", "memory"))
        .containsExactly("memory", "mysql", "postgres", "redis");
    assertThat(ids("--servers")).contains("memory", "postgres", "mysql", "redis");
  }

  @Test
  void select_serverNamedInEngines_isSelectedWithoutTheFlag() {
    assertThat(ids("--engines", "memory,postgres")).containsExactly("memory", "postgres");
  }

  /** A loopback port nobody listens on (bound, then released). */
  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void run_unreachableServers_skipsEachWithOneLineAndStillMeasuresTheOthers() throws Exception {
    int port = closedPort();
    Path out = tmp.resolve("report");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status =
          Main.run(
              new String[] {
                "--engines",
                "memory",
                "--servers",
                "--scenarios",
                "readrandom,single-op",
                "--keys",
                "500",
                "--threads",
                "1",
                "--duration",
                "0.05",
                "--warmup",
                "0",
                "--single-op-count",
                "50",
                "--engine-option",
                "postgres:port=" + port,
                "--engine-option",
                "postgres:connect-timeout=1000",
                "--engine-option",
                "mysql:port=" + port,
                "--engine-option",
                "mysql:connect-timeout=1000",
                "--engine-option",
                "redis:port=" + port,
                "--engine-option",
                "redis:connect-timeout=1000",
                "--data-dir",
                tmp.resolve("data").toString(),
                "--out",
                out.toString()
              },
              ps);
    }
    String console = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(console).isZero();
    for (String id : List.of("postgres", "mysql", "redis")) {
      assertThat(console).as(id).contains(id + " skipped: server not reachable");
    }
    String md = Files.readString(out.resolve("report.md"));
    assertThat(md)
        .contains("| memory | readrandom")
        .contains("- postgres skipped: server not reachable")
        .doesNotContain("| postgres |")
        .doesNotContain("Network round trips");
  }

  @Test
  void report_serverResults_goToTheirOwnTableAndNotIntoTheAdvice() {
    Options o = Options.parse("--engines", "hashlog", "--servers");
    List<StoreProvider> providers = Engines.select(o);
    List<Result> results =
        List.of(
            ReportTest.ok("hashlog", "readrandom", "", 500_000),
            ReportTest.ok("postgres", "readrandom", "", 9_000),
            ReportTest.ok("redis", "single-op", "read", 20_000));
    Report report = new Report(Outcome.of(o, new Data(16, 64, false, 1), providers, results));
    String md = report.markdown(List.of());
    int embedded = md.indexOf("## Durability BUFFERED");
    int servers = md.indexOf("## Network round trips (server engines), durability BUFFERED");
    assertThat(embedded).isNotNegative();
    assertThat(servers).isGreaterThan(embedded);
    String embeddedTable = md.substring(embedded, servers);
    assertThat(embeddedTable).contains("| hashlog | readrandom").doesNotContain("postgres");
    assertThat(md.substring(servers))
        .contains("| postgres | readrandom")
        .contains("| redis | single-op read");
    assertThat(String.join("\n", report.advice())).doesNotContain("postgres").contains("hashlog");
    assertThat(report.console()).contains("== network round trips (server engines), durability");
  }
}
