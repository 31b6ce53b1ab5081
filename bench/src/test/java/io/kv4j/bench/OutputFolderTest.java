package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The runner's default report folder is git-ignored, so a run never dirties the checkout. */
class OutputFolderTest {
  @Test
  void defaultOut_isUnderBenchResults_whichTheRootGitignoreIgnores() throws Exception {
    Path out = Options.parse().out;
    assertThat(out.getName(0).toString()).isEqualTo("bench-results");
    // Tests run in the module directory (bench/): the root .gitignore is one level up.
    Path gitignore = Path.of("").toAbsolutePath().getParent().resolve(".gitignore");
    List<String> lines = Files.readAllLines(gitignore);
    // Without a leading slash the pattern matches at any depth: a run from bench/ is ignored too.
    assertThat(lines).as(gitignore.toString()).contains("bench-results/");
  }
}
