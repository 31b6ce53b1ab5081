package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every assertion of the kit names its rule and what it expected (issue 28): reads the kit's main
 * sources and fails on an {@code assertThat(...)} whose next call is not a description ({@code
 * .as}, {@code .describedAs}, {@code .withFailMessage}, {@code .overridingErrorMessage}) built with
 * {@code rule(...)}, and on a {@code fail(...)} or {@code new AssertionError(...)} whose message is
 * not built with {@code rule(...)} (or marked {@code // tagged:} when it is built elsewhere). So a
 * failure never reads "Expecting actual not to be null" without the rule.
 */
class AssertionDescriptionsTest {
  private static final Path SOURCES = Path.of("src/main/java/io/kv4j/tck").toAbsolutePath();

  /**
   * The reporter builds the tags itself; it holds no rule. {@link ChildProcess} is a helper for any
   * test's child process, holding no rule either: the kit calls its throwing methods through {@link
   * RuleGroup#readLine} and {@link RuleGroup#await}, which tag what they throw.
   */
  private static final Set<String> EXEMPT = Set.of("TckReport.java", "ChildProcess.java");

  private static final Pattern ASSERT =
      Pattern.compile("(?<![\\w.])(?:Assertions\\.)?assertThat\\(");
  private static final Pattern FAIL =
      Pattern.compile("(?<![\\w.])(?:Assertions\\.)?fail\\(|new AssertionError\\(");
  private static final Pattern NEXT_CALL = Pattern.compile("\\s*\\.(\\w+)\\(");
  private static final Set<String> DESCRIPTIONS =
      Set.of("as", "describedAs", "withFailMessage", "overridingErrorMessage");

  @Test
  void everyAssertionOfTheKit_namesItsRule() throws IOException {
    List<String> offenders = new ArrayList<>();
    int assertions = 0;
    try (Stream<Path> files = Files.list(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        if (EXEMPT.contains(f.getFileName().toString())) {
          continue;
        }
        String src = Files.readString(f);
        Matcher a = ASSERT.matcher(src);
        while (a.find()) {
          assertions++;
          int end = closing(src, a.end());
          Matcher next = NEXT_CALL.matcher(src).region(end, src.length());
          if (!next.lookingAt() || !DESCRIPTIONS.contains(next.group(1))) {
            offenders.add(where(f, src, a.start()) + " has no description before its check");
          } else if (!src.substring(next.end(), closing(src, next.end())).contains("rule(")) {
            offenders.add(where(f, src, a.start()) + " has a description without rule(...)");
          }
        }
        Matcher x = FAIL.matcher(src);
        while (x.find()) {
          assertions++;
          String args = src.substring(x.end(), closing(src, x.end()));
          int lineStart = src.lastIndexOf('\n', x.start());
          int prevLine = src.lastIndexOf('\n', Math.max(0, lineStart - 1));
          boolean tagged =
              src.substring(prevLine + 1, lineStart + 1).trim().startsWith("// tagged:");
          if (!args.contains("rule(") && !tagged) {
            offenders.add(where(f, src, x.start()) + " has a message without rule(...)");
          }
        }
      }
    }
    assertThat(assertions).as("assertions found in %s", SOURCES).isGreaterThan(100);
    assertThat(offenders)
        .as("assertions of the kit that do not name their rule and what they expected")
        .isEmpty();
  }

  /** The index just past the parenthesis closing the one opened before {@code from}. */
  private static int closing(String src, int from) {
    int depth = 1;
    int i = from;
    while (depth > 0) {
      char c = src.charAt(i);
      if (c == '"' || c == '\'') {
        i++;
        while (src.charAt(i) != c) {
          if (src.charAt(i) == '\\') {
            i++;
          }
          i++;
        }
      } else if (c == '/' && src.charAt(i + 1) == '/') {
        i = src.indexOf('\n', i);
      } else if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      }
      i++;
    }
    return i;
  }

  private static String where(Path f, String src, int at) {
    int line = 1;
    for (int i = 0; i < at; i++) {
      if (src.charAt(i) == '\n') {
        line++;
      }
    }
    int eol = src.indexOf('\n', at);
    return f.getFileName() + ":" + line + " " + src.substring(at, eol).trim();
  }
}
