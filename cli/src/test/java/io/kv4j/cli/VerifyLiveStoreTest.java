package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kv4j verify} of a healthy store that another process writes meanwhile — the documented use
 * of a read-only open on lmdb and sqlite — never reports corruption: the scan and the gets read one
 * snapshot, and a key count that moved is not compared.
 */
final class VerifyLiveStoreTest {
  private static final int RUNS = 20;
  private static final Duration WAIT = Duration.ofMinutes(2);

  @TempDir Path tmp;

  @ParameterizedTest
  @ValueSource(strings = {"lmdb", "sqlite"})
  void verify_storeWrittenByAnotherProcess_exitsZeroEveryTime(String engine) throws Exception {
    String uri = engine + ":" + tmp.resolve("store") + "?durability=buffered";
    long seed = System.nanoTime();
    try (ChildProcess writer =
        ChildProcess.java(LiveWriter.class, uri, Long.toString(seed)).start()) {
      assertThat(writer.readLine(WAIT))
          .as("the writer filled the store: %s", writer)
          .isEqualTo("ready");
      String before = lastProgress(writer);
      for (int i = 0; i < RUNS; i++) {
        Cli.Run r = Cli.inProcess("verify", engine + ":" + tmp.resolve("store"));
        assertThat(r.exit())
            .as(
                "verify %d of %d beside a writer (seed %d): %s %s",
                i + 1, RUNS, seed, r.out(), r.err())
            .isZero();
        assertThat(r.out()).contains("OK: ").doesNotContain("PROBLEM", "CORRUPT");
      }
      assertThat(writer.process().isAlive()).as("the writer ran throughout: %s", writer).isTrue();
      String after = lastProgress(writer);
      assertThat(after).as("the writer wrote while verify ran: %s", writer).isNotEqualTo(before);
    }
  }

  /** The writer's next progress line: proof it still writes. */
  private static String lastProgress(ChildProcess writer) throws InterruptedException {
    String line = writer.readLine(WAIT);
    assertThat(line).as("the writer's progress: %s", writer).startsWith("batches ");
    return line;
  }
}
