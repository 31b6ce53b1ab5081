package io.kv4j.tck;

import static org.assertj.core.api.Assertions.fail;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Group 12: damage. A store written with durability SYNC and closed cleanly is copied once per
 * case; one file of each copy is damaged; a child JVM opens every copy in turn (read-write, same
 * config) and checks it against the data set (see {@link DamageWorker}). Each case must end in a
 * refused open that deleted and shortened nothing, or in a store that returns every value exactly
 * or reports corruption, never a wrong value and never a silent loss. A child that dies (a native
 * crash such as SIGBUS) or hangs fails the rule, naming the case it was running.
 */
final class Group12Damage extends RuleGroup {
  /**
   * Group 12's rules as JUnit tests, in rule order, each run in a new {@code Group12Damage}; {@link
   * StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r12_1_fileTruncatedToHalf() throws Exception {
      new Group12Damage(this).required_r12_1_fileTruncatedToHalf();
    }

    @Test
    default void required_r12_2_fileTruncatedToZero() throws Exception {
      new Group12Damage(this).required_r12_2_fileTruncatedToZero();
    }

    @Test
    default void required_r12_3_fileDeleted() throws Exception {
      new Group12Damage(this).required_r12_3_fileDeleted();
    }

    @Test
    default void required_r12_4_bitFlipped() throws Exception {
      new Group12Damage(this).required_r12_4_bitFlipped();
    }

    @Test
    default void required_r12_5_blockZeroed() throws Exception {
      new Group12Damage(this).required_r12_5_blockZeroed();
    }

    @Test
    default void required_r12_6_foreignStoreRefused() throws Exception {
      new Group12Damage(this).required_r12_6_foreignStoreRefused();
    }

    @Test
    default void required_r12_7_verifyReadsTheFilesOfAnOpenStore() throws Exception {
      new Group12Damage(this).required_r12_7_verifyReadsTheFilesOfAnOpenStore();
    }

    @Test
    default void required_r12_8_lastRecordFlippedIsNoTornTail() throws Exception {
      new Group12Damage(this).required_r12_8_lastRecordFlippedIsNoTornTail();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group12Damage(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group12Damage(TckBase kit) {
    super(kit);
  }

  /** The engine id written into the foreign store of rule 12.6. */
  static final String FOREIGN_ENGINE = "tck-foreign";

  /** Fixed by default so a failure replays as is; {@code kv4j.tck.seed} changes the data set. */
  static final long DEFAULT_SEED = 20;

  void required_r12_1_fileTruncatedToHalf() throws Exception {
    damageRule("12.1", Damage.TRUNCATE_HALF);
  }

  void required_r12_2_fileTruncatedToZero() throws Exception {
    damageRule("12.2", Damage.TRUNCATE_ZERO);
  }

  void required_r12_3_fileDeleted() throws Exception {
    damageRule("12.3", Damage.DELETE);
  }

  void required_r12_4_bitFlipped() throws Exception {
    damageRule("12.4", Damage.FLIP_BIT);
  }

  void required_r12_5_blockZeroed() throws Exception {
    damageRule("12.5", Damage.ZERO_BLOCK);
  }

  void required_r12_6_foreignStoreRefused() throws Exception {
    damageRule("12.6", Damage.FOREIGN);
  }

  void required_r12_8_lastRecordFlippedIsNoTornTail() throws Exception {
    damageRule("12.8", Damage.FLIP_LAST);
  }

  /**
   * 12.7: the data set written with SYNC and synced into a store kept open; a bit flipped in the
   * middle of the written part of its largest data file; then {@link Store#verify()} and a full
   * scan must report it. The store stays open, so the damage is seen only by a check that reads the
   * files as they are now, not a copy of them it keeps in memory.
   */
  void required_r12_7_verifyReadsTheFilesOfAnOpenStore() throws Exception {
    String id = "12.7";
    require(id, Feature.PERSISTENT);
    requireDataInLocationFiles(id);
    long seed = seed(DEFAULT_SEED);
    String seedNote = "data set seed " + seed + " (replay with -Dkv4j.tck.seed=" + seed + ")";
    Path location = tempDir.resolve("open-store");
    Store s = open(config(location, Durability.SYNC));
    try {
      if (!s.info().has(Feature.CHECKSUMS)) {
        Assumptions.abort(
            "["
                + id
                + "] skipped: engine '"
                + engine()
                + "' does not declare CHECKSUMS (in this config), so a flipped bit inside a value"
                + " may be the value");
      }
      DamageWorker.write(s, seed, s.info().has(Feature.ATOMIC_BATCH));
      s.sync();
      String verdict =
          new OpenStoreDamage(this, id, location, "", "file").flipAndCheck(s, seed, "");
      System.out.println("[" + id + "] " + verdict);
    } catch (AssertionError | org.opentest4j.TestAbortedException e) {
      throw e;
    } catch (RuntimeException e) {
      throw engineThrew(id, "writing the data set", e, "; " + seedNote);
    } finally {
      try {
        s.close();
      } catch (io.kv4j.StoreException e) {
        // A store whose files were damaged under it may fail to close cleanly: allowed.
      }
    }
  }

