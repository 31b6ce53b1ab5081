package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The console tables from fixed rows: alignment and sections. */
class ConsoleReportTest {
  @Test
  void align_numbersRightTextLeft_anErrorDoesNotWidenItsColumn() {
    String t =
        ConsoleReport.align(
            List.of(
                new String[] {"engine", "scenario", "threads", "ops/s", "p50"},
                new String[] {"a", "scan", "1", "1,000", "2 µs"},
                new String[] {"bb", "scan", "", "n/a: no ordered scans", ""}));
    assertThat(t)
        .isEqualTo(
            "engine | scenario | threads | ops/s | p50\n"
                + "------------------------------------------\n"
                + "a      | scan     |       1 | 1,000 | 2 µs\n"
                + "bb     | scan     |         | n/a: no ordered scans |\n");
  }

  @Test
  void text_tablesByDurabilityServersApartAndPicksWithoutBold() {
    Outcome o =
        ReportTest.outcome(
            "hashlog,postgres",
            ReportTest.ok("hashlog", "readrandom", "", 500_000),
            ReportTest.ok("postgres", "readrandom", "", 9_000),
            new Result(
                "hashlog",
                "durable-put",
                "",
                1,
                Durability.SYNC,
                1,
                1,
                3_000,
                1,
                1,
                1,
                1,
                1,
                0,
                0,
                0,
                null));
    String text = ConsoleReport.text(o, Picks.decide(o));
    assertThat(text.indexOf("== durability SYNC ==")).isPositive();
    assertThat(text.indexOf("== durability BUFFERED =="))
        .isGreaterThan(text.indexOf("== durability SYNC =="));
    assertThat(text)
        .contains("== network round trips (server engines), durability BUFFERED ==")
        .contains("- readrandom @1t: hashlog, 500,000 ops/s (only kv4j engine measured)")
        .doesNotContain("**");
  }
}
