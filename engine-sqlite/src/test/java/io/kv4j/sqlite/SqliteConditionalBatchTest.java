package io.kv4j.sqlite;

import static io.kv4j.sqlite.Sqlite.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conditional batches beyond the kit: against a writer outside kv4j and the store's own group
 * commits, over a damaged row, and with keyspaces that conditions or operations name.
 */
class SqliteConditionalBatchTest {
  /** Generous deadline for work on other threads; never a measure of speed. */
  private static final long DEADLINE_SECONDS = 120;

  @TempDir Path tmp;

  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(DEADLINE_SECONDS, TimeUnit.SECONDS);
  }

  private Path dir() {
    return tmp.resolve("store");
  }

  private Store open(Durability durability) {
    return Stores.open(StoreConfig.builder("sqlite").path(dir()).durability(durability).build());
  }

  private Connection outside() throws Exception {
    Connection c = Sqlite.connect(dir());
    try (Statement st = c.createStatement()) {
      st.execute("PRAGMA busy_timeout=60000");
    }
    return c;
  }

  private static byte[] counter(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  private static long count(byte[] v) {
    return ByteBuffer.wrap(v).getLong();
  }

  /** Reads an account on a plain JDBC connection inside its transaction. */
  private static long read(Connection c, byte[] key) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("SELECT v FROM kv WHERE k = ?")) {
      ps.setBytes(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return count(rs.getBytes(1));
      }
    }
  }

  /** Writes an account on a plain JDBC connection, with kv4j's row checksum. */
  private static void write(Connection c, byte[] key, long n) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("UPDATE kv SET v = ?, crc32c = ? WHERE k = ?")) {
      byte[] v = counter(n);
      ps.setBytes(1, v);
      ps.setInt(2, RowChecksum.of(key, v));
      ps.setBytes(3, key);
      ps.executeUpdate();
    }
  }

  @Test
  void writeIf_transfersRacingAWriterOutsideKv4jAndReplaceLoops_conserveMoneyAndCounts()
      throws Exception {
    int accounts = 4;
    long initial = 1_000_000;
    int threads = 3;
    int perThread = 100;
    long seed = System.nanoTime();
    byte[] count = b("count");
    try (Store s = open(Durability.SYNC)) {
      assertThat(s.info().features()).contains(Feature.CONDITIONAL_BATCH);
      WriteBatch setup = new WriteBatch().put(count, counter(0));
      for (int a = 0; a < accounts; a++) {
        setup.put(b("account" + a), counter(initial));
      }
      s.write(setup);
      List<Future<?>> running = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        SplittableRandom rnd = new SplittableRandom(seed + t);
        running.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < perThread; i++) {
                    int a = rnd.nextInt(accounts);
                    byte[] from = b("account" + a);
                    byte[] to = b("account" + (a + 1 + rnd.nextInt(accounts - 1)) % accounts);
                    long amount = 1 + rnd.nextInt(100);
                    while (true) {
                      byte[] f = s.get(from);
                      byte[] g = s.get(to);
                      byte[] n = s.get(count);
                      WriteBatch tx =
                          new WriteBatch()
                              .expect(from, f)
                              .expect(to, g)
                              .expect(count, n)
                              .put(from, counter(count(f) - amount))
                              .put(to, counter(count(g) + amount))
                              .put(count, counter(count(n) + 1));
                      if (s.writeIf(tx)) {
                        break;
                      }
                    }
                  }
                  return null;
                }));
      }
      // Conditional writes of the count (replace loops) go through group commits meanwhile.
      running.add(
          pool.submit(
              () -> {
                for (int i = 0; i < perThread; i++) {
                  while (true) {
                    byte[] n = s.get(count);
                    if (s.replace(count, n, counter(count(n) + 1))) {
                      break;
                    }
                  }
                }
                return null;
              }));
      // Another program moves money in its own BEGIN IMMEDIATE transactions.
      running.add(
          pool.submit(
              () -> {
                try (Connection c = outside();
                    Statement st = c.createStatement()) {
                  SplittableRandom rnd = new SplittableRandom(seed - 1);
                  for (int i = 0; i < perThread; i++) {
                    int a = rnd.nextInt(accounts);
                    byte[] from = b("account" + a);
                    byte[] to = b("account" + (a + 1 + rnd.nextInt(accounts - 1)) % accounts);
                    st.execute("BEGIN IMMEDIATE");
                    write(c, from, read(c, from) - 7);
                    write(c, to, read(c, to) + 7);
                    st.execute("COMMIT");
                  }
                }
                return null;
              }));
      for (Future<?> f : running) {
        f.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      }
      long total = 0;
      for (int a = 0; a < accounts; a++) {
        total += count(s.get(b("account" + a)));
      }
      assertThat(total).as("money, seed %d", seed).isEqualTo(accounts * initial);
      assertThat(count(s.get(count)))
          .as("transfers and replace increments, seed %d", seed)
          .isEqualTo((long) (threads + 1) * perThread);
    }
  }

  @Test
  void writeIf_damagedConditionRow_throwsCorruptedAndWritesNothing() throws Exception {
    try (Store s = open(Durability.BUFFERED)) {
      s.put(b("a"), b("AAAA"));
    }
    try (Connection c = outside();
        Statement st = c.createStatement()) {
      st.execute("UPDATE kv SET v = x'41414140' WHERE k = x'61'"); // one bit, checksum unchanged
    }
    try (Store s = open(Durability.BUFFERED)) {
      assertThatThrownBy(
              () -> s.writeIf(new WriteBatch().expect(b("a"), b("AAA@")).put(b("b"), b("1"))))
          .as("the stored bytes match the expected value; the checksum says they were damaged")
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("checksum");
      assertThat(s.get(b("b"))).as("nothing written").isNull();
      assertThat(s.writeIf(new WriteBatch().expectAbsent(b("c")).put(b("b"), b("2"))))
          .as("the damage fails the call, not the store")
          .isTrue();
    }
  }

  @Test
  void writeIf_keyspacesNamed_onlyOperationsCreateThemAndAFailedBatchRollsCreationBack() {
    try (Store s = open(Durability.BUFFERED)) {
      s.put(b("x"), b("1"));
      assertThat(s.writeIf(new WriteBatch().expectAbsent("ghost", b("k")).put(b("y"), b("1"))))
          .as("an absent keyspace holds no key")
          .isTrue();
      assertThat(s.writeIf(new WriteBatch().expect("ghost", b("k"), new byte[0])))
          .as("not even an empty value")
          .isFalse();
      assertThat(s.keyspaces()).as("a condition creates no keyspace").isEmpty();
      assertThat(s.writeIf(new WriteBatch().expect(b("x"), b("2")).put("fresh", b("k"), b("v"))))
          .isFalse();
      assertThat(s.keyspaces())
          .as("the keyspace a refused batch's operation named was created in its transaction")
          .isEmpty();
      assertThat(
              s.writeIf(
                  new WriteBatch()
                      .expect(b("x"), b("1"))
                      .expectAbsent("fresh", b("k"))
                      .put("fresh", b("k"), b("v"))))
          .isTrue();
      assertThat(s.keyspaces()).containsExactly("fresh");
      assertThat(s.keyspace("fresh").get(b("k"))).isEqualTo(b("v"));
    }
  }
}
