package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The "what to pick" verdicts from fixed rows: no timing, no text. */
class PicksTest {
  private static Result row(
      String engine, String scenario, int threads, Durability d, double ops, double p99) {
    return new Result(
        engine, scenario, "", threads, d, 1000, 1.0, ops, p99 / 2, p99, p99 * 2, p99 * 3, 5, 0, 0,
        0, null);
  }

  private static Result buffered(String engine, String scenario, double ops, double p99) {
    return row(engine, scenario, 1, Durability.BUFFERED, ops, p99);
  }

  private static Picks.Verdicts decide(String engines, Result... rows) {
    return Picks.decide(ReportTest.outcome(engines, rows));
  }

  private static Picks.Pick only(Picks.Verdicts v, Durability d) {
    assertThat(v.picks().get(d)).hasSize(1);
    return v.picks().get(d).get(0);
  }

  @Test
  void decide_fastestWinsEachScenarioAndThreadCount_withItsMarginOverTheRunnerUp() {
    Picks.Verdicts v =
        decide(
            "hashlog,lmdb",
            row("hashlog", "readrandom", 1, Durability.BUFFERED, 600, 10),
            row("lmdb", "readrandom", 1, Durability.BUFFERED, 300, 20),
            row("hashlog", "readrandom", 2, Durability.BUFFERED, 500, 10),
            row("lmdb", "readrandom", 2, Durability.BUFFERED, 480, 20));
    List<Picks.Pick> ps = v.picks().get(Durability.BUFFERED);
    assertThat(ps)
        .extracting(Picks.Pick::group)
        .containsExactly("readrandom @1t", "readrandom @2t");
    assertThat(ps.get(0).winner().engine()).isEqualTo("hashlog");
    assertThat(ps.get(0).runnerUp().engine()).isEqualTo("lmdb");
    assertThat(ps.get(0).margin()).isEqualTo(2.0);
    assertThat(ps.get(0).tie()).isFalse();
    assertThat(ps.get(1).tie()).as("500 / 480 is within 1.1").isTrue();
    assertThat(ps.get(0).lowestP99()).as("the winner has the lowest p99").isNull();
    assertThat(ps.get(0).peers()).as("no store but kv4j engines measured").isEmpty();
    assertThat(ps.get(0).spread()).as("single windows").isEqualTo(Picks.Spread.NO_ROUNDS);
    assertThat(v.wins()).containsExactly(Map.entry("hashlog", 2L));
  }

  @Test
  void decide_lowerP99ThanTheWinner_isNamed_andALoneEngineHasNoRunnerUp() {
    Picks.Pick p =
        only(
            decide(
                "hashlog,lmdb",
                buffered("hashlog", "ycsb-a", 600, 50),
                buffered("lmdb", "ycsb-a", 300, 20)),
            Durability.BUFFERED);
    assertThat(p.lowestP99().engine()).isEqualTo("lmdb");
    Picks.Pick alone = only(decide("lmdb", buffered("lmdb", "scan", 5, 5)), Durability.BUFFERED);
    assertThat(alone.runnerUp()).isNull();
    assertThat(alone.margin()).isNaN();
  }

  @Test
  void decide_peersFasterThanEveryKv4jEngine_areNeverPickedButKeptAsReference() {
    Picks.Verdicts v =
        decide(
            "hashlog,chronicle-map,lmdb,mvstore",
            buffered("chronicle-map", "ycsb-a", 500, 1),
            buffered("mvstore", "ycsb-a", 400, 1),
            buffered("lmdb", "ycsb-a", 150, 5),
            buffered("hashlog", "ycsb-a", 300, 5));
    Picks.Pick p = only(v, Durability.BUFFERED);
    assertThat(p.winner().engine()).isEqualTo("hashlog");
    assertThat(p.runnerUp().engine()).as("the next kv4j engine, not a peer").isEqualTo("lmdb");
    assertThat(p.lowestP99()).as("the peers' lower p99 does not count").isNull();
    assertThat(p.peers()).extracting(Result::engine).containsExactly("chronicle-map", "mvstore");
    assertThat(v.wins()).containsExactly(Map.entry("hashlog", 1L));
    assertThat(v.caveats().keySet()).containsExactly("hashlog");
  }

  @Test
  void decide_onlyPeersMeasured_nothingIsPicked_andInSyncToo() {
    Picks.Verdicts peersOnly =
        decide(
            "chronicle-map,mapdb",
            buffered("chronicle-map", "ycsb-a", 5, 5),
            buffered("mapdb", "ycsb-a", 4, 5));
    assertThat(peersOnly.picks()).isEmpty();
    assertThat(peersOnly.wins()).isEmpty();
    assertThat(peersOnly.caveats()).isEmpty();
    Picks.Pick sync =
        only(
            decide(
                "mvstore,hashlog",
                row("mvstore", "durable-put", 1, Durability.SYNC, 900, 5),
                row("hashlog", "durable-put", 1, Durability.SYNC, 800, 5)),
            Durability.SYNC);
    assertThat(sync.winner().engine()).isEqualTo("hashlog");
    assertThat(sync.peers()).extracting(Result::engine).containsExactly("mvstore");
  }

