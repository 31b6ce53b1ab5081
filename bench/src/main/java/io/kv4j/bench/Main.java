package io.kv4j.bench;

import io.kv4j.Feature;
import io.kv4j.Stores;
import io.kv4j.bench.floor.FloorProvider;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The comparison runner: {@code java -jar kv4j-bench.jar [options]}. Compares every engine found
 * through {@link Stores#providers()} (the kv4j engines and the peer adapters on the classpath) on
 * the selected scenarios, prints progress and tables, and writes a report folder with markdown,
 * CSV, JSON and PNG charts. {@code --help} lists the options.
 */
public final class Main {
  private Main() {}

  /**
   * Runs the comparison and exits with its status: 0 when every selected run produced numbers, 1
   * when a run failed (a wrong value read, an exception), 2 for a bad command line.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    int relaunched = Relaunch.ifNeeded(args);
    if (relaunched >= 0) {
      System.exit(relaunched);
    }
    System.exit(run(args, System.out));
  }

  /**
   * Runs the comparison.
   *
   * @param args the command line
   * @param out where progress, tables and messages go
   * @return the exit status, as for {@link #main(String[])}
   */
  public static int run(String[] args, PrintStream out) {
    // Chronicle Map must not contact its analytics host; set before any of its classes load.
    System.setProperty("chronicle.analytics.disable", "true");
    System.setProperty("java.awt.headless", "true");
    Options o;
    List<StoreProvider> engines;
    try {
      o = Options.parse(args);
      if (o.help) {
        out.println(Options.USAGE);
        return 0;
      }
      if (o.list) {
        list(out);
        return 0;
      }
      engines = select(o);
    } catch (IllegalArgumentException e) {
      out.println("error: " + e.getMessage());
      return 2;
    }
    Data data = new Data(o.keySize, o.valueSize, o.compressible, o.seed);
    Path dataRoot;
    boolean tempRoot = o.dataDir == null;
    try {
      dataRoot =
          tempRoot
              ? Files.createTempDirectory("kv4j-bench-")
              : Files.createDirectories(o.dataDir.toAbsolutePath());
    } catch (IOException e) {
      out.println("error: cannot create the data directory: " + e.getMessage());
      return 2;
    }
    out.printf(
        "kv4j-bench: %d engine(s) [%s], %s, %,d keys x %d B values, threads %s, %.1fs per run%s%n",
        engines.size(),
        engines.stream().map(StoreProvider::id).collect(Collectors.joining(", ")),
        Scenario.ids(o.scenarios),
        o.keys,
        o.valueSize,
        o.threads,
        o.duration,
        o.rounds > 1 ? ", " + o.rounds + " rounds (engines take turns)" : "");
    out.println("stores in " + dataRoot + ", report to " + o.out.toAbsolutePath());
    long started = System.nanoTime();
    String loadBefore = loadAverage();
    Quietness.Watch quiet = o.scenarios.isEmpty() ? null : Quietness.watch();
    if (quiet != null) {
      out.println(quiet.beforeLine());
    }
    Runner runner = new Runner(o, data, dataRoot, out);
    String fsType = fileSystemType(dataRoot);
    runner.notes().add("stores on a " + fsType + " file system at " + dataRoot);
    if (fsType.equals("tmpfs")) {
      runner.notes().add("WARNING: tmpfs has no durable storage: SYNC numbers are meaningless");
    }
    Quietness.Verdict verdict = null;
    List<Conformance.Row> matrix = null;
    Map<String, String> depth = null;
    try {
      if (!o.scenarios.isEmpty()) {
        runner.run(engines);
        // Before the conformance matrix: the verdict is about the measured part of the run.
        verdict = Quietness.judge(quiet.stop());
      }
      if (o.conformance) {
        depth = Conformance.depth();
        out.println("conformance: the TCK against each engine, depth " + depth);
        matrix = Conformance.run(engines, o.out.resolve("tck"), out);
      }
    } finally {
      if (tempRoot) {
        Runner.delete(dataRoot);
      }
    }
    if (o.scenarios.isEmpty()) {
      if (matrix == null) {
        out.println("error: --scenarios none without --conformance: nothing to do");
        return 2;
      }
      try {
        Conformance.write(o.out, matrix, depth, o.args);
      } catch (IOException e) {
        out.println("error: cannot write the matrix to " + o.out + ": " + e.getMessage());
        return 1;
      }
      out.println("conformance matrix: " + o.out.resolve("conformance.md").toAbsolutePath());
      return 0;
    }
    runner
        .notes()
        .add(
            String.format(
                Locale.ROOT,
                "the whole run took %.0f s of wall time; 1-minute load average %s at the start, %s"
                    + " at the end (%d cores: above that, other processes competed for the CPU)",
                (System.nanoTime() - started) / 1e9,
                loadBefore,
                loadAverage(),
                Runtime.getRuntime().availableProcessors()));
    Report report =
        new Report(
            o, data, engines, runner.results(), runner.settings(), runner.notes(), environment());
    report.storeInfos(runner.storeInfos());
    report.quietness(verdict);
    if (matrix != null) {
      report.conformance(matrix, depth);
    }
    out.println(report.console());
    try {
      report.write(o.out);
    } catch (IOException e) {
      out.println("error: cannot write the report to " + o.out + ": " + e.getMessage());
      return 1;
    }
    out.println("report: " + o.out.resolve("report.md").toAbsolutePath());
    long failed =
        runner.results().stream().filter(r -> !r.ok() && !r.error().startsWith("n/a")).count();
    if (failed > 0) {
      out.println(failed + " run(s) FAILED; see the tables above");
      return 1;
    }
    return 0;
  }

  static List<StoreProvider> select(Options o) {
    List<StoreProvider> out = new ArrayList<>();
    if (o.engines.isEmpty()) {
      // The raw baselines (rocksdb-raw, ...) only with --abstraction, next to their engine; the
      // server engines only with --servers (the default run never contacts a server); the floor
      // read ceiling only when named.
      for (StoreProvider p : Stores.providers()) {
        if ((o.abstraction || !Abstraction.isRaw(p.id()))
            && !Servers.isServer(p.id())
            && !p.id().equals(FloorProvider.ID)) {
          out.add(p);
        }
      }
    } else {
      for (String id : o.engines) {
        StoreProvider p = Stores.provider(id);
        if (!out.contains(p)) {
          out.add(p);
        }
      }
    }
    if (o.servers) {
      for (StoreProvider p : Stores.providers()) {
        if (Servers.isServer(p.id()) && !out.contains(p)) {
          out.add(p);
        }
      }
    }
    return out;
  }

  private static void list(PrintStream out) {
    for (StoreProvider p : Stores.providers()) {
      out.printf(
          "%s%s - %s%n  features: %s%n",
          p.id(),
          p.aliases().isEmpty() ? "" : " (aliases " + String.join(", ", p.aliases()) + ")",
          p.description(),
          p.features().stream().map(Feature::name).sorted().collect(Collectors.joining(", ")));
      for (OptionSpec<?> s : p.options()) {
        out.printf(
            "  %s (%s, default %s %s): %s%n",
            s.name(), s.type(), s.defaultValue(), s.unit(), s.description());
      }
    }
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static String fileSystemType(Path dir) {
    try {
      return Files.getFileStore(dir).type();
    } catch (IOException e) {
      return "unknown";
    }
  }

  /**
   * The command that reproduces a report: the runner's arguments, and the {@code -Dkv4j.} settings
   * this JVM was started with (the TCK depth, for one), which change what is measured.
   *
   * @param args the runner's arguments
   * @return the command, as a reader would type it from the repository root
   */
  static String command(List<String> args) {
    StringBuilder b = new StringBuilder("java");
    for (String a : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("-Dkv4j.")) {
        b.append(' ').append(a);
      }
    }
    b.append(" -jar bench/target/kv4j-bench.jar");
    for (String a : args) {
      b.append(' ').append(a);
    }
    return b.toString();
  }

  static String environment() {
    Runtime rt = Runtime.getRuntime();
    String cpu = "unknown CPU";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: keep the default
    }
    return String.format(
        Locale.ROOT,
        "Machine: %d cores (%s), %s %s; Java %s (%s); max heap %d MiB; JVM flags: %s",
        rt.availableProcessors(),
        cpu,
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        System.getProperty("java.version"),
        System.getProperty("java.vm.name"),
        rt.maxMemory() >> 20,
        String.join(
            " ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()));
  }
}
