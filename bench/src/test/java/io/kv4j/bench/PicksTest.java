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
    assertThat(ps.get(0).killSafe()).as("hashlog keeps its writes").isNull();
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
  void decide_bufferedWinnerThatLosesWritesToKill_listsTheEnginesThatKeepThem() {
    Picks.Verdicts v =
        decide(
            "hashlog,chronicle-map,lmdb,mvstore",
            buffered("chronicle-map", "ycsb-a", 500, 5),
            buffered("mvstore", "ycsb-a", 400, 5),
            buffered("lmdb", "ycsb-a", 150, 5),
            buffered("hashlog", "ycsb-a", 300, 5));
    Picks.Pick p = only(v, Durability.BUFFERED);
    assertThat(p.winner().engine()).isEqualTo("chronicle-map");
    assertThat(p.killSafe()).extracting(Result::engine).containsExactly("hashlog", "lmdb");
    // The kill-safe alternative is a pick too: its caveats come first.
    assertThat(v.caveats().keySet()).containsExactly("hashlog", "chronicle-map");
  }

  @Test
  void decide_lossyWinnerWithNoSafeEngineOrInSync_hasEmptyOrNoAlternative() {
    Picks.Pick none =
        only(
            decide("chronicle-map", buffered("chronicle-map", "ycsb-a", 5, 5)),
            Durability.BUFFERED);
    assertThat(none.killSafe()).isEmpty();
    Picks.Pick sync =
        only(
            decide(
                "mvstore,hashlog",
                row("mvstore", "durable-put", 1, Durability.SYNC, 900, 5),
                row("hashlog", "durable-put", 1, Durability.SYNC, 800, 5)),
            Durability.SYNC);
    assertThat(sync.killSafe()).as("SYNC survives kill -9 for every engine").isNull();
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
