package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kv4j/raw ratio pairs rows of the same scenario, threads and durability only. */
class AbstractionTest {
  private static Result row(String engine, String scenario, int threads, double opsPerSec) {
    return new Result(
        engine,
        scenario,
        "",
        threads,
        Durability.BUFFERED,
        1,
        1,
        opsPerSec,
        1,
        1,
        1,
        1,
        1,
        0,
        0,
        0,
        null);
  }

  @Test
  void pairs_sameScenarioAndThreads_ratioAndLowMark() {
    List<Result> rs =
        List.of(
            row("rocksdb", "readrandom", 1, 80),
            row("rocksdb-raw", "readrandom", 1, 100),
            row("rocksdb", "readrandom", 2, 190),
            row("rocksdb-raw", "readrandom", 2, 200),
            row("rocksdb-raw", "overwrite", 1, 100),
            row("lmdb", "overwrite", 1, 100));
    List<Abstraction.Pair> pairs = Abstraction.pairs(rs);
    assertThat(pairs).hasSize(2);
    assertThat(pairs.get(0).ratio()).isEqualTo(0.8);
    assertThat(AbstractionReport.markdown(rs))
        .contains("| rocksdb | readrandom | 1 | buffered | 80 | 100 | 0.80 **low** |")
        .contains("| rocksdb | readrandom | 2 | buffered | 190 | 200 | 0.95 |");
    assertThat(AbstractionReport.json(rs)).contains("\"ratio\": 0.800");
    assertThat(AbstractionReport.markdown(List.of())).contains("Not measured");
  }

  private static Result disk(String engine, String phase, long allocated, long apparent, long w) {
    return Result.footprint(engine, "footprint", phase, Durability.BUFFERED, allocated, 1000)
        .with(
            allocated,
            1000,
            java.util.Map.of("apparent-bytes", (double) apparent, "writes", (double) w));
  }

  @Test
  void diskPairs_samePhase_ratiosHighMarkOnlyAfterTheSameWrites() {
    List<Result> rs =
        List.of(
            disk("rocksdb", "after-fillbatch", 2000, 1000, 500),
            disk("rocksdb-raw", "after-fillbatch", 2000, 1000, 500),
            disk("rocksdb", "after-fixed-updates", 3000, 1200, 900),
            disk("rocksdb-raw", "after-fixed-updates", 2000, 1000, 900),
            disk("rocksdb", "after-update", 4000, 2000, 700),
            disk("rocksdb-raw", "after-update", 2000, 1000, 600),
            disk("lmdb-raw", "after-update", 2000, 1000, 600));
    List<Abstraction.DiskPair> pairs = Abstraction.diskPairs(rs);
    assertThat(pairs).hasSize(3);
    assertThat(pairs.get(0).allocatedRatio()).isEqualTo(1.0);
    assertThat(pairs.get(1).allocatedRatio()).isEqualTo(1.5);
    assertThat(pairs.get(1).apparentRatio()).isEqualTo(1.2);
    assertThat(pairs.get(1).high()).isTrue();
    assertThat(pairs.get(2).sameWrites()).isFalse();
    assertThat(pairs.get(2).high()).as("not judged: the writes differ").isFalse();
    String md = AbstractionReport.markdown(rs);
    assertThat(md)
        .contains("### Disk (kv4j / raw library)")
        .contains("| rocksdb | after-fillbatch | buffered | 500 / 500 |")
        .contains("| 1.50 **high** |")
        .contains("| 2.00 *writes differ* |")
        .doesNotContain("Not measured");
    assertThat(AbstractionReport.diskJson(rs)).contains("\"allocatedRatio\": 1.500");
  }

  @Test
  void defaultSelection_withoutAbstraction_leavesOutTheRawBaselines() {
    assertThat(Abstraction.isRaw("lmdb-raw")).isTrue();
    assertThat(Abstraction.isRaw("lmdb")).isFalse();
  }
}
