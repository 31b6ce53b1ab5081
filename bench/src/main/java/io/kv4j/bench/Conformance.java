package io.kv4j.bench;

import io.kv4j.spi.StoreProvider;
import io.kv4j.tck.TckEnvironment;
import io.kv4j.tck.TckRunner;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * The conformance matrix: the kv4j TCK run in this JVM through {@link TckRunner} against each
 * engine, at a reduced depth given as a {@link TckEnvironment} (no system property is set),
 * summarised as rules passed / failed / skipped. A failing rule is a result (peers are not expected
 * to pass every rule), never an error of the run. {@link ConformanceReport} writes it.
 */
final class Conformance {
  /**
   * The reduced depth of the matrix; each can still be overridden with {@code -D} on the command
   * line (applied here: {@link TckRunner} runs the environment it is given as it is).
   */
  static final TckEnvironment DEPTH =
      TckEnvironment.builder().ops(1000).threads(2).crashRounds(1).manyKeys(10_000).build();

  /** The chronicle-map flags, for the crash rules' child JVMs when running from the jar. */
  static final List<String> CHILD_JVM_OPTIONS =
      List.of(
          "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
          "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "-Dchronicle.analytics.disable=true");

  private static final Pattern RULE = Pattern.compile("(required|optional)_r(\\d+)_(\\d+)_(\\w+)");

  /**
   * One engine's line of the matrix.
   *
   * @param engine engine id
   * @param passed rules passed
   * @param failed rules failed
   * @param skipped rules skipped (feature not declared), with reasons in the TCK's own report
   * @param seconds wall time of the kit
   * @param failures the failed rules, as {@code r7.1 name: first line of the message}
   * @param reportDir where the TCK wrote its per-rule report (UriTck.md and .json)
   */
  record Row(
      String engine,
      long passed,
      long failed,
      long skipped,
      double seconds,
      List<String> failures,
      Path reportDir) {}

  private Conformance() {}

  /**
   * The depth in effect: {@link #DEPTH} with the kit's {@code -Dkv4j.tck.*} overrides of this JVM.
   *
   * @return the four depth settings the report states, by their override names
   */
  static Map<String, String> depth() {
    TckEnvironment env = DEPTH.withOverrides(System::getProperty);
    Map<String, String> m = new LinkedHashMap<>();
    m.put(TckEnvironment.OPS, String.valueOf(env.ops()));
    m.put(TckEnvironment.THREADS, String.valueOf(env.threads()));
    m.put(TckEnvironment.CRASH_ROUNDS, String.valueOf(env.crashRounds()));
    m.put(TckEnvironment.MANY_KEYS, String.valueOf(env.manyKeys()));
    return m;
  }

  /**
   * Runs the kit against each engine with its default options.
   *
   * @param engines the engines
   * @param reportRoot where each engine's TCK report goes ({@code <root>/<engine>/UriTck.md})
   * @param out progress
   * @return one row per engine
   */
  static List<Row> run(List<StoreProvider> engines, Path reportRoot, PrintStream out) {
    List<Row> rows = new ArrayList<>();
    for (StoreProvider p : engines) {
      rows.add(runOne(p, reportRoot.resolve(p.id()), out));
    }
    return rows;
  }

  private static Row runOne(StoreProvider p, Path dir, PrintStream out) {
    String engine = p.id();
    Failures failures = new Failures();
    // An instrument is in no registry: the kit (and its child JVMs) make it from its class.
    TckRunner runner =
        Instruments.contains(p)
            ? TckRunner.forProvider(p, engine + ":")
            : TckRunner.forUri(engine + ":");
    TckRunner.Result r =
        runner
            .environment(DEPTH.withOverrides(System::getProperty))
            .reportDir(dir)
            .childJvmOptions(CHILD_JVM_OPTIONS)
            .listener(failures)
            .run();
    double seconds = r.took().toNanos() / 1e9;
    Row row =
        new Row(
            engine,
            r.passed(),
            r.failed(),
            r.skipped(),
            seconds,
            Collections.unmodifiableList(failures.lines),
            dir);
    out.printf(
        Locale.ROOT,
        "[conformance] %-14s %3d passed %3d failed %3d skipped  %.0f s%n",
        engine,
        row.passed(),
        row.failed(),
        row.skipped(),
        seconds);
    for (String f : row.failures()) {
      out.println("[conformance]   FAILED " + f);
    }
    return row;
  }

  /**
   * Each failure as one line: {@code r7.1 name: Exception: message} (a failure outside a rule,
   * class set-up, by its display name).
   */
  private static final class Failures implements TestExecutionListener {
    final List<String> lines = new ArrayList<>();

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
      if (result.getStatus() == TestExecutionResult.Status.FAILED) {
        lines.add(name(id) + ": " + message(result));
      }
    }

    private static String name(TestIdentifier id) {
      String n = id.getDisplayName();
      int paren = n.indexOf('(');
      String method = paren < 0 ? n : n.substring(0, paren);
      Matcher m = RULE.matcher(method);
      return m.matches() ? "r" + m.group(2) + "." + m.group(3) + " " + m.group(4) : method;
    }

    private static String message(TestExecutionResult r) {
      String s =
          r.getThrowable()
              .map(t -> t.getClass().getSimpleName() + ": " + t.getMessage())
              .orElse("failed");
      s = s.replace('\n', ' ').replace('\r', ' ');
      return s.length() > 240 ? s.substring(0, 240) + "..." : s;
    }
  }
}
