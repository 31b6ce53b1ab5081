package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;

/**
 * The one failure policy with a real native I/O error: a child JVM runs under {@code ulimit -f
 * 4096} (4 MiB per file), so once the WAL reaches the limit RocksDB's append fails with {@code
 * EFBIG} ("File too large"), as it would with a full disk. The store must then fail every write and
 * sync with "failed until reopened" while reads go on, and a reopen (without the limit) must find
 * every acknowledged write.
 */
class RocksDbWriteFailureTest {
  @TempDir Path tmp;

  @Test
  void ioErrorOnWrite_failsWritesUntilReopened_andKeepsAcknowledgedWrites() throws Exception {
    Path dir = tmp.resolve("db");
    // The child cannot extract the 17 MB native library under the limit: hand it one extracted
    // here, found through java.library.path before rocksdbjni tries its jar.
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    String libFile = Environment.getJniLibraryFileName("rocksdb");
    try (InputStream in = RocksDB.class.getClassLoader().getResourceAsStream(libFile)) {
      assertThat(in).as(libFile).isNotNull();
      Files.copy(in, lib.resolve(libFile));
    }
    int acked;
    try (ChildProcess c =
        ChildProcess.java(WriteFailureWorker.class, dir.toString())
            .jvmOptions("-Djava.library.path=" + lib)
            .prefix(List.of("/bin/sh", "-c", "ulimit -f 4096 && exec \"$@\"", "sh"))
            .start()) {
      c.assertSucceeded(Duration.ofSeconds(120));
      List<String> lines = c.stdoutLines();
      String all = c.describe();
      assertThat(c.stdout()).as(all).doesNotContain("NO-FAILURE");
      assertThat(line(lines, "FIRST "))
          .as(all)
          .startsWith("FIRST StoreIOException")
          .contains("failed until reopened")
          .contains("File too large");
      for (String step : List.of("PUT ", "DELETE ", "SYNC ")) {
        assertThat(line(lines, step))
            .as(all)
            .startsWith(step + "StoreIOException")
            .contains("failed until reopened");
      }
      assertThat(line(lines, "GET ")).as(all).isEqualTo("GET ok");
      acked = Integer.parseInt(line(lines, "ACKED ").substring(6));
      assertThat(acked).as(all).isPositive();
    }
    try (Store s =
        Stores.open(StoreConfig.builder("rocksdb").path(dir).durability(Durability.SYNC).build())) {
      for (int i = 0; i < acked; i++) {
        assertThat(s.get(WriteFailureWorker.key(i))).as("acknowledged key %d", i).hasSize(4096);
      }
      s.put("after".getBytes(StandardCharsets.UTF_8), new byte[1]);
    }
  }

  private static String line(List<String> lines, String prefix) throws IOException {
    return lines.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse("<none>");
  }
}
