package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreDirectory;
import io.kv4j.tck.ChildProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * Keyspaces as column families beyond the TCK's group 17: crash atomicity of batches across
 * keyspaces (a child JVM killed with SIGKILL), drops racing calls on the dropped handle, stores
 * made before keyspaces, per-keyspace stats, and the exact size of a batch across families.
 */
class RocksDbKeyspaceTest {
  @TempDir Path tmp;

  private StoreConfig config(Path dir) {
    return StoreConfig.builder("rocksdb").path(dir).durability(Durability.BUFFERED).build();
  }

  private static byte[] key(String k) {
    return k.getBytes(StandardCharsets.UTF_8);
  }

  private static String str(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /**
   * Kills a child JVM (SIGKILL) while it writes batches spanning the store's own keys and two
   * keyspaces, three rounds per durability on the same store: after each kill every keyspace holds
   * the same counter (all or nothing of each batch), at least the last acknowledged batch, and the
   * keys of every batch up to it.
   */
  @Test
  void kill9_midCrossKeyspaceBatches_leavesAllOrNothing() throws Exception {
    long seed = System.nanoTime();
    for (Durability d : List.of(Durability.SYNC, Durability.BUFFERED)) {
      Path dir = tmp.resolve("crash-" + d);
      int acked = -1;
      for (int round = 0; round < 3; round++) {
        int minAck = acked + 1 + 40;
        int lastAck = runUntilKilled(dir, d, seed + round, minAck);
        String what = "seed " + seed + " durability " + d + " round " + round;
        try (Store s = Stores.open(config(dir))) {
          assertThat(s.keyspaces()).as(what).containsExactly("a", "b");
          Store a = s.keyspace("a");
          Store b = s.keyspace("b");
          String c = str(s.get(key("counter")));
          assertThat(c).as(what).isNotNull();
          assertThat(str(a.get(key("counter")))).as(what + ": keyspace a").isEqualTo(c);
          assertThat(str(b.get(key("counter")))).as(what + ": keyspace b").isEqualTo(c);
          int n = Integer.parseInt(c);
          assertThat(n).as(what + ": acknowledged batches kept").isGreaterThanOrEqualTo(lastAck);
          assertThat(s.get(key("k" + (n + 1)))).as(what).isNull();
          assertThat(a.get(key("k" + (n + 1)))).as(what).isNull();
          for (int i = 0; i <= n; i++) {
            assertThat(s.get(key("k" + i))).as(what + " k" + i).isNotNull();
            assertThat(a.get(key("k" + i))).as(what + " a/k" + i).isNotNull();
          }
          List<String> inB = new ArrayList<>();
          try (Cursor cur = b.scan(KeyRange.prefix(key("k")))) {
            cur.forEachRemaining(e -> inB.add(str(e.key())));
          }
          assertThat(inB).as(what + ": b keeps only the newest k").containsExactly("k" + n);
          s.verify();
          acked = n;
        }
      }
    }
  }

  /** Starts the worker, reads its acknowledgements until {@code minAck}, then kills it. */
  private int runUntilKilled(Path dir, Durability d, long seed, int minAck) throws Exception {
    int last = -1;
    try (ChildProcess c =
        ChildProcess.java(KeyspaceCrashWorker.class, dir.toString(), d.name(), Long.toString(seed))
            .start()) {
      Duration wait = Duration.ofMinutes(5);
      for (String line = c.readLine(wait); line != null; line = c.readLine(wait)) {
        if (line.startsWith("ACK ")) {
          last = Integer.parseInt(line.substring(4));
          if (last >= minAck) {
            c.kill(); // SIGKILL: the worker is inside its next batch
            break;
          }
        }
      }
      if (last < minAck) { // its stdout ended: the worker exited by itself
        c.await(Duration.ofSeconds(60));
      }
      assertThat(last).as("worker output: %s", c.describe()).isGreaterThanOrEqualTo(minAck);
    }
    return last;
  }

  /**
   * Drops a keyspace while threads read, scan, write, multi-get and snapshot through its handle,
   * and another keyspace's handle is used alongside: every thread on the dropped handle ends on
   * StoreClosedException (no other error, no crash), the other keyspace loses nothing, and the name
   * opens again empty.
   */
  @Test
  void drop_racingCallsOnTheSameHandle_endsThemCleanly() throws Exception {
    long seed = System.nanoTime();
    SplittableRandom seeds = new SplittableRandom(seed);
    try (Store s = Stores.open(config(tmp.resolve("drop")))) {
      Store other = s.keyspace("other");
      for (int round = 0; round < 12; round++) {
        String what = "seed " + seed + " round " + round;
        Store x = s.keyspace("x");
        for (int i = 0; i < 300; i++) {
          x.put(key("k" + i), key("v" + i));
        }
        List<Throwable> unexpected = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> endings = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch running = new CountDownLatch(4);
        AtomicBoolean stopOther = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          SplittableRandom rnd = seeds.split();
          int kind = t;
          Thread th =
              new Thread(
                  () -> {
                    running.countDown();
                    try {
                      while (true) {
                        hammer(x, kind, rnd);
                      }
                    } catch (StoreClosedException e) {
                      endings.add(e);
                    } catch (Throwable e) {
                      unexpected.add(e);
                    }
                  });
          th.start();
          threads.add(th);
        }
        int base = round * 1000;
        Thread otherWriter =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; !stopOther.get() || i < 50; i++) {
                      other.put(key("o" + (base + i)), key("v"));
                    }
                  } catch (Throwable e) {
                    unexpected.add(e);
                  }
                });
        otherWriter.start();
        running.await();
        assertThat(s.dropKeyspace("x")).as(what).isTrue();
        stopOther.set(true);
        for (Thread th : threads) {
          th.join(TimeUnit.SECONDS.toMillis(30));
          assertThat(th.isAlive()).as(what + ": thread still running").isFalse();
        }
        otherWriter.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(unexpected).as(what).isEmpty();
        assertThat(endings).as(what + ": every thread ended on StoreClosedException").hasSize(4);
        assertThat(s.keyspaces()).as(what).containsExactly("other");
        Store again = s.keyspace("x");
        assertThat(again.get(key("k1"))).as(what + ": reopened empty").isNull();
        again.close();
        assertThat(other.get(key("o" + base))).as(what).isNotNull();
        assertThat(s.dropKeyspace("x")).as(what).isTrue();
      }
      assertThat(s.stats().figures().get("open-cursors")).isEqualTo(0);
    }
  }

  private static void hammer(Store x, int kind, SplittableRandom rnd) {
    byte[] k = key("k" + rnd.nextInt(300));
    switch (kind) {
      case 0 -> x.get(k);
      case 1 -> {
        try (Cursor c = x.scan(KeyRange.all().gte(k).limit(20))) {
          c.forEachRemaining(e -> {});
        }
      }
      case 2 -> {
        x.put(k, key("w"));
        x.putIfAbsent(key("n" + rnd.nextInt(300)), key("w"));
        WriteBatch b = new WriteBatch();
        b.put(k, key("b")).delete(key("k" + rnd.nextInt(300)));
        x.write(b);
      }
      default -> {
        x.getAll(List.of(k, key("k0")));
        try (Snapshot snap = x.snapshot()) {
          snap.get(k);
          try (Cursor c = snap.scan(KeyRange.all().limit(5))) {
            c.forEachRemaining(e -> {});
          }
        }
      }
    }
  }

  /**
   * A store made by plain RocksDB (only the default column family, as every store before keyspaces)
   * opens with its keys, gains keyspaces, and keeps them after reopen.
   */
  @Test
  void storeMadeBeforeKeyspaces_opensAndGainsKeyspaces() throws Exception {
    Path dir = tmp.resolve("old");
    Files.createDirectories(dir);
    try (Options o = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(o, dir.toString())) {
      db.put(key("old"), key("value"));
    }
    try (Store s = Stores.open(config(dir))) {
      assertThat(s.keyspaces()).isEmpty();
      assertThat(str(s.get(key("old")))).isEqualTo("value");
      s.keyspace("users").put(key("old"), key("user"));
    }
    try (Store s = Stores.open(config(dir))) {
      assertThat(s.keyspaces()).containsExactly("users");
      assertThat(str(s.get(key("old")))).isEqualTo("value");
      assertThat(str(s.keyspace("users").get(key("old")))).isEqualTo("user");
    }
    List<String> families = new ArrayList<>();
    try (Options o = new Options()) {
      for (byte[] n : RocksDB.listColumnFamilies(o, dir.toString())) {
        families.add(str(n));
      }
    }
    assertThat(families).as("column families on disk").containsExactly("default", "keyspace:users");
  }

  /** Each handle's key count is its own column family's estimate, not the store's. */
  @Test
  void stats_countTheKeyspacesOwnKeys() {
    try (Store s = Stores.open(config(tmp.resolve("stats")))) {
      Store a = s.keyspace("a");
      for (int i = 0; i < 500; i++) {
        a.put(key("k" + i), key("v"));
      }
      for (int i = 0; i < 7; i++) {
        s.put(key("k" + i), key("v"));
      }
      assertThat(a.stats().keyCount()).isEqualTo(500);
      assertThat(s.stats().keyCount()).isEqualTo(7);
      a.compact();
      assertThat(a.stats().keyCount()).isEqualTo(500);
      assertThat(a.stats().figures().get("memtable-bytes").longValue()).isLessThan(4096);
      assertThat(s.stats().figures().get("memtable-bytes").longValue()).isPositive();
    }
  }

  /**
   * The native batch of a batch across column families is reserved at exactly its final size
   * (records of other families than the default carry the family's id), for seeded batches.
   */
  @Test
  void nativeBatchBytes_acrossColumnFamilies_isExact() throws Exception {
    long seed = System.nanoTime();
    SplittableRandom rnd = new SplittableRandom(seed);
    Path dir = tmp.resolve("sizes");
    try (Store s = Stores.open(config(dir))) {
      List<Column> columns = new ArrayList<>();
      columns.add(null);
      for (int i = 0; i < 3; i++) {
        s.keyspace("ks" + i).put(key("x"), key("y"));
      }
      RocksDbStore store = (RocksDbStore) s;
      for (String ks : s.keyspaces()) {
        columns.add(store.column(ks));
      }
      for (int round = 0; round < 100; round++) {
        WriteBatch b = new WriteBatch();
        int n = 1 + rnd.nextInt(40);
        Column[] cols = new Column[n];
        for (int i = 0; i < n; i++) {
          cols[i] = columns.get(rnd.nextInt(columns.size()));
          byte[] k = new byte[1 + rnd.nextInt(300)];
          rnd.nextBytes(k);
          if (rnd.nextInt(4) == 0) {
            b.delete(k);
          } else {
            byte[] v = new byte[rnd.nextInt(20_000)];
            b.put(k, v);
          }
        }
        try (org.rocksdb.WriteBatch wb = NativeBatches.nativeBatch(b, null, cols, dir)) {
          assertThat(wb.getDataSize())
              .as("seed %d round %d", seed, round)
              .isEqualTo(NativeBatches.nativeBatchBytes(b, null, cols));
        }
      }
    }
  }

  /** Stripe locks are per (keyspace, key): a held lock of a key in one keyspace names it there. */
  @Test
  void keyLocks_areSaltedByKeyspace() {
    try (Store s = Stores.open(config(tmp.resolve("locks")))) {
      RocksDbStore a = (RocksDbStore) s.keyspace("a");
      RocksDbStore b = (RocksDbStore) s.keyspace("b");
      int differ = 0;
      for (int i = 0; i < 64; i++) {
        byte[] k = key("k" + i);
        if (a.keyLock(k) != b.keyLock(k) || a.keyLock(k) != ((RocksDbStore) s).keyLock(k)) {
          differ++;
        }
      }
      assertThat(differ).as("keys whose stripe differs between keyspaces").isGreaterThan(56);
    }
  }

  /**
   * A flipped byte in the middle of a keyspace's table file (the store's only one: no other keys
   * were written) is found: {@code verify()} of the store throws StoreCorruptedException naming the
   * file, and a scan of the keyspace either throws it or returns only what was written.
   */
  @Test
  void damagedKeyspaceTableFile_isDetected() throws Exception {
    Path dir = tmp.resolve("damage");
    byte[] value = new byte[1024];
    new SplittableRandom(7).nextBytes(value);
    try (Store s = Stores.open(config(dir))) {
      Store a = s.keyspace("a");
      for (int i = 0; i < 2000; i++) {
        a.put(key(String.format("k%05d", i)), value);
      }
    }
    Path sst;
    try (Stream<Path> files = Files.list(dir)) {
      sst = files.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
    }
    try (java.nio.channels.FileChannel ch =
        java.nio.channels.FileChannel.open(
            sst, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      long at = ch.size() / 3;
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 0x10)).rewind();
      ch.write(b, at);
    }
    try (Store s = Stores.open(config(dir))) {
      assertThatThrownBy(s::verify)
          .isInstanceOf(io.kv4j.StoreCorruptedException.class)
          .hasMessageContaining(sst.getFileName().toString());
      Store a = s.keyspace("a");
      try (Cursor c = a.scan(KeyRange.all())) {
        c.forEachRemaining(e -> assertThat(e.value()).isEqualTo(value));
      } catch (io.kv4j.StoreCorruptedException expected) {
        assertThat(expected.getMessage()).contains(sst.getFileName().toString());
      }
    }
  }

  /** No file beyond RocksDB's own: keyspaces live in the store's MANIFEST, WAL and tables. */
  @Test
  void keyspaces_addNoFilesOfTheirOwn() throws Exception {
    Path dir = tmp.resolve("files");
    try (Store s = Stores.open(config(dir))) {
      s.keyspace("a").put(key("k"), key("v"));
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .allSatisfy(
              n ->
                  assertThat(
                          n.equals(StoreDirectory.IDENTITY_FILE)
                              || n.equals(DirectoryLock.FILE_NAME)
                              || Opening.LAYOUT.ownsFile().test(n))
                      .as(n)
                      .isTrue());
    }
    try (Store s = Stores.open(config(dir))) {
      assertThat(s.keyspaces()).containsExactly("a");
      assertThatThrownBy(() -> s.keyspace("bad name")).isInstanceOf(IllegalArgumentException.class);
      assertThat(s.keyspaces()).containsExactly("a");
    }
  }
}
