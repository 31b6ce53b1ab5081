package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each subcommand run as a user would, checking exit codes and output. */
class CommandsTest {
  @TempDir Path dir;

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private void fill(String uri, int n) {
    try (Store s = Stores.open(uri)) {
      WriteBatch b = new WriteBatch();
      for (int i = 0; i < n; i++) {
        b.put(utf8(String.format("k%03d", i)), utf8("v" + i));
      }
      s.write(b);
    }
  }

  @Test
  void putGetScanDelete_inChildProcesses_roundTrip() throws Exception {
    String uri = "hashlog:" + dir.resolve("s");
    assertThat(Cli.process(dir, "put", uri, "hello", "world").exit()).isZero();
    assertThat(Cli.process(dir, "put", "--hex", uri, "00ff", "0102").exit()).isZero();
    Cli.Run fromStdin = Cli.process(dir, Map.of(), utf8("from stdin"), "put", uri, "piped");
    assertThat(fromStdin.exit()).as("%s", fromStdin).isZero();

    Cli.Run get = Cli.process(dir, "get", uri, "hello");
    assertThat(get.exit()).as("%s", get).isZero();
    assertThat(get.out()).isEqualTo("world" + System.lineSeparator());

    Cli.Run scan = Cli.process(dir, "scan", uri);
    assertThat(scan.exit()).as("%s", scan).isZero();
    assertThat(scan.out().lines().toList())
        .containsExactly("0x00ff\t0x0102", "hello\tworld", "piped\tfrom stdin");

    Cli.Run delete = Cli.process(dir, "delete", uri, "hello", "absent");
    assertThat(delete.exit()).as("%s", delete).isZero();
    Cli.Run missing = Cli.process(dir, "get", uri, "hello");
    assertThat(missing.exit()).as("%s", missing).isEqualTo(ExitCode.NOT_FOUND);
    assertThat(missing.err().trim()).isEqualTo("kv4j: error: key not found: hello");
    assertThat(missing.out()).isEmpty();
  }

  @Test
  void put_fromStdin_dropsOneTrailingNewline_valueFileKeepsExactBytes() throws Exception {
    String uri = "hashlog:" + dir.resolve("s");
    Cli.Run echo = Cli.process(dir, Map.of(), utf8("v\n"), "put", uri, "echoed");
    assertThat(echo.exit()).as("%s", echo).isZero();
    Cli.Run crlf = Cli.process(dir, Map.of(), utf8("w\r\n"), "put", uri, "crlf");
    assertThat(crlf.exit()).as("%s", crlf).isZero();
    Cli.Run two = Cli.process(dir, Map.of(), utf8("x\n\n"), "put", uri, "two");
    assertThat(two.exit()).as("%s", two).isZero();
    Path file = Files.write(dir.resolve("value"), utf8("exact\n"));
    Cli.Run exact = Cli.process(dir, "put", uri, "file", "--value-file", file.toString());
    assertThat(exact.exit()).as("%s", exact).isZero();
    try (Store s = Stores.open(uri + "?read-only=true")) {
      assertThat(s.get(utf8("echoed"))).isEqualTo(utf8("v"));
      assertThat(s.get(utf8("crlf"))).isEqualTo(utf8("w"));
      assertThat(s.get(utf8("two"))).as("only one newline is dropped").isEqualTo(utf8("x\n"));
      assertThat(s.get(utf8("file"))).isEqualTo(utf8("exact\n"));
    }
    assertThat(PutCommand.dropOneNewline(new byte[0])).isEmpty();
    assertThat(PutCommand.dropOneNewline(utf8("\r"))).isEqualTo(utf8("\r"));
    assertThat(PutCommand.dropOneNewline(utf8("\n"))).isEmpty();
  }

  @Test
  void compact_growth_isReportedAsGrewWithAPlusSign() {
    assertThat(CompactCommand.change(547, 903)).isEqualTo("356 B (+65.1%)");
    assertThat(CompactCommand.change(4_235_264, 1_105_920)).isEqualTo("3.0 MiB (73.9% of 4.0 MiB)");
    assertThat(CompactCommand.change(0, 100)).isEqualTo("100 B");
  }

