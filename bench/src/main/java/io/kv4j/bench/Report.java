package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.StoreInfo;
import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** Turns results into console tables, report.md, results.csv, results.json and the advice. */
final class Report {
  static final String HEADER =
      "engine | scenario | threads | ops/s | p50 | p99 | p99.9 | CPU µs/op";

  /**
   * What the api cannot declare yet (no {@link Feature} or {@link StoreInfo} field says "one writer
   * at a time", "the key index lives in RAM" or "overwrites in place"), from the engines' READMEs.
   * Everything an engine can declare (features, limits) is read from it at run time instead: see
   * {@link #caveats(String)}.
   */
  static final Map<String, String> UNDECLARED_CAVEATS =
      Map.of(
          "lmdb",
          "one writer at a time: concurrent writes queue for LMDB's single writer",
          "sqlite",
          "one writer at a time: writes are serialized (and group-committed)",
          "hashlog",
          "keeps every key in a RAM index: memory grows with the key count",
          "chronicle-map",
          "capacity fixed at creation (entries); nothing forces the mapping to disk, so no"
              + " SYNC mode; overwrites in place: a kill -9 during an overwrite can lose the"
              + " key (TCK rule 7.5)",
          "mapdb",
          "writers serialize; BUFFERED runs without its write-ahead log (crash-safe=false):"
              + " a kill -9 mid-write can leave a file it refuses to open",
          "mvstore",
          "BUFFERED uses its background auto-commit (crash-safe=false): a kill -9 loses up to"
              + " a second of acknowledged writes",
          "memory",
          "reference only, never a pick",
          "floor",
          "a read ceiling, not a store: one index probe and one copy per get, no checksum,"
              + " no reader guard; never a pick");

  /**
   * Engines whose BUFFERED mode loses acknowledged writes to a kill -9, with the TCK rule that
   * shows it (see {@code bench/results/conformance}). The advice names, beside such a winner, the
   * best of the engines that keep them.
   */
  static final Map<String, String> LOSES_WRITES_ON_KILL =
      Map.of(
          "chronicle-map",
          "rule 7.5",
          "mapdb",
          "rules 7.2 and 7.5",
          "mvstore",
          "rules 7.2 and 7.5");

  private final Options options;
  private final Data data;
  private final List<Result> results;
  private final Map<String, Map<String, String>> settings;
  private final Map<String, StoreProvider> engines = new LinkedHashMap<>();
  private final List<String> notes;
  private final String environment;
  private final Map<String, StoreInfo> storeInfos = new LinkedHashMap<>();
  private List<Conformance.Row> conformance;
  private Map<String, String> conformanceDepth;
  private Quietness.Verdict quietness;

  Report(
      Options options,
      Data data,
      List<StoreProvider> providers,
      List<Result> results,
      Map<String, Map<String, String>> settings,
      List<String> notes,
      String environment) {
    this.options = options;
    this.data = data;
    this.results = results;
    this.settings = settings;
    this.notes = notes;
    this.environment = environment;
    for (StoreProvider p : providers) {
      engines.put(p.id(), p);
    }
  }

  /**
   * Adds the conformance matrix to the report.
   *
   * @param rows one row per engine
   * @param depth the TCK depth settings used
   */
  void conformance(List<Conformance.Row> rows, Map<String, String> depth) {
    this.conformance = rows;
    this.conformanceDepth = depth;
  }

  /**
   * The {@link StoreInfo} of each engine's store as the run opened it: its features and limits (per
   * store: an engine opened without checksums does not declare CHECKSUMS) win over the provider's
   * in the caveats.
   *
   * @param infos by engine id
   */
  void storeInfos(Map<String, StoreInfo> infos) {
    storeInfos.putAll(infos);
  }

  /**
   * How quiet the machine was: printed above the picks, and each pick marked when it was not.
   *
   * @param verdict the verdict of the run
   */
  void quietness(Quietness.Verdict verdict) {
    this.quietness = verdict;
  }

  static String micros(double us) {
    if (us == 0) {
      return "-";
    }
    if (us < 10) {
      return String.format(Locale.ROOT, "%.2f µs", us);
    }
    if (us < 10_000) {
      return String.format(Locale.ROOT, "%.0f µs", us);
    }
    return String.format(Locale.ROOT, "%.1f ms", us / 1000);
  }

  static String rate(double ops) {
    return String.format(Locale.ROOT, "%,.0f", ops);
  }

  /** A row's ops/s; with {@code --rounds}, the median window and the range of the windows. */
  static String rate(Result r) {
    double lo = r.figure("ops-per-sec-min");
    double hi = r.figure("ops-per-sec-max");
    if (Double.isNaN(lo) || Double.isNaN(hi)) {
      return rate(r.opsPerSec());
    }
    return rate(r.opsPerSec()) + " (" + rate(lo) + "–" + rate(hi) + ")";
  }

  /**
   * Results of the main table(s) of the embedded engines, grouped by durability: SYNC and BUFFERED
   * never mix.
   */
  private Map<Durability, List<Result>> throughputTables() {
    return tables(false);
  }

  /** Results of the server engines (network round trips), grouped by durability. */
  private Map<Durability, List<Result>> serverTables() {
    return tables(true);
  }

  private Map<Durability, List<Result>> tables(boolean servers) {
    Map<Durability, List<Result>> m = new TreeMap<>();
    for (Result r : results) {
      if (!Scenario.ownTable(r.scenario()) && Servers.isServer(r.engine()) == servers) {
        m.computeIfAbsent(r.durability(), k -> new ArrayList<>()).add(r);
      }
    }
    return m;
  }

