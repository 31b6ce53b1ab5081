package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.bench.Scenario.Kind;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * report.md: command, machine, workload, what to pick, one table per durability mode, the server
 * engines' tables, footprint, the long scenarios' tables, charts, every engine's effective
 * settings, conformance and the cost of the abstraction.
 */
final class MarkdownReport {
  private MarkdownReport() {}

  /**
   * The markdown.
   *
   * @param o what the run found
   * @param v the verdicts
   * @param charts the chart files, relative to the report
   * @return report.md's text
   */
  static String text(Outcome o, Picks.Verdicts v, List<String> charts) {
    StringBuilder b = new StringBuilder();
    b.append("# kv4j engine comparison\n\n");
    b.append("Command: `").append(Machine.command(o.options().args)).append("`\n\n");
    b.append(o.environment()).append("\n\n");
    if (v.yours() != null) {
      yours(b, v);
    }
    workload(b, o);
    b.append("\n## What to pick\n\n");
    for (String line : AdviceText.lines(v)) {
      b.append(line).append('\n');
    }
    durabilityTables(b, o.results());
    footprint(b, Grouping.footprints(o.results()));
    churn(b, o);
    for (Scenario s : Catalogue.standard().ofKind(Kind.DURING_CHURN)) {
      duringChurn(b, o, s);
    }
    scale(b, o);
    if (!charts.isEmpty()) {
      b.append("\n## Charts\n\n");
      for (String c : charts) {
        b.append("![").append(c).append("](").append(c).append(")\n\n");
      }
    }
    settings(b, o);
    if (o.conformance() != null) {
      b.append('\n')
          .append(
              ConformanceReport.markdown(o.conformance(), o.conformanceDepth(), o.options().out));
    } else {
      b.append(
          "\n## Conformance\n\nNot run in this report (`--conformance` or `--full` runs the TCK"
              + " against every engine).\n");
    }
    b.append('\n').append(AbstractionReport.markdown(o.results()));
    return b.toString();
  }

