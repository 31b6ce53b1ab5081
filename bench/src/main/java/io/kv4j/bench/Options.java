package io.kv4j.bench;

import io.kv4j.Durability;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The runner's command line, parsed. */
final class Options {
  static final String USAGE =
      String.join(
          "\n",
          "usage: java -jar kv4j-bench.jar [options]",
          "",
          "Compares the kv4j engines and the peer stores on the classpath. The default (quick)",
          "profile finishes in a few minutes on 2 cores; --full measures longer and at 8 threads.",
          "",
          "Your own workload (reported first; the advice ranks kv4j engines only):",
          "  --workload FILE        YCSB core workload properties (recordcount, operationcount,",
          "                         threadcount, readproportion, updateproportion,",
          "                         insertproportion, scanproportion, readmodifywriteproportion,",
          "                         requestdistribution, min/maxscanlength,",
          "                         scanlengthdistribution, fieldcount, fieldlength,",
          "                         fieldlengthdistribution) plus kv4j.keylength and",
          "                         kv4j.durability; or a shipped one: workloada .. workloadf",
          "                         (YCSB's A-F). Runs the load, the workload and the footprint;",
          "                         --scenarios adds others. Several files: later ones win",
          "  --set PROPERTY=VALUE   set one workload property, after the files (repeatable, the",
          "                         later wins); alone, it starts from YCSB's defaults",
          "",
          "  --engines a,b,...      engines to compare (default: every embedded engine found)",
          "  --servers              also measure the server engines (postgres, mysql, redis, etcd) in",
          "                         their own tables (network round trips); an unreachable",
          "                         server is skipped with a one-line reason",
          "  --scenarios a,b,...    scenarios (default: all but the long ones): fillrandom,",
          "                         fillbatch, readrandom, ycsb-a..f, overwrite, scan, single-op,",
          "                         durable-put, footprint; none. Long ones, only when named",
          "                         or with --full: churn (space under update churn),",
          "                         churn-reads (reads while a writer overwrites),",
          "                         churn-scans (100-key scans while a writer overwrites), scale",
          "                         (load, heap per key, reopen time, read latency and GC pauses",
          "                         at --scale-keys keys)",
          "  --threads 1,2,...      thread counts for the timed scenarios (default 1,2; --full 1,2,8)",
          "  --keys N               keys loaded (default 100000)",
          "  --value-size BYTES     value size (default 1024)",
          "  --compressible         values compress ~2:1 (default: incompressible)",
          "  --durability MODE      buffered or sync, for the main table (default buffered);",
          "                         durable-put always runs with sync, in its own table",
          "  --duration SECONDS     measured time per run (default 1; --full 10)",
          "  --warmup SECONDS       warm-up before each run (default 0.3; --full 3)",
          "  --rounds N             measure each timed scenario N times per engine, the engines",
          "                         taking turns window by window (the order rotating each",
          "                         round), all stores open together; rows give the median",
          "                         window, results.csv the min and max (default 1)",
          "  --batch-sizes a,b,...  fillbatch: puts per batch, each size its own rows, e.g.",
          "                         100,1000,10000 (default 1000); with it or --rounds N the",
          "                         engines take turns, ABBA, after an uncounted load each",
          "  --single-op-count N    inserts and reads of single-op (default 5000)",
          "  --churn-rounds N       churn: overwrites of the whole data set per phase (default 20)",
          "  --churn-max-seconds S  churn: cap per phase; rounds done are reported (default 120)",
          "  --scale-keys N         scale: keys loaded (default 10000000; needs about -Xmx4g)",
          "  --scale-value-size B   scale: value size, at least 16 (default 16)",
          "  --scale-max-seconds S  scale: cap of the load; the row says incomplete (default 300)",
          "  --scale-read-seconds S scale: verified random gets after the reopen (default 5)",
          "  --full                 the long profile (defaults above marked --full), with",
          "                         --conformance, --abstraction and the long scenarios",
          "  --conformance          also run the TCK against every selected engine (reduced",
          "                         depth, several minutes per engine): the conformance matrix;",
          "                         with --scenarios none, only the matrix",
          "  --abstraction          also run rocksdb-raw, lmdb-raw, sqlite-raw (the libraries used",
          "                         directly, same settings) and report kv4j/raw per scenario",
          "  --out DIR              report folder (default bench-results/<date-time>)",
          "  --data-dir DIR         where stores are created (default: a temp dir; use a disk,",
          "                         not tmpfs, for sync)",
          "  --engine-option E:K=V  an engine option, e.g. rocksdb:block-cache-size=256MiB",
          "  --seed N               random seed (default 42)",
          "  --list                 list the engines found, their features and options, and exit",
          "  --help                 this text");

