package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Read-only opens: RocksDB's read-only mode, no lock, nothing created or changed in the directory,
 * and several of them beside one writer, each a point-in-time view that holds every write
 * acknowledged before it opened, also when the writer flushes during the open.
 */
class RocksDbReadOnlyTest {
  @TempDir Path tmp;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static StoreConfig.Builder config(Path dir) {
    return StoreConfig.builder("rocksdb").path(dir).durability(Durability.SYNC);
  }

  /** Name, size and modification time of every file. */
  private static TreeMap<String, String> snapshot(Path dir) throws IOException {
    TreeMap<String, String> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        out.put(
            p.getFileName().toString(),
            Files.size(p) + " " + Files.getLastModifiedTime(p).toMillis());
      }
    }
    return out;
  }

  private static long count(Store s) {
    long n = 0;
    try (Cursor c = s.scan(KeyRange.all())) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    return n;
  }

  /**
   * A directory made unwritable (chmod 555). Tests may run as root, whom the mode does not stop, so
   * the check is that no file appears, disappears or changes, for a store closed cleanly and for
   * one whose data is still in the WAL.
   */
  @Test
  void readOnly_unwritableDirectory_opensAndWritesNothing() throws IOException {
    Path flushed = tmp.resolve("flushed");
    try (Store s = Stores.open(config(flushed).build())) {
      for (int i = 0; i < 1000; i++) {
        s.put(b("k" + i), b("v" + i));
      }
    }
    Path inWal = tmp.resolve("in-wal");
    Store w = Stores.open(config(inWal).build());
    for (int i = 0; i < 1000; i++) {
      w.put(b("k" + i), b("v" + i));
    }
    ((RocksDbStore) w).closeWithoutFlush();
    for (Path dir : List.of(flushed, inWal)) {
      TreeMap<String, String> before = snapshot(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-xr-x"));
      try {
        for (int round = 0; round < 2; round++) {
          try (Store s = Stores.open(config(dir).readOnly(true).build())) {
            assertThat(s.get(b("k999"))).isEqualTo(b("v999"));
            assertThat(count(s)).isEqualTo(1000);
            s.verify();
            assertThatThrownBy(() -> s.put(b("x"), b("y")))
                .isInstanceOf(UnsupportedOperationException.class);
          }
        }
      } finally {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      assertThat(snapshot(dir)).as("%s after read-only opens", dir).isEqualTo(before);
    }
  }

  /**
   * Several read-only stores while one writer holds the directory; each sees its open's view. The
   * writer's automatic compactions are off so that only the manual one (round 2) deletes table
   * files: readers opened after it can verify every file of their view; earlier ones may find a
   * file of their view deleted by the writer, which verify reports as an I/O error, not damage.
   */
  @Test
  void readOnly_besideAWriter_severalOpensEachSeeAPointInTimeView() {
    Path dir = tmp.resolve("live");
    List<Store> readers = new ArrayList<>();
    try (Store w =
        Stores.open(
            config(dir)
                .option("write-buffer-size", "64KiB")
                .option("rocksdb-options", "disable_auto_compactions=true")
                .build())) {
      int written = 0;
      for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 500; i++, written++) {
          w.put(b(String.format("k%06d", written)), new byte[100]);
        }
        if (round == 2) {
          w.compact(); // table files replaced under earlier readers
        }
        Store r = Stores.open(config(dir).readOnly(true).build());
        readers.add(r);
        assertThat(r.info().readOnly()).isTrue();
        assertThat(count(r))
            .as("reader %d sees what was written before it opened", round)
            .isEqualTo(written);
      }
      w.put(b("after"), b("x"));
      for (int i = 0; i < readers.size(); i++) {
        Store r = readers.get(i);
        assertThat(r.get(b("after"))).as("reader %d is point-in-time", i).isNull();
        assertThat(count(r)).isEqualTo(500L * (i + 1));
        if (i > 2) {
          r.verify();
        }
      }
      assertThat(w.get(b("after"))).isEqualTo(b("x"));
    } finally {
      readers.forEach(Store::close);
    }
  }

  /** What a read-only open logs once it has read the MANIFEST, before it lists the WALs. */
  private static final String MANIFEST_READ = "Recovered from manifest file";

  /**
   * A read-only store whose RocksDB info log reaches the {@code io.kv4j.rocksdb} logger at INFO,
   * and that opens as a plain read-only database, not as a secondary instance (which needs {@code
   * max_open_files=-1}): the open used where {@code /proc/locks} cannot tell that a writer is
   * there.
   */
  private static StoreConfig verboseReader(Path dir) {
    return config(dir)
        .readOnly(true)
        .option("rocksdb-options", "info_log_level=INFO_LEVEL;max_open_files=1000000")
        .build();
  }

  /** A read-only store beside a writer, a secondary instance, with its info log at INFO. */
  private static StoreConfig verboseSecondary(Path dir) {
    return config(dir)
        .readOnly(true)
        .option("rocksdb-options", "info_log_level=INFO_LEVEL")
        .build();
  }

  /** What a secondary instance logs once it has read the MANIFEST, before it reads a WAL. */
  private static final String SECONDARY_WAL_NEXT = "Recovering log #";

  /** What a log hook does with the n-th matching message (1 for the first). */
  @FunctionalInterface
  private interface LogAction {
    void run(int n) throws Exception;
  }

  /**
   * Runs an action on each message of a read-only store's info log that contains a text, on the
   * thread RocksDB logs it from: inside the open, which waits meanwhile. {@link #close()} removes
   * it and rethrows what an action threw.
   */
  private static final class LogHook extends Handler implements AutoCloseable {
    private final Logger jul = Logger.getLogger("io.kv4j.rocksdb");
    private final Level level = jul.getLevel();
    private final boolean parents = jul.getUseParentHandlers();
    private final String text;
    private final LogAction action;
    private final AtomicInteger seen = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    LogHook(String text, LogAction action) {
      this.text = text;
      this.action = action;
      jul.setLevel(Level.INFO);
      jul.setUseParentHandlers(false); // the INFO log lists every option: keep it off the console
      jul.addHandler(this);
    }

    /** How many messages matched so far. */
    int seen() {
      return seen.get();
    }

    @Override
    public void publish(LogRecord r) {
      // Nothing may escape into RocksDB's native logging call.
      if (String.valueOf(r.getMessage()).contains(text) && failure.get() == null) {
        try {
          action.run(seen.incrementAndGet());
        } catch (Throwable t) {
          failure.set(t);
        }
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
      jul.removeHandler(this);
      jul.setUseParentHandlers(parents);
      jul.setLevel(level);
      if (failure.get() != null) {
        throw new AssertionError("the log hook failed", failure.get());
      }
    }
  }

  private static byte[] key(int i) {
    return b(String.format("k%09d", i));
  }

  /**
   * The writer flushes after the read-only open read the MANIFEST and before it lists the WALs: the
   * writes move into table files that view does not list, and the WAL holding them is deleted.
   * RocksDB's open then succeeds with neither (without the engine's check this view held 0 of 1,000
   * keys in each column family). The engine sees the WAL gone, opens again and misses nothing. The
   * race is made certain by doing the flush inside the open, from its info log.
   */
  @Test
  void readOnly_writerFlushesBetweenManifestAndWals_opensAgainAndMissesNothing() throws Exception {
    Path dir = tmp.resolve("raced");
    try (Store w = Stores.open(config(dir).option("write-buffer-size", "8MiB").build())) {
      Store users = w.keyspace("users");
      for (int i = 0; i < 1000; i++) {
        w.put(key(i), b("v" + i));
        users.put(key(i), b("u" + i));
      }
      List<Path> wals = RecordLog.walFiles(dir); // every write is in these, none in a table file
      assertThat(wals).isNotEmpty();
      try (LogHook hook =
          new LogHook(
              MANIFEST_READ,
              n -> {
                if (n == 1) {
                  w.compact(); // flushes the store's column family, then the keyspace's
                  users.compact();
                  Waits.await(
                      "the writer deletes " + wals,
                      Duration.ofSeconds(20),
                      () -> wals.stream().noneMatch(Files::exists));
                }
              })) {
        try (Store r = Stores.open(verboseReader(dir))) {
          assertThat(count(r)).as("keys the view holds").isEqualTo(1000);
          assertThat(count(r.keyspace("users"))).as("keys of the keyspace").isEqualTo(1000);
          assertThat(r.get(key(999))).isEqualTo(b("v999"));
          assertThat(r.keyspace("users").get(key(0))).isEqualTo(b("u0"));
        }
        assertThat(hook.seen()).as("views read: the raced one, then the good one").isEqualTo(2);
      }
    }
  }

  /**
   * The same race beside a writer, where the view is a secondary instance: the writer flushes after
   * the secondary read the MANIFEST and before it reads the WALs, so the open misses the WAL; the
   * engine sees it gone and has the secondary catch up with the writer instead of opening again,
   * and the view holds every key (without the catch-up it held none of them).
   */
  @Test
  void secondary_writerFlushesBetweenManifestAndWals_catchesUpAndMissesNothing() throws Exception {
    Path dir = tmp.resolve("raced-secondary");
    try (Store w = Stores.open(config(dir).option("write-buffer-size", "8MiB").build())) {
      Store users = w.keyspace("users");
      for (int i = 0; i < 1000; i++) {
        w.put(key(i), b("v" + i));
        users.put(key(i), b("u" + i));
      }
      List<Path> wals = RecordLog.walFiles(dir);
      assertThat(wals).isNotEmpty();
      try (LogHook hook =
          new LogHook(
              SECONDARY_WAL_NEXT,
              n -> {
                if (n == 1) {
                  w.compact();
                  users.compact();
                  Waits.await(
                      "the writer deletes " + wals,
                      Duration.ofSeconds(20),
                      () -> wals.stream().noneMatch(Files::exists));
                }
              })) {
        try (Store r = Stores.open(verboseSecondary(dir))) {
          assertThat(count(r)).as("keys the view holds").isEqualTo(1000);
          assertThat(count(r.keyspace("users"))).as("keys of the keyspace").isEqualTo(1000);
          try (var snap = r.snapshot()) {
            assertThat(snap.get(key(999))).isEqualTo(b("v999"));
            w.put(key(999), b("changed after the open"));
            assertThat(r.get(key(999))).as("the view stands still").isEqualTo(b("v999"));
            assertThat(snap.getAll(List.of(key(0), key(999)))).containsExactly(b("v0"), b("v999"));
            int scanned = 0;
            try (Cursor c = snap.scan(KeyRange.all())) {
              while (c.hasNext()) {
                c.next();
                scanned++;
              }
            }
            assertThat(scanned).as("a scan through the snapshot").isEqualTo(1000);
          }
        }
        assertThat(hook.seen()).as("WALs the secondary went to read").isPositive();
      }
    }
  }

  /**
   * The writer flushes inside every attempt: the open gives up after five with a {@link
   * StoreIOException} naming the WAL, rather than return a view that lacks acknowledged writes.
   */
  @Test
  void readOnly_writerFlushesInsideEveryAttempt_failsWithStoreIOException() throws Exception {
    Path dir = tmp.resolve("always-raced");
    try (Store w = Stores.open(config(dir).option("write-buffer-size", "8MiB").build())) {
      AtomicInteger written = new AtomicInteger();
      try (LogHook hook =
          new LogHook(
              MANIFEST_READ,
              n -> {
                List<Path> wals = RecordLog.walFiles(dir);
                for (int i = 0; i < 10; i++) {
                  w.put(key(written.getAndIncrement()), b("v"));
                }
                w.compact();
                Waits.await(
                    "the writer deletes " + wals,
                    Duration.ofSeconds(20),
                    () -> wals.stream().noneMatch(Files::exists));
              })) {
        assertThatThrownBy(() -> Stores.open(verboseReader(dir)).close())
            .isInstanceOf(StoreIOException.class)
            .hasMessageContaining("gave up after " + ReadOnlyOpening.ATTEMPTS + " attempts")
            .hasMessageMatching("(?s).*the writer deleted \\d+\\.log while the view was read.*");
        assertThat(hook.seen()).as("views read").isEqualTo(ReadOnlyOpening.ATTEMPTS);
      }
      try (Store r = Stores.open(config(dir).readOnly(true).build())) {
        assertThat(count(r)).as("a quiet moment: the next open works").isEqualTo(written.get());
      }
    }
  }

  /**
   * The race as it happens, without a hook: a writer thread puts new keys with a 64 KiB write
   * buffer (a flush every ~500 puts) and no automatic compaction (table files pile up, so each open
   * reads longer and a flush lands inside it more often) while read-only stores open one after
   * another for 8 seconds. Every view must hold every key acknowledged before it opened (checked
   * every 97th key: a missed WAL is ~500 consecutive keys); an open may instead fail with {@link
   * StoreIOException} when the writer raced all its attempts. Measured here on a loaded machine:
   * without the WAL check 4 runs of 4 failed (5 to 20 of 33–78 views lacked keys); with it none
   * did, and 1–3 of ~35 opens per run were refused.
   */
  @Test
  void readOnly_besideAFlushingWriter_everyViewHoldsEveryAcknowledgedWrite() throws Exception {
    Path dir = tmp.resolve("flushing");
    AtomicInteger acked = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    int opens = 0;
    int refused = 0;
    List<String> missed = new ArrayList<>();
    try (Store w =
        Stores.open(
            StoreConfig.builder("rocksdb")
                .path(dir)
                .durability(Durability.BUFFERED)
                .option("write-buffer-size", "64KiB")
                .option("rocksdb-options", "disable_auto_compactions=true")
                .build())) {
      Thread writer =
          new Thread(
              () -> {
                try {
                  for (int i = 0; !stop.get(); i++) {
                    w.put(key(i), new byte[100]);
                    acked.set(i + 1);
                  }
                } catch (Throwable t) {
                  writerFailure.set(t);
                }
              },
              "writer");
      writer.start();
      try {
        Waits.await("the writer's first flushes", Duration.ofSeconds(20), () -> acked.get() > 5000);
        // Eight seconds of opens, and more until one view has opened (the writer's flushes may
        // race every open for a while on a slow machine): at most two minutes.
        long end = System.nanoTime() + Duration.ofSeconds(8).toNanos();
        long backstop = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while ((System.nanoTime() - end < 0
                || (opens == refused && System.nanoTime() - backstop < 0))
            && writerFailure.get() == null) {
          int before = acked.get();
          opens++;
          Store r;
          try {
            r = Stores.open(config(dir).readOnly(true).build());
          } catch (StoreIOException e) {
            assertThat(e).hasMessageContaining("gave up after");
            refused++;
            continue;
          }
          try (r) {
            // A missed WAL is a whole memtable of consecutive keys (~500): a stride of 97 meets it.
            for (int i = before - 1; i >= 0; i -= 97) {
              if (r.get(key(i)) == null) {
                missed.add("open " + opens + ": key " + i + " of " + before);
                break;
              }
            }
          }
        }
      } finally {
        stop.set(true);
        writer.join();
      }
    }
    assertThat(writerFailure.get()).isNull();
    assertThat(missed)
        .as("views lacking acknowledged writes, of %d opens (%d refused)", opens, refused)
        .isEmpty();
    assertThat(opens - refused).as("views opened, of %d opens", opens).isPositive();
  }

  @Test
  void readOnly_neverCreates() throws IOException {
    Path dir = tmp.resolve("empty");
    Files.createDirectories(dir);
    assertThatThrownBy(() -> Stores.open(config(dir).readOnly(true).build()))
        .isInstanceOf(StoreIOException.class);
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(s).isEmpty();
    }
  }

  /**
   * A writing process (a child JVM putting keys with a 64 KiB write buffer and no automatic
   * compaction: a flush every few hundred puts, table files piling up) and 20 read-only opens of
   * its store one after another: every one opens, and holds every key acknowledged before it began
   * (checked every 97th key and the last). The writer's flushes race the opens: a read-only open
   * whose whole open a flush lands in must start again from scratch, and under load 2 of 20 such
   * opens gave up after five attempts ({@code StoreIOException}); the secondary instance used
   * beside a live writer catches up instead of reopening.
   */
  @Test
  void readOnly_besideABusyWritingProcess_twentyOfTwentyOpenWithEveryAcknowledgedKey()
      throws Exception {
    Path dir = tmp.resolve("busy");
    List<String> failures = new ArrayList<>();
    try (ChildProcess c = ChildProcess.java(BusyWriterWorker.class, dir.toString()).start()) {
      Duration wait = Duration.ofMinutes(2);
      int acked = 0;
      while (acked < 60_000) {
        acked = Integer.parseInt(c.readLine(wait).substring("ACK ".length()));
      }
      for (int n = 0; n < 20; n++) {
        acked = Integer.parseInt(c.readLine(wait).substring("ACK ".length()));
        try (Store r = Stores.open(config(dir).readOnly(true).build())) {
          for (int i = acked - 1; i >= 0; i -= 97) {
            if (!Arrays.equals(r.get(BusyWriterWorker.key(i)), BusyWriterWorker.value(i))) {
              failures.add("open " + n + ": key " + i + " of " + acked + " acknowledged");
              break;
            }
          }
        } catch (StoreIOException e) {
          failures.add("open " + n + ": " + e.getMessage());
        }
      }
      c.kill();
    }
    assertThat(failures).as("opens that failed or lack acknowledged keys, of 20").isEmpty();
  }
}
