package com.example.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  /** The README shows the example's code; this keeps the two the same. */
  @Test
  void readme_showsTheExampleVerbatim() throws IOException {
    Path readme = Path.of("../../README.md");
    Assumptions.assumeTrue(
        Files.exists(readme), "copied out of the kv4j checkout: no README.md to compare with");
    String source =
        Files.readString(
            Path.of("src/main/java/com/example/app/Main.java"), StandardCharsets.UTF_8);
    int from = source.indexOf("// README:begin\n") + "// README:begin\n".length();
    int to = source.indexOf("\n    // README:end");
    String block = source.substring(from, to).stripIndent() + "\n";
    assertTrue(
        Files.readString(readme, StandardCharsets.UTF_8).contains(block),
        "README.md's 'Use it' block must be Main.java's lines between the README markers:\n"
            + block);
  }
}