  List<String> engines = List.of();
  List<Scenario> scenarios;
  List<Integer> threads;
  long keys = 100_000;
  int keySize = 16;
  int valueSize = 1024;
  ValueSizes valueSizes;
  WorkloadDescription workload;
  final List<String> workloadFiles = new ArrayList<>();
  final List<String> workloadSets = new ArrayList<>();
  private final List<String> given = new ArrayList<>();
  boolean compressible;
  Durability durability = Durability.BUFFERED;
  double duration = -1;
  double warmup = -1;
  int rounds = 1;
  List<Integer> batchSizes = List.of();
  int singleOpCount = 5000;
  int churnRounds = 20;
  double churnMaxSeconds = 120;
  long scaleKeys = 10_000_000;
  int scaleValueSize = 16;
  double scaleMaxSeconds = 300;
  double scaleReadSeconds = 5;
  boolean full;
  boolean conformance;
  boolean abstraction;
  boolean servers;
  Path out;
  Path dataDir;
  long seed = 42;
  boolean list;
  boolean help;
  final Map<String, Map<String, String>> engineOptions = new LinkedHashMap<>();
  final List<String> args = new ArrayList<>();

  static Options parse(String... argv) {
    Options o = new Options();
    o.args.addAll(List.of(argv));
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      String v = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        v = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      switch (a) {
        case "--full":
          o.full = true;
          o.conformance = true;
          o.abstraction = true;
          break;
        case "--abstraction":
          o.abstraction = true;
          break;
        case "--conformance":
          o.conformance = true;
          break;
        case "--servers":
          o.servers = true;
          break;
        case "--compressible":
          o.compressible = true;
          break;
        case "--list":
          o.list = true;
          break;
        case "--help":
        case "-h":
          o.help = true;
          break;
        default:
          if (v == null) {
            if (i + 1 >= argv.length) {
              throw new IllegalArgumentException("option " + a + " needs a value\n\n" + USAGE);
            }
            v = argv[++i];
          }
          o.given.add(a);
          o.set(a, v);
      }
    }
    if (!o.workloadFiles.isEmpty() || !o.workloadSets.isEmpty()) {
      o.workload();
    }
    if (o.valueSizes == null) {
      o.valueSizes = ValueSizes.constant(o.valueSize);
    }
    if (o.scenarios == null) {
      o.scenarios = o.full ? Catalogue.standard().all() : Catalogue.standard().defaults();
    }
    if (o.threads == null) {
      o.threads = o.full ? List.of(1, 2, 8) : List.of(1, 2);
    }
    if (o.duration < 0) {
      o.duration = o.full ? 10 : 1;
    }
    if (o.warmup < 0) {
      o.warmup = o.full ? 3 : 0.3;
    }
    if (o.out == null) {
      o.out =
          Path.of(
              "bench-results",
              LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    }
    return o;
  }

