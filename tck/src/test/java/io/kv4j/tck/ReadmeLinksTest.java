package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative markdown link in every README.md of the repository points to a file or directory
 * of the repository: a link that leaves the checkout, or names a file that was moved or never
 * committed, is a dead end for the reader of the README on GitHub or in a clone. And the root
 * README's module table lists every module of the build.
 */
class ReadmeLinksTest {
  /** The repository: the tck module's parent. */
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** {@code [text](target)} or {@code ![alt](target)}; the target ends at a space or ')'. */
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

  private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
  private static final Pattern INLINE_CODE = Pattern.compile("`[^`]*`");

  static List<Path> readmes() throws IOException {
    try (Stream<Path> walk = Files.walk(ROOT)) {
      return walk.filter(p -> p.getFileName().toString().equals("README.md"))
          .filter(p -> !skipped(ROOT.relativize(p)))
          .sorted()
          .toList();
    }
  }

  /** Build output, VCS and tool directories hold copies or foreign READMEs, not ours. */
  private static boolean skipped(Path relative) {
    for (Path part : relative) {
      String s = part.toString();
      if (s.equals("target") || s.startsWith(".") || s.equals("node_modules")) {
        return true;
      }
    }
    return false;
  }

  /** The relative link targets of one markdown file outside code blocks and code spans. */
  static List<String> relativeLinks(String markdown) {
    List<String> links = new ArrayList<>();
    boolean inFence = false;
    for (String line : markdown.split("\n", -1)) {
      if (FENCE.matcher(line).find()) {
        inFence = !inFence;
        continue;
      }
      if (inFence) {
        continue;
      }
      Matcher m = LINK.matcher(INLINE_CODE.matcher(line).replaceAll(""));
      while (m.find()) {
        String target = m.group(1);
        if (target.startsWith("#") || target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue; // an anchor in the same file, or a URL (https:, mailto:, ...)
        }
        links.add(target);
      }
    }
    return links;
  }

  @Test
  void relativeLinks_skipsUrlsAnchorsAndCode() {
    String md =
        "see [a](docs/a.md#x) and [b](https://example.com/b) and [c](#c)\n"
            + "`[d](not/a/link.md)` then ![e](img/e.png \"title\")\n"
            + "```\n[f](in/a/fence.md)\n```\n[g](../g)\n";
    assertThat(relativeLinks(md)).containsExactly("docs/a.md#x", "img/e.png", "../g");
  }

  @Test
  void everyReadme_relativeLinksResolveInsideTheRepository() throws IOException {
    List<Path> readmes = readmes();
    assertThat(readmes)
        .as("README.md files found under %s", ROOT)
        .contains(ROOT.resolve("README.md"), ROOT.resolve("tck/README.md"));
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path readme : readmes) {
      for (String link : relativeLinks(Files.readString(readme, StandardCharsets.UTF_8))) {
        checked++;
        String file = link.replaceFirst("[#?].*$", "");
        // GitHub reads a link that starts with '/' from the repository's root.
        Path target =
            file.startsWith("/")
                ? ROOT.resolve(file.substring(1)).normalize()
                : readme.getParent().resolve(file).normalize();
        String where = ROOT.relativize(readme) + ": (" + link + ")";
        if (!target.startsWith(ROOT)) {
          broken.add(where + " leaves the repository (" + target + ")");
        } else if (!Files.exists(target)) {
          broken.add(where + " names no file (" + ROOT.relativize(target) + ")");
        }
      }
    }
    assertThat(checked).as("relative links checked").isGreaterThan(100);
    assertThat(broken).as("broken relative links in %d README.md files", readmes.size()).isEmpty();
  }

  @Test
  void rootReadme_layoutTableListsEveryModule() throws IOException {
    String pom = Files.readString(ROOT.resolve("pom.xml"), StandardCharsets.UTF_8);
    List<String> modules = new ArrayList<>();
    Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(pom);
    while (m.find()) {
      modules.add(m.group(1));
    }
    assertThat(modules).as("modules of the root pom").contains("api", "examples/app");
    String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    int layout = readme.indexOf("\n## Layout\n");
    assertThat(layout).as("README.md has a Layout section").isPositive();
    int end = readme.indexOf("\n## ", layout + 1);
    String section = readme.substring(layout, end < 0 ? readme.length() : end);
    List<String> firstColumns = new ArrayList<>();
    for (String line : section.split("\n")) {
      if (line.startsWith("| `")) {
        firstColumns.add(line.substring(1, line.indexOf('|', 1)));
      }
    }
    for (String module : modules) {
      assertThat(firstColumns)
          .as("README.md's Layout table row for module %s", module)
          .anyMatch(c -> c.contains("`" + module + "`"));
    }
  }
}
