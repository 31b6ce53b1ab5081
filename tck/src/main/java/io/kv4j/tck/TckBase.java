package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.StoreProvider;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state of one rule run and the engine's hooks: the temporary directory, the stores a rule
 * opened (closed after each rule), the engine's config and {@link TckEnvironment} with its
 * overrides, and the hooks an engine's test may override ({@code dataLivesInLocationFiles}, {@code
 * isDiagnosticFile}, {@code failBackgroundWork}, {@code childJvmOptions}). The rules themselves are
 * in the group classes ({@code Group01Basics} ...), which reach this through {@link RuleGroup}.
 */
@ExtendWith(TckReport.class)
abstract class TckBase {
  @TempDir Path tempDir;

  private final List<Store> opened = new ArrayList<>();
  // Every directory the rule asked config() for, in order; rules may ask from several threads.
  private final Set<Path> configured = java.util.Collections.synchronizedSet(new LinkedHashSet<>());
  private final Map<Store, StoreConfig> configs = new java.util.IdentityHashMap<>();
  private StoreProvider provider;
  private TckEnvironment env; // environment() with the overrides, computed at first use
  private java.util.function.Function<String, String> overrides = System::getProperty;

  /**
   * How to open the engine under test.
   *
   * @param directory a directory the store owns; it may not exist yet
   * @param durability the durability to open with
   * @return the config
   */
  protected abstract StoreConfig config(Path directory, Durability durability);

  /** See {@link StoreTck#environment()}. */
  protected TckEnvironment environment() {
    return TckEnvironment.defaults();
  }

  /** See {@link StoreTck#dataLivesInLocationFiles()}. */
  protected boolean dataLivesInLocationFiles() {
    return env().dataLivesInLocationFiles();
  }

  /**
   * Where the overrides of {@link #environment()} come from: JUnit's configuration parameters
   * (which fall back to system properties), set by {@link TckReport} before each rule.
   */
  final void overrides(java.util.function.Function<String, String> lookup) {
    overrides = lookup;
    env = null;
  }

  /**
   * A run parameter that is not part of the environment (the engine URI of {@link UriTck}, extra
   * child JVM options): the JUnit configuration parameter or system property of that name.
   */
  final String parameter(String name) {
    return overrides.apply(name);
  }

  /** Where the report, crash reports of child JVMs and the like go. */
  final Path reportDir() {
    return TckReport.dir(overrides);
  }

  /** The environment the rules run in: {@link #environment()} with the overrides applied. */
  final TckEnvironment env() {
    if (env == null) {
      TckEnvironment e = environment();
      if (e == null) {
        throw new IllegalStateException(getClass().getName() + ".environment() returned null");
      }
      env = e.withOverrides(overrides);
    }
    return env;
  }

  /**
   * How long the kit waits for threads it started to meet and to finish ({@link
   * TckEnvironment#threadTimeout()}). A deadlocked engine fails the rule, never hangs it.
   */
  java.time.Duration threadTimeout() {
    return env().threadTimeout();
  }

  /**
   * How long one rule may run, and then how long closing its stores may take ({@link
   * TckEnvironment#ruleTimeout()}). An engine that hangs a rule, even deaf to interrupts, fails it
   * with the stuck thread's stack (see {@link TckReport}).
   */
  java.time.Duration ruleTimeout() {
    return env().ruleTimeout();
  }

  /** The seed of a rule with a fixed default: the environment's, else {@code fixed}. */
  long seed(long fixed) {
    return env().seed().orElse(fixed);
  }

  /**
   * Closes the stores the rule opened, then hands {@link #afterRule} every directory it asked a
   * config for (even if a close failed).
   */
  @AfterEach
  void closeOpenedStores() throws Exception {
    try {
      for (Store s : opened) {
        s.close();
      }
      opened.clear();
    } finally {
      List<Path> dirs;
      synchronized (configured) {
        dirs = List.copyOf(configured);
        configured.clear();
      }
      afterRule(dirs);
    }
  }