  /**
   * The user's workload: read and checked, then it sets the keys, sizes, threads and durability
   * (given with its own properties, never with the flags that would contradict them), and runs
   * first: after the load, before the footprint and any {@code --scenarios}.
   */
  private void workload() {
    Map<String, String> instead =
        Map.of(
            "--keys", "recordcount",
            "--threads", "threadcount",
            "--value-size", "fieldcount and fieldlength",
            "--key-size", "kv4j.keylength",
            "--durability", "kv4j.durability");
    for (String flag : given) {
      if (instead.containsKey(flag)) {
        throw new IllegalArgumentException(
            flag
                + " does not go with --workload/--set: use --set "
                + instead.get(flag).replace(" and ", "=... --set ")
                + "=...");
      }
    }
    workload = WorkloadDescription.of(workloadFiles, workloadSets);
    keys = workload.recordCount();
    keySize = workload.keyLength();
    valueSizes = workload.valueSizes();
    valueSize = valueSizes.max();
    threads = List.of(workload.threads());
    durability = workload.durability();
    List<Scenario> s = new ArrayList<>();
    Catalogue c = Catalogue.standard();
    s.add(c.load());
    s.add(workload.scenario());
    s.add(c.footprint());
    if (scenarios != null) {
      for (Scenario x : scenarios) {
        if (!s.contains(x)) {
          s.add(x);
        }
      }
    }
    scenarios = s;
  }

  private void set(String name, String v) {
    try {
      if (!setSelection(name, v)
          && !setSize(name, v)
          && !setTime(name, v)
          && !setPlace(name, v)
          && !setWorkload(name, v)) {
        throw new IllegalArgumentException("unknown option " + name + "\n\n" + USAGE);
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": not a number: '" + v + "'", e);
    }
  }

  /** What runs: engines, scenarios, threads, durability; false if {@code name} is none of them. */
  private boolean setSelection(String name, String v) {
    switch (name) {
      case "--engines" -> engines = csv(v);
      case "--scenarios" -> {
        List<Scenario> s = new ArrayList<>();
        for (String id : v.trim().equals("none") ? List.<String>of() : csv(v)) {
          s.add(Catalogue.standard().byId(id));
        }
        scenarios = s;
      }
      case "--threads" -> {
        List<Integer> t = new ArrayList<>();
        for (String x : csv(v)) {
          int n = Integer.parseInt(x);
          if (n < 1 || n > 64) {
            throw new IllegalArgumentException("--threads values must be 1..64, got " + n);
          }
          t.add(n);
        }
        threads = t;
      }
      case "--durability" -> durability = Durability.valueOf(v.trim().toUpperCase(Locale.ROOT));
      case "--engine-option" -> engineOption(v);
      case "--seed" -> seed = Long.parseLong(v);
      default -> {
        return false;
      }
    }
    return true;
  }

  /** Key counts and sizes; false if {@code name} is none of them. */
  private boolean setSize(String name, String v) {
    switch (name) {
      case "--keys" -> keys = positive(name, Long.parseLong(v.replace("_", "")));
      case "--key-size" -> keySize = (int) positive(name, Integer.parseInt(v));
      case "--value-size" -> valueSize = (int) positive(name, Integer.parseInt(v));
      case "--single-op-count" -> singleOpCount = (int) positive(name, Integer.parseInt(v));
      case "--churn-rounds" -> churnRounds = (int) positive(name, Integer.parseInt(v));
      case "--batch-sizes" -> batchSizes = BatchRounds.sizes(csv(v));
      case "--scale-keys" -> {
        scaleKeys = positive(name, Long.parseLong(v.replace("_", "")));
        if (scaleKeys > Integer.MAX_VALUE) {
          throw new IllegalArgumentException("--scale-keys above 2^31 is not supported");
        }
      }
      case "--scale-value-size" -> {
        scaleValueSize = (int) positive(name, Integer.parseInt(v));
        if (scaleValueSize < Data.MIN_VALUE_SIZE) {
          throw new IllegalArgumentException(
              "--scale-value-size must be at least " + Data.MIN_VALUE_SIZE + ", got " + v);
        }
      }
      default -> {
        return false;
      }
    }
    return true;
  }

