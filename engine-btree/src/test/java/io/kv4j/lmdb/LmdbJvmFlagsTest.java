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

  /**
   * With the one flag README.md documents for Java 24+ (native access, for jffi's JNI library) the
   * engine prints nothing at all on stderr, on whichever JDK runs the suite: in particular no
   * {@code sun.misc.Unsafe} warning from jffi's memory access on Java 24+ ({@link JffiSettings}).
   * The flag is accepted on Java 17 too.
   */
  @Test
  void engine_withTheNativeAccessFlag_printsNothingOnStderr() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(
                java.toString(),
                "-Xmx256m",
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                LmdbNoFlagsMain.class.getName(),
                dir.resolve("quiet").toString())
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child finished: %s", err).isTrue();
    assertThat(p.exitValue()).as("child stderr: %s", err).isZero();
    assertThat(err).as("stderr on Java %s", Runtime.version().feature()).isEmpty();
  }

  @Test
  void jffiSettings_onJava24Plus_disableUnsafeUnlessTheApplicationChose() {
    String before = System.getProperty(JffiSettings.PROPERTY);
    try {
      System.clearProperty(JffiSettings.PROPERTY);
      JffiSettings.apply();
      assertThat(System.getProperty(JffiSettings.PROPERTY))
          .isEqualTo(Runtime.version().feature() >= 24 ? "true" : null);
      System.setProperty(JffiSettings.PROPERTY, "false");
      JffiSettings.apply();
      assertThat(System.getProperty(JffiSettings.PROPERTY)).isEqualTo("false");
    } finally {
      if (before == null) {
        System.clearProperty(JffiSettings.PROPERTY);
      } else {
        System.setProperty(JffiSettings.PROPERTY, before);
      }
    }
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
