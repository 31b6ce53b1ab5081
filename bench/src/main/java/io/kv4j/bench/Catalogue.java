package io.kv4j.bench;

import io.kv4j.bench.Scenario.Distribution;
import io.kv4j.bench.Scenario.Kind;
import io.kv4j.bench.Scenario.Threads;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The scenarios, read from the catalogue file {@code scenarios.conf} next to this class (see its
 * header for the fields): data, not code, so a scenario of an existing {@link Kind} is added there
 * alone. The file is checked when read: unknown fields, missing ones, a mix whose percents do not
 * add up, a kind's fixed phases not as its procedure writes them are refused with the line.
 */
public final class Catalogue {
  /** The catalogue file, a resource next to this class. */
  static final String RESOURCE = "scenarios.conf";

  private static final Set<String> FIELDS =
      Set.of(
          "kind",
          "description",
          "title",
          "mix",
          "distribution",
          "store",
          "store-name",
          "threads",
          "durability",
          "keys",
          "value-size",
          "batch",
          "phases",
          "long",
          "table");

  /** The options a scenario's key count or value size may come from. */
  static final Set<String> KEY_OPTIONS = Set.of("--keys", "--single-op-count", "--scale-keys");

  static final Set<String> VALUE_SIZE_OPTIONS = Set.of("--value-size", "--scale-value-size");

  /** The phases a kind's procedure writes, where they are fixed. */
  static final Map<Kind, List<String>> FIXED_PHASES =
      Map.of(
          Kind.SINGLE_OP, List.of("insert", "read"),
          Kind.FOOTPRINT, Footprint.PHASES,
          Kind.DURING_CHURN, DuringChurn.PHASES);

  /** The kinds whose procedure runs one thread. */
  private static final Set<Kind> ONE_THREAD =
      Set.of(Kind.BATCH_LOAD, Kind.SINGLE_OP, Kind.DURING_CHURN, Kind.SCALE);

  private static final class Standard {
    static final Catalogue INSTANCE = load();

