package io.kv4j.cli;

import io.kv4j.Stores;
import io.kv4j.tck.TckEnvironment;
import io.kv4j.tck.TckRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Runs the compatibility kit against an engine and prints the conformance report: the kit's {@link
 * TckRunner} in this JVM, with a {@link TckEnvironment} built from the options.
 */
@Command(
    name = "tck",
    mixinStandardHelpOptions = true,
    description = {
      "Run the kv4j compatibility kit (TCK) against an engine on the classpath and print the"
          + " conformance report. Exit code 6 if a rule fails.",
      "The URI names the engine and its options; its path is ignored, each rule gets a fresh"
          + " temporary directory. Example: kv4j tck 'hashlog:?segment-size=1MiB'"
    })
final class TckCommand implements Runnable {
  @Spec CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "URI",
      description = "The engine and its options, e.g. hashlog: or sqlite:?page-size=8KiB.")
  String uri;

  @Option(
      names = "--ops",
      paramLabel = "N",
      description = "Random operations per model rule (TCK default 3000).")
  Integer ops;

  @Option(
      names = "--threads",
      paramLabel = "N",
      description = "Threads in concurrency rules (TCK default 4).")
  Integer threads;

  @Option(
      names = "--crash-rounds",
      paramLabel = "N",
      description = "Kill-and-recover rounds per durability (TCK default 2).")
  Integer crashRounds;

  @Option(
      names = "--many-keys",
      paramLabel = "N",
      description = "Keys in the many-keys rules (TCK default 100000).")
  Integer manyKeys;

  @Option(
      names = "--stress-threads",
      paramLabel = "N",
      description = "Threads in the stress rules 8.5-8.8 and 10.12 (TCK default 8).")
  Integer stressThreads;

  @Option(
      names = "--stress-ops",
      paramLabel = "N",
      description =
          "Operations per thread in the stress rules (TCK default 2000; rule 8.8 writes 8 times as"
              + " many keys when the engine has ATOMIC_BATCH).")
  Integer stressOps;

  @Option(names = "--seed", paramLabel = "S", description = "Replay a seed from a failure.")
  Long seed;

  @Option(
      names = "--report-dir",
      paramLabel = "DIR",
      description =
          "Keep the report (UriTck.md and .json) in DIR (default: a temporary directory).")
  Path reportDir;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    int colon = uri.indexOf(':');
    String engine = colon < 0 ? uri : uri.substring(0, colon);
    Stores.provider(engine); // unknown engine: usage error listing the available ones
    TckRunner runner = TckRunner.forUri(uri); // validates the options now rather than in every rule
    TckEnvironment env = environment();

    Path dir;
    try {
      dir =
          reportDir != null
              ? Files.createDirectories(reportDir)
              : Files.createTempDirectory("kv4j-tck-report-");
    } catch (IOException e) {
      throw new CliException(ExitCode.IO, "cannot create the report directory: " + e);
    }

    out.println("kv4j TCK against '" + uri + "'");
    out.flush();
    TckRunner.Result r = runner.environment(env).reportDir(dir).listener(new Live(out)).run();

    Path md = r.report();
    out.println();
    if (Files.isRegularFile(md)) {
      try {
        out.println(Files.readString(md, StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new CliException(ExitCode.IO, "cannot read the report " + md + ": " + e);
      }
    }
    String name = md.getFileName().toString();
    Path json = md.resolveSibling(name.substring(0, name.length() - ".md".length()) + ".json");
    out.printf(
        Locale.ROOT,
        "%d rules: %d passed, %d failed, %d skipped%nreport: %s (and %s)%n",
        r.found(),
        r.passed(),
        r.failed(),
        r.skipped(),
        md.toAbsolutePath(),
        json.toAbsolutePath());
    out.flush();
    // Failures first: a failure outside any rule (the kit's set-up) runs no rule at all.
    if (r.failed() > 0) {
      throw new CliException(
          ExitCode.CHECK_FAILED, "engine '" + engine + "' failed " + r.failed() + " TCK rule(s)");
    }
    if (r.found() == 0) {
      throw new CliException(ExitCode.INTERNAL, "the TCK found no rules to run");
    }
  }

  /**
   * The kit's defaults, then its system properties ({@code -Dkv4j.tck.seed=...}, as a failure
   * message says to replay), then the options given on the command line, which win: TckRunner runs
   * the environment as given.
   */
  private TckEnvironment environment() {
    TckEnvironment.Builder b;
    try {
      b = TckEnvironment.defaults().withOverrides(System::getProperty).toBuilder();
      set(ops, b::ops);
      set(threads, b::threads);
      set(crashRounds, b::crashRounds);
      set(manyKeys, b::manyKeys);
      set(stressThreads, b::stressThreads);
      set(stressOps, b::stressOps);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
    if (seed != null) {
      b.seed(seed);
    }
    return b.build();
  }

  private static void set(Integer value, IntConsumer setter) {
    if (value != null) {
      setter.accept(value);
    }
  }

  /** Prints each rule's outcome as it finishes. */
  private static final class Live implements TestExecutionListener {
    private final PrintWriter out;
    private final AtomicLong done = new AtomicLong();

    Live(PrintWriter out) {
      this.out = out;
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
      if (id.isTest()) {
        line("skipped", id, reason);
      }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
      if (!id.isTest()) {
        if (result.getStatus() == TestExecutionResult.Status.FAILED) {
          line("FAILED", id, message(result.getThrowable()));
        }
        return;
      }
      switch (result.getStatus()) {
        case SUCCESSFUL -> line("passed", id, null);
        case ABORTED -> line("skipped", id, message(result.getThrowable()));
        case FAILED -> line("FAILED", id, message(result.getThrowable()));
      }
    }

    private static String message(Optional<Throwable> t) {
      return t.map(x -> Main.oneLine(x.getMessage())).orElse(null);
    }

    private synchronized void line(String status, TestIdentifier id, String reason) {
      out.printf(
          Locale.ROOT,
          "%4d %-7s %s%s%n",
          done.incrementAndGet(),
          status,
          id.getDisplayName(),
          reason == null ? "" : ": " + reason);
      out.flush();
    }
  }
}
