package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.StoreProvider;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * State and helpers shared by the rule groups: the temporary directory, the stores a test opened
 * (closed after each test), rule-tagged messages, feature assumptions and a {@link TreeMap} model
 * to compare scans with.
 */
@ExtendWith(TckReport.class)
abstract class TckBase {
  @TempDir Path tempDir;

  private final List<Store> opened = new ArrayList<>();
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

  @AfterEach
  void closeOpenedStores() {
    for (Store s : opened) {
      s.close();
    }
    opened.clear();
  }

  /** The store directory used by default in a test. */
  Path dir() {
    return tempDir.resolve("store");
  }

  StoreConfig config(Durability durability) {
    return config(dir(), durability);
  }

  StoreProvider provider() {
    if (provider == null) {
      provider = Stores.provider(config(dir(), Durability.BUFFERED).engine());
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
   * What a call throws, or null when it returns normally; used as {@code
   * assertThat(thrown(call)).as(rule(...)).isInstanceOf(...)} so the rule is named also when
   * nothing was thrown.
   */
  static Throwable thrown(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    return org.assertj.core.api.Assertions.catchThrowable(call);
  }

  /**
   * The seed of the randomised rules: the environment's ({@code kv4j.tck.seed}, to replay a
   * failure) when set, else a fresh one.
   */
  long randomSeed() {
    return env().seed().orElseGet(System::nanoTime);
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
}
