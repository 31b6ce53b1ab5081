package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --abstraction} end to end with the real engines and their raw libraries, at a tiny size:
 * the batched load runs for each, and the footprints after the same writes are paired in the
 * report's disk table.
 */
class AbstractionRunTest {
  @TempDir Path tmp;

  @Test
  void run_abstraction_batchedLoadAndDiskAtRestForEveryAdapterAndItsRawLibrary() throws Exception {
    Path out = tmp.resolve("report");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream ps = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status =
          Main.run(
              new String[] {
                "--abstraction",
                "--engines",
                "rocksdb,rocksdb-raw,lmdb,lmdb-raw,sqlite,sqlite-raw",
                "--scenarios",
                "fillbatch,footprint",
                "--keys",
                "3000",
                "--threads",
                "1",
                "--data-dir",
                tmp.resolve("data").toString(),
                "--out",
                out.toString()
              },
              ps);
    }
    String console = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(console).isZero();

    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    for (String e : List.of("rocksdb", "lmdb", "sqlite")) {
      for (String id : List.of(e, e + "-raw")) {
        assertThat(csv).as(id).anyMatch(l -> l.startsWith(id + ",fillbatch,,1,BUFFERED,3000,"));
        for (String phase : List.of("after-fillbatch", "after-fixed-updates")) {
          assertThat(csv)
              .as(id + " " + phase)
              .anyMatch(
                  l ->
                      l.startsWith(id + ",footprint," + phase + ",")
                          && l.contains("apparent-bytes=")
                          && l.contains("settled=1"));
        }
      }
    }
    String md = Files.readString(out.resolve("report.md"));
    assertThat(md)
        .contains("| rocksdb | fillbatch | 1 | buffered |")
        .contains("| lmdb | fillbatch | 1 | buffered |")
        .contains("| sqlite | fillbatch | 1 | buffered |")
        .contains("### Disk (kv4j / raw library)");
    // RocksDB: 3,000 keys stay in the memtable and its WAL on both sides, so after the same
    // writes the two directories hold the same files.
    for (String phase : List.of("after-fillbatch", "after-fixed-updates")) {
      Matcher m =
          Pattern.compile(
                  "\\| rocksdb \\| "
                      + phase
                      + " \\| buffered \\| ([0-9,]+) / ([0-9,]+) \\|[^|]+\\|[^|]+\\| ([0-9.]+)"
                      + " \\|[^|]+\\|[^|]+\\| ([0-9.]+) \\|")
              .matcher(md);
      assertThat(m.find()).as(phase + " row in\n" + md).isTrue();
      assertThat(m.group(1)).as("same writes").isEqualTo(m.group(2));
      assertThat(Double.parseDouble(m.group(3))).as(phase + " allocated").isBetween(0.9, 1.1);
      assertThat(Double.parseDouble(m.group(4))).as(phase + " apparent").isBetween(0.9, 1.1);
    }
    String json = Files.readString(out.resolve("results.json"));
    assertThat(json).contains("\"abstractionDisk\": [").contains("\"phase\": \"after-fillbatch\"");
    assertThat(tmp.resolve("data")).isEmptyDirectory();
  }
}
