package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.StoreCopy;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kv4j copy between engines: progress, verification, resume after the process is killed. */
class CopyTest {
  private static final long SEED = 9_2026L;
  private static final Pattern PROGRESS =
      Pattern.compile("\\] +[0-9.]+% +([0-9,]+)/([0-9,]+) entries");
  private static final Pattern SHA = Pattern.compile("sha256 ([0-9a-f]{64})");

  @TempDir Path dir;

  /** Small random-length keys and values, written in batches. */
  private static void fill(String uri, int n, long seed, boolean shuffled) {
    SplittableRandom rnd = new SplittableRandom(seed);
    try (Store s = Stores.open(uri)) {
      WriteBatch b = new WriteBatch();
      for (int i = 0; i < n; i++) {
        byte[] key =
            String.format("%08d", shuffled ? i * 7919L % 100_000_000L : i)
                .getBytes(StandardCharsets.UTF_8);
        byte[] value = new byte[4 + rnd.nextInt(12)];
        rnd.nextBytes(value);
        b.put(key, value);
        if (b.size() == 20_000) {
          s.write(b);
          b.clear();
        }
      }
      s.write(b);
    }
  }

  private static String checksum(String uri) {
    try (Store s = Stores.open(uri)) {
      return StoreCopy.checksum(s).sha256();
    }
  }

  private static List<String> shas(String out) {
    List<String> l = new ArrayList<>();
    Matcher m = SHA.matcher(out);
    while (m.find()) {
      l.add(m.group(1));
    }
    return l;
  }

  @Test
  void copy_sqliteToHashlogAndBack_verifiesBothWays() {
    String sqlite = "sqlite:" + dir.resolve("a");
    String hashlog = "hashlog:" + dir.resolve("b");
    String back = "sqlite:" + dir.resolve("c");
    fill(sqlite, 20_000, SEED, true);

    Cli.Run there = Cli.process(dir, "copy", "--from", sqlite, "--to", hashlog);
    assertThat(there.exit()).as("%s", there).isZero();
    assertThat(there.out()).contains("copied 20,000 entries", "verified:");
    assertThat(there.err()).contains("100.0%  20,000/20,000 entries", "done in");

    Cli.Run andBack = Cli.process(dir, "copy", "--from", hashlog, "--to", back, "--batch", "333");
    assertThat(andBack.exit()).as("%s", andBack).isZero();
    assertThat(shas(there.out())).hasSize(2).containsOnly(shas(andBack.out()).get(0));
    assertThat(checksum(back)).as("seed %d", SEED).isEqualTo(checksum(sqlite));

    Cli.Run verify = Cli.process(dir, "verify", back);
    assertThat(verify.exit()).as("%s", verify).isZero();
    assertThat(verify.out()).contains("OK: 20,000 entries");

    Cli.Run again = Cli.process(dir, "copy", "--from", sqlite, "--to", hashlog);
    assertThat(again.exit()).as("%s", again).isEqualTo(ExitCode.USAGE);
    assertThat(again.err()).contains("is not empty", "--resume");
  }

  @Test
  void copy_resumeIntoTargetWithForeignData_failsVerification() {
    String from = "hashlog:" + dir.resolve("a");
    String to = "lmdb:" + dir.resolve("b");
    fill(from, 500, SEED + 1, true);
    try (Store s = Stores.open(to)) {
      s.put("zzz-foreign".getBytes(StandardCharsets.UTF_8), new byte[] {1});
    }
    Cli.Run r = Cli.inProcess("copy", "--from", from, "--to", to, "--resume", "--no-progress");
    assertThat(r.exit()).as("%s", r).isEqualTo(ExitCode.CHECK_FAILED);
    assertThat(r.out()).contains("verification FAILED");
    assertThat(r.err()).contains("copy verification failed");
  }

  /**
   * A million entries from sqlite to hashlog through the jar: the first copy is killed (kill -9)
   * part way, the second resumes from the target's highest key, shows progress and verifies.
   *
   * <p>The first copy prints a progress line per batch and the test stops reading its stderr once
   * it has seen one past 100,000 entries: the pipe fills and the copy blocks, so it is certainly
   * still running when it is killed.
   */
  @Test
  void copy_millionEntries_killedThenResumed_verifies() throws Exception {
    int n = 1_000_000;
    String sqlite = "sqlite:" + dir.resolve("million-sqlite");
    String hashlog = "hashlog:" + dir.resolve("million-hashlog");
    fill(sqlite, n, SEED + 2, false);

    Path firstOut = dir.resolve("first-copy.stdout"); // a file: the copy never blocks on stdout
    Process p =
        new ProcessBuilder(
                Cli.command(
                    "copy",
                    "--from",
                    sqlite,
                    "--to",
                    hashlog,
                    "--batch",
                    "500",
                    "--progress-interval",
                    "0"))
            .directory(dir.toFile())
            .redirectOutput(firstOut.toFile())
            .start();
    // Only a guard against a hang (the test reads stderr with no time limit): ends its stderr.
    Thread watchdog =
        new Thread(
            () -> {
              try {
                if (!p.waitFor(Cli.TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                  p.toHandle().destroyForcibly(); // the pipe stays open: the reader sees its end
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    watchdog.setDaemon(true);
    watchdog.start();
    long seen = 0;
    List<String> head = new ArrayList<>();
    Deque<String> tail = new ArrayDeque<>();
    try (BufferedReader err =
        new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
      String line;
      while (seen < 100_000 && (line = err.readLine()) != null) {
        if (head.size() < 5) {
          head.add(line);
        }
        tail.addLast(line);
        if (tail.size() > 30) {
          tail.removeFirst();
        }
        Matcher m = PROGRESS.matcher(line);
        if (m.find()) {
          seen = Long.parseLong(m.group(1).replace(",", ""));
        }
      }
      assertThat(seen)
          .as(
              () ->
                  "progress lines: "
                      + head
                      + "; the copy's stderr ended before 100,000 entries: "
                      + Cli.ended(p, List.copyOf(tail), firstOut))
          .isGreaterThanOrEqualTo(100_000);
      assertThat(p.isAlive())
          .as(() -> "the copy still runs: " + Cli.ended(p, List.copyOf(tail), firstOut))
          .isTrue();
      p.destroyForcibly();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      watchdog.interrupt();
    }
    assertThat(p.exitValue()).isNotZero();

    Cli.Run resumed = Cli.process(dir, "copy", "--from", sqlite, "--to", hashlog, "--resume");
    assertThat(resumed.exit()).as("%s", resumed).isZero();
    Matcher r = Pattern.compile("resumed after ([0-9,]+) entries").matcher(resumed.out());
    assertThat(r.find()).as("%s", resumed).isTrue();
    long skipped = Long.parseLong(r.group(1).replace(",", ""));
    assertThat(skipped).isBetween(seen - 1, (long) n - 1);
    assertThat(resumed.out())
        .contains("source: 1,000,000 entries", "target: 1,000,000 entries", "verified:");
    assertThat(resumed.err()).contains("1,000,000/1,000,000 entries", "entries/s", "done in");
    assertThat(resumed.err()).contains("ETA");
    List<String> shas = shas(resumed.out());
    assertThat(shas).hasSize(2);
    assertThat(shas.get(1)).isEqualTo(shas.get(0));
  }
}
