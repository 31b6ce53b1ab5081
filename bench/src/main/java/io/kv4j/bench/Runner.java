package io.kv4j.bench;

import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The command-line shell of the comparison: parses the options, measures ({@link Session}, and the
 * conformance matrix), decides and formats ({@link Report}), prints and writes the report folder,
 * and says how it went as an exit status. It holds no measuring, deciding or formatting of its own.
 */
final class Runner {
  private final PrintStream out;

  Runner(PrintStream out) {
    this.out = out;
  }

  /**
   * Runs the comparison.
   *
   * @param args the command line
   * @return 0 when every run produced numbers, 1 when a run failed, 2 for a bad command line
   */
  int run(String[] args) {
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
        Engines.list(out);
        return 0;
      }
      engines = Engines.select(o);
    } catch (IllegalArgumentException e) {
      out.println("error: " + e.getMessage());
      return 2;
    }
    Data data = new Data(o.keySize, o.valueSizes, o.compressible, o.seed);
    boolean tempRoot = o.dataDir == null;
    Path dataRoot;
    try {
      dataRoot =
          tempRoot
              ? Files.createTempDirectory("kv4j-bench-")
              : Files.createDirectories(o.dataDir.toAbsolutePath());
    } catch (IOException e) {
      out.println("error: cannot create the data directory: " + e.getMessage());
      return 2;
    }
    announce(o, engines, dataRoot);
    Measured m;
    try {
      m = measure(o, engines, data, dataRoot);
    } finally {
      if (tempRoot) {
        Disk.delete(dataRoot);
      }
    }
    return o.scenarios.isEmpty() ? matrixOnly(o, m) : report(o, engines, data, m);
  }

  private void announce(Options o, List<StoreProvider> engines, Path dataRoot) {
    if (o.workload != null) {
      out.println(
          "your workload "
              + o.workload.name()
              + " ("
              + String.join(", ", o.workload.sources())
              + "): "
              + o.workload.describe());
    }
    out.printf(
        "kv4j-bench: %d engine(s) [%s], %s, %,d keys x %d B values, threads %s, %.1fs per run%s%n",
        engines.size(),
        engines.stream().map(StoreProvider::id).collect(Collectors.joining(", ")),
        Catalogue.ids(o.scenarios),
        o.keys,
        o.valueSize,
        o.threads,
        o.duration,
        o.rounds > 1 ? ", " + o.rounds + " rounds (engines take turns)" : "");
    out.println("stores in " + dataRoot + ", report to " + o.out.toAbsolutePath());
  }

  /**
   * What measuring found: the rows and the rest, the quietness verdict of the measured part, the
   * conformance matrix and its depth (null when not run), the wall time and the load averages.
   */
  private record Measured(
      Measurements measurements,
      Quietness.Verdict verdict,
      List<Conformance.Row> matrix,
      Map<String, String> depth,
      long started,
      String loadBefore) {}

  private Measured measure(Options o, List<StoreProvider> engines, Data data, Path dataRoot) {
    long started = System.nanoTime();
    String loadBefore = Machine.loadAverage();
    Measurements m = new Measurements();
    Rig rig = new Rig(o, data, dataRoot, new Progress(out), m);
    Quietness.Watch quiet =
        o.scenarios.isEmpty() ? null : Quietness.watch(serverProcesses(rig, engines));
    if (quiet != null) {
      out.println(quiet.beforeLine());
    }
    String fsType = Machine.fileSystemType(dataRoot);
    m.notes().add("stores on a " + fsType + " file system at " + dataRoot);
    if (fsType.equals("tmpfs")) {
      m.notes().add("WARNING: tmpfs has no durable storage: SYNC numbers are meaningless");
    }
    Quietness.Verdict verdict = null;
    if (!o.scenarios.isEmpty()) {
      new Session(rig).run(engines);
      // Before the conformance matrix: the verdict is about the measured part of the run.
      verdict = Quietness.judge(quiet.stop());
    }
    List<Conformance.Row> matrix = null;
    Map<String, String> depth = null;
    if (o.conformance) {
      depth = Conformance.depth();
      out.println("conformance: the TCK against each engine, depth " + depth);
      matrix = Conformance.run(engines, o.out.resolve("tck"), out);
    }
    return new Measured(m, verdict, matrix, depth, started, loadBefore);
  }

  /**
   * The local processes of the servers the run's server engines talk to, found from the settings
   * their main stores will be opened with; {@link ServerProcesses#none()} without server engines.
   */
  private static ServerProcesses serverProcesses(Rig rig, List<StoreProvider> engines) {
    Map<String, Map<String, String>> settings = new LinkedHashMap<>();
    for (StoreProvider p : engines) {
      if (Servers.isServer(p.id())) {
        try {
          settings.put(
              p.id(), Rig.effectiveSettings(p, rig.config(p, "main", rig.options().durability)));
        } catch (RuntimeException e) {
          // a bad --engine-option: the session reports it when it opens the store
          settings.put(p.id(), Map.of());
        }
      }
    }
    return ServerProcesses.find(Path.of("/proc"), settings);
  }

  /** {@code --scenarios none}: the conformance matrix in a folder of its own. */
  private int matrixOnly(Options o, Measured m) {
    if (m.matrix() == null) {
      out.println("error: --scenarios none without --conformance: nothing to do");
      return 2;
    }
    try {
      ConformanceReport.write(o.out, m.matrix(), m.depth(), o.args);
    } catch (IOException e) {
      out.println("error: cannot write the matrix to " + o.out + ": " + e.getMessage());
      return 1;
    }
    out.println("conformance matrix: " + o.out.resolve("conformance.md").toAbsolutePath());
    return 0;
  }

  private int report(Options o, List<StoreProvider> engines, Data data, Measured m) {
    Measurements ms = m.measurements();
    ms.notes()
        .add(
            String.format(
                Locale.ROOT,
                "the whole run took %.0f s of wall time; 1-minute load average %s at the start, %s"
                    + " at the end (%d cores: above that, other processes competed for the CPU)",
                (System.nanoTime() - m.started()) / 1e9,
                m.loadBefore(),
                Machine.loadAverage(),
                Runtime.getRuntime().availableProcessors()));
    Outcome outcome =
        Outcome.of(o, data, engines, ms.results())
            .withSettings(ms.settings(), ms.notes(), Machine.environment())
            .withStoreInfos(ms.storeInfos())
            .withQuietness(m.verdict());
    if (m.matrix() != null) {
      outcome = outcome.withConformance(m.matrix(), m.depth());
    }
    Report report = new Report(outcome);
    out.println(report.console());
    try {
      report.write(o.out);
    } catch (IOException e) {
      out.println("error: cannot write the report to " + o.out + ": " + e.getMessage());
      return 1;
    }
    out.println("report: " + o.out.resolve("report.md").toAbsolutePath());
    long failed =
        ms.results().stream().filter(r -> !r.ok() && !r.error().startsWith("n/a")).count();
    if (failed > 0) {
      out.println(failed + " run(s) FAILED; see the tables above");
      return 1;
    }
    return 0;
  }
}
