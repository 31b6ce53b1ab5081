package io.kv4j.tck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestWatcher;
import org.opentest4j.TestAbortedException;

/**
 * Collects each rule's outcome and writes a conformance summary per TCK class, as markdown and
 * JSON, to {@code target/kv4j-tck/} (or the directory in {@code -Dkv4j.tck.reportDir}).
 */
final class TckReport implements TestWatcher, AfterAllCallback, TestExecutionExceptionHandler {
  private static final Pattern NAME = Pattern.compile("(required|optional)_r(\\d+)_(\\d+)_(\\w+)");

  /** One rule's outcome. */
  record Outcome(String rule, String level, String name, String status, String reason) {}

  private static final Map<Class<?>, List<Outcome>> RESULTS = new ConcurrentHashMap<>();
  private static final Map<Class<?>, String> ENGINES = new ConcurrentHashMap<>();

  /** Makes every failure name its rule, also an unexpected exception thrown by the engine. */
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
    throw new AssertionError(
        tag + " " + x.group(4) + ": the engine threw " + t.getClass().getName() + ": " + msg, t);
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

  private static void record(ExtensionContext context, String status, String reason) {
    Method m = context.getRequiredTestMethod();
    Matcher x = NAME.matcher(m.getName());
    String rule = x.matches() ? x.group(2) + "." + x.group(3) : "?";
    String level = x.matches() ? x.group(1) : "?";
    String name = x.matches() ? x.group(4) : m.getName();
    if (context.getTestInstance().orElse(null) instanceof TckBase tck) {
      try {
        ENGINES.putIfAbsent(context.getRequiredTestClass(), tck.engine());
      } catch (RuntimeException e) {
        ENGINES.putIfAbsent(context.getRequiredTestClass(), "unresolved: " + e.getMessage());
      }
    }
    RESULTS
        .computeIfAbsent(context.getRequiredTestClass(), k -> new ArrayList<>())
        .add(new Outcome(rule, level, name, status, reason == null ? null : firstLine(reason)));
  }

  @Override
  public void afterAll(ExtensionContext context) {
    Class<?> cls = context.getRequiredTestClass();
    List<Outcome> outcomes = RESULTS.remove(cls);
    if (outcomes == null || outcomes.isEmpty()) {
      return;
    }
    String engine = ENGINES.getOrDefault(cls, "?");
    outcomes.sort(Comparator.comparing((Outcome o) -> ruleOrder(o.rule())));
    Path dir = Path.of(System.getProperty("kv4j.tck.reportDir", "target/kv4j-tck"));
    String base = cls.getSimpleName();
    try {
      Files.createDirectories(dir);
      Files.writeString(
          dir.resolve(base + ".md"), markdown(engine, cls, outcomes), StandardCharsets.UTF_8);
      Files.writeString(
          dir.resolve(base + ".json"), json(engine, cls, outcomes), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write TCK report to " + dir, e);
    }
    // The last thing a run prints (once per TCK class): where to read what it found.
    System.out.println(
        "kv4j TCK report for "
            + cls.getSimpleName()
            + " ("
            + engine
            + "): "
            + dir.resolve(base + ".md").toAbsolutePath()
            + " (and "
            + base
            + ".json)");
    System.out.flush();
  }

  static String markdown(String engine, Class<?> cls, List<Outcome> outcomes) {
    StringBuilder sb = new StringBuilder();
    sb.append("# kv4j TCK report: engine `").append(engine).append("`\n\n");
    sb.append("Test class: `").append(cls.getName()).append("`\n\n");
    sb.append("| passed | failed | skipped |\n|---|---|---|\n");
    sb.append("| ")
        .append(count(outcomes, "passed"))
        .append(" | ")
        .append(count(outcomes, "failed"))
        .append(" | ")
        .append(count(outcomes, "skipped"))
        .append(" |\n\n");
    sb.append("| rule | level | name | status | reason |\n|---|---|---|---|---|\n");
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
          .append(" |\n");
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
          .append(i + 1 < outcomes.size() ? "},\n" : "}\n");
    }
    return sb.append("  ]\n}\n").toString();
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