  @Test
  void open_anotherEnginesStore_exitsWrongEngineNotCorrupt() {
    String path = dir.resolve("s").toString();
    try (Store s = Stores.open("sqlite:" + path)) {
      s.put(utf8("k"), utf8("v"));
    }
    Cli.Run r = Cli.inProcess("get", "hashlog:" + path, "k");
    assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.WRONG_ENGINE).isEqualTo(7);
    assertThat(r.err())
        .startsWith("kv4j: error: another engine's store: ")
        .contains("'sqlite' store", "open it with engine 'sqlite'");
    Cli.Run verify = Cli.inProcess("verify", "lmdb:" + path);
    assertThat(verify.exit()).as("%s", verify).isEqualTo(ExitCode.WRONG_ENGINE);
    Cli.Run right = Cli.inProcess("get", "sqlite:" + path, "k");
    assertThat(right.exit()).as("%s", right).isZero();
    assertThat(Cli.inProcess("--help").out()).contains("7  another engine's store");
  }

  @Test
  void put_sqlitePathEndingInDotDb_isRefusedWithTheDirectoryHint() {
    Path file = dir.resolve("local.db");
    Cli.Run r = Cli.inProcess("put", "sqlite:" + file, "k", "v");
    assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.USAGE);
    assertThat(r.err())
        .contains("sqlite:DIR takes a directory")
        .contains("sqlite:" + dir.resolve("local"));
    assertThat(file).doesNotExist();
  }

  @Test
  void scan_rangePrefixReverseLimitAndEncodings() {
    String uri = "hashlog:" + dir.resolve("s");
    fill(uri, 20);
    try (Store s = Stores.open(uri)) {
      s.put(new byte[] {(byte) 0xC3, 0x28}, new byte[] {1, 2, 3}); // invalid UTF-8
      s.put(utf8("tab"), utf8("a\tb")); // control character
    }
    assertThat(Cli.inProcess("scan", uri, "--prefix", "k01").out().lines())
        .containsExactly(
            "k010\tv10",
            "k011\tv11",
            "k012\tv12",
            "k013\tv13",
            "k014\tv14",
            "k015\tv15",
            "k016\tv16",
            "k017\tv17",
            "k018\tv18",
            "k019\tv19");
    assertThat(Cli.inProcess("scan", uri, "--from", "k005", "--to", "k008", "--keys-only").out())
        .isEqualTo("k005\nk006\nk007\n".replace("\n", System.lineSeparator()));
    assertThat(Cli.inProcess("scan", uri, "--after", "k005", "--through", "k007", "--keys-only"))
        .extracting(Cli.Run::out)
        .isEqualTo("k006\nk007\n".replace("\n", System.lineSeparator()));
    assertThat(Cli.inProcess("scan", uri, "--prefix", "k", "--reverse", "--limit", "2").out())
        .isEqualTo("k019\tv19\nk018\tv18\n".replace("\n", System.lineSeparator()));
    assertThat(Cli.inProcess("scan", uri, "--count").out().trim()).isEqualTo("22");
    assertThat(Cli.inProcess("scan", uri, "--prefix", "tab").out().trim())
        .isEqualTo("tab\t0x610962");
    assertThat(Cli.inProcess("scan", uri, "--hex", "--prefix", "c3").out().trim())
        .isEqualTo("c328\t010203");
    assertThat(Cli.inProcess("scan", uri, "--base64", "--prefix", "wyg=").out().trim())
        .isEqualTo("wyg=\tAQID");
    assertThat(Cli.inProcess("get", uri, "--base64", "azAwMQ==").out().trim()).isEqualTo("djE=");
    Cli.Run both = Cli.inProcess("scan", uri, "--hex", "--base64");
    assertThat(both.exit()).isEqualTo(ExitCode.USAGE);
    assertThat(both.err()).contains("choose one of --hex and --base64");
  }

  @Test
  void statsAndEngines_printFigures() {
    String uri = "hashlog:" + dir.resolve("s");
    fill(uri, 5);
    Cli.Run stats = Cli.process(dir, "stats", uri);
    assertThat(stats.exit()).as("%s", stats).isZero();
    assertThat(stats.out())
        .containsPattern("(?m)^engine +hashlog$")
        .containsPattern("(?m)^health +ok$")
        .containsPattern("(?m)^keys +5$");

    Cli.Run engines = Cli.process(dir, "engines");
    assertThat(engines.exit()).as("%s", engines).isZero();
    assertThat(engines.out())
        .contains("hashlog:", "lmdb (aliases: btree):", "rocksdb (aliases: lsm):", "sqlite")
        .contains("memory:")
        .containsPattern("segment-size \\(size, default \\d+\\.\\d MiB")
        .contains("features: ordered-scan");
  }

  /** The number in "(123 bytes)" on the output line starting with {@code label}. */
  private static long bytesOn(String out, String label) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^" + label + " +\\S+ \\S+ \\((\\d+) bytes\\)$")
            .matcher(out);
    assertThat(m.find()).as("a '%s' line in%n%s", label, out).isTrue();
    return Long.parseLong(m.group(1));
  }

  @Test
  void compact_inChildProcess_printsDiskBytesBeforeAndAfter() {
    String uri = "sqlite:" + dir.resolve("s");
    try (Store s = Stores.open(uri)) {
      WriteBatch fill = new WriteBatch();
      for (int i = 0; i < 3000; i++) {
        fill.put(utf8(String.format("k%04d", i)), new byte[1000]);
      }
      s.write(fill);
      WriteBatch drop = new WriteBatch();
      for (int i = 0; i < 3000; i++) {
        if (i % 3 != 0) {
          drop.delete(utf8(String.format("k%04d", i)));
        }
      }
      s.write(drop);
    }
    Cli.Run r = Cli.process(dir, "compact", uri);
    assertThat(r.exit()).as("%s", r).isZero();
    assertThat(r.out())
        .containsPattern("(?m)^engine +sqlite$")
        .containsPattern("(?m)^reclaimed +\\S+ \\S+ \\(\\d+\\.\\d% of \\S+ \\S+\\)$")
        .containsPattern("(?m)^time +\\d+\\.\\d\\d s$");
    long before = bytesOn(r.out(), "disk before");
    long after = bytesOn(r.out(), "disk after");
    assertThat(after).as("%s", r).isLessThan(before).isPositive();
    try (Store s = Stores.open(uri)) {
      assertThat(s.stats().keyCount()).isEqualTo(1000);
      assertThat(s.get(utf8("k0003"))).hasSize(1000);
      assertThat(s.get(utf8("k0004"))).isNull();
    }
  }

  @Test
  void backup_writesAnOpenableVerifiedCopy() {
    String uri = "sqlite:" + dir.resolve("s");
    fill(uri, 500);
    Path target = dir.resolve("backups/one");
    Cli.Run r = Cli.inProcess("backup", uri, target.toString(), "--verify");
    assertThat(r.exit()).as("%s", r).isZero();
    assertThat(r.out())
        .containsPattern("(?m)^engine +sqlite$")
        .containsPattern("(?m)^keys +500$")
        .containsPattern("(?m)^verified +checksums equal");
    try (Store copy = Stores.open("sqlite:" + target)) {
      assertThat(copy.stats().keyCount()).isEqualTo(500);
    }
    Cli.Run again = Cli.inProcess("backup", uri, target.toString());
    assertThat(again.exit())
        .as("a target holding a store is refused: %s", again)
        .isEqualTo(ExitCode.USAGE);
    assertThat(again.err()).contains("not an empty directory");
  }

  @Test
  void compact_missingOrReadOnlyStore_exitCodes() {
    Cli.Run missing = Cli.inProcess("compact", "sqlite:" + dir.resolve("absent"));
    assertThat(missing.exit()).as("%s", missing).isEqualTo(ExitCode.NOT_FOUND);
    assertThat(Files.exists(dir.resolve("absent"))).isFalse();
    String uri = "sqlite:" + dir.resolve("s");
    fill(uri, 3);
    Cli.Run readOnly = Cli.inProcess("compact", uri + "?read-only=true");
    assertThat(readOnly.exit()).as("%s", readOnly).isEqualTo(ExitCode.USAGE);
    assertThat(readOnly.err().lines()).hasSize(1);
    assertThat(readOnly.err()).contains("kv4j: error: ", "read-only");
  }

  @Test
  void help_everyCommandAnswersHelp() {
    for (String c :
        List.of(
            "engines", "get", "put", "delete", "scan", "stats", "compact", "verify", "copy",
            "tck")) {
      Cli.Run r = Cli.inProcess(c, "--help");
      assertThat(r.exit()).as(c).isZero();
      assertThat(r.out()).as(c).startsWith("Usage: kv4j " + c);
    }
    Cli.Run top = Cli.inProcess("--help");
    assertThat(top.out()).contains("Exit codes:", "4  store locked");
    assertThat(Cli.inProcess().exit()).isEqualTo(ExitCode.USAGE);
  }

  @Test
  void errors_areOneLineWithTheirExitCode() throws Exception {
    Cli.Run unknownEngine = Cli.process(dir, "get", "nosuch:" + dir, "k");
    assertThat(unknownEngine.exit()).isEqualTo(ExitCode.USAGE);
    assertThat(unknownEngine.err().lines()).hasSize(1);
    assertThat(unknownEngine.err())
        .contains("unknown engine 'nosuch'; available: ")
        .contains("hashlog", "lmdb", "rocksdb", "sqlite");

    Cli.Run noStore = Cli.inProcess("scan", "hashlog:" + dir.resolve("absent"));
    assertThat(noStore.exit()).isEqualTo(ExitCode.NOT_FOUND);
    assertThat(noStore.err()).contains("no store at " + dir.resolve("absent"));
    assertThat(Files.exists(dir.resolve("absent"))).isFalse();

    Cli.Run badOption = Cli.inProcess("scan", "hashlog:" + dir, "--bogus");
    assertThat(badOption.exit()).isEqualTo(ExitCode.USAGE);
    assertThat(badOption.err().lines()).hasSize(1);
    assertThat(badOption.err()).contains("Unknown option: '--bogus'", "kv4j scan --help");

    Cli.Run badEngineOption = Cli.inProcess("stats", "hashlog:" + dir + "?segmentsize=1");
    assertThat(badEngineOption.exit()).isEqualTo(ExitCode.USAGE);
    assertThat(badEngineOption.err()).contains("unknown option 'segmentsize'", "segment-size");

    Path locked = dir.resolve("locked");
    try (Store s = Stores.open("hashlog:" + locked)) {
      s.put(utf8("k"), utf8("v"));
      Cli.Run r = Cli.process(dir, "get", "hashlog:" + locked, "k");
      assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.LOCKED);
      assertThat(r.err().lines()).hasSize(1);
      assertThat(r.err()).contains("store is locked", locked.toString());
    }
  }

  @Test
  void bench_withoutRunner_saysHowToBuildIt() {
    Map<String, String> env = Map.of("KV4J_BENCH_JAR", dir.resolve("none.jar").toString());
    Cli.Run r = Cli.process(dir, env, null, "bench", "--scenarios", "read");
    assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.USAGE);
    assertThat(r.err()).contains("bench -am package", "kv4j-bench.jar");
    Cli.Run help = Cli.process(dir, env, null, "bench", "--help");
    assertThat(help.exit()).as("%s", help).isZero();
    assertThat(help.out()).contains("Usage: kv4j bench", "bench -am package");
  }
}
