package io.kv4j.sqlite;

import static io.kv4j.sqlite.Sqlite.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.tck.ChildProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Keyspaces as tables of the one database file: names, the catalog, old stores, drop, crash. */
class SqliteKeyspaceTest {
  @TempDir Path tmp;

  private Path dir() {
    return tmp.resolve("store");
  }

  private StoreConfig.Builder builder() {
    return Sqlite.config(dir());
  }

  private Store open() {
    return Sqlite.open(dir());
  }

  private List<String> query(String sql) throws Exception {
    return Sqlite.query(dir(), sql);
  }

  private void exec(String sql) throws Exception {
    Sqlite.sql(dir(), sql);
  }

  private List<String> tables() throws Exception {
    return query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  }

  @Test
  void names_differingInCaseOnly_areDistinctKeyspaces_acrossReopenAndDrop() throws Exception {
    try (Store s = open()) {
      s.keyspace("Users").put(b("k"), b("upper"));
      s.keyspace("users").put(b("k"), b("lower"));
      s.keyspace("USERS");
      assertThat(s.keyspace("Users").get(b("k"))).isEqualTo(b("upper"));
      assertThat(s.keyspace("users").get(b("k"))).isEqualTo(b("lower"));
      assertThat(s.keyspace("USERS").get(b("k"))).isNull();
    }
    assertThat(tables())
        .containsExactlyInAnyOrder(
            "kv", "kv4j_keyspaces", "kv4j_ks_1_Users", "kv4j_ks_2_users", "kv4j_ks_3_USERS");
    try (Store s = open()) {
      assertThat(s.keyspaces()).containsExactly("USERS", "Users", "users");
      assertThat(s.keyspace("Users").get(b("k"))).isEqualTo(b("upper"));
      assertThat(s.dropKeyspace("Users")).isTrue();
      assertThat(s.keyspaces()).containsExactly("USERS", "users");
      assertThat(s.keyspace("users").get(b("k"))).isEqualTo(b("lower"));
      assertThat(s.keyspace("Users").get(b("k"))).as("dropped, opened again: empty").isNull();
    }
    // Dropped and opened again: a new, empty table (its number was free again).
    assertThat(query("SELECT count(*) FROM kv4j_ks_1_Users")).containsExactly("0");
    assertThat(query("SELECT count(*) FROM kv4j_ks_2_users")).containsExactly("1");
    assertThat(query("SELECT name || '=' || tbl FROM kv4j_keyspaces ORDER BY name"))
        .containsExactly("USERS=kv4j_ks_3_USERS", "Users=kv4j_ks_1_Users", "users=kv4j_ks_2_users");
  }