  /**
   * The user's workload, first: what it is and where its properties came from, one table of the
   * kv4j engines that ran it (the picked ones ranked, then the others), the kv4j engines that
   * cannot run it and why, the stores that are not kv4j engines in italics after them, and the
   * advice.
   */
  private static void yours(StringBuilder b, Picks.Verdicts v) {
    Picks.Yours y = v.yours();
    WorkloadDescription w = y.description();
    b.append("## Your workload: ").append(w.name()).append("\n\n");
    b.append(w.describe()).append(".\n\n");
    b.append("Properties from ")
        .append(String.join(", then ", w.sources()))
        .append(w.given().isEmpty() ? "" : ": `" + String.join("`, `", w.given()) + "`")
        .append("; every other one at its default (bench/README.md lists them).\n\n");
    b.append(
        "Ranked: the persistent kv4j engines that ran it, fastest first. Latency is per operation"
            + " of the mix (all kinds together); CPU µs/op is process CPU time per operation;"
            + " disk is the store's allocated bytes at rest after the run. Stores that are not"
            + " kv4j engines are listed after them, in italics, for reference only: they are"
            + " never ranked or advised.\n\n");
    b.append(
        "| engine | threads | ops/s | p50 | p99 | p99.9 | CPU µs/op | disk after the run |\n"
            + "|---|--:|--:|--:|--:|--:|--:|--:|\n");
    int rank = 0;
    for (List<Result> group : List.of(y.ranked(), y.unranked(), y.cannot(), y.peers())) {
      for (Result r : group) {
        String name = Engines.label(r.engine(), true);
        if (group == y.ranked()) {
          name = ++rank + ". " + name;
        } else if (group == y.unranked()) {
          name += " (" + AdviceText.unrankedWhy(r.engine()) + ")";
        }
        if (!r.ok()) {
          b.append("| ")
              .append(name)
              .append(" | ")
              .append(r.error().replace("|", "/"))
              .append(" | | | | | | |\n");
          continue;
        }
        Result d = y.disk().get(r.engine());
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %d | %s | %s | %s | %s | %.1f | %s |%n",
                name,
                r.threads(),
                Format.rate(r),
                Format.micros(r.p50Us()),
                Format.micros(r.p99Us()),
                Format.micros(r.p999Us()),
                r.cpuUsPerOp(),
                d == null ? "-" : Format.mib(d.diskBytes())));
      }
    }
    b.append("\n**Advice:** ").append(AdviceText.yours(v)).append("\n\n");
  }

  private static void workload(StringBuilder b, Outcome o) {
    Options options = o.options();
    Data data = o.data();
    b.append(o.options().workload == null ? "## Workload\n\n" : "## The run\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "- %,d keys of %d bytes (8-byte big-endian index + padding), %s, %s%n",
            options.keys,
            data.keySize(),
            data.sizes(),
            data.compressible() ? "compressible (~2:1)" : "incompressible (random)"));
    b.append(
        String.format(
            Locale.ROOT,
            "- each timed run: %.1f s warm-up, %.1f s measured, at %s threads; YCSB keys zipfian"
                + " 0.99 scrambled (D: latest); every read verifies its value%n",
            options.warmup,
            options.duration,
            options.threads.stream().map(String::valueOf).collect(Collectors.joining(", "))));
    if (options.workload != null) {
      b.append(
          String.format(
              Locale.ROOT,
              "- your workload (`%s`): %,d operations per measurement, split among the threads,"
                  + " after %.1f s of its mix as warm-up (not counted); its zipfian keys are"
                  + " YCSB's ScrambledZipfianGenerator (a rank among 10^10 items, FNV-hashed onto"
                  + " the records)%n",
              Scenario.YOURS,
              options.workload.operationCount(),
              options.warmup));
    }
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
    for (String n : o.notes()) {
      b.append("- ").append(n).append('\n');
    }
    b.append("\nScenarios:\n\n");
    for (Scenario s : options.scenarios) {
      b.append("- `").append(s.id()).append("`: ").append(s.description()).append('\n');
    }
  }

  private static void durabilityTables(StringBuilder b, List<Result> results) {
    for (Map.Entry<Durability, List<Result>> t : Grouping.byDurability(results, false).entrySet()) {
      b.append("\n## Durability ").append(t.getKey()).append("\n\n");
      b.append(
          t.getKey() == Durability.SYNC
              ? "Acknowledged writes survive power loss (fsync per write or group commit).\n\n"
              : "Acknowledged writes survive kill -9 of the process, not power loss"
                  + killExceptions(t.getValue())
                  + ".\n\n");
      table(b, t.getValue());
    }
    for (Map.Entry<Durability, List<Result>> t : Grouping.byDurability(results, true).entrySet()) {
      b.append("\n## Network round trips (server engines), durability ")
          .append(t.getKey())
          .append("\n\n");
      b.append(
          "Every operation is at least one round trip to a server (here on loopback: on a LAN add"
              + " ~0.1-1 ms each). Durability as the engine maps it to the server's settings"
              + " (see each engine's README). CPU µs/op counts this process only, not the"
              + " server's work.\n\n");
      table(b, t.getValue());
    }
  }

  /**
   * ", except with X (rule ...), Y (rules ...): ..." naming the engines of a table that lose writes
   * to kill -9.
   */
  private static String killExceptions(List<Result> table) {
    Set<String> lossy = Picks.losingWrites(table);
    return lossy.isEmpty()
        ? ""
        : ", except with "
            + String.join(", ", lossy)
            + ": the kv4j TCK shows each losing acknowledged writes to a kill -9 (see its"
            + " caveats)";
  }

  private static void table(StringBuilder b, List<Result> rs) {
    b.append("| engine | scenario | threads | ops/s | p50 | p99 | p99.9 | CPU µs/op | bg |\n");
    b.append("|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (Result r : Grouping.sorted(rs)) {
      if (r.ok()) {
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d | %s | %s | %s | %s | %.1f | %.0f%% |%n",
                Engines.label(r.engine(), true),
                r.label(),
                r.threads(),
                Format.rate(r),
                Format.micros(r.p50Us()),
                Format.micros(r.p99Us()),
                Format.micros(r.p999Us()),
                r.cpuUsPerOp(),
                r.bgCpuShare() * 100));
      } else {
        b.append("| ")
            .append(Engines.label(r.engine(), true))
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

  static String apparent(Result r) {
    double a = r.figure("apparent-bytes");
    return Double.isNaN(a) ? "-" : Format.mib((long) a);
  }

  static String writes(Result r) {
    double w = r.figure("writes");
    return Double.isNaN(w) ? "-" : String.format(Locale.ROOT, "%,.0f", w);
  }

  private static void footprint(StringBuilder b, List<Result> fp) {
    if (fp.isEmpty()) {
      return;
    }
    b.append(
        "\n## Footprint\n\nAllocated blocks on disk (`du`) / live key+value bytes, measured at"
            + " rest: after `sync()` and, for engines that report background work in `stats()`"
            + " (RocksDB), once no flush or compaction is running or due. Apparent = the sum of"
            + " the files' sizes; the whole store directory counts, write-ahead logs included."
            + " Phases: `after-load` (fillrandom) and `after-update` (after the timed scenarios,"
            + " so the writes depend on the engine's speed) on the main store; `after-fillbatch`"
            + " and `after-fixed-updates` (then "
            + Footprint.FIXED_UPDATES_PER_KEY
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
              Engines.label(r.engine(), true),
              r.phase(),
              Format.mib(r.diskBytes()),
              apparent(r),
              Format.mib(r.liveBytes()),
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

  private static void churn(StringBuilder b, Outcome o) {
    List<String[]> churn = OwnTables.churn(o.results());
    if (churn.size() <= 1) {
      return;
    }
    Options options = o.options();
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
    b.append(table(churn));
    List<String> notes = OwnTables.churnNotes(o.results());
    if (!notes.isEmpty()) {
      b.append('\n');
      notes.forEach(n -> b.append(n).append('\n'));
    }
  }

  private static void duringChurn(StringBuilder b, Outcome o, Scenario s) {
    List<String[]> rows = OwnTables.duringChurn(o.results(), s);
    if (rows.size() <= 1) {
      return;
    }
    Options options = o.options();
    String op = OwnTables.operation(s);
    String keys = s.distribution().name().toLowerCase(Locale.ROOT);
    String thread =
        s.needsOrderedScan()
            ? "scans of "
                + s.mix().steps().get(0).maxLength()
                + " keys from "
                + keys
                + " random"
                + " starts"
            : keys + " random gets";
    b.append("\n## ").append(s.title("")).append("\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "On the loaded store: one thread of verified %s alone for %.1f s, then the same %s"
                + " next to one writer of zipfian overwrites at full speed for %.1f s (each after"
                + " %.1f s of warm-up). Retention = %ss/s during churn / %ss/s alone.%n%n",
            thread,
            options.duration,
            s.needsOrderedScan() ? "scanner" : "reader",
            options.duration,
            options.warmup,
            op,
            op));
    b.append(table(rows));
  }

  private static void scale(StringBuilder b, Outcome o) {
    List<String[]> scale = OwnTables.scale(o.results());
    if (scale.size() <= 1) {
      return;
    }
    Options options = o.options();
    Scenario s = Catalogue.standard().ofKind(Kind.SCALE).get(0);
    b.append("\n## Index memory and reopen at scale\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "A fresh store loaded with %,d keys of %d bytes and values of %d bytes (write"
                + " batches of %d where the engine has atomic batches, else single puts; load"
                + " capped at %.0f s), durability %s. Longest write = the slowest batch (or put)"
                + " of the load. Heap = Java heap used after full GCs, with the store open, minus"
                + " before it was opened, per key loaded (after the load, and again after the"
                + " reopen); Java heap only, so engines that keep their index in native memory or"
                + " a mapping (rocksdb, lmdb, chronicle-map) show about 0. Max heap %d MiB (%,d"
                + " keys need about `-Xmx4g`: `java -Xmx4g -jar ...`). Reopen = open + one"
                + " verified get of a random key, with a warm page cache (no root to drop it)."
                + " Gets = random gets of loaded keys on 1 thread for %.1f s after the reopen,"
                + " each value verified (untimed), latency per get. GC = the collector's pauses"
                + " that began in the phase (count / sum / longest; from the JVM's GC"
                + " notifications, the bench's own `System.gc()` and concurrent cycles left"
                + " out).%n%n",
            options.keys(s.keysOption()),
            o.data().keySize(),
            options.valueSize(s.valueSizeOption()),
            s.batch(),
            options.scaleMaxSeconds,
            options.durability.name(),
            Runtime.getRuntime().maxMemory() >> 20,
            10_000_000,
            options.scaleReadSeconds));
    b.append(table(scale));
  }

  private static void settings(StringBuilder b, Outcome o) {
    b.append("\n## Engines and their effective settings\n\n");
    for (Map.Entry<String, Map<String, String>> e : o.settings().entrySet()) {
      StoreProvider p = o.engines().get(e.getKey());
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
  }

  /**
   * A markdown table: the first two columns left-aligned, the others right-aligned.
   *
   * @param rows a header, then the rows
   * @return the table
   */
  static String table(List<String[]> rows) {
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
}