  private static List<Result> sorted(List<Result> rs) {
    List<Result> out = new ArrayList<>(rs);
    out.sort(
        Comparator.comparing((Result r) -> order(r.scenario()))
            .thenComparing(Result::phase)
            .thenComparingInt(Result::threads)
            .thenComparing(r -> -r.opsPerSec()));
    return out;
  }

  private static int order(String scenario) {
    for (Scenario s : Scenario.values()) {
      if (s.id().equals(scenario)) {
        return s.ordinal();
      }
    }
    return Integer.MAX_VALUE;
  }

  String console() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<Durability, List<Result>> t : throughputTables().entrySet()) {
      b.append("\n== durability ").append(t.getKey()).append(" ==\n");
      consoleTable(b, t.getValue());
    }
    for (Map.Entry<Durability, List<Result>> t : serverTables().entrySet()) {
      b.append("\n== network round trips (server engines), durability ")
          .append(t.getKey())
          .append(" ==\n");
      consoleTable(b, t.getValue());
    }
    List<Result> fp = footprints();
    if (!fp.isEmpty()) {
      b.append("\n== footprint at rest (allocated disk bytes / live bytes) ==\n");
      List<String[]> rows = new ArrayList<>();
      rows.add(
          new String[] {"engine", "phase", "allocated", "apparent", "live", "ratio", "writes"});
      for (Result r : fp) {
        rows.add(
            new String[] {
              r.engine(),
              r.phase(),
              Runner.mib(r.diskBytes()),
              apparent(r),
              Runner.mib(r.liveBytes()),
              String.format(Locale.ROOT, "%.2fx", r.amplification()),
              writes(r)
            });
      }
      b.append(align(rows));
    }
    List<String[]> churn = churnTable();
    if (churn.size() > 1) {
      b.append("\n== space under churn (allocated disk bytes / live bytes) ==\n");
      b.append(align(churn));
      churnNotes().forEach(n -> b.append(n).append('\n'));
    }
    List<String[]> churnReads = churnReadsTable();
    if (churnReads.size() > 1) {
      b.append("\n== reads during churn (1 reader, 1 zipfian writer) ==\n");
      b.append(align(churnReads));
    }
    List<String[]> churnScans = churnScansTable();
    if (churnScans.size() > 1) {
      b.append("\n== scans during churn (1 scanner of 100 keys, 1 zipfian writer) ==\n");
      b.append(align(churnScans));
    }
    List<String[]> scale = scaleTable();
    if (scale.size() > 1) {
      b.append("\n== index memory and reopen at scale (Java heap only) ==\n");
      b.append(align(scale));
    }
    b.append("\n== what to pick ==\n");
    for (String line : advice()) {
      b.append(line.replace("**", "")).append('\n');
    }
    return b.toString();
  }

  private static void consoleTable(StringBuilder b, List<Result> rs) {
    List<String[]> rows = new ArrayList<>();
    rows.add(HEADER.split(" \\| "));
    for (Result r : sorted(rs)) {
      rows.add(row(r));
    }
    b.append(align(rows));
  }

  private static String[] row(Result r) {
    if (!r.ok()) {
      return new String[] {
        r.engine(), r.label(), r.threads() == 0 ? "" : "" + r.threads(), r.error(), "", "", "", ""
      };
    }
    return new String[] {
      r.engine(),
      r.label(),
      "" + r.threads(),
      rate(r),
      micros(r.p50Us()),
      micros(r.p99Us()),
      micros(r.p999Us()),
      String.format(Locale.ROOT, "%.1f", r.cpuUsPerOp())
    };
  }

  private static String align(List<String[]> rows) {
    int cols = rows.get(0).length;
    int[] w = new int[cols];
    for (String[] r : rows) {
      for (int i = 0; i < cols; i++) {
        if (!(i == 3 && r[4].isEmpty() && r != rows.get(0))) {
          w[i] = Math.max(w[i], r[i].length());
        }
      }
    }
    StringBuilder b = new StringBuilder();
    for (int ri = 0; ri < rows.size(); ri++) {
      String[] r = rows.get(ri);
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < cols; i++) {
        if (i > 0) {
          line.append(" | ");
        }
        boolean numeric = i >= 2 && ri > 0 && startsWithNumber(r[i]);
        String cell = r[i];
        int pad = Math.max(0, w[i] - cell.length());
        line.append(numeric ? " ".repeat(pad) + cell : cell + " ".repeat(pad));
      }
      b.append(line.toString().stripTrailing()).append('\n');
      if (ri == 0) {
        int total = 0;
        for (int x : w) {
          total += x + 3;
        }
        b.append("-".repeat(Math.max(0, total - 3))).append('\n');
      }
    }
    return b.toString();
  }

  private static boolean startsWithNumber(String cell) {
    int i = cell.startsWith("-") ? 1 : 0;
    return cell.length() > i && Character.isDigit(cell.charAt(i));
  }

  private static String apparent(Result r) {
    double a = r.figure("apparent-bytes");
    return Double.isNaN(a) ? "-" : Runner.mib((long) a);
  }

  private static String writes(Result r) {
    double w = r.figure("writes");
    return Double.isNaN(w) ? "-" : String.format(Locale.ROOT, "%,.0f", w);
  }

  private List<Result> footprints() {
    return results.stream()
        .filter(r -> r.scenario().equals("footprint") && r.ok())
        .collect(Collectors.toList());
  }

  /** The "what to pick" lines, computed from the measured numbers. */
  List<String> advice() {
    List<String> out = new ArrayList<>();
    Set<String> winners = new java.util.LinkedHashSet<>();
    for (Map.Entry<Durability, List<Result>> t : throughputTables().entrySet()) {
      Map<String, List<Result>> groups = new LinkedHashMap<>();
      for (Result r : sorted(t.getValue())) {
        if (r.ok() && persistent(r.engine())) {
          groups
              .computeIfAbsent(r.label() + " @" + r.threads() + "t", k -> new ArrayList<>())
              .add(r);
        }
      }
      if (groups.isEmpty()) {
        continue;
      }
      out.add("");
      out.add(
          "**Durability "
              + t.getKey()
              + "** (persistent engines only; ops/s of the winner,"
              + " then how many times the runner-up's):");
      out.add("");
      for (Map.Entry<String, List<Result>> g : groups.entrySet()) {
        List<Result> rs = new ArrayList<>(g.getValue());
        rs.sort(Comparator.comparingDouble(Result::opsPerSec).reversed());
        Result win = rs.get(0);
        StringBuilder line = new StringBuilder("- ").append(g.getKey()).append(": **");
        line.append(win.engine()).append("**, ").append(rate(win.opsPerSec())).append(" ops/s");
        if (rs.size() > 1) {
          Result second = rs.get(1);
          double margin = win.opsPerSec() / second.opsPerSec();
          line.append(String.format(Locale.ROOT, ", %.2fx %s", margin, second.engine()));
          if (margin < 1.1) {
            line.append(" (a tie: within run-to-run noise)");
          }
        } else {
          line.append(" (only engine measured)");
        }
        Result lowP99 = rs.stream().min(Comparator.comparingDouble(Result::p99Us)).orElseThrow();
        if (!lowP99.engine().equals(win.engine())) {
          line.append("; lowest p99: ")
              .append(lowP99.engine())
              .append(" (")
              .append(micros(lowP99.p99Us()))
              .append(" vs ")
              .append(micros(win.p99Us()))
              .append(")");
        }
        if (t.getKey() == Durability.BUFFERED && LOSES_WRITES_ON_KILL.containsKey(win.engine())) {
          List<Result> safe =
              rs.stream()
                  .filter(r -> !LOSES_WRITES_ON_KILL.containsKey(r.engine()))
                  .collect(Collectors.toList());
          line.append("; of the engines that keep acknowledged writes through kill -9: ");
          if (safe.isEmpty()) {
            line.append("none measured");
          } else {
            winners.add(safe.get(0).engine());
            line.append(safe.get(0).engine())
                .append(", ")
                .append(rate(safe.get(0).opsPerSec()))
                .append(" ops/s");
            if (safe.size() > 1) {
              line.append(
                  String.format(
                      Locale.ROOT,
                      ", %.2fx %s",
                      safe.get(0).opsPerSec() / safe.get(1).opsPerSec(),
                      safe.get(1).engine()));
            }
          }
        }
        out.add(line.append(noisyMark()).toString());
        winners.add(win.engine());
      }
    }
    List<Result> fp =
        footprints().stream()
            .filter(r -> r.phase().equals("after-update"))
            .sorted(Comparator.comparingDouble(Result::amplification))
            .collect(Collectors.toList());
    if (!fp.isEmpty()) {
      StringBuilder line = new StringBuilder("- smallest footprint after updates: **");
      line.append(fp.get(0).engine())
          .append(String.format(Locale.ROOT, "** (%.2fx live data)", fp.get(0).amplification()));
      if (fp.size() > 1) {
        line.append(
            String.format(
                Locale.ROOT,
                "; largest: %s (%.2fx)",
                fp.get(fp.size() - 1).engine(),
                fp.get(fp.size() - 1).amplification()));
      }
      winners.add(fp.get(0).engine());
      out.add(line.append(noisyMark()).toString());
    }
    if (quietness != null && !out.isEmpty()) {
      out.addAll(0, quietness.lines());
    }
    if (out.isEmpty()) {
      out.add(
          throughputTables().isEmpty() && fp.isEmpty()
              ? "No throughput or footprint scenario was run: nothing to pick from here (the"
                  + " tables of the other scenarios stand on their own)."
              : "No persistent engine was measured: nothing to pick from.");
    }
    if (!winners.isEmpty()) {
      out.add("");
      out.add(
          "**Caveats of the engines picked above** (what each declares at run time: features it"
              + " lacks, limits narrower than another engine's here; then what the api cannot"
              + " declare yet, from its README):");
      out.add("");
      for (String w : winners) {
        String c = caveats(w);
        out.add(
            "- "
                + w
                + ": "
                + (c.isEmpty()
                    ? "every feature and the widest limits of this run; no other known caveat"
                    : c));
      }
    }
    Map<String, Long> wins =
        out.stream()
            .filter(l -> l.startsWith("- ") && l.contains(": **") && !l.contains("footprint"))
            .map(l -> l.substring(l.indexOf("**") + 2, l.indexOf("**", l.indexOf("**") + 2)))
            .collect(Collectors.groupingBy(e -> e, LinkedHashMap::new, Collectors.counting()));
    if (!wins.isEmpty()) {
      out.add("");
      out.add(
          "Wins per engine: "
              + wins.entrySet().stream()
                  .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                  .map(e -> e.getKey() + " " + e.getValue())
                  .collect(Collectors.joining(", "))
              + ". Numbers from one run on this machine: re-measure your own workload.");
    }
    return out;
  }

  /** Appended to every pick when the run was not quiet enough to trust it. */
  private String noisyMark() {
    return quietness == null || quietness.quiet() ? "" : " [noisy run: not to be trusted]";
  }

  private boolean persistent(String engine) {
    StoreProvider p = engines.get(engine);
    return p != null && p.features().contains(Feature.PERSISTENT);
  }

  /**
   * What an engine gives up, as one line: first what it declares at run time (the features it lacks
   * and limits narrower than another engine's in this run, from the {@link StoreInfo} of the store
   * the run opened, else from its provider), then what the api cannot declare yet ({@link
   * #UNDECLARED_CAVEATS}). Empty only when the engine declares every feature and the widest limits
   * of the run and has no undeclared caveat.
   *
   * @param engine the engine id
   * @return the caveats, or empty
   */
  String caveats(String engine) {
    List<String> c = new ArrayList<>();
    Set<Feature> f = declaredFeatures(engine);
    Limits limits = declaredLimits(engine);
    if (f != null) {
      if (!f.contains(Feature.PERSISTENT)) {
        c.add("not persistent");
      } else if (!f.contains(Feature.CHECKSUMS)) {
        c.add(
            "no checksums (does not declare CHECKSUMS): a damaged record can be read back as a"
                + " wrong value or a missing key");
      }
      if (!f.contains(Feature.ORDERED_SCAN)) {
        c.add("no ordered scans");
      } else if (!f.contains(Feature.REVERSE_SCAN)) {
        c.add("no reverse scans");
      }
      if (f.contains(Feature.ORDERED_SCAN) && !f.contains(Feature.SNAPSHOT_SCAN)) {
        c.add("no snapshot scans: a cursor can see writes made while it runs");
      }
      if (!f.contains(Feature.ATOMIC_BATCH)) {
        c.add("no atomic batches");
      }
    }
    if (limits != null) {
      int widestKey = Limits.MIN_MAX_KEY_SIZE;
      int widestValue = Limits.MIN_MAX_VALUE_SIZE;
      for (String e : engines.keySet()) {
        Limits l = declaredLimits(e);
        if (l != null) {
          widestKey = Math.max(widestKey, l.maxKeySize());
          widestValue = Math.max(widestValue, l.maxValueSize());
        }
      }
      if (limits.maxKeySize() < widestKey) {
        c.add(
            "keys up to "
                + bytes(limits.maxKeySize())
                + " (others here: "
                + bytes(widestKey)
                + ")");
      } else if (limits.maxKeySize() == Limits.MIN_MAX_KEY_SIZE) {
        c.add("keys up to " + bytes(limits.maxKeySize()) + " (the kv4j minimum)");
      }
      if (limits.maxValueSize() < widestValue) {
        c.add(
            "values up to "
                + bytes(limits.maxValueSize())
                + " (others here: "
                + bytes(widestValue)
                + ")");
      }
    }
    String known = UNDECLARED_CAVEATS.get(engine);
    if (known != null) {
      c.add(known);
    }
    return String.join("; ", c);
  }

  /** The features of the store the run opened, else the provider's; null for an unknown engine. */
  private Set<Feature> declaredFeatures(String engine) {
    StoreInfo info = storeInfos.get(engine);
    if (info != null) {
      return info.features();
    }
    StoreProvider p = engines.get(engine);
    return p == null ? null : p.features();
  }

  private Limits declaredLimits(String engine) {
    StoreInfo info = storeInfos.get(engine);
    if (info != null) {
      return info.limits();
    }
    StoreProvider p = engines.get(engine);
    return p == null ? null : p.limits();
  }

  /** A size in bytes as the README's engine table writes it: 511 B, 64 KiB, 256 MiB. */
  static String bytes(long n) {
    if (n >= 1 << 20 && n % (1 << 20) == 0) {
      return String.format(Locale.ROOT, "%,d MiB", n >> 20);
    }
    if (n >= 1 << 10 && n % (1 << 10) == 0) {
      return String.format(Locale.ROOT, "%,d KiB", n >> 10);
    }
    return String.format(Locale.ROOT, "%,d B", n);
  }

  /**
   * ", except with X (rule ...), Y (rules ...): ..." naming the engines of a table that lose writes
   * to kill -9.
   */
  private static String killExceptions(List<Result> table) {
    Set<String> lossy = new java.util.TreeSet<>();
    for (Result r : table) {
      if (LOSES_WRITES_ON_KILL.containsKey(r.engine())) {
        lossy.add(r.engine() + " (" + LOSES_WRITES_ON_KILL.get(r.engine()) + ")");
      }
    }
    return lossy.isEmpty()
        ? ""
        : ", except with "
            + String.join(", ", lossy)
            + ": the kv4j TCK shows each losing acknowledged writes to a kill -9 (see its"
            + " caveats)";
  }

  String markdown(List<String> charts) {
    StringBuilder b = new StringBuilder();
    b.append("# kv4j engine comparison\n\n");
    b.append("Command: `").append(Main.command(options.args)).append("`\n\n");
    b.append(environment).append("\n\n");
    b.append("## Workload\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "- %,d keys of %d bytes (8-byte big-endian index + padding), values of %d bytes, %s%n",
            options.keys,
            data.keySize(),
            data.valueSize(),
            data.compressible() ? "compressible (~2:1)" : "incompressible (random)"));
    b.append(
        String.format(
            Locale.ROOT,
            "- each timed run: %.1f s warm-up, %.1f s measured, at %s threads; YCSB keys zipfian"
                + " 0.99 scrambled (D: latest); every read verifies its value%n",
            options.warmup,
            options.duration,
            options.threads.stream().map(String::valueOf).collect(Collectors.joining(", "))));
    if (options.rounds > 1) {
      b.append(
          String.format(
              Locale.ROOT,
              "- %d rounds (`--rounds`): every engine's store stays open; for each timed scenario"
                  + " and thread count every engine first runs one window that is not counted"
                  + " (so the first does not pay alone for the JVM's heap growth and JIT), then"
                  + " the engines take turns, one window each, the order"
                  + " rotating every round, each window once the process has gone quiet (under"
                  + " a tenth of a core, up to 10 s). ops/s is the median window's, with the"
                  + " slowest and fastest window in brackets; latency percentiles are over all"
                  + " the windows%n",
              options.rounds));
    }
    b.append(
        "- latency per operation with HdrHistogram; CPU µs/op is process CPU time (workers,"
            + " background compaction and flushes, GC) divided by operations; `bg` is the share"
            + " of it outside the worker threads\n");
    for (String n : notes) {
      b.append("- ").append(n).append('\n');
    }
    b.append("\nScenarios:\n\n");
    for (Scenario s : options.scenarios) {
      b.append("- `").append(s.id()).append("`: ").append(s.description()).append('\n');
    }
    b.append("\n## What to pick\n\n");
    for (String line : advice()) {
      b.append(line).append('\n');
    }
    for (Map.Entry<Durability, List<Result>> t : throughputTables().entrySet()) {
      b.append("\n## Durability ").append(t.getKey()).append("\n\n");
      b.append(
          t.getKey() == Durability.SYNC
              ? "Acknowledged writes survive power loss (fsync per write or group commit).\n\n"
              : "Acknowledged writes survive kill -9 of the process, not power loss"
                  + killExceptions(t.getValue())
                  + ".\n\n");
      markdownTable(b, t.getValue());
    }
    for (Map.Entry<Durability, List<Result>> t : serverTables().entrySet()) {
      b.append("\n## Network round trips (server engines), durability ")
          .append(t.getKey())
          .append("\n\n");
      b.append(
          "Every operation is at least one round trip to a server (here on loopback: on a LAN add"
              + " ~0.1-1 ms each). Durability as the engine maps it to the server's settings"
              + " (see each engine's README). CPU µs/op counts this process only, not the"
              + " server's work.\n\n");
      markdownTable(b, t.getValue());
    }
    List<Result> fp = footprints();
    if (!fp.isEmpty()) {
      b.append(
          "\n## Footprint\n\nAllocated blocks on disk (`du`) / live key+value bytes, measured at"
              + " rest: after `sync()` and, for engines that report background work in `stats()`"
              + " (RocksDB), once no flush or compaction is running or due. Apparent = the sum of"
              + " the files' sizes; the whole store directory counts, write-ahead logs included."
              + " Phases: `after-load` (fillrandom) and `after-update` (after the timed scenarios,"
              + " so the writes depend on the engine's speed) on the main store; `after-fillbatch`"
              + " and `after-fixed-updates` (then "
              + Runner.FIXED_UPDATES_PER_KEY
              + " x keys zipfian single puts) on the fillbatch store, the same writes for"
              + " every engine.\n\n");
      b.append(
          "| engine | phase | allocated | apparent | live | ratio | writes |\n"
              + "|---|---|--:|--:|--:|--:|--:|\n");
      for (Result r : fp) {
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %s | %s | %s | %.2fx | %s |%n",
                r.engine(),
                r.phase(),
                Runner.mib(r.diskBytes()),
                apparent(r),
                Runner.mib(r.liveBytes()),
                r.amplification(),
                writes(r)));
      }
      List<String> unsettled =
          fp.stream()
              .filter(r -> r.figure("settled") == 0)
              .map(r -> r.engine() + " " + r.phase())
              .collect(Collectors.toList());
      if (!unsettled.isEmpty()) {
        b.append("\nNot at rest when measured (background work outlasted the wait): ")
            .append(String.join(", ", unsettled))
            .append(".\n");
      }
    }
    List<String[]> churn = churnTable();
    if (churn.size() > 1) {
      b.append("\n## Space under churn\n\n");
      b.append(
          String.format(
              Locale.ROOT,
              "A fresh store with the %,d keys loaded, then every key overwritten %d times in"
                  + " uniform random order (phase `uniform`), then as many overwrites with zipfian"
                  + " keys (0.99, scrambled; phase `zipfian`), at %d thread(s), durability %s."
                  + " Allocated blocks on disk (`du`) / live key+value bytes: at the end of the"
                  + " phase (after a sync) and the worst of samples every %.1f s during it. A"
                  + " phase stops after %.0f s; its rounds done say how far it got.%n%n",
              options.keys,
              options.churnRounds,
              options.maxThreads(),
              options.durability.name(),
              Churn.SAMPLE_NANOS / 1e9,
              options.churnMaxSeconds));
      b.append(markdownTable(churn));
      List<String> notes = churnNotes();
      if (!notes.isEmpty()) {
        b.append('\n');
        notes.forEach(n -> b.append(n).append('\n'));
      }
    }
    List<String[]> churnReads = churnReadsTable();
    if (churnReads.size() > 1) {
      b.append("\n## Reads during churn\n\n");
      b.append(
          String.format(
              Locale.ROOT,
              "On the loaded store: one thread of verified uniform random gets alone for %.1f s,"
                  + " then the same reader next to one writer of zipfian overwrites at full speed"
                  + " for %.1f s (each after %.1f s of warm-up). Retention = reads/s during"
                  + " churn / reads/s alone.%n%n",
              options.duration,
              options.duration,
              options.warmup));
      b.append(markdownTable(churnReads));
    }
    List<String[]> churnScans = churnScansTable();
    if (churnScans.size() > 1) {
      b.append("\n## Scans during churn\n\n");
      b.append(
          String.format(
              Locale.ROOT,
              "On the loaded store: one thread of verified scans of %d keys from uniform random"
                  + " starts alone for %.1f s, then the same scanner next to one writer of zipfian"
                  + " overwrites at full speed for %.1f s (each after %.1f s of warm-up)."
                  + " Retention = scans/s during churn / scans/s alone.%n%n",
              Workload.SCAN_LENGTH,
              options.duration,
              options.duration,
              options.warmup));
      b.append(markdownTable(churnScans));
    }
    List<String[]> scale = scaleTable();
    if (scale.size() > 1) {
      b.append("\n## Index memory and reopen at scale\n\n");
      b.append(
          String.format(
              Locale.ROOT,
              "A fresh store loaded with %,d keys of %d bytes and values of %d bytes (write"
                  + " batches of %d where the engine has atomic batches, else single puts; load"
                  + " capped at %.0f s), durability %s. Heap = Java heap used after full GCs,"
                  + " with the store open, minus before it was opened, per key loaded; Java heap"
                  + " only, so engines that keep their index in native memory or a mapping"
                  + " (rocksdb, lmdb, chronicle-map) show about 0. Max heap %d MiB (%,d keys"
                  + " need about `-Xmx4g`: `java -Xmx4g -jar ...`). Reopen = open + one verified"
                  + " get of a random key, with a warm page cache (no root to drop it).%n%n",
              options.scaleKeys,
              data.keySize(),
              options.scaleValueSize,
              Scale.BATCH,
              options.scaleMaxSeconds,
              options.durability.name(),
              Runtime.getRuntime().maxMemory() >> 20,
              10_000_000));
      b.append(markdownTable(scale));
    }
    if (!charts.isEmpty()) {
      b.append("\n## Charts\n\n");
      for (String c : charts) {
        b.append("![").append(c).append("](").append(c).append(")\n\n");
      }
    }
    b.append("\n## Engines and their effective settings\n\n");
    for (Map.Entry<String, Map<String, String>> e : settings.entrySet()) {
      StoreProvider p = engines.get(e.getKey());
      b.append("- **").append(e.getKey()).append("**");
      if (p != null) {
        b.append(" — ")
            .append(p.description())
            .append(" Features: ")
            .append(
                p.features().stream().map(Enum::name).sorted().collect(Collectors.joining(", ")))
            .append('.');
      }
      b.append(" Settings: `")
          .append(
              e.getValue().entrySet().stream()
                  .map(x -> x.getKey() + "=" + x.getValue())
                  .collect(Collectors.joining(", ")))
          .append("`\n");
    }
    if (conformance != null) {
      b.append('\n').append(Conformance.markdown(conformance, conformanceDepth, options.out));
    } else {
      b.append(
          "\n## Conformance\n\nNot run in this report (`--conformance` or `--full` runs the TCK"
              + " against every engine).\n");
    }
    b.append('\n').append(Abstraction.markdown(results));
    return b.toString();
  }

  private static void markdownTable(StringBuilder b, List<Result> rs) {
    b.append("| engine | scenario | threads | ops/s | p50 | p99 | p99.9 | CPU µs/op | bg |\n");
    b.append("|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (Result r : sorted(rs)) {
      if (r.ok()) {
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d | %s | %s | %s | %s | %.1f | %.0f%% |%n",
                r.engine(),
                r.label(),
                r.threads(),
                rate(r),
                micros(r.p50Us()),
                micros(r.p99Us()),
                micros(r.p999Us()),
                r.cpuUsPerOp(),
                r.bgCpuShare() * 100));
      } else {
        b.append("| ")
            .append(r.engine())
            .append(" | ")
            .append(r.label())
            .append(" | ")
            .append(r.threads() == 0 ? "" : r.threads())
            .append(" | ")
            .append(r.error().replace("|", "/"))
            .append(" | | | | | |\n");
      }
    }
  }

  private List<Result> rows(Scenario s) {
    return results.stream().filter(r -> r.scenario().equals(s.id())).collect(Collectors.toList());
  }

  private static String ratio(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2fx", v);
  }

  private static String seconds(double v) {
    return v == Math.rint(v)
        ? String.format(Locale.ROOT, "%.0f", v)
        : String.format(Locale.ROOT, "%.3f", v);
  }

  private static String number(double v, String format) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, format, v);
  }

  /** A row with the error of a result in the fourth cell (where align() expects it). */
  private static String[] errorRow(int cols, String engine, String phase, String error) {
    String[] r = new String[cols];
    java.util.Arrays.fill(r, "");
    r[0] = engine;
    r[1] = phase;
    r[3] = error;
    return r;
  }

  /** The churn table: a header, then a row per engine and phase. */
  List<String[]> churnTable() {
    List<String[]> out = new ArrayList<>();
    out.add(
        new String[] {
          "engine",
          "phase",
          "threads",
          "rounds done",
          "updates/s",
          "update p99",
          "disk/live at end",
          "worst disk/live"
        });
    for (Result r : rows(Scenario.CHURN)) {
      if (!r.ok()) {
        out.add(errorRow(8, r.engine(), r.phase(), r.error()));
        continue;
      }
      String rounds = number(r.figure("rounds-done"), "%.1f");
      if (r.figure("capped") > 0) {
        rounds +=
            String.format(
                Locale.ROOT,
                " of %.0f (capped at %s s)",
                r.figure("rounds-target"),
                seconds(r.figure("max-seconds")));
      }
      out.add(
          new String[] {
            r.engine(),
            r.phase(),
            String.valueOf(r.threads()),
            rounds,
            rate(r.opsPerSec()),
            micros(r.p99Us()),
            ratio(r.amplification()),
            ratio(r.figure("worst-disk-per-live"))
          });
    }
    return out;
  }

  /** The engines' own stats() figures at the end of each churn phase, as note lines. */
  List<String> churnNotes() {
    List<String> out = new ArrayList<>();
    for (Result r : rows(Scenario.CHURN)) {
      List<String> parts = new ArrayList<>();
      for (Map.Entry<String, Double> f : r.figures().entrySet()) {
        if (f.getKey().startsWith("engine-")) {
          parts.add(
              String.format(
                  Locale.ROOT, "%s %.2f", f.getKey().substring("engine-".length()), f.getValue()));
        }
      }
      if (!parts.isEmpty()) {
        out.add(
            "- "
                + r.engine()
                + " stats() after "
                + r.phase()
                + ": "
                + String.join(", ", parts)
                + " (the engine's own accounting)");
      }
    }
    return out;
  }

  /** The churn-reads table: a header, then a row per engine. */
  List<String[]> churnReadsTable() {
    return duringChurnTable(Scenario.CHURN_READS, "read");
  }

  /** The churn-scans table: a header, then a row per engine. */
  List<String[]> churnScansTable() {
    return duringChurnTable(Scenario.CHURN_SCANS, "scan");
  }

  /** A table of reads (gets or scans, named {@code op}) alone and next to a writer. */
  private List<String[]> duringChurnTable(Scenario scenario, String op) {
    List<String[]> out = new ArrayList<>();
    out.add(
        new String[] {
          "engine",
          "threads",
          op + "s/s alone",
          op + "s/s during churn",
          "retention",
          "writes/s during churn",
          op + " p99 alone",
          op + " p99 during churn"
        });
    Map<String, Map<String, Result>> byEngine = new LinkedHashMap<>();
    for (Result r : rows(scenario)) {
      byEngine.computeIfAbsent(r.engine(), k -> new LinkedHashMap<>()).put(r.phase(), r);
    }
    for (Map.Entry<String, Map<String, Result>> e : byEngine.entrySet()) {
      Result alone = e.getValue().get("read-only");
      Result reads = e.getValue().get("reads");
      Result writes = e.getValue().get("writes");
      Result bad = e.getValue().values().stream().filter(r -> !r.ok()).findFirst().orElse(null);
      if (bad != null || alone == null || reads == null || writes == null) {
        out.add(
            errorRow(
                8, e.getKey(), "", bad == null ? "incomplete: a window is missing" : bad.error()));
        continue;
      }
      out.add(
          new String[] {
            e.getKey(),
            "1 + 1",
            rate(alone.opsPerSec()),
            rate(reads.opsPerSec()),
            number(reads.figure("retention"), "%.2f"),
            rate(writes.opsPerSec()),
            micros(alone.p99Us()),
            micros(reads.p99Us())
          });
    }
    return out;
  }

  /** The scale table: a header, then a row per engine. */
  List<String[]> scaleTable() {
    List<String[]> out = new ArrayList<>();
    out.add(
        new String[] {
          "engine",
          "load",
          "keys loaded",
          "load keys/s",
          "heap B/key",
          "heap B/key - key",
          "engine index B/key",
          "disk/live",
          "reopen + get"
        });
    for (Result r : rows(Scenario.SCALE)) {
      if (!r.ok()) {
        out.add(errorRow(9, r.engine(), "", r.error()));
        continue;
      }
      String keys = String.format(Locale.ROOT, "%,d", r.ops());
      if (r.figure("capped") > 0) {
        keys +=
            String.format(
                Locale.ROOT,
                " of %,.0f (incomplete: capped at %s s)",
                r.figure("keys-target"),
                seconds(r.figure("max-seconds")));
      }
      out.add(
          new String[] {
            r.engine(),
            r.figure("batched") > 0 ? "batches" : "single puts",
            keys,
            rate(r.opsPerSec()),
            number(r.figure("heap-bytes-per-key"), "%.1f"),
            number(r.figure("heap-bytes-per-key-minus-key"), "%.1f"),
            number(r.figure("index-bytes-per-key"), "%.1f"),
            ratio(r.amplification()),
            number(r.figure("reopen-seconds"), "%.3f s")
          });
    }
    return out;
  }

  /** A markdown table: the first two columns left-aligned, the others right-aligned. */
  static String markdownTable(List<String[]> rows) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < rows.size(); i++) {
      String[] r = rows.get(i);
      b.append('|');
      for (String c : r) {
        b.append(' ').append(c.replace("|", "/")).append(" |");
      }
      b.append('\n');
      if (i == 0) {
        b.append('|');
        for (int c = 0; c < r.length; c++) {
          b.append(c < 2 ? "---|" : "--:|");
        }
        b.append('\n');
      }
    }
    return b.toString();
  }

  String csv() {
    StringBuilder b = new StringBuilder();
    b.append(
        "engine,scenario,phase,threads,durability,ops,seconds,ops_per_sec,p50_us,p99_us,"
            + "p999_us,max_us,cpu_us_per_op,bg_cpu_share,disk_bytes,live_bytes,error,figures\n");
    for (Result r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "%s,%s,%s,%d,%s,%d,%.3f,%.1f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%d,%d,%s,%s%n",
              r.engine(),
              r.scenario(),
              r.phase(),
              r.threads(),
              r.durability(),
              r.ops(),
              r.seconds(),
              r.opsPerSec(),
              r.p50Us(),
              r.p99Us(),
              r.p999Us(),
              r.maxUs(),
              r.cpuUsPerOp(),
              r.bgCpuShare(),
              r.diskBytes(),
              r.liveBytes(),
              r.error() == null ? "" : "\"" + r.error().replace("\"", "\"\"") + "\"",
              r.figures().entrySet().stream()
                  .map(e -> e.getKey() + "=" + jsonNumber(e.getValue()))
                  .collect(Collectors.joining(";"))));
    }
    return b.toString();
  }

  /** A number as JSON has it: NaN and infinities (no JSON form) as null. */
  static String jsonNumber(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    return v == Math.rint(v) && Math.abs(v) < 1e15
        ? String.valueOf((long) v)
        : String.format(Locale.ROOT, "%.6g", v);
  }

  String json() {
    StringBuilder b = new StringBuilder("{\n  \"command\": ");
    b.append(str("java -jar bench/target/kv4j-bench.jar " + String.join(" ", options.args)));
    b.append(",\n  \"environment\": ").append(str(environment));
    b.append(",\n  \"quietness\": ");
    if (quietness == null) {
      b.append("null");
    } else {
      b.append("{\"quiet\": ")
          .append(quietness.quiet())
          .append(", \"problems\": [")
          .append(quietness.problems().stream().map(Report::str).collect(Collectors.joining(", ")))
          .append("], \"readings\": ")
          .append(str(quietness.numbers()))
          .append('}');
    }
    b.append(",\n  \"keys\": ").append(options.keys);
    b.append(",\n  \"keySize\": ").append(data.keySize());
    b.append(",\n  \"valueSize\": ").append(data.valueSize());
    b.append(",\n  \"compressible\": ").append(data.compressible());
    b.append(",\n  \"settings\": {");
    int i = 0;
    for (Map.Entry<String, Map<String, String>> e : settings.entrySet()) {
      b.append(i++ == 0 ? "\n    " : ",\n    ").append(str(e.getKey())).append(": {");
      int j = 0;
      for (Map.Entry<String, String> s : e.getValue().entrySet()) {
        b.append(j++ == 0 ? "" : ", ")
            .append(str(s.getKey()))
            .append(": ")
            .append(str(s.getValue()));
      }
      b.append('}');
    }
    b.append("\n  },\n  \"results\": [");
    i = 0;
    for (Result r : results) {
      b.append(i++ == 0 ? "\n    " : ",\n    ");
      b.append(
          String.format(
              Locale.ROOT,
              "{\"engine\": %s, \"scenario\": %s, \"phase\": %s, \"threads\": %d,"
                  + " \"durability\": %s, \"ops\": %d, \"seconds\": %.3f, \"opsPerSec\": %.1f,"
                  + " \"p50Us\": %.2f, \"p99Us\": %.2f, \"p999Us\": %.2f, \"maxUs\": %.2f,"
                  + " \"cpuUsPerOp\": %.3f, \"bgCpuShare\": %.3f, \"diskBytes\": %d,"
                  + " \"liveBytes\": %d, \"error\": %s, \"figures\": {%s}}",
              str(r.engine()),
              str(r.scenario()),
              str(r.phase()),
              r.threads(),
              str(r.durability().name()),
              r.ops(),
              r.seconds(),
              r.opsPerSec(),
              r.p50Us(),
              r.p99Us(),
              r.p999Us(),
              r.maxUs(),
              r.cpuUsPerOp(),
              r.bgCpuShare(),
              r.diskBytes(),
              r.liveBytes(),
              r.error() == null ? "null" : str(r.error()),
              r.figures().entrySet().stream()
                  .map(e -> str(e.getKey()) + ": " + jsonNumber(e.getValue()))
                  .collect(Collectors.joining(", "))));
    }
    b.append("\n  ],\n  \"conformance\": ")
        .append(
            conformance == null
                ? "null"
                : Conformance.json(conformance, conformanceDepth).strip().replace("\n", "\n  "));
    b.append(",\n  \"abstraction\": ").append(Abstraction.json(results));
    b.append(",\n  \"abstractionDisk\": ").append(Abstraction.diskJson(results));
    b.append(",\n  \"advice\": [");
    i = 0;
    for (String a : advice()) {
      b.append(i++ == 0 ? "\n    " : ",\n    ").append(str(a));
    }
    return b.append("\n  ]\n}\n").toString();
  }

  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }

  List<String> write(Path dir) throws IOException {
    Files.createDirectories(dir);
    List<String> charts = Charts.write(dir, results);
    Files.writeString(dir.resolve("report.md"), markdown(charts), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("results.csv"), csv(), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("results.json"), json(), StandardCharsets.UTF_8);
    return charts;
  }
}