    private static Catalogue load() {
      try (InputStream in = Catalogue.class.getResourceAsStream(RESOURCE)) {
        if (in == null) {
          throw new IllegalStateException("the scenario catalogue " + RESOURCE + " is missing");
        }
        return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + RESOURCE, e);
      }
    }
  }

  private final List<Scenario> scenarios;

  private Catalogue(List<Scenario> scenarios) {
    this.scenarios = List.copyOf(scenarios);
  }

  /**
   * The bench's catalogue, {@code scenarios.conf}, read once.
   *
   * @return the catalogue
   */
  public static Catalogue standard() {
    return Standard.INSTANCE;
  }

  /**
   * Every scenario, in catalogue (report) order.
   *
   * @return the scenarios
   */
  public List<Scenario> all() {
    return scenarios;
  }

  /**
   * The scenarios run when {@code --scenarios} is not given, without {@code --full}.
   *
   * @return all but the long ones, in catalogue order
   */
  public List<Scenario> defaults() {
    return scenarios.stream().filter(Scenario::inDefaultSet).collect(Collectors.toList());
  }

  /**
   * The scenarios of a kind, in catalogue order.
   *
   * @param kind the kind
   * @return the scenarios, maybe none
   */
  public List<Scenario> ofKind(Kind kind) {
    return scenarios.stream().filter(s -> s.kind() == kind).collect(Collectors.toList());
  }

  /**
   * The one scenario of kind {@code load}: the main store's load.
   *
   * @return the scenario
   */
  public Scenario load() {
    return ofKind(Kind.LOAD).get(0);
  }

  /**
   * The one scenario of kind {@code footprint}.
   *
   * @return the scenario
   */
  public Scenario footprint() {
    return ofKind(Kind.FOOTPRINT).get(0);
  }

  /**
   * The scenario with an id.
   *
   * @param id such as {@code ycsb-a}, any case, surrounding blanks ignored
   * @return the scenario
   * @throws IllegalArgumentException naming the valid ids
   */
  public Scenario byId(String id) {
    String k = id.trim().toLowerCase(Locale.ROOT);
    return find(k)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "unknown scenario '" + id + "'; valid: " + String.join(", ", ids(scenarios))));
  }

  /**
   * The scenario with an id, if the catalogue has one.
   *
   * @param id the exact id
   * @return the scenario, or empty (for a row's {@code open} pseudo-scenario, say)
   */
  public Optional<Scenario> find(String id) {
    return scenarios.stream().filter(s -> s.id().equals(id)).findFirst();
  }

  /**
   * A scenario id's place in the catalogue, for sorting rows.
   *
   * @param id a row's scenario
   * @return its index; -1 for the user's workload ({@link Scenario#YOURS}), first everywhere; or
   *     {@link Integer#MAX_VALUE} when unknown
   */
  public int order(String id) {
    if (id.equals(Scenario.YOURS)) {
      return -1;
    }
    for (int i = 0; i < scenarios.size(); i++) {
      if (scenarios.get(i).id().equals(id)) {
        return i;
      }
    }
    return Integer.MAX_VALUE;
  }

  /**
   * Whether a row's scenario goes to a table of its own rather than the throughput tables.
   *
   * @param id a scenario id, as in {@link Result#scenario()}
   * @return true for footprint and the long scenarios
   */
  public boolean ownTable(String id) {
    return find(id).map(Scenario::ownTable).orElse(false);
  }

  /**
   * The ids of scenarios.
   *
   * @param list the scenarios
   * @return their ids, in order
   */
  public static List<String> ids(List<Scenario> list) {
    return list.stream().map(Scenario::id).collect(Collectors.toList());
  }

  /**
   * Reads a catalogue.
   *
   * @param text the file's text
   * @return the catalogue
   * @throws IllegalArgumentException naming the line and what is wrong with it
   */
  static Catalogue parse(String text) {
    Map<String, Map<String, String>> blocks = new LinkedHashMap<>();
    Map<String, Integer> lines = new LinkedHashMap<>();
    Map<String, String> current = null;
    String[] all = text.split("\n", -1);
    for (int n = 1; n <= all.length; n++) {
      String line = all[n - 1].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        String id = line.substring(1, line.length() - 1).strip();
        if (!id.matches("[a-z0-9][a-z0-9-]*")) {
          throw error(n, "a scenario id is lower-case letters, digits and '-', got '" + id + "'");
        }
        if (id.equals(Scenario.YOURS)) {
          throw error(n, "'" + id + "' is the user's workload (--workload), not a catalogue id");
        }
        if (blocks.containsKey(id)) {
          throw error(n, "scenario '" + id + "' is defined twice");
        }
        current = new LinkedHashMap<>();
        blocks.put(id, current);
        lines.put(id, n);
        continue;
      }
      int eq = line.indexOf('=');
      if (current == null || eq < 1) {
        throw error(n, "expected '[id]' or 'field = value', got '" + line + "'");
      }
      String key = line.substring(0, eq).strip();
      String field = key.startsWith("title.") ? "title" : key;
      if (!FIELDS.contains(field)) {
        throw error(n, "unknown field '" + key + "'; valid: " + String.join(", ", sorted(FIELDS)));
      }
      current.put(key, line.substring(eq + 1).strip());
    }
    List<Scenario> out = new ArrayList<>();
    for (Map.Entry<String, Map<String, String>> b : blocks.entrySet()) {
      int n = lines.get(b.getKey());
      try {
        out.add(check(scenario(b.getKey(), b.getValue())));
      } catch (IllegalArgumentException | NullPointerException e) {
        throw error(n, "scenario '" + b.getKey() + "': " + e.getMessage());
      }
    }
    Catalogue c = new Catalogue(out);
    for (Kind k : List.of(Kind.LOAD, Kind.FOOTPRINT)) {
      if (c.ofKind(k).size() != 1) {
        throw new IllegalArgumentException(
            RESOURCE + ": exactly one scenario of kind " + k.word() + " is needed");
      }
    }
    return c;
  }

  private static IllegalArgumentException error(int line, String message) {
    return new IllegalArgumentException(RESOURCE + " line " + line + ": " + message);
  }

  private static List<String> sorted(Set<String> s) {
    return s.stream().sorted().collect(Collectors.toList());
  }

  private static Scenario scenario(String id, Map<String, String> f) {
    Map<String, String> titles = new LinkedHashMap<>();
    f.forEach(
        (k, v) -> {
          if (k.equals("title")) {
            titles.put("", v);
          } else if (k.startsWith("title.")) {
            titles.put(k.substring("title.".length()), v);
          }
        });
    String dist = f.get("distribution");
    return new Scenario(
        id,
        kind(required(f, "kind")),
        required(f, "description"),
        titles,
        Mix.parse(f.getOrDefault("mix", "")),
        dist == null ? null : distribution(dist),
        choice(f, "store", "main", "fresh"),
        f.getOrDefault("store-name", id),
        threads(f.getOrDefault("threads", "each")),
        choice(f, "durability", "run", "sync"),
        option(f, "keys", "--keys", KEY_OPTIONS),
        option(f, "value-size", "--value-size", VALUE_SIZE_OPTIONS),
        Integer.parseInt(f.getOrDefault("batch", "0")),
        list(f.getOrDefault("phases", "")),
        choice(f, "long", "no", "yes"),
        choice(f, "table", "throughput", "own"),
        0);
  }

  /** Checks what a scenario's kind needs of it. */
  private static Scenario check(Scenario s) {
    List<String> fixed = FIXED_PHASES.get(s.kind());
    if (fixed != null && !fixed.equals(s.phases())) {
      throw new IllegalArgumentException(
          "a " + s.kind().word() + " scenario has the phases " + String.join(", ", fixed));
    }
    need(
        s.kind() == Kind.SCALE || s.valueSizeOption().equals("--value-size"),
        "only a scale scenario takes another value size than --value-size");
    need(
        s.freshStore() || (s.keysOption().equals("--keys") && !s.sync()),
        "the main store holds --keys keys with the run's durability");
    need(
        s.kind() == Kind.TIMED
            || s.kind() == Kind.FOOTPRINT
            || s.threads().fixed() != Scenario.Threads.EACH,
        "runs once: threads is largest or a number");
    need(
        !ONE_THREAD.contains(s.kind()) || s.threads().fixed() == 1,
        "a " + s.kind().word() + " scenario runs on 1 thread");
    boolean picksKeys =
        s.mix().steps().stream().anyMatch(st -> st.operation() != Mix.Operation.INSERT);
    switch (s.kind()) {
      case TIMED, DURING_CHURN -> {
        need(!s.mix().isEmpty(), "needs a mix");
        need(!picksKeys || s.distribution() != null, "its mix picks keys: needs a distribution");
        need(
            s.kind() == Kind.TIMED || s.mix().steps().size() == 1,
            "a during-churn mix has one step");
        need(s.kind() == Kind.TIMED || s.onMainStore(), "runs on the main store");
      }
      case CHURN -> {
        need(!s.phases().isEmpty(), "needs phases: the key distribution of each");
        s.phases().forEach(Catalogue::distribution);
        need(s.freshStore(), "runs on a fresh store");
      }
      case BATCH_LOAD, SCALE -> {
        need(s.batch() >= 1, "needs a batch of at least 1 put");
        need(s.freshStore(), "runs on a fresh store");
      }
      case SINGLE_OP -> need(s.freshStore(), "runs on a fresh store");
      case LOAD, FOOTPRINT -> need(s.onMainStore(), "runs on the main store");
    }
    return s;
  }

  private static void need(boolean ok, String what) {
    if (!ok) {
      throw new IllegalArgumentException(what);
    }
  }

  private static String required(Map<String, String> f, String key) {
    String v = f.get(key);
    if (v == null || v.isEmpty()) {
      throw new IllegalArgumentException("the field '" + key + "' is missing");
    }
    return v;
  }

  private static Kind kind(String word) {
    for (Kind k : Kind.values()) {
      if (k.word().equals(word)) {
        return k;
      }
    }
    List<String> words = new ArrayList<>();
    for (Kind k : Kind.values()) {
      words.add(k.word());
    }
    throw new IllegalArgumentException(
        "unknown kind '" + word + "'; valid: " + String.join(", ", words));
  }

  static Distribution distribution(String word) {
    return switch (word.toLowerCase(Locale.ROOT)) {
      case "uniform" -> Distribution.UNIFORM;
      case "zipfian" -> Distribution.ZIPFIAN;
      case "latest" -> Distribution.LATEST;
      default ->
          throw new IllegalArgumentException(
              "unknown distribution '" + word + "'; valid: uniform, zipfian, latest");
    };
  }

  /** True for the second of two words, false for the first (the default). */
  private static boolean choice(Map<String, String> f, String key, String no, String yes) {
    String v = f.getOrDefault(key, no);
    if (!v.equals(no) && !v.equals(yes)) {
      throw new IllegalArgumentException(key + " is " + no + " or " + yes + ", got '" + v + "'");
    }
    return v.equals(yes);
  }

  private static Threads threads(String v) {
    return switch (v) {
      case "each" -> new Threads(Threads.EACH);
      case "largest" -> new Threads(Threads.LARGEST);
      default -> {
        try {
          int n = Integer.parseInt(v);
          if (n < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + n);
          }
          yield new Threads(n);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(
              "threads is each, largest or a number, got '" + v + "'", e);
        }
      }
    };
  }

  private static String option(
      Map<String, String> f, String key, String dflt, Set<String> allowed) {
    String v = f.getOrDefault(key, dflt);
    if (!allowed.contains(v)) {
      throw new IllegalArgumentException(
          key + " is one of " + String.join(", ", sorted(allowed)) + ", got '" + v + "'");
    }
    return v;
  }

  private static List<String> list(String v) {
    List<String> out = new ArrayList<>();
    for (String p : v.split(",")) {
      if (!p.isBlank()) {
        out.add(p.strip());
      }
    }
    return out;
  }
}
