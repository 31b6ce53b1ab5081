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
    return new Picks.Verdicts(m, fp, picks.isEmpty() && fp == null, q, caveats, wins, null);
  }

  @Test
  void pick_winnerMarginLowestP99AndPeersAsReference() {
    Picks.Pick p =
        new Picks.Pick(
            "ycsb-a @2t",
            Durability.BUFFERED,
            r("hashlog", 1_000_000, 12),
            r("lmdb", 400_000, 30),
            r("rocksdb", 300_000, 11),
            List.of(r("chronicle-map", 1_500_000, 12), r("sqlite-raw", 500_000, 30)));
    assertThat(AdviceText.pick(p))
        .isEqualTo(
            "- ycsb-a @2t: **hashlog**, 1,000,000 ops/s, 2.50x lmdb; lowest p99: rocksdb"
                + " (11 µs vs 12 µs); for reference, not kv4j engines: chronicle-map 1,500,000"
                + " ops/s (1.50x hashlog; loses acknowledged writes to kill -9, rule 7.5),"
                + " sqlite-raw 500,000 ops/s (0.50x hashlog)");
  }

  @Test
  void pick_tieAndAlone_sayedInWords() {
    Picks.Pick tie =
        new Picks.Pick(
            "scan @1t", Durability.SYNC, r("a", 105, 1), r("b", 100, 1), null, List.of());
    assertThat(AdviceText.pick(tie))
        .isEqualTo("- scan @1t: **a**, 105 ops/s, 1.05x b (a tie: within run-to-run noise)");
    Picks.Pick alone =
        new Picks.Pick("scan @1t", Durability.BUFFERED, r("lmdb", 7, 1), null, null, List.of());
    assertThat(AdviceText.pick(alone))
        .isEqualTo("- scan @1t: **lmdb**, 7 ops/s (only kv4j engine measured)");
  }

  @Test
  void pick_withRounds_saysWhetherTheLeadExceedsTheSpreadBetweenRounds() {
    Picks.Pick beyond =
        new Picks.Pick(
            "readrandom @1t",
            Durability.BUFFERED,
            PicksTest.rounds(r("hashlog", 300_000, 1), 290_000, 310_000),
            PicksTest.rounds(r("lmdb", 200_000, 1), 150_000, 280_000),
            null,
            List.of());
    assertThat(AdviceText.pick(beyond))
        .isEqualTo(
            "- readrandom @1t: **hashlog**, 300,000 ops/s, 1.50x lmdb; beyond the spread between"
                + " rounds (hashlog's slowest round 290,000 > lmdb's fastest 280,000)");
    Picks.Pick within =
        new Picks.Pick(
            "readrandom @1t",
            Durability.BUFFERED,
            PicksTest.rounds(r("hashlog", 300_000, 1), 200_000, 310_000),
            PicksTest.rounds(r("lmdb", 200_000, 1), 150_000, 280_000),
            null,
            List.of());
    assertThat(AdviceText.pick(within))
        .isEqualTo(
            "- readrandom @1t: **hashlog**, 300,000 ops/s, 1.50x lmdb; within the spread between"
                + " rounds (hashlog 200,000–310,000, lmdb 150,000–280,000)");
  }

  @Test
  void lines_noisyRunWithRounds_saysWhichDifferencesStillHold() {
    Picks.Pick beyond =
        new Picks.Pick(
            "readrandom @1t",
            Durability.BUFFERED,
            PicksTest.rounds(r("hashlog", 300_000, 1), 290_000, 310_000),
            PicksTest.rounds(r("lmdb", 200_000, 1), 150_000, 280_000),
            null,
            List.of());
    Picks.Pick within =
        new Picks.Pick(
            "ycsb-a @1t",
            Durability.BUFFERED,
            PicksTest.rounds(r("lmdb", 300_000, 1), 200_000, 310_000),
            PicksTest.rounds(r("hashlog", 200_000, 1), 150_000, 280_000),
            null,
            List.of());
    List<String> lines =
        AdviceText.lines(verdicts(List.of(beyond, within), null, ReportTest.noisy(), Map.of()));
    assertThat(lines)
        .contains(
            "What still holds on this busy machine: 1 of 2 differences exceed the spread between"
                + " rounds (the engines took turns window by window, so a slow minute hit them"
                + " all): readrandom @1t (hashlog over lmdb); the others are within it.")
        .anyMatch(
            l ->
                l.startsWith("- readrandom @1t")
                    && l.endsWith(" [busy machine, but beyond the spread between rounds]"))
        .anyMatch(
            l ->
                l.startsWith("- ycsb-a @1t")
                    && l.endsWith(
                        " [busy machine: within the spread between rounds, not to be trusted]"));
    List<String> single =
        AdviceText.lines(
            verdicts(
                List.of(
                    new Picks.Pick(
                        "scan @1t",
                        Durability.BUFFERED,
                        r("a", 9, 1),
                        r("b", 3, 1),
                        null,
                        List.of())),
                null,
                ReportTest.noisy(),
                Map.of()));
    assertThat(single)
        .anyMatch(l -> l.contains("with --rounds 3 (or more) the engines take turns"));
    assertThat(AdviceText.lines(verdicts(List.of(beyond), null, ReportTest.quiet(), Map.of())))
        .noneMatch(l -> l.startsWith("What still holds"));
  }

  @Test
  void lines_noisyRun_verdictFirstEveryPickMarkedThenCaveatsAndWins() {
    Picks.Pick p =
        new Picks.Pick("scan @1t", Durability.BUFFERED, r("a", 9, 1), null, null, List.of());
    Result small = Result.footprint("b", "footprint", "after-update", Durability.BUFFERED, 15, 10);
    Result big = Result.footprint("a", "footprint", "after-update", Durability.BUFFERED, 30, 10);
    Map<String, String> caveats = new LinkedHashMap<>();
    caveats.put("a", "");
    caveats.put("b", "no atomic batches");
    List<String> lines =
        AdviceText.lines(
            verdicts(
                List.of(p),
                new Picks.Smallest(small, big, List.of()),
                ReportTest.noisy(),
                caveats));
    int q = ReportTest.noisy().lines().size();
    assertThat(lines.get(0)).startsWith("**NOT quiet enough to trust the picks:**");
    assertThat(lines.subList(q, lines.size()))
        .containsExactly(
            "",
            "**Durability BUFFERED** (persistent kv4j engines only; ops/s of the winner, then how"
                + " many times the runner-up's):",
            "",
            "- scan @1t: **a**, 9 ops/s (only kv4j engine measured) [noisy run: not to be trusted]",
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
            "Wins per kv4j engine: a 1. Numbers from one run on this machine: re-measure your"
                + " own workload (--workload).");
  }

  @Test
  void lines_nothingToPick_saysWhyWithoutAVerdict() {
    assertThat(AdviceText.lines(verdicts(List.of(), null, ReportTest.quiet(), Map.of())))
        .containsExactly(
            "No throughput or footprint scenario was run: nothing to pick from here (the tables"
                + " of the other scenarios stand on their own).");
    Picks.Verdicts notPersistent =
        new Picks.Verdicts(Map.of(), null, false, null, Map.of(), Map.of(), null);
    assertThat(AdviceText.lines(notPersistent))
        .containsExactly("No persistent kv4j engine was measured: nothing to pick from.");
  }
}
