package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The "what to pick" section as lines of markdown (the console drops the {@code **}): the quietness
 * verdict, one line per pick, the smallest footprint, the caveats of every engine picked and the
 * wins per engine, written from the {@link Picks.Verdicts}.
 */
final class AdviceText {
  private AdviceText() {}

  /**
   * The lines.
   *
   * @param v the verdicts
   * @return markdown lines, in order
   */
  static List<String> lines(Picks.Verdicts v) {
    List<String> out = new ArrayList<>();
    String mark = v.noisy() ? " [noisy run: not to be trusted]" : "";
    for (Map.Entry<Durability, List<Picks.Pick>> t : v.picks().entrySet()) {
      out.add("");
      out.add(
          "**Durability "
              + t.getKey()
              + "** (persistent engines only; ops/s of the winner,"
              + " then how many times the runner-up's):");
      out.add("");
      for (Picks.Pick p : t.getValue()) {
        out.add(pick(p) + mark);
      }
    }
    if (v.footprint() != null) {
      out.add(footprint(v.footprint()) + mark);
    }
    if (v.quietness() != null && !out.isEmpty()) {
      out.addAll(0, v.quietness().lines());
    }
    if (out.isEmpty()) {
      out.add(
          v.nothingRun()
              ? "No throughput or footprint scenario was run: nothing to pick from here (the"
                  + " tables of the other scenarios stand on their own)."
              : "No persistent engine was measured: nothing to pick from.");
    }
    if (!v.caveats().isEmpty()) {
      out.add("");
      out.add(
          "**Caveats of the engines picked above** (what each declares at run time: features it"
              + " lacks, limits narrower than another engine's here; then what the api cannot"
              + " declare yet, from its README):");
      out.add("");
      v.caveats()
          .forEach(
              (w, c) ->
                  out.add(
                      "- "
                          + w
                          + ": "
                          + (c.isEmpty()
                              ? "every feature and the widest limits of this run; no other known"
                                  + " caveat"
                              : c)));
    }
    if (!v.wins().isEmpty()) {
      out.add("");
      out.add(
          "Wins per engine: "
              + v.wins().entrySet().stream()
                  .map(e -> e.getKey() + " " + e.getValue())
                  .collect(Collectors.joining(", "))
              + ". Numbers from one run on this machine: re-measure your own workload.");
    }
    return out;
  }

  /** One pick: the winner, its margin, the lowest p99, the best engine that keeps writes. */
  static String pick(Picks.Pick p) {
    Result win = p.winner();
    StringBuilder line = new StringBuilder("- ").append(p.group()).append(": **");
    line.append(win.engine()).append("**, ").append(Format.rate(win.opsPerSec())).append(" ops/s");
    if (p.runnerUp() != null) {
      line.append(String.format(Locale.ROOT, ", %.2fx %s", p.margin(), p.runnerUp().engine()));
      if (p.tie()) {
        line.append(" (a tie: within run-to-run noise)");
      }
    } else {
      line.append(" (only engine measured)");
    }
    if (p.lowestP99() != null) {
      line.append("; lowest p99: ")
          .append(p.lowestP99().engine())
          .append(" (")
          .append(Format.micros(p.lowestP99().p99Us()))
          .append(" vs ")
          .append(Format.micros(win.p99Us()))
          .append(")");
    }
    List<Result> safe = p.killSafe();
    if (safe != null) {
      line.append("; of the engines that keep acknowledged writes through kill -9: ");
      if (safe.isEmpty()) {
        line.append("none measured");
      } else {
        line.append(safe.get(0).engine())
            .append(", ")
            .append(Format.rate(safe.get(0).opsPerSec()))
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
    return line.toString();
  }

  private static String footprint(Picks.Smallest s) {
    StringBuilder line = new StringBuilder("- smallest footprint after updates: **");
    line.append(s.smallest().engine())
        .append(String.format(Locale.ROOT, "** (%.2fx live data)", s.smallest().amplification()));
    if (s.largest() != null) {
      line.append(
          String.format(
              Locale.ROOT,
              "; largest: %s (%.2fx)",
              s.largest().engine(),
              s.largest().amplification()));
    }
    return line.toString();
  }
}