  /** One damaged copy: its number, the damaged file, what was done, and the files before. */
  private record Case(int n, String file, String damage, Path dir, Map<String, Long> before) {
    String describe() {
      return file + " " + damage + " (case " + n + ")";
    }
  }

  private void damageRule(String id, Damage damage) throws Exception {
    require(id, Feature.PERSISTENT);
    requireDataInLocationFiles(id);
    long seed = seed(DEFAULT_SEED);
    String seedNote = "data set seed " + seed + " (replay with -Dkv4j.tck.seed=" + seed + ")";
    Path pristine = tempDir.resolve("pristine");
    long started = System.nanoTime();
    if (damage != Damage.FOREIGN) { // 12.6 replaces the whole directory: no data set needed
      writeDataSet(id, damage, pristine, seed);
    }
    long written = System.nanoTime();
    Path work = tempDir.resolve("damage-" + id);
    List<Case> cases =
        damage == Damage.FOREIGN
            ? List.of(foreignCase(work, seed))
            : damagedCopies(id, damage, pristine, work);
    long prepared = System.nanoTime();
    runCases(id, damage, cases, work, seed, seedNote);
    System.out.printf(
        "[%s] %d cases: data set written in %d ms, copies damaged in %d ms, child JVM %d ms%n",
        id,
        cases.size(),
        TimeUnit.NANOSECONDS.toMillis(written - started),
        TimeUnit.NANOSECONDS.toMillis(prepared - written),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - prepared));
  }

  /**
   * The data set, written with SYNC into a store at {@code pristine} and closed; skips the rule if
   * the damage needs CHECKSUMS that the opened store does not declare.
   */
  private void writeDataSet(String id, Damage damage, Path pristine, long seed) {
    Store s = open(config(pristine, Durability.SYNC));
    if (damage.needsChecksums && !s.info().has(Feature.CHECKSUMS)) {
      close(s);
      Assumptions.abort(
          "["
              + id
              + "] skipped: engine '"
              + engine()
              + "' does not declare CHECKSUMS (in this config), so a flipped bit or zeroed"
              + " block inside a value may be returned as the value");
    }
    DamageWorker.write(s, seed, s.info().has(Feature.ATOMIC_BATCH));
    close(s);
  }

  /** Rule 12.6's one case: a directory holding another engine's store. */
  private Case foreignCase(Path work, long seed) throws IOException {
    Path dir = work.resolve("case-1");
    Files.createDirectories(dir);
    writeForeignStore(dir, seed);
    return new Case(
        1,
        "(whole directory)",
        "replaced by a '" + FOREIGN_ENGINE + "' store (identity and one data file)",
        dir,
        dataFileSizes(dir));
  }

  /**
   * One copy of {@code pristine} per file with that file damaged; a file the damage would not
   * change (an empty one) makes no case.
   */
  private List<Case> damagedCopies(String id, Damage damage, Path pristine, Path work)
      throws IOException {
    List<Case> cases = new ArrayList<>();
    Map<String, Long> files = dataFileSizes(pristine);
    if (files.isEmpty()) {
      fail(rule(id, "the store directory " + pristine + " holds no file to damage"));
    }
    for (String f : files.keySet()) {
      Path dir = work.resolve("case-" + (cases.size() + 1));
      copyTree(pristine, dir);
      String what = damage.apply(dir.resolve(f));
      if (what == null) {
        deleteTree(dir);
        continue;
      }
      cases.add(new Case(cases.size() + 1, f, what, dir, dataFileSizes(dir)));
    }
    if (cases.isEmpty()) {
      fail(rule(id, "every file of the store directory is empty: " + files));
    }
    return cases;
  }

  /**
   * Runs the cases in a child JVM and fails the rule with every case that broke the contract. A
   * child that crashes in a case is reported for that case, and a new child runs the cases after
   * it, so one crash does not hide the outcome of the rest; after a timeout the rest is not run
   * (each would wait as long).
   */
  private void runCases(
      String id, Damage damage, List<Case> cases, Path work, long seed, String seedNote)
      throws Exception {
    Map<Integer, String> results = new HashMap<>();
    Map<Integer, String> deaths = new HashMap<>();
    List<String> problems = new ArrayList<>();
    int from = 0;
    for (int child = 1; from < cases.size(); child++) {
      DamageChildRun run =
          runChild(id, damage, cases.subList(from, cases.size()), work, child, seed);
      results.putAll(run.results());
      if (run.ok()) {
        break;
      }
      Duration timeout = damageChildTimeout();
      String said = run.said(crashReport(Long.toString(run.pid())));
      if (!run.started() && !run.timedOut()) {
        problems.add(
            rule(
                id,
                "the child JVM could not start: it ended with "
                    + DamageChildRun.exitDescription(run.exit())
                    + " before "
                    + DamageWorker.class.getSimpleName()
                    + "'s main ran (see its stderr)"
                    + said));
        break;
      }
      String why =
          run.timedOut()
              ? "did not finish within "
                  + timeout.toSeconds()
                  + " s and was killed"
                  + (run.started() ? "" : " before its main started")
              : "died with " + DamageChildRun.exitDescription(run.exit());
      said = "; never a crash or a hang on damaged files" + said;
      if (run.running() < 0) {
        problems.add(rule(id, "the child JVM " + why + " outside any case" + said));
        break;
      }
      Case culprit = cases.get(run.running() - 1);
      String rest =
          !run.timedOut() && culprit.n() < cases.size()
              ? " (a new child JVM ran the cases after it)"
              : "";
      deaths.put(
          culprit.n(),
          rule(id, culprit.describe() + ": the child JVM opening it " + why + rest + said));
      if (run.timedOut()) {
        if (culprit.n() < cases.size()) {
          problems.add(
              rule(
                  id,
                  "cases "
                      + (culprit.n() + 1)
                      + ".."
                      + cases.size()
                      + " were not run after the timeout in case "
                      + culprit.n()));
        }
        break;
      }
      from = culprit.n(); // the next case's index: cases are numbered from 1
    }
    problems.addAll(0, judgeAll(id, damage, cases, results, deaths));
    failOnProblems(problems, cases.size(), seedNote);
  }

  /**
   * Prints each case's outcome and returns what is wrong with each, in case order: its death, or
   * what {@link #judge} finds in its result (a case not run is skipped: reported already).
   */
  private List<String> judgeAll(
      String id,
      Damage damage,
      List<Case> cases,
      Map<Integer, String> results,
      Map<Integer, String> deaths)
      throws IOException {
    List<String> byCase = new ArrayList<>();
    for (Case c : cases) {
      String death = deaths.get(c.n());
      if (death != null) {
        System.out.println("[" + id + "] " + c.describe() + ": child JVM died or hung");
        byCase.add(death);
        continue;
      }
      String result = results.get(c.n());
      if (result == null) {
        continue; // not run (reported above)
      }
      System.out.println("[" + id + "] " + c.describe() + ": " + result);
      String problem = judge(damage, c, result);
      if (problem != null) {
        byCase.add(rule(id, c.describe() + ": " + problem));
      }
    }
    return byCase;
  }

  /** Fails the rule with the first problem and up to 20 more, if there is any. */
  private static void failOnProblems(List<String> problems, int cases, String seedNote) {
    if (problems.isEmpty()) {
      return;
    }
    StringBuilder msg = new StringBuilder(problems.get(0));
    if (problems.size() > 1) {
      msg.append("\n")
          .append(problems.size() - 1)
          .append(" more problem(s) in ")
          .append(cases)
          .append(" cases:");
      for (String more : problems.subList(1, Math.min(problems.size(), 21))) {
        msg.append("\n  ").append(more);
      }
    }
    msg.append("\n").append(seedNote);
    // tagged: every problem starts with rule(id, ...)
    fail(msg.toString());
  }

  /** Runs some cases in one child JVM, killed after {@link #damageChildTimeout()}. */
  private DamageChildRun runChild(
      String id, Damage damage, List<Case> cases, Path work, int child, long seed)
      throws Exception {
    Path caseFile = writeCaseFile(damage, cases, work.resolve("cases-" + child + ".tsv"));
    try (ChildProcess c = child(DamageWorker.class, caseFile.toString(), Long.toString(seed))) {
      Process p = c.process();
      AtomicBoolean timedOut = new AtomicBoolean();
      Thread watchdog = startWatchdog(p, damageChildTimeout(), timedOut);
      Map<Integer, String> results = new HashMap<>();
      List<String> output = new ArrayList<>();
      int running = -1;
      boolean done = false;
      int exit;
      try {
        // Longer than the watchdog's limit: the watchdog's kill, not this wait, ends a hang.
        Duration lineWait = damageChildTimeout().plusMinutes(1);
        for (String line = readLine(id, c, lineWait);
            line != null;
            line = readLine(id, c, lineWait)) {
          if (line.startsWith("case ")) {
            running = Integer.parseInt(line.split(" ", 3)[1]);
          } else if (line.startsWith("result ")) {
            String[] f = line.split(" ", 3);
            results.put(Integer.parseInt(f[1]), f.length > 2 ? f[2] : "");
            running = -1;
          } else if (line.equals("done")) {
            done = true;
          } else {
            output.add(line);
            if (output.size() > 30) {
              output.remove(0);
            }
          }
        }
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.toHandle().destroyForcibly();
          p.waitFor(30, TimeUnit.SECONDS);
        }
        // The exit code, once its stderr was read to the end.
        exit = p.isAlive() ? -1 : await(id, c, Duration.ofSeconds(30));
      } finally {
        watchdog.interrupt();
      }
      return new DamageChildRun(
          results, running, done, exit, timedOut.get(), c.started(), c.stderr(), output, p.pid());
    }
  }

  /** The child's case file: {@code <n> TAB <kind> TAB <file> TAB <config URI>} per case. */
  private Path writeCaseFile(Damage damage, List<Case> cases, Path caseFile) throws IOException {
    StringBuilder lines = new StringBuilder();
    for (Case c : cases) {
      lines
          .append(c.n())
          .append('\t')
          .append(damage.kind)
          .append('\t')
          .append(c.file().replace(' ', '_'))
          .append('\t')
          .append(config(c.dir(), Durability.SYNC).toUri())
          .append('\n');
    }
    Files.writeString(caseFile, lines, StandardCharsets.UTF_8);
    return caseFile;
  }

  /** A daemon thread that kills {@code p} after {@code timeout}, setting {@code timedOut}. */
  private static Thread startWatchdog(Process p, Duration timeout, AtomicBoolean timedOut) {
    Thread watchdog =
        new Thread(
            () -> {
              try {
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                  timedOut.set(true);
                  // Through the handle: Process.destroyForcibly would also close our end of the
                  // pipe and lose the last "case" line, the one that names the culprit.
                  p.toHandle().destroyForcibly();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "kv4j-tck-damage-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    return watchdog;
  }

  /** What is wrong with one case's result, or null if it kept the contract. */
  private String judge(Damage damage, Case c, String result) throws IOException {
    String[] f = result.split(" ", 2);
    String status = f[0];
    String detail = f.length > 1 ? f[1] : "";
    switch (status) {
      case "violation":
        return detail;
      case "opened":
        if (damage == Damage.FOREIGN) {
          return "the engine opened a directory holding a '"
              + FOREIGN_ENGINE
              + "' store (its identity file "
              + StoreDirectory.IDENTITY_FILE
              + " says so) instead of refusing it with a StoreException naming that engine";
        }
        return null;
      case "open-failed":
        if (damage == Damage.FOREIGN && !detail.contains("'" + FOREIGN_ENGINE + "'")) {
          return "the open failed as it must, but its message does not name the engine '"
              + FOREIGN_ENGINE
              + "' that made the store: "
              + detail;
        }
        Map<String, Long> after = dataFileSizes(c.dir());
        for (Map.Entry<String, Long> e : c.before().entrySet()) {
          Long now = after.get(e.getKey());
          if (now == null) {
            return "the failed open deleted " + e.getKey() + "; a failed open changes nothing";
          }
          if (now < e.getValue()) {
            return "the failed open shortened "
                + e.getKey()
                + " from "
                + e.getValue()
                + " to "
                + now
                + " bytes; a failed open changes nothing";
          }
        }
        return null;
      default:
        return "unreadable result from the child JVM: " + result;
    }
  }

  /**
   * A store made by another engine, as {@link StoreDirectory} writes it: an identity file naming
   * {@value #FOREIGN_ENGINE} (format 1, with its CRC32C line) and one data file.
   */
  static void writeForeignStore(Path dir, long seed) throws IOException {
    String body =
        "# kv4j store identity: written once when the store was created; do not edit\n"
            + "engine="
            + FOREIGN_ENGINE
            + "\nformat=1\ncreated=2024-01-01T00:00:00Z\n";
    CRC32C crc = new CRC32C();
    crc.update(body.getBytes(StandardCharsets.UTF_8));
    Files.writeString(
        dir.resolve(StoreDirectory.IDENTITY_FILE),
        body + "crc32c=" + String.format("%08x", crc.getValue()) + "\n",
        StandardCharsets.UTF_8);
    Files.write(dir.resolve("foreign.dat"), value(new SplittableRandom(seed), 4096));
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : all.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (Files.isRegularFile(p)) {
          Files.copy(p, target);
        }
      }
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
