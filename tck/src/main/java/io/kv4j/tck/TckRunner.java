package io.kv4j.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kv4j.spi.StoreProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The kit run from code against an engine chosen at run time: the one entry point of {@code kv4j
 * tck}, the bench's conformance matrix and any tool. It runs {@link UriTck} with the JUnit Platform
 * Launcher in this JVM, handing it the engine URI, the {@link TckEnvironment}, the report directory
 * and the child JVM options as JUnit configuration parameters: nothing global is set, so runs of
 * different engines may follow each other in one JVM.
 *
 * <pre>{@code
 * TckRunner.Result r =
 *     TckRunner.forUri("hashlog:?segment-size=1MiB")
 *         .environment(TckEnvironment.builder().ops(1000).crashRounds(1).build())
 *         .reportDir(Path.of("tck-report"))
 *         .run();
 * if (r.failed() > 0) { ... r.failures() ... }
 * }</pre>
 *
 * <p>The environment given to {@link #environment(TckEnvironment)} is the one the rules run in: a
 * system property of the kit ({@code -Dkv4j.tck.seed=7}) does not override it, so a tool's own
 * option ({@code kv4j tck --seed 5}) is not lost to a property it did not see. A tool that wants
 * the properties applies them itself ({@code env.withOverrides(System::getProperty)}); a run given
 * no environment runs in the defaults with the properties applied.
 *
 * <p>{@link #forProvider(StoreProvider, String)} runs an engine the registry of {@link
 * io.kv4j.Stores} does not hold (a tool's own provider, kept out of the registry every application
 * sees): the rules make the provider from its class with its public no-argument constructor (as
 * {@link java.util.ServiceLoader} would), and so do the child JVMs of the crash, damage and lock
 * rules, which get the class name in the system property {@value UriTck#PROVIDER} beside the config
 * URI and open the URI with that provider instead of looking its engine up.
 */
public final class TckRunner {
  private final String uri;
  private final String providerClass; // blank: the URI's engine is the registry's
  private TckEnvironment environment; // null: the defaults with the kit's system properties
  private Path reportDir = Path.of("target", "kv4j-tck");
  private final List<String> childJvmOptions = new ArrayList<>();
  private final List<TestExecutionListener> listeners = new ArrayList<>();
  private RuleSelection rules; // null: every rule

  private TckRunner(String uri, String providerClass) {
    this.uri = uri;
    this.providerClass = providerClass;
  }

  /**
   * A run against the engine a URI names.
   *
   * @param uri the engine id and its options, such as {@code hashlog:?segment-size=1MiB} (its path
   *     is ignored: each rule gets a fresh directory)
   * @return a runner to configure, then {@link #run()}
   * @throws IllegalArgumentException if the engine is unknown or an option is invalid
   */
  public static TckRunner forUri(String uri) {
    Objects.requireNonNull(uri, "uri");
    UriTck.config(uri, Path.of("kv4j-tck-check"), io.kv4j.Durability.SYNC); // fails early
    return new TckRunner(uri, "");
  }

  /**
   * A run against an engine given by its provider, which the registry need not hold. The rules and
   * the child JVMs make their own provider of the same class with its public no-argument
   * constructor (providers are stateless), so the class must be on this JVM's class path.
   *
   * @param provider the engine; a public class with a public no-argument constructor
   * @param uri the engine's id (or an alias) and its options, such as {@code
   *     mvstore:?cache-size=64}; its path is ignored
   * @return a runner to configure, then {@link #run()}
   * @throws IllegalArgumentException if the provider's class cannot be made that way, or the URI
   *     names another engine or an invalid option
   */
  public static TckRunner forProvider(StoreProvider provider, String uri) {
    Objects.requireNonNull(provider, "provider");
    Objects.requireNonNull(uri, "uri");
    String className = provider.getClass().getName();
    StoreProvider made = GivenEngine.load(className); // fails early, as the rules would
    UriTck.config(uri, made, Path.of("kv4j-tck-check"), io.kv4j.Durability.SYNC);
    return new TckRunner(uri, className);
  }

  /**
   * Sets the environment the rules run in, as given: no system property overrides it. Without this,
   * the rules run in {@link TckEnvironment#defaults()} with the kit's system properties ({@code
   * -Dkv4j.tck.*}) applied.
   *
   * @param env the environment
   * @return this runner
   */
  public TckRunner environment(TckEnvironment env) {
    this.environment = Objects.requireNonNull(env, "environment");
    return this;
  }

  /**
   * Sets where the report ({@code UriTck.md}, {@code .json}, {@code .progress}) goes (default
   * {@code target/kv4j-tck}).
   *
   * @param dir the directory, created if absent
   * @return this runner
   */
  public TckRunner reportDir(Path dir) {
    this.reportDir = Objects.requireNonNull(dir, "reportDir");
    return this;
  }

  /**
   * Adds JVM options for the crash, damage and lock rules' child JVMs (besides this JVM's flags and
   * those the bundled engines need).
   *
   * @param options options such as {@code --add-opens=java.base/java.nio=ALL-UNNAMED}
   * @return this runner
   */
  public TckRunner childJvmOptions(List<String> options) {
    for (String o : options) {
      childJvmOptions.add(Objects.requireNonNull(o, "option"));
    }
    return this;
  }

  /**
   * Runs only these rules, as {@link TckRules} does for a test class: the others are left out of
   * the run, its counts and its report.
   *
   * @param rules rule numbers of {@code tck/SPEC.md} ({@code "4.6"}) or group numbers ({@code
   *     "13"}, every rule of the group)
   * @return this runner
   * @throws IllegalArgumentException if none is given, or one is malformed or names no rule of the
   *     kit
   */
  public TckRunner rules(String... rules) {
    RuleSelection selection = RuleSelection.of(rules);
    selection.check(UriTck.class);
    this.rules = selection;
    return this;
  }

  /**
   * Adds a listener told of each rule as it starts and ends (e.g. to print progress).
   *
   * @param listener a JUnit Platform listener
   * @return this runner
   */
  public TckRunner listener(TestExecutionListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /**
   * What a run found.
   *
   * @param uri the engine URI
   * @param environment the environment the rules ran in
   * @param found the rules found
   * @param passed the rules passed
   * @param failed the rules failed, plus failures outside a rule (class set-up)
   * @param skipped the rules skipped (a feature the engine does not declare)
   * @param failures one line per failure: the rule's name and the first line of its message
   * @param report the markdown report (the JSON report is beside it)
   * @param took how long the run took
   */
  public record Result(
      String uri,
      TckEnvironment environment,
      long found,
      long passed,
      long failed,
      long skipped,
      List<String> failures,
      Path report,
      Duration took) {}

  /**
   * Runs every rule, or those of {@link #rules(String...)}.
   *
   * @return what it found
   * @throws IllegalArgumentException naming the property, if no environment was given and a kit's
   *     system property holds no valid value
   */
  public Result run() {
    TckEnvironment env =
        environment != null
            ? environment
            : TckEnvironment.defaults().withOverrides(System::getProperty);
    Map<String, String> settings = new LinkedHashMap<>(env.toOverrides());
    // No seed: a blank one, else the kit would fall back to a -Dkv4j.tck.seed the caller overruled.
    settings.putIfAbsent(TckEnvironment.SEED, "");
    List<String> extra = new ArrayList<>(childJvmOptions);
    String fromProperty = System.getProperty(UriTck.CHILD_JVM_OPTIONS);
    if (fromProperty != null && !fromProperty.isBlank()) {
      extra.add(fromProperty.trim());
    }
    LauncherDiscoveryRequestBuilder request =
        LauncherDiscoveryRequestBuilder.request()
            .selectors(selectClass(UriTck.class))
            .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "false")
            .configurationParameter(UriTck.PROPERTY, uri)
            // Blank for a registry engine, so a -Dkv4j.tck.provider of this JVM changes nothing.
            .configurationParameter(UriTck.PROVIDER, providerClass)
            .configurationParameter(TckReport.REPORT_DIR, reportDir.toString())
            .configurationParameter(UriTck.CHILD_JVM_OPTIONS, String.join(" ", extra))
            .configurationParameters(settings);
    if (rules != null) {
      request.filters(new TckRuleFilter(rules));
    }
    LauncherDiscoveryRequest built = request.build();
    Counter counter = new Counter();
    List<TestExecutionListener> all = new ArrayList<>(listeners);
    all.add(counter);
    long started = System.nanoTime();
    Launcher launcher = LauncherFactory.create();
    launcher.execute(built, all.toArray(new TestExecutionListener[0]));
    return new Result(
        uri,
        env,
        counter.found,
        counter.passed,
        counter.failed,
        counter.skipped,
        Collections.unmodifiableList(counter.failures),
        reportDir.resolve(UriTck.class.getSimpleName() + ".md"),
        Duration.ofNanos(System.nanoTime() - started));
  }

  /** Counts the rules' outcomes; a failure outside a rule (class set-up) counts as one failure. */
  private static final class Counter implements TestExecutionListener {
    long found;
    long passed;
    long failed;
    long skipped;
    final List<String> failures = new ArrayList<>();

    @Override
    public synchronized void executionSkipped(TestIdentifier id, String reason) {
      if (id.isTest()) {
        found++;
        skipped++;
      }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
      if (id.isTest()) {
        found++;
      }
      switch (result.getStatus()) {
        case SUCCESSFUL -> passed += id.isTest() ? 1 : 0;
        case ABORTED -> skipped += id.isTest() ? 1 : 0;
        case FAILED -> {
          failed++;
          String message =
              result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("failed");
          int nl = message.indexOf('\n');
          failures.add(id.getDisplayName() + ": " + (nl < 0 ? message : message.substring(0, nl)));
        }
      }
    }
  }
}
