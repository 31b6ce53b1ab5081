package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What every rule group ({@code Group01Basics} ... {@code Group19Histories}) uses: the kit it runs
 * for ({@link TckBase}: the engine's config, the rule's temporary directory, the stores it opened,
 * the {@link TckEnvironment} and the engine's hooks), rule-tagged messages, feature assumptions and
 * a {@link TreeMap} model to compare scans with. A group is a plain class made for one rule run;
 * {@link StoreTck} has one test method per rule calling it.
 */
abstract class RuleGroup {
  /** The test instance running the rule. */
  final TckBase kit;

  /** The rule's temporary directory. */
  final Path tempDir;

  RuleGroup(TckBase kit) {
    this.kit = kit;
    this.tempDir = kit.tempDir;
  }

  TckEnvironment env() {
    return kit.env();
  }

  StoreConfig config(Path directory, Durability durability) {
    return kit.configAt(directory, durability);
  }

  StoreConfig config(Durability durability) {
    return kit.config(durability);
  }

  Path dir() {
    return kit.dir();
  }

  StoreProvider provider() {
    return kit.provider();
  }

  String engine() {
    return kit.engine();
  }

  boolean has(Feature f) {
    return kit.has(f);
  }

  void require(String rule, Feature f) {
    kit.require(rule, f);
  }

  /** Skips the rule, saying why, for an engine whose data lives on a server, not in files. */
  void requireDataInLocationFiles(String rule) {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        dataLivesInLocationFiles(),
        "["
            + rule
            + "] skipped: engine '"
            + engine()
            + "' keeps its data on a server, not in files under the location");
  }

  Store open() {
    return kit.open();
  }

  Store open(Durability d) {
    return kit.open(d);
  }

  Store open(StoreConfig c) {
    return kit.open(c);
  }

  void close(Store s) {
    kit.close(s);
  }

  StoreConfig configOf(Store s) {
    return kit.configOf(s);
  }

  Store reopen(Store s) {
    return kit.reopen(s);
  }

  long randomSeed() {
    return kit.randomSeed();
  }

  long seed(long fixed) {
    return kit.seed(fixed);
  }

  Duration threadTimeout() {
    return kit.threadTimeout();
  }

  Duration ruleTimeout() {
    return kit.ruleTimeout();
  }

  Duration damageChildTimeout() {
    return kit.damageChildTimeout();
  }

  Path reportDir() {
    return kit.reportDir();
  }

  boolean dataLivesInLocationFiles() {
    return kit.dataLivesInLocationFiles();
  }

  boolean isDiagnosticFile(String fileName) {
    return kit.isDiagnosticFile(fileName);
  }

  /**
   * The store's files (paths relative to {@code dir}, '/'-separated) and sizes, without the lock
   * file and the engine's diagnostic files. An open store's background work (compaction) may delete
   * a file while it is listed: such a file is left out, and a walk that met one vanishing under it
   * is done again.
   */
  Map<String, Long> dataFileSizes(Path dir) throws IOException {
    for (int attempt = 1; ; attempt++) {
      Map<String, Long> out = new TreeMap<>();
      try (Stream<Path> all = Files.walk(dir)) {
        for (Path p : all.filter(Files::isRegularFile).toList()) {
          String rel = dir.relativize(p).toString().replace(p.getFileSystem().getSeparator(), "/");
          if (rel.equals(DirectoryLock.FILE_NAME) || isDiagnosticFile(rel)) {
            continue;
          }
          try {
            out.put(rel, Files.size(p));
          } catch (java.nio.file.NoSuchFileException gone) {
            // deleted since it was listed
          }
        }
        return out;
      } catch (java.io.UncheckedIOException e) {
        if (!(e.getCause() instanceof java.nio.file.NoSuchFileException) || attempt == 10) {
          throw e.getCause();
        }
      }
    }
  }

  boolean isLockFile(String fileName) {
    return kit.isLockFile(fileName);
  }

  boolean failBackgroundWork(Store store) {
    return kit.failBackgroundWork(store);
  }

  List<String> childJvmOptions() {
    return kit.childJvmOptions();
  }

  /**
   * What a call throws, or null when it returns normally; used as {@code
   * assertThat(thrown(call)).as(rule(...)).isInstanceOf(...)} so the rule is named also when
   * nothing was thrown.
   */
  static Throwable thrown(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    return org.assertj.core.api.Assertions.catchThrowable(call);
  }

  /** One call into the engine that returns something. */
  interface EngineCall<T> {
    T call();
  }

  /** One call into the engine that returns nothing. */
  interface EngineAction {
    void run();
  }

  /**
   * Makes an exception the engine throws fail the rule with where it happened: {@code where} names
   * the seed or thread, the operation's index and the operation, e.g. {@code seed=123 op #456 (put
   * key=41ff)}. The message reads {@code [11.1] seed=123 op #456 (put key=41ff): engine threw
   * StoreIOException: ...}; the exception is kept as the cause. An {@link AssertionError} (a rule
   * that failed inside the call) passes through.
   */
  static <T> T call(String ruleId, java.util.function.Supplier<String> where, EngineCall<T> call) {
    return call(ruleId, where, "", call);
  }

  /** As above, with {@code suffix} after the engine's message (e.g. how to replay the seed). */
  static <T> T call(
      String ruleId, java.util.function.Supplier<String> where, String suffix, EngineCall<T> call) {
    try {
      return call.call();
    } catch (RuntimeException e) {
      throw engineThrew(ruleId, where.get(), e, suffix);
    }
  }

  /** As {@link #call(String, java.util.function.Supplier, EngineCall)}, for a void call. */
  static void run(String ruleId, java.util.function.Supplier<String> where, EngineAction action) {
    run(ruleId, where, "", action);
  }

  /** As above, with {@code suffix} after the engine's message. */
  static void run(
      String ruleId,
      java.util.function.Supplier<String> where,
      String suffix,
      EngineAction action) {
    try {
      action.run();
    } catch (RuntimeException e) {
      throw engineThrew(ruleId, where.get(), e, suffix);
    }
  }

  static AssertionError engineThrew(String ruleId, String where, Throwable e) {
    return engineThrew(ruleId, where, e, "");
  }

  static AssertionError engineThrew(String ruleId, String where, Throwable e, String suffix) {
    return new AssertionError(
        rule(
            ruleId,
            where
                + ": engine threw "
                + e.getClass().getSimpleName()
                + ": "
                + e.getMessage()
                + suffix),
        e);
  }

  /** A rule-tagged description for assertion messages. */
  static String rule(String id, String what) {
    return "[" + id + "] " + what;
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] b(int... unsigned) {
    byte[] r = new byte[unsigned.length];
    for (int i = 0; i < r.length; i++) {
      r[i] = (byte) unsigned[i];
    }
    return r;
  }

  /** A 16-byte key: 8-byte big-endian index then padding, so keys sort by index. */
  static byte[] key(long i) {
    return ByteBuffer.allocate(16).putLong(i).putLong(0x6b7634_6a6b7634L).array();
  }

  static byte[] value(SplittableRandom rnd, int length) {
    byte[] v = new byte[length];
    for (int i = 0; i < length; i++) {
      v[i] = (byte) rnd.nextInt(256);
    }
    return v;
  }

  static List<Entry> scanAll(Store s, KeyRange r) {
    List<Entry> out = new ArrayList<>();
    try (Cursor c = s.scan(r)) {
      while (c.hasNext()) {
        out.add(c.next());
      }
    }
    return out;
  }

  static List<String> keysOf(List<Entry> entries) {
    List<String> out = new ArrayList<>();
    for (Entry e : entries) {
      out.add(hex(e.key()));
    }
    return out;
  }

  static String hex(byte[] b) {
    return java.util.HexFormat.of().formatHex(b);
  }

  static TreeMap<byte[], byte[]> newModel() {
    return new TreeMap<>(Arrays::compareUnsigned);
  }

  /** What a correct engine returns for a range, computed on the model. */
  static List<Entry> expected(TreeMap<byte[], byte[]> model, KeyRange r) {
    List<Entry> out = new ArrayList<>();
    if (r.isEmpty()) {
      return out;
    }
    NavigableMap<byte[], byte[]> v = r.view(model);
    for (Map.Entry<byte[], byte[]> e : v.entrySet()) {
      if (out.size() >= r.limitValue()) {
        break;
      }
      out.add(new Entry(e.getKey(), e.getValue()));
    }
    return out;
  }

  /** Asserts that a scan equals the model's answer, keys and values. */
  static void assertScan(String ruleId, Store s, TreeMap<byte[], byte[]> model, KeyRange r) {
    assertScan(ruleId, s, model, r, null);
  }

  /** As above; {@code at} (may be null) says where, e.g. the seed and operation index. */
  static void assertScan(
      String ruleId, Store s, TreeMap<byte[], byte[]> model, KeyRange r, String at) {
    String where = at == null ? "" : " at " + at;
    List<Entry> actual = scanAll(s, r);
    List<Entry> want = expected(model, r);
    assertThat(keysOf(actual))
        .as(
            rule(
                ruleId,
                "keys of scan " + r + where + " (check bound inclusivity, order and limit)"))
        .containsExactlyElementsOf(keysOf(want));
    assertThat(actual).as(rule(ruleId, "entries of scan " + r + where)).isEqualTo(want);
  }

  interface Task {
    void run(int thread) throws Exception;
  }

  /**
   * Runs {@code task} on n threads started together and returns their failures. Waits at most
   * {@link #threadTimeout()} for the threads to meet and to finish: a deadlocked engine fails the
   * rule, naming the threads still running and where they are stuck, instead of hanging the build.
   */
  List<Throwable> runThreads(String ruleId, int n, Task task) throws InterruptedException {
    long timeoutNanos = threadTimeout().toNanos();
    CyclicBarrier start = new CyclicBarrier(n);
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < n; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  start.await(timeoutNanos, TimeUnit.NANOSECONDS);
                  task.run(id);
                } catch (RuntimeException e) {
                  // The engine threw: say on which thread (the rule may have wrapped it already
                  // with the operation's index).
                  errors.add(engineThrew(ruleId, "thread " + id, e));
                } catch (Throwable e) {
                  errors.add(e);
                }
              },
              "kv4j-tck-" + t);
      th.setDaemon(true); // a thread stuck in the engine must not keep the test JVM alive
      threads.add(th);
      th.start();
    }
    long deadline = System.nanoTime() + timeoutNanos;
    List<String> stuck = new ArrayList<>();
    for (Thread th : threads) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      th.join(Math.max(1, left));
      if (th.isAlive()) {
        StringBuilder where = new StringBuilder(th.getName());
        for (StackTraceElement e : th.getStackTrace()) {
          where.append("\n    at ").append(e);
        }
        stuck.add(where.toString());
        th.interrupt();
      }
    }
    if (!stuck.isEmpty()) {
      throw new AssertionError(
          rule(
              ruleId,
              stuck.size()
                  + " of "
                  + n
                  + " threads did not finish within "
                  + threadTimeout().toSeconds()
                  + " s (kv4j.tck.timeoutSeconds): the engine deadlocked or stalled:\n"
                  + String.join("\n", stuck)));
    }
    return new ArrayList<>(errors);
  }

  /**
   * Fails the rule when a thread failed: the first failure is the cause (its message says on which
   * thread and at which operation), the others are suppressed.
   */
  static void noThreadFailed(String ruleId, List<Throwable> errors) {
    if (errors.isEmpty()) {
      return;
    }
    Throwable first = errors.get(0);
    String msg = String.valueOf(first.getMessage());
    AssertionError e =
        new AssertionError(
            rule(
                ruleId,
                errors.size()
                    + " thread(s) failed; the first: "
                    + (msg.startsWith("[" + ruleId + "] ")
                        ? msg.substring(ruleId.length() + 3)
                        : first.toString())),
            first);
    for (Throwable other : errors.subList(1, errors.size())) {
      e.addSuppressed(other);
    }
    throw e;
  }

  /**
   * Starts a child JVM running {@code main} with this JVM's class path and {@link
   * #childJvmOptions()}, through {@link ChildMain}: the child's {@link ChildProcess#describe()}
   * says whether it could not start, exited (with its code) or was killed, with the last lines of
   * its stderr and stdout, for the message of a rule whose child failed.
   */
  ChildProcess child(Class<?> main, String... args) throws IOException {
    return child(List.of(), main, args);
  }

  /** Starts a child JVM as above, under {@code prefix} (a tracer such as strace). */
  ChildProcess child(List<String> prefix, Class<?> main, String... args) throws IOException {
    return ChildProcess.java(main, args)
        .prefix(prefix)
        .jvmOptions(childJvmOptions())
        // An engine the registry does not hold: the child makes its provider from the class name.
        .jvmOptions(GivenEngine.childOptions(kit.provider()))
        // A JVM crash report goes where the kit's report goes and outlives the test's temporary
        // directory; never into the working directory (an engine module's sources under Maven).
        .jvmOptions("-XX:ErrorFile=" + crashReport("%p"))
        .start();
  }

  /**
   * The child's next line of stdout, waiting at most {@code wait}; null at its end. A child silent
   * for longer fails the rule with the child's state ({@link ChildProcess#readLine}), tagged.
   */
  static String readLine(String ruleId, ChildProcess c, Duration wait) throws InterruptedException {
    try {
      return c.readLine(wait);
    } catch (AssertionError silent) {
      throw new AssertionError(rule(ruleId, silent.getMessage()), silent);
    }
  }

  /**
   * The child's exit code, once it exited and its output was read to the end; a child still running
   * after {@code wait} is killed and fails the rule with its state ({@link ChildProcess#await}),
   * tagged.
   */
  static int await(String ruleId, ChildProcess c, Duration wait) throws InterruptedException {
    try {
      return c.await(wait);
    } catch (AssertionError hung) {
      throw new AssertionError(rule(ruleId, hung.getMessage()), hung);
    }
  }

  /** Where a child JVM that crashes writes its crash report. */
  Path crashReport(String pid) throws IOException {
    Path dir = reportDir();
    Files.createDirectories(dir);
    return dir.toAbsolutePath().resolve("hs_err_pid" + pid + ".log");
  }

  static List<Entry> scanAll(Snapshot s, KeyRange r) {
    List<Entry> out = new ArrayList<>();
    try (Cursor c = s.scan(r)) {
      while (c.hasNext()) {
        out.add(c.next());
      }
    }
    return out;
  }

  /** A random one of {@code values}, copied. */
  static byte[] pick(SplittableRandom rnd, byte[][] values) {
    return values[rnd.nextInt(values.length)].clone();
  }

  /**
   * How many more false answers in a row than other threads' successful writes a retry loop of a
   * conditional write takes before it fails its rule (13.2, 18.4): on a correct engine a compare
   * fails only after another thread's write changed what it compares, so the streak never exceeds
   * those writes; an engine that answers false wrongly is caught at once instead of spinning until
   * the rule's time limit.
   */
  static final int FALSE_STREAK_LIMIT = 1000;

  /**
   * Checks a retry loop's streak of false answers: {@code falses} attempts in a row of thread
   * {@code thread}'s operation {@code op} answered false while other threads' writes changed what
   * it compares {@code othersWon} times. Fails the rule when the streak exceeds {@code othersWon}
   * by {@link #FALSE_STREAK_LIMIT}: some of those false answers were wrong.
   *
   * @return {@code falses}
   */
  static long checkFalseStreak(String ruleId, int thread, long op, long falses, long othersWon) {
    if (falses > othersWon + FALSE_STREAK_LIMIT) {
      throw new AssertionError(
          rule(
              ruleId,
              "thread "
                  + thread
                  + " op #"
                  + op
                  + ": "
                  + falses
                  + " attempts in a row all answered false, while the other threads' writes"
                  + " changed what it compares only "
                  + othersWon
                  + " times: a conditional write answers false although its condition holds"
                  + " (a retry loop would spin forever)"));
    }
    return falses;
  }

  /**
   * How long a contention rule (13.2, 14.2) keeps its threads colliding: {@code factor x stressOps}
   * milliseconds, at least half a second. A race whose window is a few hundred nanoseconds is met
   * at random moments, a few times a second on a busy two-core machine, so these rules are bounded
   * by time, not by a number of operations (which would hold a slow engine for minutes); a soak
   * that raises {@code stressOps} runs them longer.
   */
  static Duration contentionWindow(TckEnvironment env, double factor) {
    return Duration.ofMillis(Math.max(500, (long) (factor * env.stressOps())));
  }

  /**
   * The threads' failures with those of threads stopped by another's failure (a broken barrier)
   * last, so that {@link #noThreadFailed} names the failure that stopped them.
   */
  static List<Throwable> causesFirst(List<Throwable> errors) {
    List<Throwable> out = new ArrayList<>(errors);
    out.sort(
        java.util.Comparator.comparing(
            e -> e instanceof java.util.concurrent.BrokenBarrierException));
    return out;
  }

  /** A counter value: {@code n} as 8 big-endian bytes. */
  static byte[] counter(long n) {
    return java.nio.ByteBuffer.allocate(8).putLong(n).array();
  }

  /** The number a {@link #counter(long)} value holds, or -1 for null. */
  static long count(byte[] v) {
    if (v == null) {
      return -1;
    }
    return java.nio.ByteBuffer.wrap(v).getLong();
  }
}