  /**
   * Called after each rule, its stores closed, with the directories of every config it asked for;
   * {@link ServerTck} drops what they left on the server. Does nothing here: an embedded engine's
   * data is under the rule's temporary directory, which JUnit deletes.
   */
  void afterRule(List<Path> directories) throws Exception {}

  /** {@link #config(Path, Durability)}, the directory remembered for {@link #afterRule}. */
  final StoreConfig configAt(Path directory, Durability durability) {
    configured.add(directory);
    return config(directory, durability);
  }

  /** The store directory used by default in a test. */
  Path dir() {
    return tempDir.resolve("store");
  }

  StoreConfig config(Durability durability) {
    return configAt(dir(), durability);
  }

  StoreProvider provider() {
    if (provider == null) {
      provider = configAt(dir(), Durability.BUFFERED).provider();
    }
    return provider;
  }

  String engine() {
    return provider().id();
  }

  boolean has(Feature f) {
    return provider().features().contains(f);
  }

  /** Skips the test, naming the missing feature, unless the engine declares it. */
  void require(String rule, Feature f) {
    Assumptions.assumeTrue(
        has(f), "[" + rule + "] skipped: engine '" + engine() + "' does not declare " + f);
  }

  Store open() {
    return open(config(Durability.BUFFERED));
  }

  Store open(Durability d) {
    return open(config(d));
  }

  Store open(StoreConfig c) {
    Store s = Stores.open(c);
    opened.add(s);
    configs.put(s, c);
    return s;
  }

  /** Closes a store and forgets it. */
  void close(Store s) {
    s.close();
    opened.remove(s);
  }

  /** The config a store was opened with. */
  StoreConfig configOf(Store s) {
    return configs.get(s);
  }

  /** Closes and reopens with the same config. */
  Store reopen(Store s) {
    StoreConfig c = configs.remove(s);
    close(s);
    return open(c);
  }

  /**
   * The seed of the randomised rules: the environment's ({@code kv4j.tck.seed}, to replay a
   * failure) when set, else a fresh one.
   */
  long randomSeed() {
    return env().seed().orElseGet(System::nanoTime);
  }

  /**
   * JVM options handed to the child: the module and native-access flags and system properties of
   * this JVM. Override to add what your engine needs.
   *
   * @return the options
   */
  protected List<String> childJvmOptions() {
    List<String> in = ManagementFactory.getRuntimeMXBean().getInputArguments();
    List<String> out = new ArrayList<>();
    for (int i = 0; i < in.size(); i++) {
      String a = in.get(i);
      if ((a.equals("--add-opens") || a.equals("--add-exports")) && i + 1 < in.size()) {
        out.add(a);
        out.add(in.get(++i));
      } else if (a.startsWith("--add-opens=")
          || a.startsWith("--add-exports=")
          || a.startsWith("--enable-native-access")
          || a.startsWith("--sun-misc-unsafe-memory-access")
          || (a.startsWith("-D")
              && !a.startsWith("-Dsurefire")
              && !a.startsWith("-Dbasedir")
              // The engine's provider class is the rule's to pass (see GivenEngine), not this
              // JVM's.
              && !a.startsWith("-D" + UriTck.PROVIDER + "="))) {
        out.add(a);
      }
    }
    out.add("-Xmx256m");
    return out;
  }

  /** See {@link StoreTck#isDiagnosticFile(String)}. */
  protected boolean isDiagnosticFile(String fileName) {
    return false;
  }

  /** See {@link StoreTck#isLockFile(String)}. */
  protected boolean isLockFile(String fileName) {
    return false;
  }

  /** See {@link StoreTck#failBackgroundWork(Store)}. */
  protected boolean failBackgroundWork(Store store) {
    return false;
  }

  /**
   * How long the child JVM of one damage rule may run before it is killed and the rule fails:
   * {@code kv4j.tck.childTimeoutSeconds}, default 300.
   */
  Duration damageChildTimeout() {
    return env().childTimeout();
  }
}
