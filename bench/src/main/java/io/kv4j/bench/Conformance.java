package io.kv4j.bench;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kv4j.spi.StoreProvider;
import io.kv4j.tck.UriTck;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The conformance matrix: the kv4j TCK ({@link UriTck}) run in this JVM with the JUnit Platform
 * Launcher against each engine, summarised as rules passed / failed / skipped. A failing rule is a
 * result (peers are not expected to pass every rule), never an error of the run.
 */
final class Conformance {
  /**
   * The reduced depth of the matrix; each can be overridden with {@code -D} on the command line.
   */
  static final Map<String, String> DEPTH =
      Map.of(
          "kv4j.tck.ops", "1000",
          "kv4j.tck.threads", "2",
          "kv4j.tck.crashRounds", "1",
          "kv4j.tck.manyKeys", "10000");

  /** The chronicle-map flags, for the crash rules' child JVMs when running from the jar. */
  static final String CHILD_JVM_OPTIONS =
      "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED"
          + " --add-exports=java.base/sun.nio.ch=ALL-UNNAMED"
          + " --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED"
          + " --add-opens=java.base/java.lang=ALL-UNNAMED"
          + " --add-opens=java.base/java.lang.reflect=ALL-UNNAMED"
          + " -Dchronicle.analytics.disable=true";

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
   * Sets the depth properties not already given on the command line.
   *
   * @return the depth in effect
   */
  static Map<String, String> depth() {
    Map<String, String> m = new LinkedHashMap<>();
    for (String k : List.of("kv4j.tck.ops", "kv4j.tck.threads", "kv4j.tck.crashRounds")) {
      m.put(k, effective(k));
    }
    m.put("kv4j.tck.manyKeys", effective("kv4j.tck.manyKeys"));
    return m;
  }

  private static String effective(String key) {
    String v = System.getProperty(key);
    if (v == null) {
      v = DEPTH.get(key);
      System.setProperty(key, v);
    }
    return v;
  }

  /**
   * Runs the kit against each engine.
   *
   * @param engines the engines
   * @param reportRoot where each engine's TCK report goes ({@code <root>/<engine>/UriTck.md})
   * @param out progress
   * @return one row per engine
   */
  static List<Row> run(List<StoreProvider> engines, Path reportRoot, PrintStream out) {
    depth();
    String extra = System.getProperty(UriTck.CHILD_JVM_OPTIONS);
    System.setProperty(
        UriTck.CHILD_JVM_OPTIONS,
        extra == null ? CHILD_JVM_OPTIONS : extra + " " + CHILD_JVM_OPTIONS);
    List<Row> rows = new ArrayList<>();
    try {
      for (StoreProvider p : engines) {
        rows.add(runOne(p.id(), reportRoot.resolve(p.id()), out));
      }
    } finally {
      if (extra == null) {
        System.clearProperty(UriTck.CHILD_JVM_OPTIONS);
      } else {
        System.setProperty(UriTck.CHILD_JVM_OPTIONS, extra);
      }
    }
    return rows;
  }

