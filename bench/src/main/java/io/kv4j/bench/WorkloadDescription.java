package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.bench.Scenario.Distribution;
import io.kv4j.bench.Scenario.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The user's own workload, described without rebuilding the bench: YCSB's core workload properties
 * ({@code recordcount}, {@code readproportion}, {@code requestdistribution}, ...) and the bench's
 * own ({@code kv4j.keylength}, {@code kv4j.durability}), read from workload files ({@code
 * --workload FILE}, or the name of a shipped one: {@code workloada} .. {@code workloadf}) and then
 * from {@code --set PROPERTY=VALUE} flags, the later value of a property winning.
 *
 * <p>Checked strictly when read: an unknown property, a value that is not a number or out of range,
 * an unknown distribution, or proportions that do not add up to 1 (within 1e-9) are refused with
 * the property, the value and where it came from. What a property means: {@link #PROPERTIES}.
 *
 * <p>It becomes one timed {@link Scenario} ({@link Scenario#YOURS}): {@code operationcount}
 * operations of the mix, split among {@code threadcount} threads, on the main store loaded with
 * {@code recordcount} keys of {@code kv4j.keylength} bytes and values of {@code fieldcount} x
 * {@code fieldlength} bytes, with {@code kv4j.durability}.
 */
final class WorkloadDescription {
  /** Where the shipped workload files are, as resources next to this class. */
  static final String RESOURCE_DIR = "workloads/";

  /** The shipped workload files: YCSB's core workloads A to F. */
  static final List<String> SHIPPED =
      List.of("workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf");

  /** The one YCSB workload class these properties describe. */
  static final List<String> CORE_WORKLOAD =
      List.of("site.ycsb.workloads.CoreWorkload", "com.yahoo.ycsb.workloads.CoreWorkload");

  /** Largest {@code threadcount}: the same as {@code --threads}. */
  static final int MAX_THREADS = 64;

  /** Largest {@code maxscanlength}. */
  static final int MAX_SCAN_LENGTH = 1_000_000;

  /** Largest {@code kv4j.keylength}: an engine's own limit may be lower (it then cannot run it). */
  static final int MAX_KEY_LENGTH = 1 << 20;

  /**
   * Every property known, in the order of the README's table, with its default and what it means.
   * YCSB's defaults where it has one; {@code recordcount} and {@code operationcount} (which YCSB
   * requires) default to the bench's {@code --keys}.
   */
  static final Map<String, Property> PROPERTIES = properties();

  /**
   * A property of a workload description.
   *
   * @param name as in the file
   * @param defaultValue its value when no file or flag sets it
   * @param meaning one line for the README and the errors
   */
  record Property(String name, String defaultValue, String meaning) {}

  private static Map<String, Property> properties() {
    Map<String, Property> m = new LinkedHashMap<>();
    for (Property p :
        List.of(
            new Property("recordcount", "100000", "records loaded before the operations"),
            new Property(
                "operationcount", "100000", "operations measured, split among the threads"),
            new Property("threadcount", "1", "client threads (1.." + MAX_THREADS + ")"),
            new Property("readproportion", "0.95", "share of gets of one key"),
            new Property("updateproportion", "0.05", "share of puts of a new value to a key"),
            new Property("insertproportion", "0", "share of puts of a new key"),
            new Property("scanproportion", "0", "share of ordered scans"),
            new Property(
                "readmodifywriteproportion", "0", "share of a get then a put of the same key"),
            new Property(
                "requestdistribution",
                "uniform",
                "keys the operations pick: uniform, zipfian (YCSB's scrambled, 0.99), latest"),
            new Property("minscanlength", "1", "fewest keys per scan"),
            new Property("maxscanlength", "1000", "most keys per scan"),
            new Property("scanlengthdistribution", "uniform", "keys per scan: uniform or zipfian"),
            new Property("fieldcount", "10", "fields per value: a value is the fields' bytes"),
            new Property("fieldlength", "100", "bytes per field (the most, when not constant)"),
            new Property(
                "fieldlengthdistribution",
                "constant",
                "each field's length per write: constant, uniform or zipfian in 1..fieldlength"),
            new Property("readallfields", "true", "true only: a kv4j get returns the whole value"),
            new Property(
                "writeallfields",
                "false",
                "true or false: either way an update writes the whole value (no fields in kv4j)"),
            new Property(
                "workload",
                CORE_WORKLOAD.get(0),
                "YCSB's workload class: CoreWorkload only (so YCSB's own files read as they are)"),
            new Property(
                "kv4j.keylength",
                "16",
                "key bytes: 8-byte index + padding (8.." + MAX_KEY_LENGTH + ")"),
            new Property(
                "kv4j.durability",
                "buffered",
                "buffered (survives kill -9) or sync (power loss)"))) {
      m.put(p.name(), p);
    }
    return m;
  }

  private final String name;
  private final List<String> sources;
  private final Map<String, String> values;
  private final Map<String, String> origins;
  private final long recordCount;
  private final long operationCount;
  private final int threads;
  private final Mix mix;
  private final Distribution requests;
  private final ValueSizes valueSizes;
  private final int keyLength;
  private final Durability durability;

  private WorkloadDescription(
      String name, List<String> sources, Map<String, String> values, Map<String, String> origins) {
    this.name = name;
    this.sources = List.copyOf(sources);
    this.values = values;
    this.origins = origins;
    String workload = text("workload");
    if (!CORE_WORKLOAD.contains(workload)) {
      throw refused(
          "workload", workload, "only YCSB's CoreWorkload is described by these properties");
    }
    this.recordCount = whole("recordcount", 1, Integer.MAX_VALUE);
    this.operationCount = whole("operationcount", 1, Integer.MAX_VALUE);
    this.threads = (int) whole("threadcount", 1, MAX_THREADS);
    this.keyLength = (int) whole("kv4j.keylength", 8, MAX_KEY_LENGTH);
    this.durability = parseDurability();
    this.requests = parseRequests();
    if (!bool("readallfields")) {
      throw refused(
          "readallfields",
          text("readallfields"),
          "a kv4j get always returns the whole value, as YCSB's readallfields=true");
    }
    bool("writeallfields");
    int fieldCount = (int) whole("fieldcount", 1, ValueSizes.MAX_VALUE_BYTES);
    int fieldLength = (int) whole("fieldlength", 1, ValueSizes.MAX_VALUE_BYTES);
    ValueSizes.Shape shape = shape("fieldlengthdistribution");
    try {
      this.valueSizes = new ValueSizes(fieldCount, fieldLength, shape);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "workload properties fieldcount="
              + fieldCount
              + " ("
              + origin("fieldcount")
              + ") and fieldlength="
              + fieldLength
              + " ("
              + origin("fieldlength")
              + "): "
              + e.getMessage(),
          e);
    }
    this.mix = parseMix();
  }

  /**
   * Reads a workload description.
   *
   * @param files workload files (paths, or names of shipped ones), applied in order
   * @param sets {@code PROPERTY=VALUE} flags, applied in order after the files
   * @return the description
   * @throws IllegalArgumentException naming what is wrong: the property, its value and where it
   *     came from
   */
  static WorkloadDescription of(List<String> files, List<String> sets) {
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, String> origins = new LinkedHashMap<>();
    PROPERTIES.values().forEach(p -> values.put(p.name(), p.defaultValue()));
    List<String> sources = new ArrayList<>();
    String name = null;
    for (String f : files) {
      Source src = read(f);
      sources.add(src.where());
      name = src.name();
      for (String k : src.properties().stringPropertyNames().stream().sorted().toList()) {
        put(values, origins, k, src.properties().getProperty(k).strip(), src.where());
      }
    }
    for (String set : sets) {
      int eq = set.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException("--set expects PROPERTY=VALUE, got '" + set + "'");
      }
      String k = set.substring(0, eq).strip();
      put(values, origins, k, set.substring(eq + 1).strip(), "--set");
      if (!sources.contains("--set")) {
        sources.add("--set");
      }
    }
    return new WorkloadDescription(name == null ? "your workload" : name, sources, values, origins);
  }

  private static void put(
      Map<String, String> values, Map<String, String> origins, String k, String v, String where) {
    if (!PROPERTIES.containsKey(k)) {
      throw new IllegalArgumentException(
          "unknown workload property '"
              + k
              + "' (in "
              + where
              + "); known: "
              + String.join(", ", PROPERTIES.keySet()));
    }
    values.put(k, v);
    origins.put(k, where);
  }

  /** A workload file read: its name (for the report), where it came from and its properties. */
  private record Source(String name, String where, Properties properties) {}

  private static Source read(String file) {
    Path path = Path.of(file);
    if (Files.isRegularFile(path)) {
      try (Reader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
        return new Source(stem(path.getFileName().toString()), file, load(r, file));
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "cannot read the workload file " + file + ": " + e.getMessage(), e);
      }
    }
    if (SHIPPED.contains(file)) {
      return new Source(file, "shipped " + file, load(new StringReader(shipped(file)), file));
    }
    throw new IllegalArgumentException(
        "no workload file "
            + file
            + (Files.exists(path) ? " (not a regular file)" : "")
            + "; shipped workloads (YCSB's core workloads): "
            + String.join(", ", SHIPPED));
  }

  private static String stem(String fileName) {
    int dot = fileName.lastIndexOf('.');
    return dot > 0 ? fileName.substring(0, dot) : fileName;
  }

  private static Properties load(Reader r, String file) {
    Properties p = new Properties();
    try {
      p.load(r);
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot read the workload file " + file + ": " + e.getMessage(), e);
    }
    return p;
  }

  /**
   * The text of a shipped workload file.
   *
   * @param name such as {@code workloada}
   * @return its text
   */
  static String shipped(String name) {
    try (InputStream in = WorkloadDescription.class.getResourceAsStream(RESOURCE_DIR + name)) {
      if (in == null) {
        throw new IllegalStateException("the shipped workload " + name + " is missing");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the shipped workload " + name, e);
    }
  }

  private String text(String property) {
    return values.get(property);
  }

  private String origin(String property) {
    return origins.getOrDefault(property, "default");
  }

  private IllegalArgumentException refused(String property, String value, String why) {
    return new IllegalArgumentException(
        "workload property " + property + "='" + value + "' (" + origin(property) + "): " + why);
  }

  private long whole(String property, long min, long max) {
    String v = text(property);
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw refused(property, v, "not a whole number");
    }
    if (n < min || n > max) {
      throw refused(property, v, "must be " + min + ".." + max);
    }
    return n;
  }

  private double proportion(String property) {
    String v = text(property);
    double d;
    try {
      d = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw refused(property, v, "not a number");
    }
    if (!(d >= 0 && d <= 1)) {
      throw refused(property, v, "a proportion is 0..1");
    }
    return d;
  }

  private boolean bool(String property) {
    String v = text(property).toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw refused(property, text(property), "true or false");
    }
    return v.equals("true");
  }

  private Durability parseDurability() {
    String v = text("kv4j.durability");
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "buffered" -> Durability.BUFFERED;
      case "sync" -> Durability.SYNC;
      default -> throw refused("kv4j.durability", v, "buffered or sync");
    };
  }

  private Distribution parseRequests() {
    String v = text("requestdistribution");
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "uniform" -> Distribution.UNIFORM;
      case "zipfian" -> Distribution.YCSB_ZIPFIAN;
      case "latest" -> Distribution.LATEST;
      default -> throw refused("requestdistribution", v, "uniform, zipfian or latest");
    };
  }

  private ValueSizes.Shape shape(String property) {
    String v = text(property);
    for (ValueSizes.Shape s : ValueSizes.Shape.values()) {
      if (s.word().equals(v.toLowerCase(Locale.ROOT))) {
        return s;
      }
    }
    throw refused(property, v, "constant, uniform or zipfian");
  }

  private Mix parseMix() {
    // In the catalogue's order (95% scan 1-100, 5% insert), which is how the mix is printed.
    String[] names = {
      "readproportion",
      "updateproportion",
      "scanproportion",
      "insertproportion",
      "readmodifywriteproportion"
    };
    Mix.Operation[] ops = {
      Mix.Operation.READ,
      Mix.Operation.UPDATE,
      Mix.Operation.SCAN,
      Mix.Operation.INSERT,
      Mix.Operation.READ_MODIFY_WRITE
    };
    double sum = 0;
    List<String> terms = new ArrayList<>();
    double[] shares = new double[names.length];
    for (int i = 0; i < names.length; i++) {
      shares[i] = proportion(names[i]);
      sum += shares[i];
      terms.add(names[i] + "=" + text(names[i]) + " (" + origin(names[i]) + ")");
    }
    if (Math.abs(sum - 1) > 1e-9) {
      throw new IllegalArgumentException(
          "the workload's proportions must add up to 1 (within 1e-9), got "
              + sum
              + ": "
              + String.join(", ", terms));
    }
    int minScan = (int) whole("minscanlength", 1, MAX_SCAN_LENGTH);
    int maxScan = (int) whole("maxscanlength", 1, MAX_SCAN_LENGTH);
    if (maxScan < minScan) {
      throw refused("maxscanlength", text("maxscanlength"), "below minscanlength=" + minScan);
    }
    String lengths = text("scanlengthdistribution").toLowerCase(Locale.ROOT);
    if (!lengths.equals("uniform") && !lengths.equals("zipfian")) {
      throw refused("scanlengthdistribution", lengths, "uniform or zipfian");
    }
    List<Mix.Step> steps = new ArrayList<>();
    for (int i = 0; i < names.length; i++) {
      if (shares[i] > 0) {
        boolean scan = ops[i] == Mix.Operation.SCAN;
        steps.add(
            new Mix.Step(
                shares[i],
                ops[i],
                scan ? minScan : 0,
                scan ? maxScan : 0,
                scan && lengths.equals("zipfian")));
      }
    }
    return new Mix(steps);
  }

  /**
   * The name shown in the report: the last workload file's name, else "your workload".
   *
   * @return such as {@code workloada}
   */
  String name() {
    return name;
  }

  /**
   * Where the properties came from, in order.
   *
   * @return such as {@code [shipped workloada, --set]}
   */
  List<String> sources() {
    return sources;
  }

  /**
   * Every property's effective value, defaults included, in {@link #PROPERTIES} order.
   *
   * @return name to value
   */
  Map<String, String> values() {
    return Map.copyOf(values);
  }

  /**
   * The properties set by a file or flag (not left at their default), with their value, in {@link
   * #PROPERTIES} order.
   *
   * @return such as {@code recordcount=200 (--set)}
   */
  List<String> given() {
    List<String> out = new ArrayList<>();
    for (String k : PROPERTIES.keySet()) {
      if (origins.containsKey(k)) {
        out.add(k + "=" + values.get(k) + " (" + origins.get(k) + ")");
      }
    }
    return out;
  }

  long recordCount() {
    return recordCount;
  }

  long operationCount() {
    return operationCount;
  }

  int threads() {
    return threads;
  }

  int keyLength() {
    return keyLength;
  }

  Durability durability() {
    return durability;
  }

  ValueSizes valueSizes() {
    return valueSizes;
  }

  Mix mix() {
    return mix;
  }

  Distribution requests() {
    return requests;
  }

  /**
   * Whether its operations scan: the engine needs ordered scans.
   *
   * @return true when scanproportion is above 0
   */
  boolean scans() {
    return mix.has(Mix.Operation.SCAN);
  }

  /**
   * The workload in words, for the report: the mix, the keys it picks, the records, keys and
   * values, operations, threads and durability.
   *
   * @return one line
   */
  String describe() {
    String keys =
        switch (requests) {
          case UNIFORM -> "uniform keys";
          case YCSB_ZIPFIAN -> "zipfian keys (YCSB's scrambled zipfian, 0.99)";
          case LATEST -> "the latest keys most (YCSB's latest)";
          case ZIPFIAN -> "zipfian keys";
        };
    return String.format(
        Locale.ROOT,
        "%s; %s; %,d records of %d-byte keys and %s; %,d operations on %d thread%s; durability"
            + " %s",
        mix,
        keys,
        recordCount,
        keyLength,
        valueSizes,
        operationCount,
        threads,
        threads == 1 ? "" : "s",
        durability);
  }

  /**
   * The scenario that runs it.
   *
   * @return a timed scenario of {@code operationcount} operations on the main store
   */
  Scenario scenario() {
    return new Scenario(
        Scenario.YOURS,
        Kind.TIMED,
        "your workload (" + name + "): " + describe(),
        Map.of("", "Your workload " + name),
        mix,
        requests,
        false,
        "main",
        new Scenario.Threads(Scenario.Threads.EACH),
        false,
        "--keys",
        "--value-size",
        0,
        List.of(),
        false,
        false,
        operationCount);
  }
}
