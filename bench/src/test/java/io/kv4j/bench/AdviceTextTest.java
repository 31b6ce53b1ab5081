package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The "what to pick" lines written from hand-made verdicts. */
class AdviceTextTest {
  private static Result r(String engine, double ops, double p99) {
    return new Result(
        engine, "ycsb-a", "", 2, Durability.BUFFERED, 10, 1, ops, 1, p99, 1, 1, 1, 0, 0, 0, null);
  }

  private static Picks.Verdicts verdicts(
      List<Picks.Pick> picks, Picks.Smallest fp, Quietness.Verdict q, Map<String, String> caveats) {
    Map<Durability, List<Picks.Pick>> m = new LinkedHashMap<>();
    if (!picks.isEmpty()) {
      m.put(Durability.BUFFERED, picks);
    }
    Map<String, Long> wins = new LinkedHashMap<>();
    picks.forEach(p -> wins.merge(p.winner().engine(), 1L, Long::sum));
    return new Picks.Verdicts(m, fp, picks.isEmpty() && fp == null, q, caveats, wins);
  }

  @Test
  void pick_winnerMarginLowestP99AndKillSafeAlternative() {
    Picks.Pick p =
        new Picks.Pick(
            "ycsb-a @2t",
            Durability.BUFFERED,
            r("chronicle-map", 1_500_000, 12),
            r("hashlog", 1_000_000, 11),
            r("hashlog", 1_000_000, 11),
            List.of(r("hashlog", 1_000_000, 11), r("lmdb", 400_000, 30)));
    assertThat(AdviceText.pick(p))
        .isEqualTo(
            "- ycsb-a @2t: **chronicle-map**, 1,500,000 ops/s, 1.50x hashlog; lowest p99: hashlog"
                + " (11 µs vs 12 µs); of the engines that keep acknowledged writes through kill -9:"
                + " hashlog, 1,000,000 ops/s, 2.50x lmdb");
  }

  @Test
  void pick_tieAloneAndNoSafeEngine_sayedInWords() {
    Picks.Pick tie =
        new Picks.Pick("scan @1t", Durability.SYNC, r("a", 105, 1), r("b", 100, 1), null, null);
    assertThat(AdviceText.pick(tie))
        .isEqualTo("- scan @1t: **a**, 105 ops/s, 1.05x b (a tie: within run-to-run noise)");
    Picks.Pick alone =
        new Picks.Pick("scan @1t", Durability.BUFFERED, r("mvstore", 7, 1), null, null, List.of());
    assertThat(AdviceText.pick(alone))
        .isEqualTo(
            "- scan @1t: **mvstore**, 7 ops/s (only engine measured); of the engines that keep"
                + " acknowledged writes through kill -9: none measured");
  }

  @Test
  void lines_noisyRun_verdictFirstEveryPickMarkedThenCaveatsAndWins() {
    Picks.Pick p = new Picks.Pick("scan @1t", Durability.BUFFERED, r("a", 9, 1), null, null, null);
    Result small = Result.footprint("b", "footprint", "after-update", Durability.BUFFERED, 15, 10);
    Result big = Result.footprint("a", "footprint", "after-update", Durability.BUFFERED, 30, 10);
    Map<String, String> caveats = new LinkedHashMap<>();
    caveats.put("a", "");
    caveats.put("b", "no atomic batches");
    List<String> lines =
        AdviceText.lines(
            verdicts(List.of(p), new Picks.Smallest(small, big), ReportTest.noisy(), caveats));
    int q = ReportTest.noisy().lines().size();
    assertThat(lines.get(0)).startsWith("**NOT quiet enough to trust the picks:**");
    assertThat(lines.subList(q, lines.size()))
        .containsExactly(
            "",
            "**Durability BUFFERED** (persistent engines only; ops/s of the winner, then how many"
                + " times the runner-up's):",
            "",
            "- scan @1t: **a**, 9 ops/s (only engine measured) [noisy run: not to be trusted]",
            "- smallest footprint after updates: **b** (1.50x live data); largest: a (3.00x)"
                + " [noisy run: not to be trusted]",
            "",
            "**Caveats of the engines picked above** (what each declares at run time: features it"
                + " lacks, limits narrower than another engine's here; then what the api cannot"
                + " declare yet, from its README):",
            "",
            "- a: every feature and the widest limits of this run; no other known caveat",
            "- b: no atomic batches",
            "",
            "Wins per engine: a 1. Numbers from one run on this machine: re-measure your own"
                + " workload.");
  }

  @Test
  void lines_nothingToPick_saysWhyWithoutAVerdict() {
    assertThat(AdviceText.lines(verdicts(List.of(), null, ReportTest.quiet(), Map.of())))
        .containsExactly(
            "No throughput or footprint scenario was run: nothing to pick from here (the tables"
                + " of the other scenarios stand on their own).");
    Picks.Verdicts notPersistent =
        new Picks.Verdicts(Map.of(), null, false, null, Map.of(), Map.of());
    assertThat(AdviceText.lines(notPersistent))
        .containsExactly("No persistent engine was measured: nothing to pick from.");
  }
}
