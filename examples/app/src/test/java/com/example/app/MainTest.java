package com.example.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MainTest {
  @TempDir Path dir;

  @Test
  void main_onHashlog_writesReadsAndScans() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream old = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      Main.main(new String[] {"hashlog:" + dir.resolve("data")});
      Main.main(new String[] {"hashlog:" + dir.resolve("data")}); // reopens what it wrote
    } finally {
      System.setOut(old);
    }
    List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
    List<String> once =
        List.of("user:1 = Ada", "user:2", "user:3", "reverse: user:3", "reverse: user:2");
    assertEquals(once, lines.subList(0, 5));
    assertEquals(once, lines.subList(5, 10));
  }

  /**
   * Run as an application is run: a plain {@code java -cp} on whichever JDK runs this test (CI runs
   * it on 17 and 25), with exactly the JVM flags README.md documents for the engine and that JDK
   * ({@link #documentedFlags}). It must work and print nothing on stderr: no illegal-access,
   * native-access or {@code sun.misc.Unsafe} warnings.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"hashlog", "lmdb", "rocksdb", "sqlite"})
  void main_asAPlainJavaProcess_withTheDocumentedFlags_printsNoWarnings(String engine)
      throws Exception {
    runPlain(engine, documentedFlags(engine, Runtime.version().feature()));
  }

  /**
   * The native-access flag is accepted, and silent, on every JDK from 17 on, so an application that
   * may run on several JDKs can always pass it.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"lmdb", "rocksdb", "sqlite"})
  void main_withTheNativeAccessFlagOnAnyJdk_printsNoWarnings(String engine) throws Exception {
    runPlain(engine, List.of(NATIVE_ACCESS));
  }

  private static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";

  /**
   * The flags README.md ("JVM flags") says an application needs: none for hashlog; for the engines
   * that load JNI code (lmdb through jffi, rocksdb, sqlite) {@code
   * --enable-native-access=ALL-UNNAMED} from Java 24 on (JEP 472), none before.
   */
  static List<String> documentedFlags(String engine, int javaFeature) {
    if (engine.equals("hashlog") || javaFeature < 24) {
      return List.of();
    }
    return List.of(NATIVE_ACCESS);
  }

  private void runPlain(String engine, List<String> flags) throws Exception {
    String javaCmd = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>();
    cmd.add(javaCmd);
    cmd.addAll(flags);
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            Main.class.getName(),
            engine + ":" + dir.resolve(engine)));
    ChildRun r = ChildRun.run(cmd, dir, Duration.ofSeconds(120));
    assertEquals(0, r.exit(), "exit code: " + r);
    assertEquals(
        "",
        r.stderr(),
        "stderr of "
            + engine
            + " on Java "
            + Runtime.version().feature()
            + " with flags "
            + flags
            + ": "
            + r);
    assertTrue(r.stdout().startsWith("user:1 = Ada"), r.toString());
  }
}
