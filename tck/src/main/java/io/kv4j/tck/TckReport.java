package io.kv4j.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestWatcher;
import org.opentest4j.TestAbortedException;

/**
 * Collects each rule's outcome and writes a conformance summary per TCK class, as markdown and
 * JSON, to {@code target/kv4j-tck/} (or the directory in {@code -Dkv4j.tck.reportDir}).
 *
 * <p>Nothing is kept for the end of the class: when a rule starts, a line is appended to {@code
 * <TestClass>.progress} and both reports are rewritten with the rule marked unfinished; when it
 * ends, its outcome is appended and the reports rewritten again. An engine that kills the JVM (out
 * of memory, a native crash, {@code Runtime.halt}) so leaves reports whose last line names the rule
 * that was running.
 *
 * <p>It also bounds every rule: the test method and the closing of its stores run on a thread the
 * kit waits for at most {@code kv4j.tck.ruleTimeoutSeconds} (see {@link TckBase#ruleTimeout()}), so
 * an engine that hangs, even deaf to interrupts, fails the rule instead of hanging the build.
 */
final class TckReport
    implements TestWatcher,
        BeforeAllCallback,
        BeforeEachCallback,
        AfterAllCallback,
        TestExecutionExceptionHandler,
        InvocationInterceptor {
  private static final Pattern NAME = Pattern.compile("(required|optional)_r(\\d+)_(\\d+)_(\\w+)");

  /** What a rule's row says while it runs, and forever if the JVM dies during it. */
  static final String UNFINISHED = "unfinished";

  /**
   * One rule's outcome.
   *
   * @param rule the rule id, e.g. {@code 7.1}
   * @param level {@code required}
   * @param name the test's name after the rule id
   * @param status passed, failed, skipped or unfinished
   * @param reason the first line of the failure or skip message, or null
   * @param scope what the rule proves and does not (SPEC.md's Scope line), or empty
   */
  record Outcome(
      String rule, String level, String name, String status, String reason, String scope) {}

  /** One class's run: the rules done and the one running. */
  private static final class Run {
    final List<Outcome> done = new ArrayList<>();
    String engine = "?";
    Outcome running;
    long startedNanos;
    Path dir = dir(System::getProperty);
  }

  private static final Map<Class<?>, Run> RUNS = new ConcurrentHashMap<>();

  private static Run run(Class<?> cls) {
    return RUNS.computeIfAbsent(cls, k -> new Run());
  }

  /** The JUnit configuration parameter (or system property) naming the report's directory. */
  static final String REPORT_DIR = "kv4j.tck.reportDir";

  /** The report's directory: {@value #REPORT_DIR} as {@code lookup} finds it, else the default. */
  static Path dir(java.util.function.Function<String, String> lookup) {
    String d = lookup.apply(REPORT_DIR);
    return Path.of(d == null || d.isBlank() ? "target/kv4j-tck" : d);
  }

  /**
   * A JUnit configuration parameter, else the system property of that name (JUnit's launcher falls
   * back to system properties, its EngineTestKit does not).
   */
  private static java.util.function.Function<String, String> parameters(ExtensionContext c) {
    return k -> c.getConfigurationParameter(k).orElseGet(() -> System.getProperty(k));
  }

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    Class<?> cls = context.getRequiredTestClass();
    refuseOverriddenRules(cls);
    RuleSelection selected = RuleSelection.of(cls); // a malformed @TckRules fails here
    if (selected != null) {
      selected.check(cls);
    }
    Run run = new Run();
    run.dir = dir(parameters(context));
    RUNS.put(cls, run);
    Files.createDirectories(run.dir);
    Files.writeString(
        run.dir.resolve(cls.getSimpleName() + ".progress"),
        "# kv4j TCK progress of "
            + cls.getName()
            + ", one line per rule started and per rule ended; a last line 'started ...' names"
            + " the rule during which the JVM died\n",
        StandardCharsets.UTF_8);
  }

  /**
   * Fails the run of a kit whose class overrides a rule. The rules are public default methods of
   * the groups' {@code Tests} interfaces, so a subclass can override one: without {@code @Test} the
   * rule would vanish from the run and the report, with it the subclass's body would pass for the
   * rule.
   */
  private static void refuseOverriddenRules(Class<?> cls) {
    if (!StoreTck.class.isAssignableFrom(cls)) {
      return;
    }
    for (Method m : cls.getMethods()) {
      Class<?> declaring = m.getDeclaringClass();
      if (NAME.matcher(m.getName()).matches()
          && !(declaring.isInterface() && declaring.isAssignableFrom(StoreTck.class))) {
        throw new IllegalStateException(
            declaring.getName()
                + " overrides the kit's rule "
                + m.getName()
                + ": a rule cannot be replaced or removed (remove the method; a rule the engine"
                + " cannot meet fails, one for a feature it does not declare is skipped)");
      }
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    Class<?> cls = context.getRequiredTestClass();
    Run run = run(cls);
    if (context.getTestInstance().orElse(null) instanceof TckBase tck) {
      tck.overrides(parameters(context)); // the environment's overrides: -D or the launcher's
    }
    Outcome o =
        outcome(
            context,
            UNFINISHED,
            "started at "
                + Instant.now()
                + "; no result: the JVM died (or was killed) while this rule ran");
    synchronized (run) {
      engine(context, run);
      run.running = o;
      run.startedNanos = System.nanoTime();
      progress(cls, "started r" + o.rule() + " " + o.name() + " at " + Instant.now());
      write(cls, run);
    }
  }

  /** Makes every failure name its rule, and tell a failed check from an engine's exception. */
  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable t) throws Throwable {
    if (t instanceof TestAbortedException) {
      throw t;
    }
    Matcher x = NAME.matcher(context.getRequiredTestMethod().getName());
    if (!x.matches()) {
      throw t;
    }
    String tag = "[" + x.group(2) + "." + x.group(3) + "]";
    String msg = String.valueOf(t.getMessage());
    if (msg.contains(tag)) {
      throw t;
    }
    if (isKitCheck(t)) {
      throw new AssertionError(tag + " " + x.group(4) + ": the rule failed: " + msg, t);
    }
    throw new AssertionError(
        tag + " " + x.group(4) + ": the engine threw " + t.getClass().getName() + ": " + msg, t);
  }

  /**
   * Whether an {@link AssertionError} comes from a check of the kit (AssertJ, JUnit, the kit's own
   * classes) rather than from the engine (an engine's own {@code assert}).
   */
  static boolean isKitCheck(Throwable t) {
    if (!(t instanceof AssertionError)) {
      return false;
    }
    for (StackTraceElement e : t.getStackTrace()) {
      String c = e.getClassName();
      if (c.startsWith("java.") || c.startsWith("jdk.") || c.startsWith("sun.")) {
        continue;
      }
      return c.startsWith("org.assertj.")
          || c.startsWith("org.junit.")
          || c.startsWith("org.opentest4j.")
          || (c.startsWith("io.kv4j.tck.") && c.indexOf('.', "io.kv4j.tck.".length()) < 0);
    }
    return true; // no frame at all: created by the kit's checks (AssertJ strips its frames)
  }

  @Override
  public void interceptTestMethod(
      Invocation<Void> invocation,
      ReflectiveInvocationContext<Method> invocationContext,
      ExtensionContext context)
      throws Throwable {
    bounded(invocation, context, "");
  }

  @Override
  public void interceptAfterEachMethod(
      Invocation<Void> invocation,
      ReflectiveInvocationContext<Method> invocationContext,
      ExtensionContext context)
      throws Throwable {
    bounded(invocation, context, " closing the stores the rule opened");
  }

  /**
   * Runs a rule's method on its own thread and waits for it at most the rule's time limit: a hang
   * the engine does not break on interrupt (a deadlock on a monitor) fails the rule with the
   * thread's stack, and the thread is left behind, a daemon.
   */
  private static void bounded(Invocation<Void> invocation, ExtensionContext context, String phase)
      throws Throwable {
    Object instance = context.getTestInstance().orElse(null);
    Matcher x = NAME.matcher(context.getRequiredTestMethod().getName());
    if (!(instance instanceof TckBase tck) || !x.matches()) {
      invocation.proceed();
      return;
    }
    String rule = x.group(2) + "." + x.group(3);
    Duration limit = tck.ruleTimeout();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread th =
        new Thread(
            () -> {
              try {
                invocation.proceed();
              } catch (Throwable e) {
                failure.set(e);
              }
            },
            "kv4j-tck-rule-" + rule);
    th.setDaemon(true); // a thread stuck in the engine must not keep the test JVM alive
    th.start();
    th.join(Math.max(1, limit.toMillis()));
    if (th.isAlive()) {
      StringBuilder where = new StringBuilder(th.getName());
      for (StackTraceElement e : th.getStackTrace()) {
        where.append("\n    at ").append(e);
      }
      th.interrupt();
      th.join(TimeUnit.SECONDS.toMillis(1));
      throw new AssertionError(
          "["
              + rule
              + "] "
              + x.group(4)
              + ": did not finish"
              + phase
              + " within "
              + limit.toSeconds()
              + " s (kv4j.tck.ruleTimeoutSeconds): the engine hung or deadlocked; the rule's"
              + " thread is at:\n"
              + where);
    }
    if (failure.get() != null) {
      throw failure.get();
    }
  }

  @Override
  public void testSuccessful(ExtensionContext context) {
    record(context, "passed", null);
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    record(context, "failed", String.valueOf(cause.getMessage()));
  }

  @Override
  public void testAborted(ExtensionContext context, Throwable cause) {
    record(context, "skipped", String.valueOf(cause.getMessage()));
  }

  @Override
  public void testDisabled(ExtensionContext context, Optional<String> reason) {
    record(context, "skipped", reason.orElse("disabled"));
  }

  private static Outcome outcome(ExtensionContext context, String status, String reason) {
    Method m = context.getRequiredTestMethod();
    Matcher x = NAME.matcher(m.getName());
    String rule = x.matches() ? x.group(2) + "." + x.group(3) : "?";
    String level = x.matches() ? x.group(1) : "?";
    String name = x.matches() ? x.group(4) : m.getName();
    return new Outcome(
        rule,
        level,
        name,
        status,
        reason == null ? null : firstLine(reason),
        scopes().getOrDefault(rule, ""));
  }

  private static void record(ExtensionContext context, String status, String reason) {
    Class<?> cls = context.getRequiredTestClass();
    Run run = run(cls);
    Outcome o = outcome(context, status, reason);
    synchronized (run) {
      engine(context, run);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - run.startedNanos);
      run.running = null;
      run.done.add(o);
      progress(
          cls,
          status
              + " r"
              + o.rule()
              + " "
              + o.name()
              + " after "
              + ms
              + " ms"
              + (o.reason() == null ? "" : ": " + o.reason()));
      write(cls, run);
    }
  }

  private static void engine(ExtensionContext context, Run run) {
    if (context.getTestInstance().orElse(null) instanceof TckBase tck && run.engine.equals("?")) {
      try {
        run.engine = tck.engine();
      } catch (RuntimeException e) {
        run.engine = "unresolved: " + e.getMessage();
      }
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    Class<?> cls = context.getRequiredTestClass();
    Run run = RUNS.remove(cls);
    String base = cls.getSimpleName();
    if (run == null) { // beforeAll failed: refused the class, or could not create the directory
      System.out.println("kv4j TCK: no report for " + base + ": it failed before its first rule");
      System.out.flush();
      return;
    }
    synchronized (run) {
      progress(cls, "finished: " + run.done.size() + " rules");
      write(cls, run);
    }
    // The last thing a run prints (once per TCK class): where to read what it found.
    System.out.println(
        "kv4j TCK report for "
            + base
            + " ("
            + run.engine
            + "): "
            + run.dir.resolve(base + ".md").toAbsolutePath()
            + " (and "
            + base
            + ".json)");
    System.out.flush();
  }

  /** Appends a line to the class's progress file; each call reaches the OS before it returns. */
  private static void progress(Class<?> cls, String line) {
    Path dir = run(cls).dir;
    try {
      Files.createDirectories(dir);
      Files.writeString(
          dir.resolve(cls.getSimpleName() + ".progress"),
          line + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write TCK progress to " + dir, e);
    }
  }

  /** Rewrites both reports from what is known now: the rules done and the one running. */
  private static void write(Class<?> cls, Run run) {
    List<Outcome> outcomes = new ArrayList<>(run.done);
    if (run.running != null) {
      outcomes.add(run.running);
    }
    if (outcomes.isEmpty()) {
      return;
    }
    outcomes.sort(Comparator.comparing((Outcome o) -> ruleOrder(o.rule())));
    String base = cls.getSimpleName();
    Path dir = run.dir;
    try {
      Files.createDirectories(dir);
      replace(dir.resolve(base + ".md"), markdown(run.engine, cls, outcomes, run.running));
      replace(dir.resolve(base + ".json"), json(run.engine, cls, outcomes));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write TCK report to " + dir, e);
    }
  }

  /** Writes a sibling file, then renames it over the report: a reader never sees half a report. */
  private static void replace(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        file,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  static String markdown(String engine, Class<?> cls, List<Outcome> outcomes, Outcome running) {
    StringBuilder sb = new StringBuilder();
    sb.append("# kv4j TCK report: engine `").append(engine).append("`\n\n");
    sb.append("Test class: `").append(cls.getName()).append("`\n\n");
    sb.append("| passed | failed | skipped | unfinished |\n|---|---|---|---|\n");
    sb.append("| ")
        .append(count(outcomes, "passed"))
        .append(" | ")
        .append(count(outcomes, "failed"))
        .append(" | ")
        .append(count(outcomes, "skipped"))
        .append(" | ")
        .append(count(outcomes, UNFINISHED))
        .append(" |\n\n");
    sb.append(
        "A rule passed proves what its scope says, no more: see the scope column and"
            + " tck/SPEC.md.\n\n");
    sb.append("| rule | level | name | status | reason | scope |\n|---|---|---|---|---|---|\n");
    for (Outcome o : outcomes) {
      sb.append("| r")
          .append(o.rule())
          .append(" | ")
          .append(o.level())
          .append(" | ")
          .append(o.name())
          .append(" | ")
          .append(o.status())
          .append(" | ")
          .append(o.reason() == null ? "" : o.reason().replace("|", "\\|"))
          .append(" | ")
          .append(o.scope().replace("|", "\\|"))
          .append(" |\n");
    }
    if (running != null) {
      sb.append("\nstarted r")
          .append(running.rule())
          .append(" ")
          .append(running.name())
          .append(" (")
          .append(running.reason())
          .append(")\n");
    }
    return sb.toString();
  }

  static String json(String engine, Class<?> cls, List<Outcome> outcomes) {
    StringBuilder sb = new StringBuilder("{\n");
    sb.append("  \"engine\": ").append(quote(engine)).append(",\n");
    sb.append("  \"testClass\": ").append(quote(cls.getName())).append(",\n");
    sb.append("  \"passed\": ").append(count(outcomes, "passed")).append(",\n");
    sb.append("  \"failed\": ").append(count(outcomes, "failed")).append(",\n");
    sb.append("  \"skipped\": ").append(count(outcomes, "skipped")).append(",\n");
    sb.append("  \"unfinished\": ").append(count(outcomes, UNFINISHED)).append(",\n");
    sb.append("  \"rules\": [\n");
    for (int i = 0; i < outcomes.size(); i++) {
      Outcome o = outcomes.get(i);
      sb.append("    {\"rule\": ")
          .append(quote("r" + o.rule()))
          .append(", \"level\": ")
          .append(quote(o.level()))
          .append(", \"name\": ")
          .append(quote(o.name()))
          .append(", \"status\": ")
          .append(quote(o.status()))
          .append(", \"reason\": ")
          .append(o.reason() == null ? "null" : quote(o.reason()))
          .append(", \"scope\": ")
          .append(quote(o.scope()))
          .append(i + 1 < outcomes.size() ? "},\n" : "}\n");
    }
    return sb.append("  ]\n}\n").toString();
  }

  private static volatile Map<String, String> scopes;

  /**
   * Each rule's scope, read from the copy of SPEC.md the kit's jar carries: the text after {@code
   * *Scope:*} in the rule's item. Empty when the copy is missing (the kit run from an IDE without
   * its resources).
   */
  static Map<String, String> scopes() {
    Map<String, String> s = scopes;
    if (s == null) {
      try (InputStream in = TckReport.class.getResourceAsStream("SPEC.md")) {
        s = in == null ? Map.of() : scopes(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        s = Map.of();
      }
      scopes = s;
    }
    return s;
  }

  private static final Pattern ITEM = Pattern.compile("^- \\*\\*(\\d+\\.\\d+)\\*\\*");

  /** Each rule's scope in a SPEC.md text: rule id to the words after its item's Scope mark. */
  static Map<String, String> scopes(String spec) {
    Map<String, String> out = new LinkedHashMap<>();
    String rule = null;
    StringBuilder item = new StringBuilder();
    for (String line : (spec + "\n\n").split("\n", -1)) {
      Matcher m = ITEM.matcher(line);
      boolean ends = m.find() || line.isBlank() || line.startsWith("#") || line.startsWith("- ");
      if (ends && rule != null) {
        String text = item.toString().replaceAll("\\s+", " ");
        int at = text.indexOf("*Scope:*");
        if (at >= 0) {
          out.put(rule, text.substring(at + "*Scope:*".length()).trim());
        }
        rule = null;
      }
      if (m.find(0)) {
        rule = m.group(1);
        item.setLength(0);
      }
      if (rule != null) {
        item.append(' ').append(line);
      }
    }
    return Collections.unmodifiableMap(out);
  }

  private static long count(List<Outcome> outcomes, String status) {
    return outcomes.stream().filter(o -> o.status().equals(status)).count();
  }

  private static String ruleOrder(String rule) {
    String[] p = rule.split("\\.");
    if (p.length != 2) {
      return rule;
    }
    return String.format("%04d.%04d", Integer.parseInt(p[0]), Integer.parseInt(p[1]));
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    String line = nl < 0 ? s : s.substring(0, nl);
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }

  private static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}
