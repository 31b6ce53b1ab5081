package io.kv4j.lmdb;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.InaccessibleObjectException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbJvmFlagsTest {
  @TempDir Path dir;

  /**
   * The engine needs no --add-opens: a child JVM started with the same java and classpath but none
   * of the parent's JVM flags opens the engine, writes, reads and scans.
   */
  @Test
  void engine_worksInAJvmWithoutAnyAddOpensFlag() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> cmd = new ArrayList<>();
    cmd.add(java.toString());
    cmd.add("-Xmx256m");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(LmdbNoFlagsMain.class.getName());
    cmd.add(dir.resolve("store").toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = readAll(p);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child finished: %s", out).isTrue();
    assertThat(p.exitValue()).as("child output: %s", out).isZero();
    assertThat(out).contains("java.nio open: false").contains("get: v1").contains("scan: k2 k1");
  }

  @Test
  void missingFlags_wouldBeReportedWithTheExactFlags() {
    Throwable failure =
        new ExceptionInInitializerError(
            new InaccessibleObjectException(
                "Unable to make field long java.nio.Buffer.address accessible"));
    RuntimeException e = Errors.initFailure("engine 'lmdb' at /x", failure);
    assertThat(e)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(
            "--add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED")
        .hasMessageContaining("/x")
        .hasCause(failure);
  }

  private static String readAll(Process p) throws IOException {
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }
}
