package io.kv4j.bench;

import io.kv4j.Durability;
import io.kv4j.bench.Scenario.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The tables and picks printed at the end of a run: aligned plain text. */
final class ConsoleReport {
  /** The header of the durability tables. */
  static final String HEADER =
      "engine | scenario | threads | ops/s | p50 | p99 | p99.9 | CPU µs/op";

  private ConsoleReport() {}

  /**
   * The text.
   *
   * @param o what the run found
   * @param v the verdicts
   * @return the tables, then "what to pick"
   */
  static String text(Outcome o, Picks.Verdicts v) {
    List<Result> results = o.results();
    StringBuilder b = new StringBuilder();
    if (v.yours() != null) {
      yours(b, v);
    }
    for (Map.Entry<Durability, List<Result>> t : Grouping.byDurability(results, false).entrySet()) {
      b.append("\n== durability ").append(t.getKey()).append(" ==\n");
      table(b, t.getValue());
    }
    for (Map.Entry<Durability, List<Result>> t : Grouping.byDurability(results, true).entrySet()) {
      b.append("\n== network round trips (server engines), durability ")
          .append(t.getKey())
          .append(" ==\n");
      table(b, t.getValue());
    }
    footprint(b, Grouping.footprints(results));
    List<String[]> churn = OwnTables.churn(results);
    if (churn.size() > 1) {
      b.append("\n== space under churn (allocated disk bytes / live bytes) ==\n");
      b.append(align(churn));
      OwnTables.churnNotes(results).forEach(n -> b.append(n).append('\n'));
    }
    for (Scenario s : Catalogue.standard().ofKind(Kind.DURING_CHURN)) {
      List<String[]> rows = OwnTables.duringChurn(results, s);
      if (rows.size() > 1) {
        b.append("\n== ")
            .append(s.title("").toLowerCase(Locale.ROOT))
            .append(" (1 ")
            .append(who(s))
            .append(", 1 zipfian writer) ==\n");
        b.append(align(rows));
      }
    }
    List<String[]> scale = OwnTables.scale(results);
    if (scale.size() > 1) {
      b.append("\n== index memory and reopen at scale (Java heap only) ==\n");
      b.append(align(scale));
    }
    b.append("\n== what to pick ==\n");
    for (String line : AdviceText.lines(v)) {
      b.append(line.replace("**", "")).append('\n');
    }
    return b.toString();
  }

  /**
   * The user's workload, first: what it is, the kv4j engines that ran it (then those that are not
   * picked, those that cannot run it and why, then the stores that are not kv4j engines), and the
   * advice.
   */
  private static void yours(StringBuilder b, Picks.Verdicts v) {
    Picks.Yours y = v.yours();
    b.append("\n== your workload: ").append(y.description().name()).append(" ==\n");
    b.append(y.description().describe()).append('\n');
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "engine", "threads", "ops/s", "p50", "p99", "p99.9", "CPU µs/op", "disk after the run"
        });
    for (List<Result> group : List.of(y.ranked(), y.unranked(), y.peers())) {
      for (Result r : group) {
        if (r.ok()) {
          Result d = y.disk().get(r.engine());
          rows.add(
              new String[] {
                Engines.label(r.engine(), false)
                    + (group == y.unranked()
                        ? " (" + AdviceText.unrankedWhy(r.engine()) + ")"
                        : ""),
                "" + r.threads(),
                Format.rate(r),
                Format.micros(r.p50Us()),
                Format.micros(r.p99Us()),
                Format.micros(r.p999Us()),
                String.format(Locale.ROOT, "%.1f", r.cpuUsPerOp()),
                d == null ? "-" : Format.mib(d.diskBytes())
              });
        }
      }
    }
    if (rows.size() > 1) {
      b.append(align(rows));
    }
    for (List<Result> group : List.of(y.cannot(), y.peers())) {
      for (Result r : group) {
        if (!r.ok()) {
          b.append("cannot run it: ")
              .append(Engines.label(r.engine(), false))
              .append(": ")
              .append(r.error())
              .append('\n');
        }
      }
    }
    b.append("advice: ").append(AdviceText.yours(v).replace("**", "")).append('\n');
  }

  /** The thread of a during-churn scenario: "reader", "scanner of 100 keys". */
  private static String who(Scenario s) {
    if (!s.needsOrderedScan()) {
      return "reader";
    }
    Mix.Step scan = s.mix().steps().get(0);
    return "scanner of " + scan.maxLength() + " keys";
  }

  private static void footprint(StringBuilder b, List<Result> fp) {
    if (fp.isEmpty()) {
      return;
    }
    b.append("\n== footprint at rest (allocated disk bytes / live bytes) ==\n");
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"engine", "phase", "allocated", "apparent", "live", "ratio", "writes"});
    for (Result r : fp) {
      rows.add(
          new String[] {
            Engines.label(r.engine(), false),
            r.phase(),
            Format.mib(r.diskBytes()),
            MarkdownReport.apparent(r),
            Format.mib(r.liveBytes()),
            String.format(Locale.ROOT, "%.2fx", r.amplification()),
            MarkdownReport.writes(r)
          });
    }
    b.append(align(rows));
  }

  private static void table(StringBuilder b, List<Result> rs) {
    List<String[]> rows = new ArrayList<>();
    rows.add(HEADER.split(" \\| "));
    for (Result r : Grouping.sorted(rs)) {
      rows.add(row(r));
    }
    b.append(align(rows));
  }

  private static String[] row(Result r) {
    if (!r.ok()) {
      return new String[] {
        Engines.label(r.engine(), false),
        r.label(),
        r.threads() == 0 ? "" : "" + r.threads(),
        r.error(),
        "",
        "",
        "",
        ""
      };
    }
    return new String[] {
      Engines.label(r.engine(), false),
      r.label(),
      "" + r.threads(),
      Format.rate(r),
      Format.micros(r.p50Us()),
      Format.micros(r.p99Us()),
      Format.micros(r.p999Us()),
      String.format(Locale.ROOT, "%.1f", r.cpuUsPerOp())
    };
  }

  /**
   * Cells as aligned columns: numbers right-aligned, the rest left; a rule under the header. An
   * error in the fourth cell of a row whose fifth is empty does not widen the fourth column.
   *
   * @param rows a header, then the rows
   * @return the lines
   */
  static String align(List<String[]> rows) {
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
}