  @Test
  void storeWithoutKeyspaces_keepsItsSchema_andGainsKeyspacesWhenAsked() throws Exception {
    try (Store s = open()) {
      s.put(b("a"), b("1"));
      assertThat(s.keyspaces()).isEmpty();
    }
    assertThat(tables()).as("no catalog until the first keyspace").containsExactly("kv");
    try (Store ro = Stores.open(builder().readOnly(true).build())) {
      assertThat(ro.keyspaces()).isEmpty();
      assertThatThrownBy(() -> ro.keyspace("users"))
          .isInstanceOf(UnsupportedOperationException.class);
    }
    try (Store s = open()) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
      s.keyspace("users").put(b("a"), b("u"));
    }
    assertThat(tables()).containsExactly("kv", "kv4j_keyspaces", "kv4j_ks_1_users");
    try (Store s = open()) {
      assertThat(s.get(b("a"))).isEqualTo(b("1"));
      assertThat(s.keyspace("users").get(b("a"))).isEqualTo(b("u"));
    }
  }

  @Test
  void legacyStoreWithPlainRows_gainsKeyspacesOfItsFormat() throws Exception {
    Files.createDirectories(dir());
    exec("PRAGMA journal_mode=WAL");
    exec(
        "CREATE TABLE kv(k BLOB NOT NULL UNIQUE CHECK (typeof(k) = 'blob'),"
            + " v BLOB NOT NULL CHECK (typeof(v) = 'blob'))");
    exec("INSERT INTO kv VALUES(x'61', x'31')");
    try (Store s = open()) {
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
      assertThat(s.info().features()).contains(Feature.KEYSPACES, Feature.KEYSPACE_BATCH);
      s.write(new WriteBatch().put("users", b("a"), b("u")).put(b("a"), b("2")));
    }
    assertThat(query("SELECT name FROM pragma_table_info('kv4j_ks_1_users') ORDER BY cid"))
        .containsExactly("k", "v");
    try (Store s = open()) {
      assertThat(s.get(b("a"))).isEqualTo(b("2"));
      assertThat(s.keyspace("users").get(b("a"))).isEqualTo(b("u"));
    }
  }

  @Test
  void twoStoreTablesInOneFile_haveTheirOwnKeyspaces() throws Exception {
    try (Store s = open()) {
      s.keyspace("users").put(b("k"), b("of kv"));
    }
    try (Store s = Stores.open(builder().option("table", "other").build())) {
      assertThat(s.keyspaces()).isEmpty();
      s.keyspace("users").put(b("k"), b("of other"));
      assertThat(s.keyspaces()).containsExactly("users");
    }
    try (Store s = open()) {
      assertThat(s.keyspace("users").get(b("k"))).isEqualTo(b("of kv"));
      assertThat(s.dropKeyspace("users")).isTrue();
    }
    try (Store s = Stores.open(builder().option("table", "other").build())) {
      assertThat(s.keyspace("users").get(b("k"))).isEqualTo(b("of other"));
    }
    assertThatThrownBy(() -> Stores.open(builder().option("table", "kv4j_keyspaces").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("catalog");
  }

  @Test
  void damagedKeyspaceRow_andCatalogNamingAMissingTable_areReportedAsCorruption() throws Exception {
    try (Store s = open()) {
      s.keyspace("users").put(b("a"), b("value of a"));
      s.keyspace("gone").put(b("a"), b("1"));
    }
    // A changed value byte without its checksum, as a flipped bit would leave it.
    exec("UPDATE kv4j_ks_1_users SET v = x'00' WHERE k = x'61'");
    exec("DROP TABLE kv4j_ks_2_gone");
    try (Store s = open()) {
      Store users = s.keyspace("users");
      assertThatThrownBy(() -> users.get(b("a")))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("kv4j_ks_1_users")
          .hasMessageContaining("fails its checksum");
      assertThatThrownBy(() -> drain(users.scan(KeyRange.all())))
          .isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(() -> s.keyspace("gone"))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("kv4j_ks_2_gone")
          .hasMessageContaining("does not exist");
    }
  }

  @Test
  void readOnlyStore_seesKeyspacesAWriterCreatesLater() {
    try (Store w = open()) {
      w.put(b("a"), b("1"));
      try (Store ro = Stores.open(builder().readOnly(true).build())) {
        assertThat(ro.keyspaces()).isEmpty();
        w.keyspace("users").put(b("k"), b("v"));
        assertThat(ro.keyspaces()).containsExactly("users");
        assertThat(ro.keyspace("users").get(b("k"))).isEqualTo(b("v"));
      }
    }
  }

  @Test
  void batchCreatingAKeyspace_failingMidTransaction_leavesNoKeyspace() throws Exception {
    byte[] big = new byte[50_000];
    try (Store s = Stores.open(builder().durability(Durability.SYNC).build())) {
      s.keyspace("users").put(b("k"), b("before"));
      ((SqliteStore) s).limitGrowthForTest(3);
      WriteBatch batch =
          new WriteBatch().put("users", b("k"), b("after")).put("fresh", b("k"), big);
      for (int i = 0; i < 10; i++) {
        batch.put("fresh", b("k" + i), big);
      }
      assertThatThrownBy(() -> s.write(batch))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
    }
    try (Store s = open()) {
      assertThat(s.keyspaces()).containsExactly("users");
      assertThat(s.keyspace("users").get(b("k"))).isEqualTo(b("before"));
    }
  }

  @Test
  void drop_racingReadsAndWritesOnTheHandle_failsThemCleanly_othersGoOn() throws Exception {
    long seed = new SplittableRandom().nextLong();
    SplittableRandom rnd = new SplittableRandom(seed);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (Store s = open()) {
      Store other = s.keyspace("other");
      other.put(b("k"), b("other"));
      for (int round = 0; round < 20; round++) {
        Store doomed = s.keyspace("doomed");
        for (int i = 0; i < 50; i++) {
          doomed.put(b("k" + i), b("v" + i));
        }
        CountDownLatch started = new CountDownLatch(4);
        List<Future<Integer>> fs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int kind = t;
          long threadSeed = rnd.nextLong();
          fs.add(
              pool.submit(
                  () -> {
                    SplittableRandom r = new SplittableRandom(threadSeed);
                    started.countDown();
                    int closed = 0;
                    for (int i = 0; i < 200; i++) {
                      String k = "k" + r.nextInt(50);
                      try {
                        switch (kind) {
                          case 0 -> {
                            byte[] v = doomed.get(b(k));
                            assertThat(v).isIn(null, b("v" + k.substring(1)), b("w"));
                          }
                          case 1 -> drain(doomed.scan(KeyRange.all()));
                          case 2 -> doomed.put(b(k), b("w"));
                          default -> doomed.getAll(List.of(b(k), b("k1")));
                        }
                      } catch (StoreClosedException e) {
                        closed++;
                      }
                      assertThat(other.get(b("k"))).isEqualTo(b("other"));
                    }
                    return closed;
                  }));
        }
        started.await();
        assertThat(s.dropKeyspace("doomed")).as("seed=" + seed).isTrue();
        for (Future<Integer> f : fs) {
          f.get(60, TimeUnit.SECONDS); // an exception other than StoreClosedException fails here
        }
        assertThat(s.keyspace("doomed").get(b("k1"))).as("seed=" + seed).isNull();
        s.dropKeyspace("doomed");
      }
      assertThat(s.keyspaces()).containsExactly("other");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void crashMidCrossKeyspaceBatches_leavesEachBatchWholeOrAbsent() throws Exception {
    int acked = -1;
    try (ChildProcess c = ChildProcess.java(KeyspaceCrashChild.class, dir().toString()).start()) {
      Duration wait = Duration.ofMinutes(5);
      String line;
      while (acked < 150 && (line = c.readLine(wait)) != null) {
        if (line.startsWith("acked ")) {
          acked = Integer.parseInt(line.substring(6));
        }
      }
      if (acked >= 150) {
        c.kill(); // SIGKILL: mid-batch, no close
      } else { // its stdout ended: the child exited by itself
        c.await(Duration.ofSeconds(60));
      }
      assertThat(acked).as("child output: %s", c.describe()).isGreaterThanOrEqualTo(150);
    }
    try (Store s = open()) {
      Store a = s.keyspace("a");
      Store bs = s.keyspace("b");
      int newest = -1;
      for (int k = 0; k < 50; k++) {
        byte[] key = b("k" + k);
        byte[] v = s.get(key);
        assertThat(a.get(key)).as("key k%d in keyspace a", k).isEqualTo(v);
        assertThat(bs.get(key)).as("key k%d in keyspace b", k).isEqualTo(v);
        if (v != null) {
          newest = Math.max(newest, Integer.parseInt(new String(v, StandardCharsets.UTF_8)));
        }
      }
      assertThat(newest).as("the last acknowledged batch survived").isGreaterThanOrEqualTo(acked);
      for (String name : s.keyspaces()) {
        if (name.startsWith("n")) {
          int i = Integer.parseInt(name.substring(1));
          assertThat(s.keyspace(name).get(b("k"))).as(name).isEqualTo(b(Integer.toString(i)));
          assertThat(i)
              .as("keyspace %s created by a batch that committed", name)
              .isLessThanOrEqualTo(newest);
        }
      }
      for (int i = 0; i <= acked; i += 10) {
        assertThat(s.keyspaces()).as("keyspace of acknowledged batch %d", i).contains("n" + i);
      }
      s.verify();
    }
  }

  private static int drain(Cursor c) {
    int n = 0;
    try (c) {
      while (c.hasNext()) {
        Entry e = c.next();
        assertThat(e.key()).isNotEmpty();
        n++;
      }
    }
    return n;
  }
}
