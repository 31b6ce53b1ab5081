package io.kv4j.tck;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * How deep and how long the kit runs, and what it may assume about the engine's data: an immutable
 * value an engine's test returns from {@link StoreTck#environment()} (or a tool hands to {@link
 * TckRunner}), built with a validating {@link Builder}.
 *
 * <p>Every setting can still be overridden for one run, to replay a failure or to soak, by a JUnit
 * configuration parameter or a system property of the same name ({@code -Dkv4j.tck.seed=8812734});
 * an override wins over the environment the test returns (not over one given to {@link TckRunner},
 * which runs as given). The names, defaults and units:
 *
 * <table>
 *   <caption>settings</caption>
 *   <tr><th>setting</th><th>override</th><th>default</th><th>what</th></tr>
 *   <tr><td>{@link #ops()}</td><td>{@code kv4j.tck.ops}</td><td>3000</td><td>random operations of
 *       the model rules (11.1, 13.1, 17.1)</td></tr>
 *   <tr><td>{@link #threads()}</td><td>{@code kv4j.tck.threads}</td><td>4</td><td>threads of the
 *       concurrency rules 8.1-8.4</td></tr>
 *   <tr><td>{@link #crashRounds()}</td><td>{@code kv4j.tck.crashRounds}</td><td>2</td><td>kill -9
 *       rounds per durability of the crash rules</td></tr>
 *   <tr><td>{@link #manyKeys()}</td><td>{@code kv4j.tck.manyKeys}</td><td>100000</td><td>keys of
 *       rule 1.9</td></tr>
 *   <tr><td>{@link #stressThreads()}</td><td>{@code kv4j.tck.stressThreads}</td><td>8</td>
 *       <td>threads of the stress rules (8.5-8.8, 10.12)</td></tr>
 *   <tr><td>{@link #stressOps()}</td><td>{@code kv4j.tck.stressOps}</td><td>2000</td>
 *       <td>operations per thread of the stress rules</td></tr>
 *   <tr><td>{@link #seed()}</td><td>{@code kv4j.tck.seed}</td><td>none</td><td>the seed of every
 *       randomised rule; none: each rule's own (fixed or fresh, printed on failure)</td></tr>
 *   <tr><td>{@link #threadTimeout()}</td><td>{@code kv4j.tck.timeoutSeconds}</td><td>600 s</td>
 *       <td>how long the kit waits for a concurrency rule's threads</td></tr>
 *   <tr><td>{@link #ruleTimeout()}</td><td>{@code kv4j.tck.ruleTimeoutSeconds}</td><td>1800 s</td>
 *       <td>how long one rule, then closing its stores, may take</td></tr>
 *   <tr><td>{@link #childTimeout()}</td><td>{@code kv4j.tck.childTimeoutSeconds}</td><td>300 s</td>
 *       <td>how long a damage or crash rule's child JVM may run</td></tr>
 *   <tr><td>{@link #dataLivesInLocationFiles()}</td><td>{@code
 *       kv4j.tck.dataLivesInLocationFiles}</td><td>true</td><td>whether the engine's data is in
 *       files under the store path (false: a server engine; rules 10.7 and 12.x skip)</td></tr>
 * </table>
 */
public final class TckEnvironment {
  /** Override of {@link #ops()}. */
  public static final String OPS = "kv4j.tck.ops";

  /** Override of {@link #threads()}. */
  public static final String THREADS = "kv4j.tck.threads";

  /** Override of {@link #crashRounds()}. */
  public static final String CRASH_ROUNDS = "kv4j.tck.crashRounds";

  /** Override of {@link #manyKeys()}. */
  public static final String MANY_KEYS = "kv4j.tck.manyKeys";

  /** Override of {@link #stressThreads()}. */
  public static final String STRESS_THREADS = "kv4j.tck.stressThreads";

  /** Override of {@link #stressOps()}. */
  public static final String STRESS_OPS = "kv4j.tck.stressOps";

  /** Override of {@link #seed()}. */
  public static final String SEED = "kv4j.tck.seed";

  /** Override of {@link #threadTimeout()}, in seconds. */
  public static final String THREAD_TIMEOUT = "kv4j.tck.timeoutSeconds";

  /** Override of {@link #ruleTimeout()}, in seconds. */
  public static final String RULE_TIMEOUT = "kv4j.tck.ruleTimeoutSeconds";

  /** Override of {@link #childTimeout()}, in seconds. */
  public static final String CHILD_TIMEOUT = "kv4j.tck.childTimeoutSeconds";

  /** Override of {@link #dataLivesInLocationFiles()}. */
  public static final String LOCAL_DATA = "kv4j.tck.dataLivesInLocationFiles";

  private static final TckEnvironment DEFAULTS = new Builder().build();

  private final int ops;
  private final int threads;
  private final int crashRounds;
  private final int manyKeys;
  private final int stressThreads;
  private final int stressOps;
  private final Long seed;
  private final Duration threadTimeout;
  private final Duration ruleTimeout;
  private final Duration childTimeout;
  private final boolean localData;

  private TckEnvironment(Builder b) {
    ops = b.ops;
    threads = b.threads;
    crashRounds = b.crashRounds;
    manyKeys = b.manyKeys;
    stressThreads = b.stressThreads;
    stressOps = b.stressOps;
    seed = b.seed;
    threadTimeout = b.threadTimeout;
    ruleTimeout = b.ruleTimeout;
    childTimeout = b.childTimeout;
    localData = b.localData;
  }

  /**
   * The defaults (see the class comment).
   *
   * @return the default environment
   */
  public static TckEnvironment defaults() {
    return DEFAULTS;
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder holding this environment's settings.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.ops = ops;
    b.threads = threads;
    b.crashRounds = crashRounds;
    b.manyKeys = manyKeys;
    b.stressThreads = stressThreads;
    b.stressOps = stressOps;
    b.seed = seed;
    b.threadTimeout = threadTimeout;
    b.ruleTimeout = ruleTimeout;
    b.childTimeout = childTimeout;
    b.localData = localData;
    return b;
  }

  /**
   * This environment with the overrides {@code lookup} finds (a JUnit configuration parameter, a
   * system property: see the class comment for the names); a blank value is no override.
   *
   * @param lookup the value of an override by name, or null when not set
   * @return the environment with the overrides applied
   * @throws IllegalArgumentException naming the override if a value is not a valid one
   */
  public TckEnvironment withOverrides(Function<String, String> lookup) {
    Objects.requireNonNull(lookup, "lookup");
    Builder b = toBuilder();
    b.ops(intOf(lookup, OPS, ops));
    b.threads(intOf(lookup, THREADS, threads));
    b.crashRounds(intOf(lookup, CRASH_ROUNDS, crashRounds));
    b.manyKeys(intOf(lookup, MANY_KEYS, manyKeys));
    b.stressThreads(intOf(lookup, STRESS_THREADS, stressThreads));
    b.stressOps(intOf(lookup, STRESS_OPS, stressOps));
    String s = value(lookup, SEED);
    if (s != null) {
      b.seed(parse(SEED, s, Long::parseLong));
    }
    b.threadTimeout(secondsOf(lookup, THREAD_TIMEOUT, threadTimeout));
    b.ruleTimeout(secondsOf(lookup, RULE_TIMEOUT, ruleTimeout));
    b.childTimeout(secondsOf(lookup, CHILD_TIMEOUT, childTimeout));
    String local = value(lookup, LOCAL_DATA);
    if (local != null) {
      if (!local.equals("true") && !local.equals("false")) {
        throw new IllegalArgumentException(
            LOCAL_DATA + " must be true or false, not '" + local + "'");
      }
      b.dataLivesInLocationFiles(Boolean.parseBoolean(local));
    }
    return b.build();
  }

  /**
   * This environment as the overrides that reproduce it ({@link #withOverrides} of them on any
   * environment gives this one), e.g. to hand it to a JUnit launcher as configuration parameters.
   *
   * @return override name to value, in the order of the class comment's table
   */
  public Map<String, String> toOverrides() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(OPS, Integer.toString(ops));
    m.put(THREADS, Integer.toString(threads));
    m.put(CRASH_ROUNDS, Integer.toString(crashRounds));
    m.put(MANY_KEYS, Integer.toString(manyKeys));
    m.put(STRESS_THREADS, Integer.toString(stressThreads));
    m.put(STRESS_OPS, Integer.toString(stressOps));
    if (seed != null) {
      m.put(SEED, Long.toString(seed));
    }
    m.put(THREAD_TIMEOUT, Long.toString(threadTimeout.toSeconds()));
    m.put(RULE_TIMEOUT, Long.toString(ruleTimeout.toSeconds()));
    m.put(CHILD_TIMEOUT, Long.toString(childTimeout.toSeconds()));
    m.put(LOCAL_DATA, Boolean.toString(localData));
    return m;
  }

  private static String value(Function<String, String> lookup, String name) {
    String v = lookup.apply(name);
    return v == null || v.isBlank() ? null : v.trim();
  }

  private static int intOf(Function<String, String> lookup, String name, int current) {
    String v = value(lookup, name);
    return v == null ? current : parse(name, v, Integer::parseInt);
  }

  private static Duration secondsOf(Function<String, String> lookup, String name, Duration d) {
    String v = value(lookup, name);
    return v == null ? d : Duration.ofSeconds(parse(name, v, Long::parseLong));
  }

  private static <T> T parse(String name, String v, Function<String, T> parser) {
    try {
      return parser.apply(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a whole number, not '" + v + "'", e);
    }
  }

  /**
   * Random operations of the model rules (11.1, 13.1, 17.1).
   *
   * @return at least 1
   */
  public int ops() {
    return ops;
  }

  /**
   * Threads of the concurrency rules 8.1-8.4.
   *
   * @return at least 1
   */
  public int threads() {
    return threads;
  }

  /**
   * Kill -9 rounds per durability of the crash rules.
   *
   * @return at least 1
   */
  public int crashRounds() {
    return crashRounds;
  }

  /**
   * Keys written by rule 1.9.
   *
   * @return at least 1
   */
  public int manyKeys() {
    return manyKeys;
  }

  /**
   * Threads of the stress rules (8.5-8.8, 10.12).
   *
   * @return at least 1
   */
  public int stressThreads() {
    return stressThreads;
  }

  /**
   * Operations per thread of the stress rules.
   *
   * @return at least 1
   */
  public int stressOps() {
    return stressOps;
  }

  /**
   * The seed of every randomised rule, when set.
   *
   * @return the seed, or empty: each rule uses its own (fixed or fresh) and prints it on failure
   */
  public OptionalLong seed() {
    return seed == null ? OptionalLong.empty() : OptionalLong.of(seed);
  }

  /**
   * How long the kit waits for a concurrency rule's threads to meet and to finish.
   *
   * @return a positive duration
   */
  public Duration threadTimeout() {
    return threadTimeout;
  }

  /**
   * How long one rule may run, and then how long closing its stores may take.
   *
   * @return a positive duration
   */
  public Duration ruleTimeout() {
    return ruleTimeout;
  }

  /**
   * How long a damage rule's child JVM may run; also the backstop of a crash rule's child JVM,
   * which is killed sooner only when it made no progress (no line, no acknowledgement) for 120 s.
   *
   * @return a positive duration
   */
  public Duration childTimeout() {
    return childTimeout;
  }

  /**
   * Whether the engine's data lives in files under the store's path: true for an embedded engine;
   * false for a server engine, whose path only names a table or key prefix (rules 10.7 and 12.x are
   * then skipped with that reason).
   *
   * @return whether the damage rules may damage the files under the path
   */
  public boolean dataLivesInLocationFiles() {
    return localData;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TckEnvironment e && toOverrides().equals(e.toOverrides());
  }

  @Override
  public int hashCode() {
    return toOverrides().hashCode();
  }

  @Override
  public String toString() {
    return "TckEnvironment" + toOverrides();
  }

  /** Builds a {@link TckEnvironment}; every setter checks its value. */
  public static final class Builder {
    private int ops = 3000;
    private int threads = 4;
    private int crashRounds = 2;
    private int manyKeys = 100_000;
    private int stressThreads = 8;
    private int stressOps = 2000;
    private Long seed;
    private Duration threadTimeout = Duration.ofSeconds(600);
    private Duration ruleTimeout = Duration.ofSeconds(1800);
    private Duration childTimeout = Duration.ofSeconds(300);
    private boolean localData = true;

    private Builder() {}

    private static int atLeast(String what, int min, int v) {
      if (v < min) {
        throw new IllegalArgumentException(what + " must be at least " + min + ", not " + v);
      }
      return v;
    }

    private static Duration positive(String what, Duration d) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.isZero() || d.toSeconds() < 1) {
        throw new IllegalArgumentException(what + " must be at least 1 s, not " + d);
      }
      return d;
    }

    /**
     * Sets {@link TckEnvironment#ops()}.
     *
     * @param n at least 1
     * @return this builder
     */
    public Builder ops(int n) {
      ops = atLeast("ops (" + OPS + ")", 1, n);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#threads()}.
     *
     * @param n at least 1
     * @return this builder
     */
    public Builder threads(int n) {
      threads = atLeast("threads (" + THREADS + ")", 1, n);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#crashRounds()}.
     *
     * @param n at least 1
     * @return this builder
     */
    public Builder crashRounds(int n) {
      crashRounds = atLeast("crash rounds (" + CRASH_ROUNDS + ")", 1, n);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#manyKeys()}.
     *
     * @param n at least 1
     * @return this builder
     */
    public Builder manyKeys(int n) {
      manyKeys = atLeast("many keys (" + MANY_KEYS + ")", 1, n);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#stressThreads()}.
     *
     * @param n at least 1
     * @return this builder
     */
    public Builder stressThreads(int n) {
      stressThreads = atLeast("stress threads (" + STRESS_THREADS + ")", 1, n);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#stressOps()}.
     *
     * @param n at least 1
     * @return this builder
     */
    public Builder stressOps(int n) {
      stressOps = atLeast("stress ops (" + STRESS_OPS + ")", 1, n);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#seed()}: every randomised rule uses it.
     *
     * @param s the seed
     * @return this builder
     */
    public Builder seed(long s) {
      seed = s;
      return this;
    }

    /**
     * Clears {@link TckEnvironment#seed()}: each rule uses its own.
     *
     * @return this builder
     */
    public Builder noSeed() {
      seed = null;
      return this;
    }

    /**
     * Sets {@link TckEnvironment#threadTimeout()}.
     *
     * @param d at least 1 s
     * @return this builder
     */
    public Builder threadTimeout(Duration d) {
      threadTimeout = positive("thread timeout (" + THREAD_TIMEOUT + ")", d);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#ruleTimeout()}.
     *
     * @param d at least 1 s
     * @return this builder
     */
    public Builder ruleTimeout(Duration d) {
      ruleTimeout = positive("rule timeout (" + RULE_TIMEOUT + ")", d);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#childTimeout()}.
     *
     * @param d at least 1 s
     * @return this builder
     */
    public Builder childTimeout(Duration d) {
      childTimeout = positive("child timeout (" + CHILD_TIMEOUT + ")", d);
      return this;
    }

    /**
     * Sets {@link TckEnvironment#dataLivesInLocationFiles()}.
     *
     * @param local false for an engine whose data lives on a server
     * @return this builder
     */
    public Builder dataLivesInLocationFiles(boolean local) {
      localData = local;
      return this;
    }

    /**
     * The environment.
     *
     * @return an immutable environment
     */
    public TckEnvironment build() {
      return new TckEnvironment(this);
    }
  }
}
