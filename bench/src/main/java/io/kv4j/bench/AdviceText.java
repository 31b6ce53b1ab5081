package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The "what to pick" section as lines of markdown (the console drops the {@code **}): the quietness
 * verdict and, on a busy machine, which differences exceed the spread between rounds; the user's
 * workload's advice; one line per pick; the smallest footprint; the caveats of every engine picked
 * and the wins per engine, written from the {@link Picks.Verdicts}. Only kv4j engines are advised;
 * the stores that are not kv4j engines appear in a pick's line as reference numbers, after the
 * words "for reference".
 */
final class AdviceText {
  /** The words that introduce the reference numbers of the stores a user cannot pick. */
  static final String REFERENCE = "for reference, not kv4j engines: ";

  private AdviceText() {}

  /**
   * The lines.
   *
   * @param v the verdicts
   * @return markdown lines, in order
   */
  static List<String> lines(Picks.Verdicts v) {
    List<String> out = new ArrayList<>();
    if (v.yours() != null) {
      out.add("");
      out.add("**Your workload (" + v.yours().description().name() + "):** " + yours(v));
    }
    for (Map.Entry<Durability, List<Picks.Pick>> t : v.picks().entrySet()) {
      out.add("");
      out.add(
          "**Durability "
              + t.getKey()
              + "** (persistent kv4j engines only; ops/s of the winner, then how many times the"
              + " runner-up's):");
      out.add("");
      for (Picks.Pick p : t.getValue()) {
        out.add(pick(p) + mark(v, p.spread()));
      }
    }
    if (v.footprint() != null) {
      out.add(footprint(v.footprint()) + mark(v, Picks.Spread.NO_ROUNDS));
    }
    if (v.quietness() != null && !out.isEmpty()) {
      List<String> head = new ArrayList<>(v.quietness().lines());
      String spread = spreadSummary(v);
      if (spread != null) {
        head.add("");
        head.add(spread);
      }
      out.addAll(0, head);
    }
    if (out.isEmpty()) {
      out.add(
          v.nothingRun()
              ? "No throughput or footprint scenario was run: nothing to pick from here (the"
                  + " tables of the other scenarios stand on their own)."
              : "No persistent kv4j engine was measured: nothing to pick from.");
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
          "Wins per kv4j engine: "
              + v.wins().entrySet().stream()
                  .map(e -> e.getKey() + " " + e.getValue())
                  .collect(Collectors.joining(", "))
              + ". Numbers from one run on this machine: re-measure your own workload"
              + " (--workload).");
    }
    return out;
  }

  /**
   * What a pick's line ends with on a busy machine: whether its difference still stands.
   *
   * @param v the verdicts
   * @param s the pick's lead against the spread between rounds
   * @return the mark, empty on a quiet run
   */
  static String mark(Picks.Verdicts v, Picks.Spread s) {
    if (!v.noisy()) {
      return "";
    }
    return switch (s) {
      case BEYOND -> " [busy machine, but beyond the spread between rounds]";
      case WITHIN -> " [busy machine: within the spread between rounds, not to be trusted]";
      case NO_ROUNDS -> " [noisy run: not to be trusted]";
    };
  }

  /**
   * On a busy machine, which differences still stand: those beyond the spread between rounds; or,
   * without rounds, how to find out. Null on a quiet run or without a runner-up anywhere.
   */
  static String spreadSummary(Picks.Verdicts v) {
    if (!v.noisy()) {
      return null;
    }
    List<String> beyond = new ArrayList<>();
    int compared = 0;
    int withRunnerUp = 0;
    for (List<Picks.Pick> ps : v.picks().values()) {
      for (Picks.Pick p : ps) {
        if (p.runnerUp() == null) {
          continue;
        }
        withRunnerUp++;
        Picks.Spread s = p.spread();
        if (s != Picks.Spread.NO_ROUNDS) {
          compared++;
        }
        if (s == Picks.Spread.BEYOND) {
          beyond.add(
              p.group() + " (" + p.winner().engine() + " over " + p.runnerUp().engine() + ")");
        }
      }
    }
    if (withRunnerUp == 0) {
      return null;
    }
    if (compared == 0) {
      return "What still holds on a busy machine: nothing can be told from single windows; with"
          + " --rounds 3 (or more) the engines take turns window by window and each pick says"
          + " whether its difference exceeds the spread between rounds.";
    }
    return "What still holds on this busy machine: "
        + beyond.size()
        + " of "
        + compared
        + " differences exceed the spread between rounds (the engines took turns window by"
        + " window, so a slow minute hit them all)"
        + (beyond.isEmpty() ? "" : ": " + String.join(", ", beyond))
        + "; the others are within it.";
  }

  /** The user's workload's advice: one sentence. */
  static String yours(Picks.Verdicts v) {
    Picks.Yours y = v.yours();
    Result pick = y.pick();
    if (pick == null) {
      StringBuilder b = new StringBuilder("no persistent kv4j engine in this run can run it");
      List<String> why = new ArrayList<>();
      y.cannot().forEach(r -> why.add(r.engine() + ": " + r.error()));
      y.unranked().forEach(r -> why.add(r.engine() + ": " + unrankedWhy(r.engine())));
      if (!why.isEmpty()) {
        b.append(" (").append(String.join("; ", why)).append(")");
      }
      if (y.able().isEmpty()) {
        b.append(", and no other kv4j engine on the classpath can.");
      } else {
        b.append("; kv4j engines on the classpath that can: ")
            .append(String.join(", ", y.able()))
            .append(" (add them with --engines ")
            .append(String.join(",", y.able()))
            .append(").");
      }
      return capitalized(b.toString());
    }
    Result next = y.runnerUp();
    String mark = mark(v, Picks.Spread.of(pick, next));
    if (next == null) {
      return "Pick **"
          + pick.engine()
          + "** for this workload: the only persistent kv4j engine measured that runs it, at "
          + Format.rate(pick.opsPerSec())
          + " ops/s, p99 "
          + Format.micros(pick.p99Us())
          + disk(y, pick, " and ", " on disk after the run")
          + "; name others with --engines to compare."
          + mark;
    }
    Picks.Spread spread = Picks.Spread.of(pick, next);
    if (y.tie()) {
      return "**"
          + pick.engine()
          + "** and **"
          + next.engine()
          + String.format(
              Locale.ROOT, "** are within run-to-run noise for this workload (%.2fx", y.margin())
          + (spread == Picks.Spread.WITHIN ? ", and their rounds overlap" : "")
          + "): choose by p99 ("
          + pick.engine()
          + " "
          + Format.micros(pick.p99Us())
          + ", "
          + next.engine()
          + " "
          + Format.micros(next.p99Us())
          + ")"
          + (y.disk().containsKey(pick.engine()) && y.disk().containsKey(next.engine())
              ? ", disk after the run ("
                  + pick.engine()
                  + " "
                  + Format.mib(y.disk().get(pick.engine()).diskBytes())
                  + ", "
                  + next.engine()
                  + " "
                  + Format.mib(y.disk().get(next.engine()).diskBytes())
                  + ")"
              : "")
          + " and the caveats below."
          + mark;
    }
    return "Pick **"
        + pick.engine()
        + "** for this workload: "
        + String.format(Locale.ROOT, "%.2fx", y.margin())
        + " the ops/s of "
        + next.engine()
        + ", the next kv4j engine"
        + (spread == Picks.Spread.BEYOND ? ", beyond the spread between rounds" : "")
        + ", with p99 "
        + Format.micros(pick.p99Us())
        + " against "
        + Format.micros(next.p99Us())
        + (y.disk().containsKey(pick.engine()) && y.disk().containsKey(next.engine())
            ? " and "
                + Format.mib(y.disk().get(pick.engine()).diskBytes())
                + " on disk after the run against "
                + Format.mib(y.disk().get(next.engine()).diskBytes())
            : "")
        + "."
        + mark;
  }

  /** Why a kv4j engine with numbers is not picked. */
  static String unrankedWhy(String engine) {
    return Servers.isServer(engine)
        ? "server engine, compared in its own tables"
        : "not persistent, reference only";
  }

  private static String disk(Picks.Yours y, Result r, String before, String after) {
    Result d = y.disk().get(r.engine());
    return d == null ? "" : before + Format.mib(d.diskBytes()) + after;
  }

  private static String capitalized(String s) {
    return Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  /** One pick: the winner, its margin and spread, the lowest p99, the reference stores. */
  static String pick(Picks.Pick p) {
    Result win = p.winner();
    StringBuilder line = new StringBuilder("- ").append(p.group()).append(": **");
    line.append(win.engine()).append("**, ").append(Format.rate(win.opsPerSec())).append(" ops/s");
    if (p.runnerUp() != null) {
      Result next = p.runnerUp();
      line.append(String.format(Locale.ROOT, ", %.2fx %s", p.margin(), next.engine()));
      if (p.tie()) {
        line.append(" (a tie: within run-to-run noise)");
      }
      switch (p.spread()) {
        case BEYOND ->
            line.append("; beyond the spread between rounds (")
                .append(win.engine())
                .append("'s slowest round ")
                .append(Format.rate(win.figure("ops-per-sec-min")))
                .append(" > ")
                .append(next.engine())
                .append("'s fastest ")
                .append(Format.rate(next.figure("ops-per-sec-max")))
                .append(")");
        case WITHIN ->
            line.append("; within the spread between rounds (")
                .append(win.engine())
                .append(" ")
                .append(Format.rate(win.figure("ops-per-sec-min")))
                .append("–")
                .append(Format.rate(win.figure("ops-per-sec-max")))
                .append(", ")
                .append(next.engine())
                .append(" ")
                .append(Format.rate(next.figure("ops-per-sec-min")))
                .append("–")
                .append(Format.rate(next.figure("ops-per-sec-max")))
                .append(")");
        case NO_ROUNDS -> {}
      }
    } else {
      line.append(" (only kv4j engine measured)");
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
    if (!p.peers().isEmpty()) {
      line.append("; ").append(REFERENCE);
      List<String> refs = new ArrayList<>();
      for (Result r : p.peers()) {
        String lossy = Picks.LOSES_WRITES_ON_KILL.get(r.engine());
        refs.add(
            r.engine()
                + " "
                + Format.rate(r.opsPerSec())
                + " ops/s"
                + String.format(
                    Locale.ROOT, " (%.2fx %s", r.opsPerSec() / win.opsPerSec(), win.engine())
                + (lossy == null
                    ? ""
                    : p.durability() == Durability.BUFFERED
                        ? "; loses acknowledged writes to kill -9, " + lossy
                        : "")
                + ")");
      }
      line.append(String.join(", ", refs));
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
    if (!s.peers().isEmpty()) {
      line.append("; ")
          .append(REFERENCE)
          .append(
              s.peers().stream()
                  .map(r -> String.format(Locale.ROOT, "%s %.2fx", r.engine(), r.amplification()))
                  .collect(Collectors.joining(", ")));
    }
    return line.toString();
  }
}
