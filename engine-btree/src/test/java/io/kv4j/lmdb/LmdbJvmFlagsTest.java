package io.kv4j.lmdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.tck.ChildProcess;
import java.lang.reflect.InaccessibleObjectException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbJvmFlagsTest {
  private static final Duration WAIT = Duration.ofSeconds(120);

  @TempDir Path dir;

  /**
   * The engine needs no --add-opens: a child JVM started with the same java and classpath but none
   * of the parent's JVM flags opens the engine, writes, reads and scans.
   */
  @Test
  void engine_worksInAJvmWithoutAnyAddOpensFlag() throws Exception {
    try (ChildProcess c =
        ChildProcess.java(LmdbNoFlagsMain.class, dir.resolve("store").toString())
            .jvmOptions("-Xmx256m")
            .start()) {
      c.assertSucceeded(WAIT);
      assertThat(c.stdout())
          .as("child output: %s", c.describe())
          .contains("java.nio open: false")
          .contains("get: v1")
          .contains("scan: k2 k1");
    }
  }

  /**
   * With the one flag README.md documents for Java 24+ (native access, for jffi's JNI library) the
   * engine prints nothing at all on stderr, on whichever JDK runs the suite: in particular no
   * {@code sun.misc.Unsafe} warning from jffi's memory access on Java 24+ ({@link JffiSettings}).
   * The flag is accepted on Java 17 too.
   */
  @Test
  void engine_withTheNativeAccessFlag_printsNothingOnStderr() throws Exception {
    try (ChildProcess c =
        ChildProcess.java(LmdbNoFlagsMain.class, dir.resolve("quiet").toString())
            .jvmOptions("-Xmx256m", "--enable-native-access=ALL-UNNAMED")
            .start()) {
      c.assertSucceeded(WAIT);
      assertThat(c.stderr())
          .as("stderr on Java %s: %s", Runtime.version().feature(), c.describe())
          .isEmpty();
    }
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
}