  @Test
  void decide_footprint_peersSmallerThanEveryKv4jEngine_areReferenceOnly() {
    Picks.Verdicts v =
        decide(
            "hashlog,lmdb,mapdb",
            Result.footprint("mapdb", "footprint", "after-update", Durability.BUFFERED, 11, 10),
            Result.footprint("hashlog", "footprint", "after-update", Durability.BUFFERED, 30, 10),
            Result.footprint("lmdb", "footprint", "after-update", Durability.BUFFERED, 15, 10));
    assertThat(v.footprint().smallest().engine()).isEqualTo("lmdb");
    assertThat(v.footprint().largest().engine()).isEqualTo("hashlog");
    assertThat(v.footprint().peers()).extracting(Result::engine).containsExactly("mapdb");
    assertThat(v.caveats().keySet()).containsExactly("lmdb");
  }

  @Test
  void spread_roundsThatDoNotOverlap_areBeyond_overlappingWithin_singleWindowsNoRounds() {
    Result fast = rounds(buffered("hashlog", "readrandom", 300, 1), 290, 310);
    Result slow = rounds(buffered("lmdb", "readrandom", 200, 1), 150, 280);
    Result close = rounds(buffered("lmdb", "readrandom", 250, 1), 240, 295);
    assertThat(Picks.Spread.of(fast, slow)).isEqualTo(Picks.Spread.BEYOND);
    assertThat(Picks.Spread.of(fast, close))
        .as("hashlog's slowest round 290 is below lmdb's fastest 295")
        .isEqualTo(Picks.Spread.WITHIN);
    assertThat(Picks.Spread.of(fast, buffered("lmdb", "readrandom", 100, 1)))
        .isEqualTo(Picks.Spread.NO_ROUNDS);
    assertThat(Picks.Spread.of(fast, null)).isEqualTo(Picks.Spread.NO_ROUNDS);
    Picks.Pick p = only(decide("hashlog,lmdb", fast, slow), Durability.BUFFERED);
    assertThat(p.spread()).isEqualTo(Picks.Spread.BEYOND);
  }

  /** A row as --rounds makes it: the median window, the range and the count of windows. */
  static Result rounds(Result r, double min, double max) {
    return r.with(0, 0, Map.of("rounds", 3.0, "ops-per-sec-min", min, "ops-per-sec-max", max));
  }

  @Test
  void decide_notPersistentServerAndOwnTableRows_areNeverPicked() {
    Picks.Verdicts v =
        decide(
            "memory,postgres,hashlog",
            buffered("memory", "readrandom", 9_000, 1),
            buffered("postgres", "readrandom", 8_000, 1),
            buffered("hashlog", "readrandom", 100, 1),
            buffered("hashlog", "churn", 1_000_000, 1),
            Result.failed("hashlog", "scan", "", 0, Durability.BUFFERED, "n/a: no ordered scans"));
    Picks.Pick p = only(v, Durability.BUFFERED);
    assertThat(p.winner().engine()).isEqualTo("hashlog");
    assertThat(p.runnerUp()).isNull();
  }

  @Test
  void decide_footprint_smallestAndLargestAfterTheUpdates() {
    Picks.Verdicts v =
        decide(
            "hashlog,lmdb,rocksdb",
            Result.footprint("hashlog", "footprint", "after-update", Durability.BUFFERED, 30, 10),
            Result.footprint("lmdb", "footprint", "after-update", Durability.BUFFERED, 15, 10),
            Result.footprint("rocksdb", "footprint", "after-load", Durability.BUFFERED, 11, 10),
            Result.footprint("rocksdb", "footprint", "after-update", Durability.BUFFERED, 20, 10));
    assertThat(v.footprint().smallest().engine()).isEqualTo("lmdb");
    assertThat(v.footprint().largest().engine()).isEqualTo("hashlog");
    assertThat(v.picks()).isEmpty();
    assertThat(v.nothingRun()).isFalse();
    assertThat(v.caveats().keySet()).containsExactly("lmdb");
    assertThat(v.footprint().peers()).isEmpty();
    assertThat(v.wins()).as("a footprint is not a win").isEmpty();
  }

  @Test
  void decide_nothingToPickFrom_saysWhy() {
    assertThat(decide("hashlog").nothingRun()).isTrue();
    Picks.Verdicts memoryOnly = decide("memory", buffered("memory", "readrandom", 5, 5));
    assertThat(memoryOnly.nothingRun()).isFalse();
    assertThat(memoryOnly.picks()).isEmpty();
    assertThat(memoryOnly.caveats()).isEmpty();
  }

  @Test
  void decide_winsPerEngine_mostFirstTiesInOrderFirstPicked() {
    Picks.Verdicts v =
        decide(
            "hashlog,lmdb",
            buffered("lmdb", "readrandom", 9, 1),
            buffered("hashlog", "readrandom", 1, 1),
            buffered("hashlog", "ycsb-a", 9, 1),
            buffered("lmdb", "ycsb-a", 1, 1),
            buffered("hashlog", "scan", 9, 1),
            buffered("lmdb", "scan", 1, 1));
    assertThat(v.wins()).containsExactly(Map.entry("hashlog", 2L), Map.entry("lmdb", 1L));
  }

  @Test
  void verdicts_noisy_onlyForAVerdictThatIsNotQuiet() {
    Outcome o = ReportTest.outcome("hashlog", buffered("hashlog", "scan", 9, 1));
    assertThat(Picks.decide(o).noisy()).isFalse();
    assertThat(Picks.decide(o.withQuietness(ReportTest.quiet())).noisy()).isFalse();
    assertThat(Picks.decide(o.withQuietness(ReportTest.noisy())).noisy()).isTrue();
  }
}
