package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.spi.StoreProvider;
import org.junit.jupiter.api.Test;

/** Which engines a run measures when none are named, and when some are. */
class SelectionTest {
  @Test
  void defaultSelection_leavesOutTheInstruments_namedOnesAreKeptInOrder() {
    assertThat(Engines.select(Options.parse()).stream().map(StoreProvider::id))
        .contains("hashlog", "chronicle-map")
        .doesNotContain("floor", "floor-crc", "rocksdb-raw", "postgres");
    assertThat(
            Engines.select(Options.parse("--engines", "floor,hashlog")).stream()
                .map(StoreProvider::id))
        .containsExactly("floor", "hashlog");
  }
}