  /** Durations and repetitions; false if {@code name} is none of them. */
  private boolean setTime(String name, String v) {
    switch (name) {
      case "--duration" -> duration = seconds(name, v);
      case "--warmup" -> warmup = seconds(name, v);
      case "--rounds" -> {
        rounds = (int) positive(name, Integer.parseInt(v));
        if (rounds > 1000) {
          throw new IllegalArgumentException("--rounds must be 1..1000, got " + v);
        }
      }
      case "--churn-max-seconds" -> churnMaxSeconds = seconds(name, v);
      case "--scale-max-seconds" -> scaleMaxSeconds = seconds(name, v);
      case "--scale-read-seconds" -> scaleReadSeconds = seconds(name, v);
      default -> {
        return false;
      }
    }
    return true;
  }

  /** The user's workload: files and properties; false if {@code name} is neither. */
  private boolean setWorkload(String name, String v) {
    switch (name) {
      case "--workload" -> workloadFiles.add(v);
      case "--set" -> workloadSets.add(v);
      default -> {
        return false;
      }
    }
    return true;
  }

  /** Where the stores and the report go; false if {@code name} is neither. */
  private boolean setPlace(String name, String v) {
    switch (name) {
      case "--out" -> out = Path.of(v);
      case "--data-dir" -> dataDir = Path.of(v);
      default -> {
        return false;
      }
    }
    return true;
  }

  private void engineOption(String v) {
    int colon = v.indexOf(':');
    int eq = v.indexOf('=');
    if (colon <= 0 || eq < colon + 2) {
      throw new IllegalArgumentException("expected ENGINE:KEY=VALUE, got '" + v + "'");
    }
    engineOptions
        .computeIfAbsent(v.substring(0, colon), k -> new LinkedHashMap<>())
        .put(v.substring(colon + 1, eq), v.substring(eq + 1));
  }

  private static List<String> csv(String v) {
    List<String> out = new ArrayList<>();
    for (String p : v.split(",")) {
      if (!p.isBlank()) {
        out.add(p.trim());
      }
    }
    return out;
  }

  private static long positive(String name, long v) {
    if (v < 1) {
      throw new IllegalArgumentException(name + " must be positive, got " + v);
    }
    return v;
  }

  private static double seconds(String name, String v) {
    String s = v.trim().toLowerCase(Locale.ROOT);
    double d;
    if (s.endsWith("ms")) {
      d = Double.parseDouble(s.substring(0, s.length() - 2)) / 1000;
    } else if (s.endsWith("s")) {
      d = Double.parseDouble(s.substring(0, s.length() - 1));
    } else {
      d = Double.parseDouble(s);
    }
    if (d < 0 || d > 3600) {
      throw new IllegalArgumentException(name + " must be 0..3600 seconds, got " + v);
    }
    return d;
  }

  /**
   * A scenario's key count: the value of the option its catalogue entry names.
   *
   * @param option {@code --keys}, {@code --single-op-count} or {@code --scale-keys}
   * @return the count
   */
  long keys(String option) {
    return switch (option) {
      case "--keys" -> keys;
      case "--single-op-count" -> singleOpCount;
      case "--scale-keys" -> scaleKeys;
      default -> throw new IllegalArgumentException("not a key-count option: " + option);
    };
  }

  /**
   * A scenario's value size: the value of the option its catalogue entry names.
   *
   * @param option {@code --value-size} or {@code --scale-value-size}
   * @return the size in bytes
   */
  int valueSize(String option) {
    return switch (option) {
      case "--value-size" -> valueSize;
      case "--scale-value-size" -> scaleValueSize;
      default -> throw new IllegalArgumentException("not a value-size option: " + option);
    };
  }

  int maxThreads() {
    int m = 1;
    for (int t : threads) {
      m = Math.max(m, t);
    }
    return m;
  }
}