  private static Row runOne(String engine, Path dir, PrintStream out) {
    String oldUri = System.getProperty(UriTck.PROPERTY);
    String oldDir = System.getProperty("kv4j.tck.reportDir");
    System.setProperty(UriTck.PROPERTY, engine + ":");
    System.setProperty("kv4j.tck.reportDir", dir.toString());
    long started = System.nanoTime();
    Counter c = new Counter();
    try {
      LauncherDiscoveryRequest request =
          LauncherDiscoveryRequestBuilder.request()
              .selectors(selectClass(UriTck.class))
              .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "false")
              .build();
      Launcher launcher = LauncherFactory.create();
      launcher.execute(request, c);
    } finally {
      restore(UriTck.PROPERTY, oldUri);
      restore("kv4j.tck.reportDir", oldDir);
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    Row row =
        new Row(
            engine,
            c.passed,
            c.failed,
            c.skipped,
            seconds,
            Collections.unmodifiableList(c.failures),
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

  private static void restore(String key, String old) {
    if (old == null) {
      System.clearProperty(key);
    } else {
      System.setProperty(key, old);
    }
  }

  /** Counts the rules' outcomes; a failure outside a rule (class setup) counts as one failure. */
  private static final class Counter implements TestExecutionListener {
    long passed;
    long failed;
    long skipped;
    final List<String> failures = new ArrayList<>();

    @Override
    public synchronized void executionSkipped(TestIdentifier id, String reason) {
      if (id.isTest()) {
        skipped++;
      }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
      switch (result.getStatus()) {
        case SUCCESSFUL -> {
          if (id.isTest()) {
            passed++;
          }
        }
        case ABORTED -> {
          if (id.isTest()) {
            skipped++;
          }
        }
        case FAILED -> {
          failed++;
          failures.add(name(id) + ": " + message(result));
        }
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

  /**
   * The matrix as markdown.
   *
   * @param rows the rows
   * @param depth the depth settings used
   * @param relativeTo the folder the markdown is written to (links to the per-engine reports)
   * @return markdown, starting with a level-2 heading
   */
  static String markdown(List<Row> rows, Map<String, String> depth, Path relativeTo) {
    StringBuilder b = new StringBuilder("## Conformance (kv4j TCK)\n\n");
    b.append(
        "The kv4j compatibility kit (`io.kv4j.tck.UriTck`, every rule of `tck/SPEC.md`) run in"
            + " this JVM against each engine with its default options. Skipped = a feature the"
            + " engine does not declare (never counted as passed). A failed rule of a peer is a"
            + " finding about that store, not an error of the run. Reduced depth:");
    depth.forEach((k, v) -> b.append(" `-D").append(k).append('=').append(v).append('`'));
    b.append(" (the kit's defaults are 3000 / 4 / 2 / 100000).\n\n");
    b.append("| engine | passed | failed | skipped | time | per-rule report |\n");
    b.append("|---|---:|---:|---:|---:|---|\n");
    for (Row r : rows) {
      String link = relativize(relativeTo, r.reportDir().resolve("UriTck.md"));
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %.0f s | [%s](%s) |%n",
              r.engine(),
              r.passed(),
              r.failed(),
              r.skipped(),
              r.seconds(),
              link,
              link));
    }
    boolean any = rows.stream().anyMatch(r -> !r.failures().isEmpty());
    if (any) {
      b.append("\nFailed rules:\n\n");
      for (Row r : rows) {
        for (String f : r.failures()) {
          b.append("- **")
              .append(r.engine())
              .append("** ")
              .append(f.replace("|", "\\|"))
              .append('\n');
        }
      }
    }
    return b.toString();
  }

  private static String relativize(Path base, Path p) {
    try {
      return base.toAbsolutePath().relativize(p.toAbsolutePath()).toString().replace('\\', '/');
    } catch (IllegalArgumentException e) {
      return p.toString();
    }
  }

  /**
   * The matrix as JSON.
   *
   * @param rows the rows
   * @param depth the depth settings used
   * @return a JSON object
   */
  static String json(List<Row> rows, Map<String, String> depth) {
    StringBuilder b = new StringBuilder("{\n  \"depth\": {");
    int i = 0;
    for (Map.Entry<String, String> e : depth.entrySet()) {
      b.append(i++ == 0 ? "" : ", ")
          .append(Report.str(e.getKey()))
          .append(": ")
          .append(e.getValue());
    }
    b.append("},\n  \"engines\": [");
    i = 0;
    for (Row r : rows) {
      b.append(i++ == 0 ? "\n    " : ",\n    ");
      b.append(
          String.format(
              Locale.ROOT,
              "{\"engine\": %s, \"passed\": %d, \"failed\": %d, \"skipped\": %d, \"seconds\": %.1f,"
                  + " \"failures\": [",
              Report.str(r.engine()),
              r.passed(),
              r.failed(),
              r.skipped(),
              r.seconds()));
      int j = 0;
      for (String f : r.failures()) {
        b.append(j++ == 0 ? "" : ", ").append(Report.str(f));
      }
      b.append("]}");
    }
    return b.append("\n  ]\n}\n").toString();
  }

  /**
   * Writes {@code conformance.md} and {@code conformance.json} to a folder.
   *
   * @param dir the folder
   * @param rows the rows
   * @param depth the depth settings used
   * @param args the command line, stated in the markdown
   * @throws IOException if writing fails
   */
  static void write(Path dir, List<Row> rows, Map<String, String> depth, List<String> args)
      throws IOException {
    Files.createDirectories(dir);
    Files.writeString(
        dir.resolve("conformance.md"),
        "# kv4j conformance matrix\n\nCommand: `"
            + Main.command(args)
            + "`\n\n"
            + Main.environment()
            + "\n\n"
            + markdown(rows, depth, dir),
        StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("conformance.json"), json(rows, depth), StandardCharsets.UTF_8);
  }
}
