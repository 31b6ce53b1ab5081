package io.kv4j.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.sqlite.LayoutMeasurement.Layout;
import io.kv4j.sqlite.LayoutMeasurement.Result;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the layout measurement runnable and checks the size facts the README's choice rests on (no
 * timing is asserted): 1 KiB rows overflow 4 KiB WITHOUT ROWID pages but fit the chosen layout (a
 * rowid table with a unique key, 8 KiB pages), and a single-row put appends one frame per page it
 * changes to the WAL.
 */
class LayoutMeasurementTest {
  @TempDir Path tmp;

  @Test
  void measure_withoutRowid4KiB_overflowsWhileChosenLayoutFits() throws Exception {
    Result small =
        LayoutMeasurement.measure(new Layout("without-rowid", true, 4096), 3000, 50, tmp, 7);
    Result chosen =
        LayoutMeasurement.measure(new Layout("rowid+unique", false, 8192), 3000, 50, tmp, 7);
    assertThat(small.amplification()).as(LayoutMeasurement.row(small)).isGreaterThan(3.0);
    assertThat(chosen.amplification()).as(LayoutMeasurement.row(chosen)).isBetween(1.0, 1.3);
    // Leaf page plus overflow page with 4 KiB pages; one 8 KiB table page for the chosen layout
    // (an update of v leaves the key index alone).
    assertThat(small.walBytesPerPut()).isGreaterThanOrEqualTo(2 * 4096);
    assertThat(chosen.walBytesPerPut()).isBetween(8192L, 8192L + 64);
    // Rewriting every value in place does not grow the file.
    assertThat(chosen.fileBytesAfterUpdates()).isEqualTo(chosen.fileBytes());
  }
}
