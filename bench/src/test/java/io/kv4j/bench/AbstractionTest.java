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
    assertThat(Abstraction.markdown(rs))
        .contains("| rocksdb | readrandom | 1 | buffered | 80 | 100 | 0.80 **low** |")
        .contains("| rocksdb | readrandom | 2 | buffered | 190 | 200 | 0.95 |");
    assertThat(Abstraction.json(rs)).contains("\"ratio\": 0.800");
    assertThat(Abstraction.markdown(List.of())).contains("Not measured");
  }

  @Test
  void defaultSelection_withoutAbstraction_leavesOutTheRawBaselines() {
    assertThat(Abstraction.isRaw("lmdb-raw")).isTrue();
    assertThat(Abstraction.isRaw("lmdb")).isFalse();
  }
}
