package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreStats;
import io.kv4j.StoreStats.Health;
import io.kv4j.Stores;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BackgroundErrorReason;
import org.rocksdb.Status;

/**
 * RocksDB's own background errors as the store's health ({@link BackgroundErrors}), with real
 * damage and no mocks: a live table file damaged under an open store makes RocksDB's next
 * compaction of it fail on its block checksums on a RocksDB thread, which no call of the user sees.
 */
class RocksDbBackgroundErrorTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  @TempDir Path tmp;

  /** 64 KiB memtables: a few hundred 200-byte puts make a table file. */
  private static StoreConfig config(Path dir, int compactionTrigger) {
    return StoreConfig.builder("rocksdb")
        .path(dir)
        .durability(Durability.BUFFERED) // fast puts; the damage is to flushed table files
        .option("write-buffer-size", "64KiB")
        .option("compression", "none")
        .option("rocksdb-options", "level0_file_num_compaction_trigger=" + compactionTrigger)
        .build();
  }

  /** Puts {@code n} keys with incompressible 200-byte values (seeded). */
  private static void fill(Store s, String prefix, int n, long seed) {
    Random r = new Random(seed);
    byte[] v = new byte[200];
    for (int i = 0; i < n; i++) {
      r.nextBytes(v);
      s.put((prefix + String.format("%06d", i)).getBytes(StandardCharsets.UTF_8), v);
    }
  }

  /**
   * Builds a store of at least three table files over the same keys (automatic compaction held back
   * until reopen), reopens it with compaction due at four files, and damages one of the three live
   * files in its data blocks.
   */
  private Store damagedStore(Path dir) throws IOException {
    try (Store s = Stores.open(config(dir, 100))) {
      for (int f = 0; f < 3; f++) {
        fill(s, "k", 400, 7 + f); // the same keys: overlapping files
        s.sync();
      }
    } // close flushes what the memtable still holds
    List<Path> before = TableFiles.list(dir);
    assertThat(before.size()).as("table files %s", before).isGreaterThanOrEqualTo(3);
    Store s = Stores.open(config(dir, before.size() + 1));
    assertThat(s.stats().health()).isEqualTo(Health.OK);
    TableFiles.invertDataBytes(before.get(before.size() / 2));
    return s;
  }

  /**
   * A compaction RocksDB starts by itself on a damaged table fails on its own thread: the store
   * turns FAILED with the reason and RocksDB's status in problem(), verify() says so, and the next
   * write fails with a StoreException naming it. Without the listener the health stays OK (shown by
   * leaving it unregistered: the health wait timed out).
   */
  @Test
  void automaticCompaction_damagedTable_storeFailsNamingCompaction() throws Exception {
    Path dir = tmp.resolve("db");
    try (Store s = damagedStore(dir)) {
      // Overlapping flushes (never moved whole): the compaction reads them. Once it failed, a put
      // may already be refused: that ends the writing, and is checked below like the later put.
      try {
        fill(s, "k", 1_200, 99);
      } catch (StoreIOException refused) {
        assertThat(refused).hasMessageContaining("RocksDB background compaction failed");
      }
      Waits.await(
          "health to leave OK after the damaged compaction",
          DEADLINE,
          () -> s.stats().health() != Health.OK);
      StoreStats st = s.stats();
      assertThat(st.health()).isEqualTo(Health.FAILED);
      assertThat(st.problem())
          .contains("failed until reopened")
          .contains("RocksDB background compaction failed")
          .contains("Corruption");
      assertThatThrownBy(s::verify).isInstanceOf(StoreException.class);
      assertThatThrownBy(() -> s.put(b("after"), b("x")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("RocksDB background compaction failed");
      assertThat(s.get(b("after"))).isNull();
    }
  }

  /** The same through {@code compact()}: the call fails, and so does the store's health. */
  @Test
  void manualCompaction_damagedTable_storeFailsNamingCompaction() throws Exception {
    Path dir = tmp.resolve("db");
    try (Store s = damagedStore(dir)) {
      assertThatThrownBy(s::compact).isInstanceOf(StoreException.class);
      StoreStats st = s.stats();
      assertThat(st.health()).isEqualTo(Health.FAILED);
      assertThat(st.problem()).contains("RocksDB background compaction failed");
      assertThatThrownBy(() -> s.put(b("after"), b("x"))).isInstanceOf(StoreIOException.class);
    }
  }

  /**
   * No false alarm: 8 rounds of writes with 64 KiB memtables and compaction due at two files (many
   * flushes and compactions), then a full manual compaction; the health stays OK and verify()
   * passes.
   */
  @Test
  void heavyCompaction_healthyStore_staysOk() throws Exception {
    try (Store s = Stores.open(config(tmp.resolve("db"), 2))) {
      for (int round = 0; round < 8; round++) {
        fill(s, "k", 1_500, round); // overwrites the same keys: compactions drop old versions
        assertThat(s.stats().health()).as("round %d", round).isEqualTo(Health.OK);
      }
      s.compact();
      StoreStats st = s.stats();
      assertThat(st.figures().get("compaction-count").longValue())
          .as("compactions ran")
          .isPositive();
      assertThat(st.health()).isEqualTo(Health.OK);
      assertThat(st.problem()).isNull();
      s.verify();
      s.put(b("still"), b("writable"));
    }
  }

  /** The severity mirror: only a compaction out of space is soft; paranoid_checks off: none. */
  @Test
  void stopsWrites_followsRocksDbSeverities() {
    Status corrupt = new Status(Status.Code.Corruption, Status.SubCode.None, "bad block");
    Status noSpace = new Status(Status.Code.IOError, Status.SubCode.NoSpace, "no space");
    for (BackgroundErrorReason r : BackgroundErrorReason.values()) {
      assertThat(BackgroundErrors.stopsWrites(r, corrupt, true)).as("%s", r).isTrue();
      assertThat(BackgroundErrors.stopsWrites(r, corrupt, false)).as("%s", r).isFalse();
    }
    assertThat(BackgroundErrors.stopsWrites(BackgroundErrorReason.COMPACTION, noSpace, true))
        .isFalse();
    assertThat(BackgroundErrors.stopsWrites(BackgroundErrorReason.FLUSH, noSpace, true)).isTrue();
    assertThat(BackgroundErrors.describe(BackgroundErrorReason.MEMTABLE, corrupt))
        .isEqualTo("RocksDB background memtable failed: Corruption: bad block");
  }

  /** A soft error makes the store DEGRADED until RocksDB reports its recovery, then OK again. */
  @Test
  void softError_degradedUntilRecovered() throws Exception {
    try (RocksDbStore s = (RocksDbStore) Stores.open(config(tmp.resolve("db"), 4))) {
      BackgroundErrors listener = s.nativeOptions.backgroundErrors;
      assertThat(listener).isNotNull();
      listener.onBackgroundError(
          BackgroundErrorReason.COMPACTION,
          new Status(Status.Code.IOError, Status.SubCode.NoSpace, "no space left"));
      StoreStats st = s.stats();
      assertThat(st.health()).isEqualTo(Health.DEGRADED);
      assertThat(st.problem()).contains("RocksDB background compaction failed: IOError");
      s.put(b("k"), b("v")); // RocksDB goes on writing during a soft error
      listener.onErrorRecoveryCompleted(new Status(Status.Code.Ok, Status.SubCode.None, null));
      assertThat(s.stats().health()).isEqualTo(Health.OK);
      assertThat(s.stats().problem()).isNull();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
